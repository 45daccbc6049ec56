"""ghstate's speed and size figures on this machine. Run: python benchmarks/bench.py [--quick]

Prints, never asserts: cold start of the CLI against the floor of importing its three libraries, a
local resume, in-process parse and render of a 65,536-character body, and the prompt's size against
the state it carries. Timing figures are medians of repeated runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "checkpoint.md"


def ghstate_command() -> list[str]:
    script = Path(sys.executable).parent / "ghstate"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ghstate"]


HOOK_EVENT = b'{"hook_event_name":"SessionStart","source":"compact","session_id":"bench","cwd":"."}'


def medians_ms(commands: dict[str, tuple[list[str], Path | None]], runs: int, env: dict) -> dict[str, float]:
    """Median wall time of each command, runs interleaved so that machine noise hits all alike. A hook
    reads its host's event on stdin (the same session each time: a repeat, after the first run)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (cmd, cwd) in commands.items():
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True,
                                  input=HOOK_EVENT if "hook" in cmd else None)
            times[name].append((time.perf_counter() - start) * 1000)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode(errors='replace')}")
    return {name: statistics.median(values) for name, values in times.items()}


def big_body(size: int = 65_536) -> str:
    """A realistic checkpoint of exactly ``size`` characters: many phases, decisions, files, notes."""
    from ghstate.core import render
    from ghstate.core.marker import Meta
    from ghstate.core.model import Checkpoint, Extra, Phase, Step
    from ghstate.templating import environment

    def render_body(cp):
        return render.render_body(cp, environment())

    phases = tuple(
        Phase(f"Phase {i}: {'migrate' if i % 2 else 'verify'} the `module_{i}` layer", i < 7,
              tuple(Step(f"step {j} of phase {i}: update `src/m{i}/f{j}.py` and its tests", j < 3) for j in range(6)))
        for i in range(1, 13)
    )
    decisions = [f"decision {i}: keep the public API of `pkg.mod{i}` stable; callers in src/app/{i}.py depend "
                 f"on it | see [ADR {i}](docs/adr/{i}.md)" for i in range(2000)]
    cp = Checkpoint(
        title="Large refactor", goal="Move the storage layer to the new engine without downtime. " * 8,
        phases=phases, questions=tuple(f"question {i}: is *path {i}* still needed?" for i in range(30)),
        risks=tuple(f"risk {i}: a slow query on table_{i} under load" for i in range(30)),
        files=tuple(f"`src/storage/module_{i}.py`" for i in range(40)),
        resume="Start at Phase 7. Re-read the storage modules first; the migration script is half done.",
        verification="passing at 4f2c1e9", meta=Meta(revision=42, branch="feature/storage", commit="4f2c1e9" * 5),
    )
    filler = Extra("Notes from review", "", 2, "verification")
    lo, hi = 0, len(decisions)
    while lo < hi:  # the most decisions that still fit
        mid = (lo + hi + 1) // 2
        if len(render_body(Checkpoint(**{**cp._asdict(), "decisions": tuple(decisions[:mid]), "extra": (filler,)}))) \
                <= size:
            lo = mid
        else:
            hi = mid - 1
    base = Checkpoint(**{**cp._asdict(), "decisions": tuple(decisions[:lo])})
    short = len(render_body(Checkpoint(**{**base._asdict(), "extra": (Extra("Notes from review", "x", 2,
                                                                              "verification"),)})))
    pad = "x" + "n" * (size - short)
    body = render_body(Checkpoint(**{**base._asdict(), "extra": (Extra("Notes from review", pad, 2, "verification"),)}))
    assert len(body) == size, len(body)
    return body


