"""Requests per command and wall time of the GitHub store, against a local stub of GitHub's API.

Run: python benchmarks/github_requests.py

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


def main() -> None:
    with serve_fake() as fake:
        run_all(fake)


def run_all(fake) -> None:
    port = fake.base.rsplit(":", 1)[1]

    script = Path(sys.executable).parent / "ghstate"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "ghstate"]
    env = {**os.environ, "GH_TOKEN": "bench-token", "GITHUB_REPOSITORY": "octo/hello",
           "GITHUB_API_URL": fake.base, "GHSTATE_NO_CACHE": "0"}
    example = ROOT / "examples" / "checkpoint.md"
    runs = [
        ("checkpoint (create)", ["checkpoint", "--file", str(example)]),
        ("checkpoint --done (update, by branch)", ["checkpoint", "--done", "2"]),
        ("checkpoint 1 --risk (update, by number)", ["checkpoint", "1", "--risk", "a new risk"]),
        ("resume 1", ["resume", "1"]),
        ("resume (by branch)", ["resume"]),
        ("resume 1 --post", ["resume", "1", "--post"]),
        ("show 1", ["show", "1"]),
        ("list", ["list"]),
        ("log 1", ["log", "1"]),
    ]
    print(f"GitHub stub on 127.0.0.1:{port}; each command once, in order (requests counted at the stub)")
    with tempfile.TemporaryDirectory() as tmp:
        for args in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                      "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *args], cwd=tmp, check=True, capture_output=True)
        for name, args in runs:
            before = len(fake.calls)
            start = time.perf_counter()
            proc = subprocess.run([*cmd, *args], cwd=tmp, env=env, capture_output=True, text=True)
            elapsed = (time.perf_counter() - start) * 1000
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed: {proc.stderr}")
            made = fake.calls[before:]
            methods = " ".join(m for m, _, _ in made)
            print(f"  {name:<42} {len(made)} request{'s' if len(made) != 1 else ' '}  {elapsed:6.0f} ms   {methods}")
        # wall time of a typical update, repeated
        times = []
        for i in range(7):
            start = time.perf_counter()
            subprocess.run([*cmd, "checkpoint", "1", "--question", f"q{i}"], cwd=tmp, env=env, check=True,
                           capture_output=True)
            times.append((time.perf_counter() - start) * 1000)
        print(f"  update, median of {len(times)}: {statistics.median(times):.0f} ms wall (process start included)")
        contended(fake, cmd, env, tmp)


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
          f"(4 uncontended), {elapsed:.0f} ms wall for all; {kept}/{writers} decisions in the body"
          + (f"; {len(failed)} failed" if failed else ""))


if __name__ == "__main__":
    main()
