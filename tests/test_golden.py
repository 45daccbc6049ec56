"""Golden pairs: each ``golden/NAME.md`` parses to ``NAME.json``, and renders to ``NAME.out.md``.

Regenerate after an intended change with ``GHSTATE_REGEN_GOLDEN=1 pytest tests/test_golden.py`` and
read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bodies import render_body
from test_human_bodies import assert_keeps_words

from ghstate.core.parse import parse
from ghstate.core.state_json import from_json, to_json

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p for p in GOLDEN.glob("*.md") if not p.name.endswith(".out.md"))
REGEN = os.environ.get("GHSTATE_REGEN_GOLDEN") == "1"


def _compare(path: Path, actual: str) -> None:
    if REGEN:
        path.write_text(actual, encoding="utf-8", newline="")
    assert path.exists(), f"{path.name} is missing: write it with GHSTATE_REGEN_GOLDEN=1, then read it"
    assert actual == path.read_text(encoding="utf-8"), f"{path.name} differs (GHSTATE_REGEN_GOLDEN=1 rewrites)"


@pytest.mark.parametrize("source", CASES, ids=lambda p: p.stem)
def test_golden_pair(source):
    text = source.read_bytes().decode("utf-8")
    cp = parse(text).checkpoint
    state = to_json(cp)
    _compare(source.with_suffix(".json"), json.dumps(state, ensure_ascii=False, indent=2) + "\n")
    rendered = render_body(cp)
    _compare(source.with_name(source.stem + ".out.md"), rendered)
    assert from_json(state) == cp
    assert parse(rendered).checkpoint == cp
    assert_keeps_words(text)


def test_golden_cases_exist():
    assert len(CASES) >= 7


def test_a_missing_golden_file_fails_rather_than_being_written(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "REGEN", False)
    with pytest.raises(AssertionError, match="is missing"):
        _compare(tmp_path / "new.json", "{}")
    assert not (tmp_path / "new.json").exists()
