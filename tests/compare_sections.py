"""OLD against NEW: does the table of sections (issue 49) leave what ghstate writes as it was?

Run by hand (pytest does not collect it)::

    .venv/bin/python tests/compare_sections.py --base REV [--new PATH] [--examples N]
    .venv/bin/python tests/compare_sections.py --base HEAD        # the same code on both sides: all identical

``--base`` (default aeafc58, the merged main the refactor started from) is exported with ``git archive`` into a
scratch folder; ``--new`` (default: the checkout this script is in) is copied with the files git lists,
uncommitted changes included. In each copy the same driver (this file, ``--drive``) runs in a subprocess with
that copy first on sys.path (PYTHONHASHSEED=0), so each side imports its own ghstate; the tests' strategies
(tests/strategies.py, bodies.py) are the NEW side's on both, so that only ghstate differs.

Over every body in the corpus (``--corpus``, default /work/shared/corpus/issue-bodies, and the tests'
fixtures' ``*.md``) and over N checkpoints Hypothesis draws from ``strategies.checkpoints`` (derandomized, the
same draws on both sides), the driver prints one JSON line per case: ``parse``'s checkpoint as ``--json``
gives it (``state_json.to_json``) with the sections present, the findings and the lines, and the bytes
``render_body`` writes for it (for a drawn state: the render, then the parse of that render and its render
again). The script compares the two sides case by case, prints each difference as a unified diff, then
``N cases, identical K``; exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
DEFAULT_BASE = "aeafc58"
CORPUS = Path("/work/shared/corpus/issue-bodies")


def _bodies(corpus: Path, tests: Path) -> list[tuple[str, str]]:
    files = sorted(corpus.glob("*.md")) if corpus.is_dir() else []
    files += sorted((tests / "fixtures").rglob("*.md"))
    return [(str(p), p.read_text(encoding="utf-8", errors="replace")) for p in files]


def _record(body: str) -> dict[str, Any]:
    from bodies import render_body

    from ghstate.core.parse import parse
    from ghstate.core.state_json import to_json

    try:
        parsed = parse(body)
    except Exception as exc:  # the same failure on both sides is the same behaviour
        return {"error": f"{type(exc).__name__}: {exc}"}
    out: dict[str, Any] = {"json": to_json(parsed.checkpoint), "present": sorted(parsed.present),
                           "findings": [list(f) for f in parsed.findings], "lines": parsed.lines}
    try:
        out["render"] = render_body(parsed.checkpoint)
    except Exception as exc:
        out["render"] = f"{type(exc).__name__}: {exc}"
    return out


def _drawn(examples: int) -> list[Any]:
    from hypothesis import HealthCheck, given, settings
    from strategies import checkpoints

    found: list[Any] = []

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(checkpoints())
    def collect(cp: Any) -> None:
        found.append(cp)

    collect()
    return found


def drive(corpus: Path, tests: Path, examples: int) -> None:
    sys.path.insert(0, str(tests))
    for name, body in _bodies(corpus, tests):
        print(json.dumps({"case": name, **_record(body)}, sort_keys=True, default=repr))
    from bodies import render_body

    for i, cp in enumerate(_drawn(examples)):
        rendered = render_body(cp)
        print(json.dumps({"case": f"drawn/{i}", "render": rendered, "again": _record(rendered)},
                         sort_keys=True, default=repr))


def _run(copy: Path, tests: Path, corpus: Path, examples: int) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--drive", "--corpus", str(corpus),
                           "--tests", str(tests), "--examples", str(examples)], cwd=copy, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"the driver failed in {copy}:\n{done.stderr[-3000:]}")
    return {json.loads(line)["case"]: line for line in done.stdout.splitlines()}


def _export(commit: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=CHECKOUT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _copy(source: Path, into: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=source, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    for name in listed:
        path = source / name
        if path.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, into / name)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=DEFAULT_BASE)
    ap.add_argument("--new", type=Path, default=CHECKOUT)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--drive", action="store_true")
    ap.add_argument("--tests", type=Path)
    args = ap.parse_args()
    if args.drive:
        drive(args.corpus, args.tests, args.examples)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        old, new = Path(scratch, "old"), Path(scratch, "new")
        old.mkdir()
        new.mkdir()
        _export(args.base, old)
        _copy(args.new, new)
        tests = new / "tests"
        before = _run(old, tests, args.corpus, args.examples)
        after = _run(new, tests, args.corpus, args.examples)
    same = 0
    for case in sorted(set(before) | set(after)):
        a, b = before.get(case, ""), after.get(case, "")
        if a == b:
            same += 1
            continue
        print(f"--- {case}")
        pretty = [json.dumps(json.loads(x), indent=1, sort_keys=True).splitlines() if x else [] for x in (a, b)]
        print("\n".join(difflib.unified_diff(*pretty, "old", "new", lineterm="")))
    total = len(set(before) | set(after))
    print(f"{total} cases, identical {same}")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
