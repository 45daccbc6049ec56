"""Where agents wait, with the fake GitHub's own time set apart: the session-start hook and `resume N` against
an earlier ghstate and a plain PyGithub script, and `list --limit 1000` beside `resume N` (issue 56).

Run: python benchmarks/speed.py [--before REV] [--runs N] [--count 1000] [--skip-list]

Each side is a process run as an agent host runs it, against the test suite's fake GitHub behind a loopback
server (tests/github_http.py), one fake per side, each holding the same checkpoint (written and read once by
that side first). The fake validates every GraphQL document against GitHub's schema, which costs it far more
than GitHub's own answer costs ghstate: so each figure is the process's wall time, the fake's time on its
requests (measured in the server, also sent as ``X-Fake-Seconds``), and what is left, ghstate's own (start,
imports, git, rendering, the client's side of HTTP). The runs of every side are interleaved, so that a load
on the machine weighs on all alike; medians of N.

- **hook**: ``ghstate hook session-start`` with source ``clear`` and no session id (the whole prompt), by branch.
- **resume N**: ``ghstate resume 1``.
- **plain script**: what a user would write with PyGithub to read the checkpoint and print it:
  ``Github(auth=Auth.Token(t), base_url=api).get_repo("octo/hello", lazy=True).get_issue(1).body`` (one REST
  request, as `resume N` makes one).
- **list --limit 1000** at ``--count`` open checkpoints (this checkout only): its time beside `resume N`'s.

Prints a table; never asserts (goals: the hook and `resume N` at most 1.0x REV's; `resume N`'s own time at most
0.5x the plain script's; `list --limit 1000` at most 10x `resume N`).
"""

from __future__ import annotations

import argparse
import json
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

BEFORE = "732865b"  # issue 56's reference: before local-first
PLAIN = """\
import sys
from github import Auth, Github
g = Github(auth=Auth.Token(sys.argv[1]), base_url=sys.argv[2], retry=None)
print(g.get_repo("octo/hello", lazy=True).get_issue(1).body)
"""


class Side:
    """One way of reading the checkpoint: a ghstate (a folder on PYTHONPATH) in a git repository of its own, or
    the plain script; with its own fake GitHub."""

    def __init__(self, label: str, code: str | None, work: Path, fake) -> None:
        self.label, self.code, self.work, self.fake = label, code, work, fake
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
        subprocess.run(["git", "-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q", "--allow-empty", "-m",
                        "init"], cwd=work, check=True)
        self.cache = tempfile.mkdtemp(prefix="ghstate-speed-cache-")
        self.kind = "resume"  # the path ``measure_each`` runs

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))
               and k != "PYTHONDONTWRITEBYTECODE"}  # each side's bytecode is compiled first (``main``), as installed
        env.update(GH_TOKEN="bench-token", GITHUB_REPOSITORY="octo/hello", GITHUB_API_URL=self.fake.base,
                   XDG_CACHE_HOME=self.cache, PYTHONPATH=self.code or "")
        return env

    def command(self, kind: str) -> tuple[list[str], str | None]:
        if kind == "plain":
            return [sys.executable, "-c", PLAIN, "bench-token", self.fake.base], None
        if kind == "hook":
            event = {"hook_event_name": "SessionStart", "source": "clear", "cwd": str(self.work)}
            return [sys.executable, "-m", "ghstate", "hook", "session-start"], json.dumps(event)
        if kind == "list":
            return [sys.executable, "-m", "ghstate", "list", "--limit", "1000"], None
        return [sys.executable, "-m", "ghstate", "resume", "1"], None

    def run(self, kind: str) -> tuple[float, float, int, str]:
        """Wall seconds, the fake's seconds, requests, and what it printed."""
        args, stdin = self.command(kind)
        served, calls = getattr(self.fake, "served_seconds", 0.0), len(self.fake.calls)
        started = time.perf_counter()
        done = subprocess.run(args, cwd=self.work, env=self.env(), input=stdin, capture_output=True, text=True,
                              timeout=300)
        wall = time.perf_counter() - started
        if done.returncode != 0 or not done.stdout.strip():
            raise SystemExit(f"{self.label} {kind} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return (wall, getattr(self.fake, "served_seconds", 0.0) - served, len(self.fake.calls) - calls,
                done.stdout)

    def ghstate(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "ghstate", *args], cwd=self.work, env=self.env(), check=True,
                       capture_output=True, timeout=300)


