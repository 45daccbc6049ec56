"""The GitHub Action's install on this machine, as the runner runs it. Run:

    python benchmarks/action_install.py [--runs N] [--wheel dist/ghstate-X.Y.Z-py3-none-any.whl] [--before REV]
                                        [--per-dependency]

Reads action.yml and runs its own scripts, the steps "Where ghstate comes from" and "Install ghstate", the
way the runner runs a composite action's bash step (``bash --noprofile --norc -eo pipefail FILE``, with
RUNNER_TEMP, GITHUB_OUTPUT and the step's env, its expressions filled in as the runner would):

- cold: a fresh RUNNER_TEMP and no pip cache (a new hosted runner has none), the whole install;
- warm: the release's wheels a cold run downloaded, restored as the cache restores them (a tar archive unpacked
  into a fresh RUNNER_TEMP; that unpacking is timed apart, as "restore"), then the same two steps, which check
  each wheel by its hash and make the virtualenv anew (the cache never holds a virtualenv: issue 53).

With ``--wheel``, the release's wheel is offered to pip beside the index (PIP_FIND_LINKS), as if the release
were published: the Action's files are then the release's when action/requirements.txt names them, and the
release path is taken (its hashes are checked as on a runner). Without it, a release not yet on the index
falls back to the source build, as the Action does. Which path was taken is printed.

``--before REV``: REV's action.yml install step too, cold, for a comparison under the same load.

``--per-dependency``: each pinned runtime dependency alone, its wheel downloaded and then installed into a
virtualenv of its own (seconds and megabytes for each): what a cold install pays for each.

Prints medians; never asserts. The goal (issue 46): warm at most 1 s, cold at most half of the 7.6 s the
source build took here before."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("Where ghstate comes from", "Install ghstate")


def steps() -> dict[str, dict]:
    spec = yaml.safe_load((ROOT / "action.yml").read_text())
    found = {s.get("name"): s for s in spec["runs"]["steps"]}
    missing = [name for name in STEPS if name not in found]
    if missing:
        raise SystemExit(f"action.yml has no step named {missing}: update benchmarks/action_install.py")
    return {name: found[name] for name in STEPS}


def fill(value: str, context: dict[str, str]) -> str:
    """A step's env value with its ``${{ ... }}`` expressions replaced as the runner would."""
    def one(match: re.Match) -> str:
        name = match.group(1).strip()
        if name not in context:
            raise SystemExit(f"action.yml uses {name}, which this benchmark does not provide")
        return context[name]

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def run_step(step: dict, context: dict[str, str], base_env: dict[str, str], temp: Path) -> dict[str, str]:
    """One bash step as the runner runs it; its GITHUB_OUTPUT read back."""
    script = temp / "step.sh"
    script.write_text(step["run"])
    output = temp / "output"
    output.write_text("")
    environ = {**base_env, "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output)}
    environ.update({k: fill(v, context) for k, v in (step.get("env") or {}).items()})
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=environ,
                          capture_output=True, text=True)
    if proc.returncode != 0 or "::warning::" in proc.stdout:
        raise SystemExit(f"step {step['name']!r} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)


def install(temp: Path, base_env: dict[str, str], restored: bool = False) -> tuple[float, dict[str, str]]:
    """Both steps, timed together; the plan's and the install's outputs. ``restored``: the cache step restored
    the wheels (its ``cache-hit``)."""
    context = {"github.action_path": str(ROOT), "runner.temp": str(temp),
               "steps.cache.outputs.cache-hit": "true" if restored else ""}
    plan_step, install_step = steps().values()
    start = time.perf_counter()
    plan = run_step(plan_step, context, base_env, temp)
    context.update({f"steps.plan.outputs.{k}": v for k, v in plan.items()})
    done = run_step(install_step, context, base_env, temp)
    return time.perf_counter() - start, {**plan, **done}


def before_step(rev: str) -> dict:
    """REV's action.yml "Install ghstate" step (one step then: a venv with pip, a build of the source)."""
    spec = yaml.safe_load(subprocess.run(["git", "show", f"{rev}:action.yml"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
    return next(s for s in spec["runs"]["steps"] if s.get("name") == "Install ghstate")


def before(step: dict, temp: Path) -> float:
    """One cold run of an earlier install step, in ``temp``."""
    start = time.perf_counter()
    run_step(step, {"github.action_path": str(ROOT), "runner.temp": str(temp)}, base_environment(None, cold=True),
             temp)
    return time.perf_counter() - start


def check_runs(outputs: dict[str, str]) -> None:
    """The virtualenv the steps left answers as the record step will call it (checked, not timed)."""
    proc = subprocess.run([str(Path(outputs.get("venv", "/nonexistent")) / "bin" / "ghstate"), "--version"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the installed ghstate does not run:\n{proc.stdout}{proc.stderr}")


def base_environment(wheel: Path | None, cold: bool) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("GH_", "GITHUB_", "GHSTATE_", "VIRTUAL_ENV", "PYTHON"))}
    environ["PATH"] = os.pathsep.join(p for p in environ.get("PATH", "").split(os.pathsep)
                                      if not p.startswith(sys.prefix))  # the runner's python3, not this venv's
    environ["RUNNER_OS"] = {"darwin": "macOS"}.get(sys.platform, "Linux")
    if cold:
        environ["PIP_NO_CACHE_DIR"] = "1"
    if wheel is not None:
        links = [str(wheel.resolve().parent), environ.get("PIP_FIND_LINKS", "")]
        environ["PIP_FIND_LINKS"] = " ".join(filter(None, links))
    return environ


def measure(runs: int, wheel: Path | None, rev: str | None) -> None:
    """Cold runs (each followed by one of REV's, when given: the two under the same load), then warm runs."""
    cold_times, warm_times, restore_times, before_times, took = [], [], [], [], set()
    earlier = before_step(rev) if rev else None
    with tempfile.TemporaryDirectory(prefix="ghstate-action-") as scratch:
        archive = Path(scratch) / "venv.tar"
        for i in range(runs):
            temp = Path(scratch) / "temp"  # one RUNNER_TEMP, as on a runner: a virtualenv is not relocatable
            temp.mkdir()
            seconds, outputs = install(temp, base_environment(wheel, cold=True))
            cold_times.append(seconds)
            check_runs(outputs)
            took.add(f"{outputs.get('how')} -> {outputs.get('installed')}")
            if i == 0:
                if not (temp / "ghstate-wheels").is_dir():
                    raise SystemExit(f"the cold run kept no wheels ({outputs.get('installed')}): a release's wheels "
                                     "are what the cache keeps (give --wheel, with action/requirements.txt its)")
                with tarfile.open(archive, "w") as tar:  # what the cache keeps (it compresses it too)
                    tar.add(temp / "ghstate-wheels", arcname="ghstate-wheels")
                size = sum(p.stat().st_size for p in (temp / "ghstate-wheels").rglob("*") if p.is_file())
            shutil.rmtree(temp)
            if earlier is not None:
                temp.mkdir()
                before_times.append(before(earlier, temp))
                shutil.rmtree(temp)
        for _ in range(runs):
            temp = Path(scratch) / "temp"
            temp.mkdir()
            start = time.perf_counter()
            with tarfile.open(archive) as tar:
                tar.extractall(temp, filter="tar") if sys.version_info >= (3, 12) else tar.extractall(temp)
            restore_times.append(time.perf_counter() - start)
            seconds, outputs = install(temp, base_environment(wheel, cold=False), restored=True)
            if outputs.get("installed") != "cached":
                raise SystemExit(f"a warm run took {outputs.get('installed')}, not the restored wheels")
            warm_times.append(seconds)
            check_runs(outputs)
            shutil.rmtree(temp)
    print(f"path taken (plan -> install): {', '.join(sorted(took))}")
    print(f"wheels kept in the cache: {size / 1e6:.1f} MB, archive {archive_size(size)}")
    print(f"cold (no cache, no pip cache): median {statistics.median(cold_times):.2f} s over {runs} runs "
          f"({', '.join(f'{t:.2f}' for t in cold_times)})")
    print(f"warm (wheels restored, checked, installed anew): median {statistics.median(warm_times):.2f} s over "
          f"{runs} runs "
          f"({', '.join(f'{t:.2f}' for t in warm_times)}); unpacking the archive here: median "
          f"{statistics.median(restore_times):.2f} s")
    if before_times:
        each = ", ".join(f"{t:.2f}" for t in before_times)
        print(f"before ({rev}'s install, cold, each right after a cold run above): median "
              f"{statistics.median(before_times):.2f} s over {runs} runs ({each})")


def archive_size(size: int) -> str:
    return f"{size / 1e6:.1f} MB before compression"


def per_dependency(runs: int) -> None:
    """Each pinned dependency alone: its wheel downloaded (seconds, megabytes), then installed from that file into
    a virtualenv of its own (seconds, megabytes on disk); medians. pip's own start is in every figure: the
    floor printed first is pip doing nothing (``pip --version`` through ``--python``, as the Action calls it)."""
    sys.path.insert(0, str(ROOT / "action"))
    import lock

    _, pins = lock.read_lock()
    base = base_environment(None, cold=True)
    python3 = shutil.which("python3", path=base["PATH"]) or "python3"
    rows = []
    with tempfile.TemporaryDirectory(prefix="ghstate-deps-") as scratch:
        empty = Path(scratch) / "empty"
        subprocess.run([python3, "-m", "venv", "--without-pip", str(empty)], check=True, env=base)
        floor = statistics.median(_timed([python3, "-m", "pip", "--python", str(empty / "bin" / "python"),
                                          "--version"], base) for _ in range(runs))
        empty_size = _size(empty)
        for name, (exact, _) in sorted(pins.items()):
            if name == "ghstate":
                continue
            fetched, installed, wheel_mb, disk_mb = [], [], 0.0, 0.0
            for i in range(runs):
                here = Path(scratch) / f"{name}-{i}"
                wheels, venv = here / "wheels", here / "venv"
                fetched.append(_timed([python3, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary",
                                       ":all:", "-d", str(wheels), f"{name}=={exact}"], base, check=False))
                found = list(wheels.glob("*.whl"))
                if not found:  # a marker leaves it out of this Python (tomli on 3.11+)
                    break
                subprocess.run([python3, "-m", "venv", "--without-pip", str(venv)], check=True, env=base)
                installed.append(_timed([python3, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                                         "--quiet", "--no-deps", "--no-compile", str(found[0])], base))
                wheel_mb, disk_mb = found[0].stat().st_size / 1e6, (_size(venv) - empty_size) / 1e6
                shutil.rmtree(here)
            if installed:
                rows.append((statistics.median(fetched), statistics.median(installed), wheel_mb, disk_mb,
                             f"{name}=={exact}"))
    print(f"each dependency alone, medians of {runs}; pip doing nothing takes {floor:.2f} s here, and is in every "
          "figure:")
    print(f"  {'':32} {'download':>9} {'wheel':>8} {'install':>8} {'on disk':>8}")
    for got, put, wheel_mb, disk_mb, name in sorted(rows, key=lambda r: -r[3]):
        print(f"  {name:32} {got:7.2f} s {wheel_mb:5.1f} MB {put:6.2f} s {disk_mb:5.1f} MB")
    print(f"  {'all':32} {sum(r[0] for r in rows):7.2f} s {sum(r[2] for r in rows):5.1f} MB "
          f"{sum(r[1] for r in rows):6.2f} s {sum(r[3] for r in rows):5.1f} MB")


def _timed(command: list[str], environ: dict[str, str], check: bool = True) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=environ, check=check, capture_output=True)
    return time.perf_counter() - start


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wheel", type=Path, help="the release's wheel, offered beside the index")
    parser.add_argument("--per-dependency", action="store_true")
    parser.add_argument("--before", metavar="REV", help="also time REV's action.yml install (cold), each run "
                        "right after one of the cold runs: e.g. the commit before the cached install")
    args = parser.parse_args()
    if not shutil.which("bash"):
        raise SystemExit("bash is needed: the Action's steps are bash")
    measure(args.runs, args.wheel, args.before)
    if args.per_dependency:
        per_dependency(args.runs)


if __name__ == "__main__":
    main()