def shaped_bodies(size: int = 65_536) -> dict[str, str]:
    """Other bodies of exactly ``size`` characters: the shapes that cost markdown-it the most."""
    def fill(head: str, unit, tail: str = "\n## Resume instruction\nStart at Phase 1.\n") -> str:
        parts, i = [head], 0
        while sum(map(len, parts)) + len(unit(i)) + len(tail) < size:
            parts.append(unit(i))
            i += 1
        body = "".join(parts) + tail
        return body[:-len(tail)] + "x" * (size - len(body)) + tail if len(body) < size else body

    return {
        "5,000-ish phases": fill("## Goal\nMany phases.\n\n## Current status\n",
                                 lambda i: f"- [{'x' if i % 3 else ' '}] Phase {i}: step\n"),
        "phases with 5 steps each": fill("## Goal\nDeep.\n\n## Current status\n",
                                         lambda i: f"- [ ] Phase {i}: p\n" + "  - [x] step\n" * 5),
        "unknown sections": fill("## Goal\nNotes.\n\n", lambda i: f"## Note {i}\ntext {i}\n\n"),
        "HTML comments": fill("## Goal\n", lambda i: f"<!-- comment {i} -->\n\n"),
        "a hand-edited CRLF issue": fill("<!-- ghstate:v1 {\"revision\":3} -->\r\n### Objective:\r\nShip.\r\n\r\n"
                                         "# Progress\r\n", lambda i: f"* [X] Phase {i}: done\r\n"),
    }


