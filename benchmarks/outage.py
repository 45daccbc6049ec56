"""The SessionStart hook and ``resume`` with GitHub answering, refusing connections and never answering: seconds
(wall time, process start included) and requests, before (REV) and after (this checkout).

Run: python benchmarks/outage.py [--before REV] [--runs N]

GitHub answering is the test suite's fake GitHub behind a real HTTP server on 127.0.0.1 (tests/github_http.py);
refusing is the same address once that server is gone; never answering is a socket on that address that takes
connections into its backlog and never reads them (the kernel completes the handshake: each request ends at its
read timeout). The address stays GitHub's: what this machine saw is of that GitHub. Each checkout first writes
a checkpoint and reads it while GitHub answers (so this machine has seen it), then each figure is the median of
N runs (the answering runs of before and after interleaved). Issue 45: the answering figures must not grow by
more than 5% (requests: not at all); without GitHub, the hook must stay within its 8 s (GitHub 4 s) and
``resume`` within 15 s, and both must answer with the checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
try:
    from github_http import serve_fake  # noqa: E402
except ModuleNotFoundError as exc:  # the stub is the test suite's fake GitHub
    raise SystemExit(f"{exc}: install the test dependencies first: pip install '.[test]'") from None

BEFORE = "f63a0c2"  # before issue 45: no replica, no fallback, no deadline


@contextlib.contextmanager
def refusing(bases: dict[str, str]) -> Iterator[dict[str, str]]:
    """GitHub's address with nothing listening there any more: every connection is refused."""
    yield bases


@contextlib.contextmanager
def never_answering(bases: dict[str, str]) -> Iterator[dict[str, str]]:
    """GitHub's address taken by a socket that queues connections and never reads or answers them."""
    with contextlib.ExitStack() as stack:
        for base in bases.values():
            sock = stack.enter_context(socket.socket())
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            sock.listen(128)
        yield bases


class Checkout:
    """One ghstate (a folder on PYTHONPATH) with a git repository whose checkpoint it wrote and read."""

    def __init__(self, label: str, code: str, work: Path) -> None:
        self.label, self.code, self.work = label, code, work
        for args in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                      "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
        self.cache = tempfile.mkdtemp(prefix="ghstate-bench-cache-")

    def env(self, api: str) -> dict[str, str]:
        return {**os.environ, "GH_TOKEN": "bench-token", "GITHUB_REPOSITORY": "octo/hello", "GITHUB_API_URL": api,
                "PYTHONPATH": self.code, "XDG_CACHE_HOME": self.cache}

    def run(self, api: str, *args: str, stdin: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "ghstate", *args], cwd=self.work, env=self.env(api), input=stdin,
                              capture_output=True, text=True, timeout=120)
        return time.perf_counter() - started, done

    def hook(self, api: str) -> tuple[float, subprocess.CompletedProcess]:
        event = {"hook_event_name": "SessionStart", "source": "clear", "cwd": str(self.work)}  # no session: whole
        return self.run(api, "hook", "session-start", stdin=json.dumps(event))


def answered(kind: str, done: subprocess.CompletedProcess) -> str:
    """What the agent got: the checkpoint from GitHub, the checkpoint as last seen, or nothing."""
    text = done.stdout
    if kind == "hook":
        text = json.loads(text)["hookSpecificOutput"]["additionalContext"] if text.strip() else ""
    if not text.strip():
        return f"nothing (exit {done.returncode})"
    if text.startswith("GitHub did not answer"):
        return f"last seen (exit {done.returncode})"
    return f"the checkpoint (exit {done.returncode})"


def main() -> None:
    rev = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else BEFORE
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 9
    example = ROOT / "examples" / "checkpoint.md"
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        with serve_fake() as fake_before, serve_fake() as fake_after:
            fakes = {"before": fake_before, "after": fake_after}  # one GitHub each: two checkpoints of one branch
            bases = {label: fake.base for label, fake in fakes.items()}
            sides = []
            for label, code in (("before", str(old)), ("after", str(ROOT))):
                work = Path(tmp) / f"work-{label}"
                work.mkdir()
                side = Checkout(label, code, work)
                side.run(bases[label], "checkpoint", "--new", "--file", str(example), "--title", f"bench {label}")
                side.run(bases[label], "checkpoint", "--risk", "a chain to read")
                side.run(bases[label], "resume")
                sides.append(side)
            print(f"hook (session-start, clear) and resume (by branch), median of {runs} runs; before = {rev}\n")
            for kind in ("hook", "resume"):
                answering(kind, sides, fakes, runs)
        for name, server, count in (("refusing", refusing, max(3, runs // 3)), ("never answering", never_answering, 1)):
            with server(bases) as apis:
                for kind in ("hook", "resume"):
                    for side in sides:
                        seconds, said = [], ""
                        for _ in range(count if side.label == "after" or name == "refusing" else 1):
                            api = apis[side.label]
                            took, done = side.hook(api) if kind == "hook" else side.run(api, "resume")
                            seconds.append(took)
                            said = answered(kind, done)
                        median = statistics.median(seconds)
                        print(f"  {kind:<7} GitHub {name + ':':<17} {side.label:<6} {median:5.2f} s "
                              f"(median of {len(seconds)}), gives {said}")


def answering(kind: str, sides: list[Checkout], fakes: dict, runs: int) -> None:
    """``kind`` with GitHub answering, before and after interleaved: median seconds and requests."""
    times: dict[str, list[float]] = {s.label: [] for s in sides}
    requests: dict[str, int] = {}
    for _ in range(runs):
        for side in sides:
            fake = fakes[side.label]
            fake.calls.clear()
            seconds, _ = side.hook(fake.base) if kind == "hook" else side.run(fake.base, "resume")
            times[side.label].append(seconds)
            requests[side.label] = len(fake.calls)
    medians = {label: statistics.median(values) for label, values in times.items()}
    growth = (medians["after"] / medians["before"] - 1) * 100
    print(f"  {kind:<7} GitHub answering:  before {medians['before']:.2f} s, {requests['before']} req; "
          f"after {medians['after']:.2f} s, {requests['after']} req ({growth:+.1f}%)")


if __name__ == "__main__":
    main()