def seed_many(fake, count: int) -> None:
    """``count`` more open checkpoints, one per branch, each in the branch index (as ghstate writes them)."""
    for number in range(2, count + 2):
        marker = json.dumps({"revision": 1, "branch": f"b{number}"})
        fake.add_issue(number, f"<!-- ghstate:v1 {marker} -->\n## Goal\nWork on b{number}.\n\n## Current status\n"
                       "- [ ] Phase 1: start\n\n## Resume instruction\nStart at Phase 1.\n",
                       title=f"Checkpoint: b{number}")
        fake.tasks.index(number, f"b{number}", flag=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--skip-list", action="store_true")
    options = parser.parse_args()
    example = ROOT / "examples" / "checkpoint.md"
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", options.before], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        with serve_fake() as f_before, serve_fake() as f_now, serve_fake() as f_plain:
            for code in (old, ROOT / "ghstate"):  # as `pip install` leaves them: no side compiles on every start
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(code)], check=True, capture_output=True)
            sides = []
            for label, code, fake in ((options.before, str(old), f_before), ("now", str(ROOT), f_now),
                                      ("plain script", None, f_plain)):
                work = Path(tmp) / f"work-{len(sides)}"
                work.mkdir()
                side = Side(label, code, work, fake)
                writer = side if code else Side("writer", str(ROOT), Path(tempfile.mkdtemp()), fake)
                writer.ghstate("checkpoint", "--file", str(example))
                writer.ghstate("checkpoint", "--risk", "a chain to read")
                sides.append(side)
            print(f"medians of {options.runs} interleaved runs; own = wall - the fake's time\n")
            print(f"  {'path':<10} {'side':<14} {'wall':>8} {'fake':>8} {'own':>8} {'requests':>9}")
            figures = {}
            for kind in ("hook", "resume"):
                ghstates = sides[:2] + ([sides[2]] if kind == "resume" else [])
                for s in ghstates:
                    s.kind = "plain" if s.code is None else kind
                found = measure_each(ghstates, options.runs)
                figures[kind] = found
                for label, (wall, served, own, requests) in found.items():
                    print(f"  {kind:<10} {label:<14} {wall:7.3f}s {served:7.3f}s {own:7.3f}s {requests:>9}")
            now, before = figures["resume"]["now"], figures["resume"][options.before]
            plain = figures["resume"]["plain script"]
            hook_now, hook_before = figures["hook"]["now"], figures["hook"][options.before]
            print(f"\n  hook: now/{options.before} {hook_now[0] / hook_before[0]:.2f}x wall, "
                  f"{hook_now[2] / hook_before[2]:.2f}x own")
            print(f"  resume N: now/{options.before} {now[0] / before[0]:.2f}x wall, {now[2] / before[2]:.2f}x own")
            print(f"  resume N against the plain script: {now[2] / plain[2]:.2f}x own, {now[0] / plain[0]:.2f}x wall "
                  f"(the fake's share of each: {now[1] / now[0]:.0%}, {plain[1] / plain[0]:.0%})")
            if not options.skip_list:
                seed_many(f_now, options.count)
                now_side = sides[1]
                now_side.kind = "list"
                listed = measure_each([now_side], max(3, options.runs // 3))["now"]
                now_side.kind = "resume"
                again = measure_each([now_side], max(3, options.runs // 3))["now"]
                print(f"  list --limit 1000 at {options.count + 1:,} open: {listed[0]:.2f} s wall ({listed[3]} "
                      f"requests, {listed[1]:.2f} s the fake's), {listed[0] / again[0]:.1f}x resume N "
                      f"({again[0]:.2f} s); own {listed[2]:.2f} s, {listed[2] / again[2]:.1f}x")


def measure_each(sides: list[Side], runs: int) -> dict[str, tuple[float, float, float, int]]:
    """``measure``, each side with the path it was given (``Side.kind``)."""
    rows: dict[str, list[tuple[float, float, int]]] = {s.label: [] for s in sides}
    for side in sides:
        side.run(side.kind)
    for _ in range(runs):
        for side in sides:
            wall, served, requests, _ = side.run(side.kind)
            rows[side.label].append((wall, served, requests))
    return {label: (statistics.median(w for w, _, _ in r), statistics.median(s for _, s, _ in r),
                    statistics.median(w - s for w, s, _ in r), r[-1][2]) for label, r in rows.items()}


if __name__ == "__main__":
    main()
