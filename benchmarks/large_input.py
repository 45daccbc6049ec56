"""A large ``--file`` merged into a large checkpoint, on the local store, against a floor.

Run: python benchmarks/large_input.py [--sizes 2500,4000] [--engine-sizes 4000,16000,64000] [--runs 3]

For each size N it builds, in a throwaway git repository, a checkpoint of N items (a tenth phases
with steps, the rest decisions), takes the file a session would write back (``resume --format
markdown``), lets the checkpoint move on meanwhile (a decision added), and edits the file (every
other decision revised, a tenth more added): so ``checkpoint --file`` merges a section both sides
changed, the slowest path there is. It prints the median wall time of that write beside the floor:
writing the same file as a new checkpoint (parse, render, write; nothing to merge). Never asserts;
the figure to watch is the 2,500-item row (a 59,000-character update; wanted: under 3 s).

Larger inputs are refused before they are read (a markdown file over 131,072 characters), so the
merge itself is then timed in process beyond that bound (``--engine-sizes``): the same two sides,
merged as ``checkpoint --file`` merges them (the file's sections applied, the summary of changes),
to show that its time grows with the items, not with their square.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def ghstate_command() -> list[str]:
    script = Path(sys.executable).parent / "ghstate"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ghstate"]


def body_of(items: int) -> str:
    """A checkpoint of ``items`` short items: a fiftieth phases, each with 4 steps, the rest decisions
    (2,500 items make a body of about 52,000 characters)."""
    phases = max(1, items // 50)
    decisions = items - phases * 5
    lines = ["# A large task", "", "## Goal", "Move the storage layer to the new engine.", "", "## Current status"]
    for i in range(phases):
        lines.append(f"- [{'x' if i < phases // 2 else ' '}] Phase {i + 1}: module {i}")
        lines += [f"  - [{'x' if j < 2 else ' '}] step {j} of {i}" for j in range(4)]
    lines += ["", "## Decisions locked", *(f"- d{i}: keep a{i}" for i in range(decisions))]
    lines += ["", "## Resume instruction", f"Start at Phase {phases // 2 + 1}.", ""]
    return "\n".join(lines)


def edited(made: str) -> str:
    """The file as a session edits it: every other decision revised, one in twenty-five more added."""
    out, added = [], 0
    for n, line in enumerate(made.split("\n")):
        if line.startswith("- d") and n % 2:
            line += " (r)"
        if line.startswith("## Resume instruction") and not added:
            count = sum(x.startswith("- d") for x in out) // 25
            out[-1:-1] = [f"- new {i}: from a file" for i in range(count)]
            added = count
        out.append(line)
    return "\n".join(out)


def run(cmd: list[str], cwd: Path, env: dict, stdin: str | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[1:])} failed: {done.stderr.strip()}")
    return took, done.stdout


def measure(items: int, runs: int, env: dict) -> tuple[float, float, int]:
    """Median seconds of the merging write and of the floor, and the update's size in characters."""
    ghstate = ghstate_command()
    merges, floors, size = [], [], 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            (repo / "base.md").write_text(body_of(items))
            run([*ghstate, "checkpoint", "--store", "local", "--file", "base.md"], repo, env)
            _, made = run([*ghstate, "resume", "1", "--store", "local", "--format", "markdown"], repo, env)
            run([*ghstate, "checkpoint", "1", "--store", "local", "--decision", "added meanwhile"], repo, env)
            update = edited(made)
            size = len(update)
            (repo / "update.md").write_text(update)
            took, _ = run([*ghstate, "checkpoint", "1", "--store", "local", "--file", "update.md"], repo, env)
            merges.append(took)
            took, _ = run([*ghstate, "checkpoint", "--new", "--store", "local", "--file", "update.md"], repo, env)
            floors.append(took)
    return statistics.median(merges), statistics.median(floors), size


def engine(items: int, runs: int) -> float:
    """Median seconds of the merge alone: the file's sections over the checkpoint, both changed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ghstate.core.edits import apply_incoming, describe
    from ghstate.core.parse import parse

    current = parse(body_of(items) + "\n").checkpoint
    current = current._replace(decisions=(*current.decisions, "added meanwhile"))
    incoming = parse(edited(body_of(items))).checkpoint
    present = frozenset({"goal", "phases", "decisions", "resume"})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        merged, _ = apply_incoming(current, incoming, present, base={})
        describe(current, merged)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2500,4000")
    parser.add_argument("--engine-sizes", default="4000,16000,64000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "GHSTATE_NO_CACHE": "1", "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    env.pop("GHSTATE_DIR", None)
    print(f"{'items':>6} {'update chars':>13} {'merge write':>12} {'floor: new':>11} {'ratio':>6}")
    for items in (int(x) for x in args.sizes.split(",")):
        merge, floor, size = measure(items, args.runs, env)
        print(f"{items:>6} {size:>13,} {merge:>11.2f}s {floor:>10.2f}s {merge / floor:>5.1f}x")
    print(f"\n{'items':>6} {'merge alone':>12} {'per item':>9}")
    for items in (int(x) for x in args.engine_sizes.split(",") if x):
        took = engine(items, args.runs)
        print(f"{items:>6} {took:>11.2f}s {took / items * 1e6:>7.0f}µs")


if __name__ == "__main__":
    main()
