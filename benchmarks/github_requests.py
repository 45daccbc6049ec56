"""Requests per command and wall time of the GitHub store, against a local stub of GitHub's API.

Run: python benchmarks/github_requests.py [--before REV]

Each command runs twice against fresh stubs, "before" (ghstate at REV, default the last commit whose write
log was the body's edit history) and "after" (this checkout: the log a chain of commits on a ref), and the
figures are printed side by side. The stub starts as a repository that never had a chain: the first
update writes the tree every chain commit shares (two requests more, once per repository).

The stub is the test suite's fake GitHub (tests/github_fake.py) behind a real HTTP server on
127.0.0.1, so the figures include PyGithub, HTTP and JSON work, but no network latency: add one
round trip to github.com (~50–150 ms) per request to estimate the real thing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
try:
    from github_http import serve_fake  # noqa: E402
except ModuleNotFoundError as exc:  # the stub is the test suite's fake GitHub
    raise SystemExit(f"{exc}: install the test dependencies first: pip install '.[test]'") from None


BEFORE = "6a18693"  # the last commit with the write log in the body's edit history (before the chain)


def main() -> None:
    rev = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else BEFORE
    with tempfile.TemporaryDirectory() as old:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", old], input=archive.stdout, check=True)
        results = {}
        for label, path in (("before", old), ("after", str(ROOT))):
            with serve_fake() as fake:
                results[label] = run_all(fake, path, label)
    print(f"\nrequests and wall time per command, before ({rev}) and after (this checkout)")
    print(f"  {'command':<42} {'before':>16} {'after':>16}")
    for name in results["after"]:
        (n0, t0, c0), (n1, t1, c1) = results["before"][name], results["after"][name]
        print(f"  {name:<42} {n0:>3} req {t0:>6.0f} ms {n1:>3} req {t1:>6.0f} ms   comments posted {c0} -> {c1}")


def run_all(fake, code: str, label: str) -> dict[str, tuple[int, float, int]]:
    port = fake.base.rsplit(":", 1)[1]
    cmd = [sys.executable, "-m", "ghstate"]
    env = {**os.environ, "GH_TOKEN": "bench-token", "GITHUB_REPOSITORY": "octo/hello",
           "GITHUB_API_URL": fake.base, "GHSTATE_NO_CACHE": "0", "PYTHONPATH": code}
    example = ROOT / "examples" / "checkpoint.md"
    runs = [
        ("checkpoint (create)", ["checkpoint", "--file", str(example)]),
        ("checkpoint --done (update, by branch)", ["checkpoint", "--done", "2"]),
        ("checkpoint 1 --risk (update, by number)", ["checkpoint", "1", "--risk", "a new risk"]),
        ("checkpoint 1 --risk again", ["checkpoint", "1", "--risk", "another risk"]),
        ("ci success (by branch)", ["ci", "--result", "success"]),
        ("ci success again (status unchanged)", ["ci", "--result", "success"]),
        ("resume 1", ["resume", "1"]),
        ("resume (by branch)", ["resume"]),
        ("show 1", ["show", "1"]),
        ("list", ["list"]),
        ("log 1", ["log", "1"]),
    ]
    out: dict[str, tuple[int, float, int]] = {}
    print(f"[{label}] GitHub stub on 127.0.0.1:{port}; each command once, in order (requests counted at the stub)")
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                      "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *args], cwd=tmp, check=True, capture_output=True)
        ci_env = {**env, "GITHUB_ACTIONS": "true", "GITHUB_SHA": "4f2c1e9aa1b2c3d4e5f6", "GITHUB_RUN_ID": "7",
                  "GITHUB_REF_NAME": "main", "GITHUB_SERVER_URL": "https://github.com",
                  "GITHUB_OUTPUT": os.path.join(tmp, "out"), "GITHUB_STEP_SUMMARY": os.path.join(tmp, "sum")}
        for name, args in runs:
            before = len(fake.calls)
            comments = sum(len(c) for c in fake.comments.values())
            start = time.perf_counter()
            proc = subprocess.run([*cmd, *args], cwd=tmp, env=ci_env if args[0] == "ci" else env,
                                  capture_output=True, text=True)
            elapsed = (time.perf_counter() - start) * 1000
            if proc.returncode != 0:
                raise SystemExit(f"[{label}] {name} failed: {proc.stderr}")
            made = fake.calls[before:]
            posted = sum(len(c) for c in fake.comments.values()) - comments
            out[name] = (len(made), elapsed, posted)
            methods = " ".join("GraphQL" if u.endswith("/graphql") else m for m, u, _ in made)
            print(f"  {name:<42} {len(made)} request{'s' if len(made) != 1 else ' '}  {elapsed:6.0f} ms   {methods}")
        times = []
        for i in range(5):
            start = time.perf_counter()
            subprocess.run([*cmd, "checkpoint", "1", "--question", f"q{i}"], cwd=tmp, env=env, check=True,
                           capture_output=True)
            times.append((time.perf_counter() - start) * 1000)
        print(f"  update, median of {len(times)}: {statistics.median(times):.0f} ms wall (process start included)")
        contended(fake, cmd, env, tmp)
    return out


def contended(fake, cmd: list[str], env: dict[str, str], cwd: str, writers: int = 6) -> None:
    """``writers`` processes updating checkpoint 1 at the same moment: requests and wall time."""
    before = len(fake.calls)
    start = time.perf_counter()
    procs = [subprocess.Popen([*cmd, "checkpoint", "1", "--decision", f"contended decision {k}"], cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for k in range(writers)]
    failed = [p.communicate()[1] for p in procs if p.wait() != 0]
    elapsed = (time.perf_counter() - start) * 1000
    made = fake.calls[before:]
    by_method = {m: sum(1 for x, _, _ in made if x == m) for m in ("GET", "POST", "PATCH")}
    body = fake.issues[1]["body"]
    kept = sum(f"contended decision {k}" in body for k in range(writers))
    print(f"\n{writers} writers at once on one checkpoint: {len(made)} requests "
          f"({', '.join(f'{n} {m}' for m, n in by_method.items())}), {len(made) / writers:.1f} per writer "
          f"{elapsed:.0f} ms wall for all; {kept}/{writers} decisions in the body"
          + (f"; {len(failed)} failed" if failed else ""))


if __name__ == "__main__":
    main()
