"""Escaping of free text and list items: a bijection that keeps sections from swallowing each other."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.core.markup import blocks, escape_item, escape_text, item_text, unescape_item, unescape_text

DANGEROUS = [
    "# heading",
    "para\n---",
    "para\n===",
    "```\nunclosed fence",
    "~~~\nunclosed",
    "<!-- never closed",
    "<pre>\nnever closed",
    "<pre>\n```\n</pre>\n```",  # a fence that markdown-it sees open after an HTML block
    "~~~ ghstate-text\nlooks wrapped\n~~~",
]
SAFE = ["plain text", "- a list\n- of items", "```\nclosed\n# not a heading\n```", "<!-- closed -->", "\\- kept"]


@pytest.mark.parametrize("text", DANGEROUS + SAFE)
def test_escape_round_trips_and_stays_inside(text):
    escaped = escape_text(text)
    assert unescape_text(escaped) == text
    tree = blocks(escaped + "\n\n## next\n")
    assert [b.content for b in tree if b.type == "heading"] == ["next"]


@pytest.mark.parametrize("text", SAFE)
def test_safe_text_is_left_alone(text):
    assert escape_text(text) == text


def test_human_escapes_that_are_not_needed_are_kept():
    # "\---" after a blank line shows literal dashes on GitHub; it must not turn into a rule
    assert unescape_text("a\n\n\\---") == "a\n\n\\---"
    assert escape_text("a\n\n\\---") == "a\n\n\\---"


@given(st.text(st.sampled_from(list("#=-`~<!>\\ \nabp/re")), max_size=40))
@settings(max_examples=examples(400), deadline=None)
def test_escape_is_a_bijection(text):
    assert unescape_text(escape_text(text)) == text


@pytest.mark.parametrize("text", ["---", "- -", "\\---", "[x] done?", "plain"])
def test_items(text):
    assert unescape_item(escape_item(text)) == text
    assert unescape_item(escape_item(text, plain_step=True), plain_step=True) == text


def test_item_text_with_tabs_and_lazy_lines():
    src = "-\tfirst\n\tsecond\nlazy\n\n\t  - sub"
    lines = src.split("\n")
    item = blocks(src)[0].children[0]
    assert item_text(lines, item) == "first\nsecond\nlazy\n\n  - sub"


def test_level_five_and_six_headings_in_text_are_left_as_written():
    from ghstate.core.markup import escape_text

    assert escape_text("##### a small heading\n###### smaller") == "##### a small heading\n###### smaller"
    assert escape_text("#### would start a section").startswith("\\")


def test_a_phase_reference_is_a_whole_word_prefix_at_most():
    from ghstate.core.model import Phase, find_phase

    phases = (Phase("Phase 1: one"), Phase("Phase 10"), Phase("Phase 2b: x"), Phase("Setup db"))
    with pytest.raises(LookupError, match="no phase 'Phase 2'"):
        find_phase(phases, "Phase 2")
    assert find_phase(phases, "Phase 1") == 0 and find_phase(phases, "setup") == 3


def test_a_phase_named_as_a_number_is_found_by_its_name_first():
    """Found by a newcomer: `--done 2` ticked the second phase although one is named "2" (the CONTRACT orders
    PHASE as the full name, its label, its 1-based number)."""
    from ghstate.core.model import Phase, find_phase

    phases = (Phase("setup"), Phase("3"), Phase("2"))
    assert [find_phase(phases, ref) for ref in ("2", "3", "1", "setup")] == [2, 1, 0, 0]
