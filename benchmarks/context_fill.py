"""The hook that asks for a checkpoint when the context fills, and the status line: their wall time.

Run: python benchmarks/context_fill.py [--runs N] [--transcript-mb MB]

In a real git repository with the large task's checkpoint (30 phases, 40 decisions; ~17 KB) and one commit since,
a Claude Code transcript of MB megabytes (as long sessions make them: Claude Code 2.1.330 writes ~100 KB a turn)
whose last answer says how full the context is. Each figure is the median of N runs, a fresh process each:

- the hook on a turn under the threshold (the usual turn: the transcript's end read, nothing said or written);
- the hook on the turn that crosses it (the reminder: the checkpoint's marker, git, the template, the seen-file);
- the hook on a later turn over it (already asked: the seen-file read, nothing written);
- ``ghstate statusline`` warm (its own line, Claude Code's JSON on stdin) beside ``python -c pass``, Python's start.

The issue asks for the hook within 1 s with and without the reminder. Prints figures; asserts nothing.
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def transcript(path: Path, megabytes: float, tokens: int) -> None:
    """A transcript of about ``megabytes``, its last answer ``tokens`` into a 200,000-token window."""
    when = (datetime.now(timezone.utc) + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    filler = json.dumps({"type": "attachment", "attachment": {"type": "prompt_snapshot", "text": "x" * 8000}})
    with path.open("w") as fh:
        for _ in range(int(megabytes * 1_000_000 / len(filler))):
            fh.write(filler + "\n")
        fh.write(json.dumps({"type": "assistant", "timestamp": when, "message": {"model": "claude-opus-5-5", "usage": {
            "input_tokens": 10, "cache_read_input_tokens": tokens - 10, "cache_creation_input_tokens": 0}}}) + "\n")


def timed(command: list[str], cwd: Path, env: dict, data: str = "") -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, input=data, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--transcript-mb", type=float, default=5.0)
    args = parser.parse_args()
    from large_task import large_task_body

    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY")}
    env.update({"GHSTATE_STORE": "local", "PYTHONPATH": str(ROOT), "GIT_CONFIG_GLOBAL": os.devnull})
    ghstate = [sys.executable, "-m", "ghstate"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        git = ["git", "-c", "user.email=b@e", "-c", "user.name=b"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=work, check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=work, check=True)
        subprocess.run([*ghstate, "checkpoint", "--file", "-"], input=large_task_body(), text=True, cwd=work, env=env,
                       check=True, capture_output=True)
        (work / "work.py").write_text("x = 1\n")
        subprocess.run([*git, "add", "work.py"], cwd=work, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "work"], cwd=work, check=True)
        under, over = Path(tmp) / "under.jsonl", Path(tmp) / "over.jsonl"
        transcript(under, args.transcript_mb, 20_000)
        transcript(over, args.transcript_mb, 150_000)

        def hook(path: Path, session: str) -> tuple[float, str]:
            data = json.dumps({"hook_event_name": "Stop", "session_id": session, "transcript_path": str(path),
                               "cwd": str(work), "stop_hook_active": False})
            return timed([*ghstate, "hook", "checkpoint-due"], work, env, data)

        line_event = json.dumps({"session_id": "line", "context_window": {"used_percentage": 42},
                                 "workspace": {"current_dir": str(work)}})
        figures: dict[str, list[float]] = {"python -c pass": [], "hook, under the threshold": [],
                                           "hook, crossing it (the reminder)": [], "hook, over it, asked already": [],
                                           "statusline (warm)": []}
        timed([*ghstate, "statusline"], work, env, line_event)  # warm: bytecode and the OS's file cache
        said = ""
        for i in range(args.runs):
            figures["python -c pass"].append(timed([sys.executable, "-c", "pass"], work, env)[0])
            figures["hook, under the threshold"].append(hook(under, f"u{i}")[0])
            elapsed, out = hook(over, f"o{i}")
            figures["hook, crossing it (the reminder)"].append(elapsed)
            said = said or out
            figures["hook, over it, asked already"].append(hook(over, f"o{i}")[0])
            figures["statusline (warm)"].append(timed([*ghstate, "statusline"], work, env, line_event)[0])
        line = timed([*ghstate, "statusline"], work, env, line_event)[1].strip()
    assert said, "the crossing gave no reminder"
    print(f"checkpoint-due and statusline, {args.transcript_mb:g} MB transcript (wall time, median of {args.runs}; "
          "a fresh process each)")
    for name, values in figures.items():
        print(f"  {name:<40} {statistics.median(values):7.1f} ms   (max {max(values):.1f})")
    floor = statistics.median(figures["python -c pass"])
    print(f"  statusline / python -c pass: {statistics.median(figures['statusline (warm)']) / floor:.1f}x; "
          f"its line: {line!r} ({len(line)} characters)")
    print(json.dumps({name: round(statistics.median(values), 1) for name, values in figures.items()}))


if __name__ == "__main__":
    main()
