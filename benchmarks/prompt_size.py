"""The rehydration prompt's size against the state it carries, and the SessionStart hook's wall time.

Run: python benchmarks/prompt_size.py [--runs N]

For the example checkpoint, every body of the shared corpus (skipped when ../shared/corpus is absent)
and a realistic large task (30 phases with steps, 40 decisions, 25 risks, 30 files; ~17 KB): state
characters (the text a person wrote: title, goal, phases, steps, items, resume instruction), the body,
the text of sections ghstate does not know (kept in the body, not in the prompt), the prompt
unfitted and fitted to each host's hook budget, and the prompt's overhead ratio (prompt / state). Then the
hook's wall time in a real git repository: a first SessionStart (the whole prompt), the same again
(nothing: the session has it), and a resume after one new decision (only the change). Prints figures; asserts nothing.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLE = ROOT / "examples" / "checkpoint.md"
CORPUS = ROOT.parent / "shared" / "corpus" / "issue-bodies"
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def state_chars(cp) -> int:
    texts = [cp.title, cp.goal, cp.resume, *cp.decisions, *cp.questions, *cp.risks, *cp.files, *cp.runtime]
    texts += [p.name for p in cp.phases] + [s.text for p in cp.phases for s in p.steps]
    return sum(len(t) for t in texts)


def sizes(name: str, body: str) -> None:
    from ghstate.core import fit, limits, present
    from ghstate.core.parse import parse
    from ghstate.templating import environment

    env = environment()
    cp = parse(body).checkpoint
    state = state_chars(cp)

    def prompt(budget: int | fit.Budget) -> str:
        facts = present.PromptFacts()
        return present.fitted_prompt(cp, source="GitHub issue #24 (https://github.com/o/r/issues/24)", env=env,
                                     facts=facts, budget=budget, show_command="ghstate show 24").text

    full = len(prompt(0))
    fitted = {host: len(prompt(fit.host_budget(host))) for host in limits.HOSTS}
    ratio = f"{full / state:5.2f}" if state else "  n/a"
    other = sum(len(e.body) for e in cp.extra)  # sections ghstate does not know: kept, not in the prompt
    print(f"  {name[:44]:<44} {state:>7,} {other:>7,} {len(body):>7,} {full:>7,} {ratio}  "
          + "  ".join(f"{host} {chars:,}" for host, chars in fitted.items()))


def hook_times(runs: int) -> None:
    from large_task import large_task_body

    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY")}
    env.update({"GHSTATE_STORE": "local", "PYTHONPATH": str(ROOT), "GIT_CONFIG_GLOBAL": os.devnull})
    ghstate = [sys.executable, "-m", "ghstate"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for cmd in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                     "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *cmd], cwd=work, check=True, capture_output=True)
        (work / "large.md").write_text(large_task_body())
        subprocess.run([*ghstate, "checkpoint", "--file", "large.md"], cwd=work, env=env, check=True,
                       capture_output=True)

        def hook(source: str, session: str) -> tuple[float, int]:
            data = json.dumps({"session_id": session, "source": source, "cwd": str(work),
                               "hook_event_name": "SessionStart"})
            start = time.perf_counter()
            proc = subprocess.run([*ghstate, "hook", "session-start"], cwd=work, env=env, input=data,
                                  capture_output=True, text=True)
            elapsed = (time.perf_counter() - start) * 1000
            context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else ""
            return elapsed, len(context)

        figures: dict[str, list[tuple[float, int]]] = {"floor: python -c 'import click, jinja2, markdown_it'": [],
                                                       "first (whole prompt)": [], "again (nothing)": [],
                                                       "resume after a decision (the change)": []}
        for i in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import click, jinja2, markdown_it"], check=True)
            figures["floor: python -c 'import click, jinja2, markdown_it'"].append(
                ((time.perf_counter() - start) * 1000, 0))
            figures["first (whole prompt)"].append(hook("compact", f"s{i}"))
            figures["again (nothing)"].append(hook("compact", f"s{i}"))
            subprocess.run([*ghstate, "checkpoint", "--decision", f"decision {i} of the benchmark"], cwd=work,
                           env=env, check=True, capture_output=True)
            figures["resume after a decision (the change)"].append(hook("resume", f"s{i}"))
    print(f"\nSessionStart hook on the large task (wall time, median of {runs}; a fresh process each)")
    for name, values in figures.items():
        print(f"  {name:<54} {statistics.median(v[0] for v in values):7.1f} ms   "
              f"{statistics.median(v[1] for v in values):>6,.0f} chars injected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from large_task import large_task_body

    from ghstate.core import limits

    print("prompt size (characters): state, body, prompt unfitted, prompt/state, and fitted per host's hook limit "
          f"({', '.join(f'{h} {k.hook.size:,} {k.hook.unit}' for h, k in limits.HOSTS.items())})")
    print(f"  {'checkpoint':<44} {'state':>7} {'other':>7} {'body':>7} {'prompt':>7} ratio")
    sizes("examples/checkpoint.md", EXAMPLE.read_text(encoding="utf-8"))
    if CORPUS.is_dir():
        for path in sorted(CORPUS.glob("*.md")):
            sizes(f"corpus/{path.name}", path.read_text(encoding="utf-8"))
    else:
        print(f"  (corpus skipped: {CORPUS} is absent)")
    sizes("large task (30 phases, 40 decisions, 25 risks)", large_task_body())
    hook_times(args.runs)


if __name__ == "__main__":
    main()