def peak_rss_mb(cmd: list[str], cwd: Path | None, env: dict) -> float:
    """Peak resident memory of one run of ``cmd``, measured by a parent that has no other child."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    return int(out.stdout.strip() or 0) / 1024  # ru_maxrss is in KiB on Linux


def peak_alloc_mb(fn) -> float:
    import tracemalloc

    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / (1 << 20)


def in_process_ms(fn, runs: int) -> float:
    fn()  # warm: compiled regexes and templates are a one-off per process
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    runs = 5 if args.quick else 21

    from ghstate.core import present, render
    from ghstate.core.parse import parse
    from ghstate.templating import environment

    templates = environment()

    def render_body(cp):
        return render.render_body(cp, templates)

    def prompt(cp, source):
        return present.prompt(cp, source=source, env=templates)

    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {runs} runs per figure (median)")
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY")}
    env["GHSTATE_STORE"] = "local"
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ghstate-bench-cache-")  # its own parse and template caches

    import ghstate

    package = Path(ghstate.__file__).parent
    if not (package / "__pycache__").is_dir():
        print("note: ghstate has no compiled bytecode here (an editable install with PYTHONDONTWRITEBYTECODE?);"
              " its start-up figures include compiling it. `pip install .` compiles it, as users get it.")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        git = shutil.which("git")
        if git:
            for cmd in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                         "--allow-empty", "-m", "init"]):
                subprocess.run([git, *cmd], cwd=work, check=True, capture_output=True)
        subprocess.run([*ghstate_command(), "checkpoint", "--file", str(EXAMPLE)], cwd=work, env=env, check=True,
                       capture_output=True)
        commands = {
            "floor": ([sys.executable, "-c", "import click, jinja2, markdown_it"], None),
            "version": ([*ghstate_command(), "--version"], None),
            "resume": ([*ghstate_command(), "resume"], work),
            "short": ([*ghstate_command(), "resume", "--format", "short"], work),
            "hook": ([*ghstate_command(), "hook", "session-start"], work),
        }
        figures = medians_ms(commands, runs, env)
        memory = {name: peak_rss_mb(cmd, cwd, env) for name, (cmd, cwd) in commands.items()}
    floor, version, resume, resume_short, hook = (figures[k] for k in ("floor", "version", "resume", "short", "hook"))
    print("\ncold start (wall time, one process each; an unchanged body comes from the parse cache)")
    print(f"  floor: python -c 'import click, jinja2, markdown_it'   {floor:7.1f} ms")
    print(f"  ghstate --version                                    {version:7.1f} ms  ({version / floor:.2f}x floor)")
    print(f"  ghstate resume (local store, git repo)               {resume:7.1f} ms  ({resume / floor:.2f}x floor)"
          "   target: at most 1.0x")
    print(f"  ghstate resume --format short                        {resume_short:7.1f} ms  "
          f"({resume_short / floor:.2f}x floor)")
    print(f"  ghstate hook session-start (a repeated compact)      {hook:7.1f} ms  ({hook / floor:.2f}x floor)"
          "   target: at most 1.0x")
    print("  peak memory (RSS): " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in memory.items()))

    body = big_body()
    cp = parse(body).checkpoint

    def fresh_parse(text: str):  # parse is memoised per process; a command parses a body once
        parse.cache_clear()
        return parse(text)

    def fresh_update(new, text: str) -> str:  # what a write does: read the stored body, write over it
        fresh_parse(text)
        return render_update(new, text, templates)

    parse_ms = in_process_ms(lambda: fresh_parse(body), runs)
    render_ms = in_process_ms(lambda: render_body(cp), runs)
    from ghstate.core.splice import render_update

    changed = cp._replace(verification="failing at 4f2c1e9")
    update_ms = in_process_ms(lambda: fresh_update(changed, body), runs)
    print(f"\nin-process, a {len(body):,}-character body ({len(cp.phases)} phases, {len(cp.decisions)} decisions)")
    print(f"  parse   {parse_ms:6.1f} ms   target: under 50 ms")
    print(f"  render  {render_ms:6.1f} ms   target: under 50 ms")
    print(f"  update  {update_ms:6.1f} ms   (read the stored body, write one changed section over it in place)")
    print(f"  peak allocation: parse {peak_alloc_mb(lambda: fresh_parse(body)):.1f} MB, "
          f"update {peak_alloc_mb(lambda: fresh_update(changed, body)):.1f} MB")
    print("\nother 65,536-character shapes (markdown-it's own time grows with the number of blocks)")
    for name, text in shaped_bodies().items():
        assert len(text) == 65_536, (name, len(text))
        shaped = parse(text).checkpoint
        p_ms = in_process_ms(lambda text=text: fresh_parse(text), max(3, runs // 3))
        r_ms = in_process_ms(lambda shaped=shaped: render_body(shaped), max(3, runs // 3))
        u_ms = in_process_ms(lambda shaped=shaped, text=text: fresh_update(shaped._replace(resume="Go on."), text),
                             max(3, runs // 3))
        print(f"  {name:<26} parse {p_ms:6.1f} ms   render {r_ms:6.1f} ms   update {u_ms:6.1f} ms"
              f"{'' if p_ms < 50 else '   (over the 50 ms target)'}")

    sample = parse(EXAMPLE.read_text()).checkpoint
    text = prompt(sample, source="local checkpoint #1 (.ghstate/1.md)")
    state_chars = sum(len(x) for x in (sample.title, sample.goal, sample.resume, *sample.decisions, *sample.questions,
                                       *sample.risks, *sample.file_paths, *(p.name for p in sample.phases)))
    print("\nprompt size (examples/checkpoint.md)")
    print(f"  state text {state_chars} chars, prompt {len(text)} chars, fixed overhead {len(text) - state_chars} chars "
          f"({(len(text) - state_chars) / len(text):.0%} of the prompt)")
    big_prompt = prompt(cp, source="GitHub issue #24 (https://github.com/o/r/issues/24)")
    print(f"  65,536-character body: prompt {len(big_prompt):,} chars "
          f"({len(big_prompt) / len(body):.0%} of the body: finished phases are compacted to their names)")
    from ghstate.core import fit

    budget = fit.host_budget("claude-code")
    fitted = present.prompt(cp, source="GitHub issue #24 (https://github.com/o/r/issues/24)", env=templates,
                            budget=budget, show_command="ghstate show 24")
    print(f"  the same, fitted for Claude Code's hook ({budget.size:,} {budget.unit}): {len(fitted):,} chars "
          "(benchmarks/prompt_size.py has more)")
    print(json.dumps({"floor_ms": round(floor, 1), "version_ms": round(version, 1), "resume_ms": round(resume, 1),
                      "hook_ms": round(hook, 1), "resume_ratio": round(resume / floor, 2),
                      "hook_ratio": round(hook / floor, 2),
                      "parse_ms": round(parse_ms, 1), "render_ms": round(render_ms, 1),
                      "prompt_overhead_chars": len(text) - state_chars}))


if __name__ == "__main__":
    main()
