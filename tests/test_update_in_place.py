"""Writing over an existing body rewrites only what changed: a person's formatting stays byte for byte.

``render_update`` splices the changed sections (and the marker) into the body as it is; whatever it
returns must read back as the intended state, with the canonical body as the fallback.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from bodies import render_body, render_update
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import checkpoints, examples
from test_human_bodies import human_bodies

from ghstate.core.edits import Edits, apply_edits
from ghstate.core.model import Checkpoint
from ghstate.core.parse import parse
from ghstate.core.state_json import to_json


def same_state(a: Checkpoint, b: Checkpoint) -> bool:
    """The oracle, independent of the splice: the two JSON states are equal, but for where unknown
    sections are anchored (a canonical render's choice; a spliced body keeps the person's order)."""
    def normal(cp: Checkpoint) -> dict:
        data = to_json(cp)
        headed = [e for e in data["extra"] if e["heading"] is not None]
        data["extra"] = [e for e in data["extra"] if e["heading"] is None] + sorted(
            ({**e, "after": None} for e in headed), key=repr)
        return data

    return normal(a) == normal(b)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "issue-bodies"
# Drawing checkpoints is what costs (about 0.1 s each); the code under test takes ~15 ms an example.
SETTINGS = settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


def untouched_lines(before: str, after: str, keys: set[str]) -> list[str]:
    """Lines of ``before`` outside the marker and the sections ``keys`` that ``after`` lost or changed."""
    parsed = parse(before)
    allowed: set[int] = set(range(*parsed.marker_lines)) if parsed.marker_lines else set()
    for span in parsed.spans:
        if span.key in keys:
            allowed.update(range(span.line, span.end))
    old = before.removeprefix("\ufeff").splitlines(keepends=True)
    new = after.removeprefix("\ufeff").splitlines(keepends=True)
    for text, found in ((before, old), (after, new)):  # a section written after the last line gives it an end
        if found and not found[-1].endswith("\n"):
            found[-1] += "\r\n" if "\r\n" in text else "\n"
    lost = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            lost.extend(repr(old[i]) for i in range(i1, i2) if i not in allowed)
    return lost


def spliceable(body: str) -> bool:
    parsed = parse(body)
    keys = [s.key for s in parsed.spans if s.key]
    return not parsed.title_heading and len(keys) == len(set(keys)) and bool(body.strip())


# ------------------------------------------------------------------------------- properties


# Each pair drawn is held to both laws: any state written over any body reads back as itself, and a canonical
# body stays canonical.
@SETTINGS
@given(checkpoints(), checkpoints())
def test_any_state_written_over_any_body_reads_back_as_itself_and_a_canonical_body_stays_canonical(before, after):
    assert same_state(parse(render_update(after, render_body(before))).checkpoint, after)
    cp = before
    edited = apply_edits(cp, Edits(decisions=("added",), resume="Start over")).with_meta(revision=cp.meta.revision + 1)
    assert render_update(edited, render_body(cp)) == render_body(edited)


@SETTINGS
@given(human_bodies(), st.sampled_from(["verification", "tick", "append", "goal"]))
def test_a_change_to_one_section_leaves_the_rest_of_a_human_body_alone(body, change):
    assume(spliceable(body))
    cp = parse(body).checkpoint
    if change == "verification":
        new, keys = cp._replace(verification="failing at 4f2c1e9\n\n- test_x: boom"), {"verification"}
    elif change == "tick":
        assume(any(not p.done for p in cp.phases))
        new, keys = apply_edits(cp, Edits(done=(str(next(i for i, p in enumerate(cp.phases) if not p.done) + 1),))), \
            {"phases"}
    elif change == "append":
        new, keys = apply_edits(cp, Edits(decisions=("a decision nobody wrote yet",))), {"decisions"}
    else:
        new, keys = cp._replace(goal="A new goal."), {"goal"}
    new = new.with_meta(revision=cp.meta.revision + 1)
    out = render_update(new, body)
    assert same_state(parse(out).checkpoint, new)
    assert untouched_lines(body, out, keys) == [], out


# ------------------------------------------------------------------------------------ cases

EDITED = (
    '<!-- ghstate:v1 {"revision":3,"branch":"b"} -->\r\n### Objective:\r\nShip it.\r\n\r\n# Progress\r\n'
    "* [X] Phase 1: a\r\n1. [ ] Phase 2: b\r\n   - [ ] sub-step\r\n\r\n## CI\r\nold result\r\n\r\n"
    "## Decisions\r\n+ keep v1\r\n  because clients pin it\r\n\r\n<!-- a person's note -->\r\n\r\n"
    "## Next step:\r\nStart Phase 2.\r\n"
)


def test_ticking_a_phase_toggles_its_box_and_its_steps_boxes_where_they_stand():
    cp = parse(EDITED).checkpoint
    out = render_update(apply_edits(cp, Edits(done=("2",))), EDITED)
    assert out == EDITED.replace("1. [ ] Phase 2", "1. [x] Phase 2").replace("- [ ] sub-step", "- [x] sub-step")
    assert render_update(apply_edits(parse(out).checkpoint, Edits(undo=("2",))), out) == EDITED


def test_added_items_follow_the_last_one_with_its_bullet():
    cp = parse(EDITED).checkpoint
    out = render_update(apply_edits(cp, Edits(decisions=("no ORM",))), EDITED)
    assert out == EDITED.replace("  because clients pin it\r\n", "  because clients pin it\r\n+ no ORM\r\n")


@pytest.mark.parametrize("mark", [".", ")"])
def test_added_items_number_on_after_a_numbered_list(mark):
    """Found by a newcomer: `--decision three` after `1. one / 2. two` was written `- three`, which GitHub shows
    as a second list."""
    body = f"## Goal\ng\n\n## Decisions locked\n1{mark} one\n2{mark} two\n\n## Resume instruction\nGo.\n"
    cp = parse(body).checkpoint
    new = apply_edits(cp, Edits(decisions=("three", "four")))
    out = render_update(new, body)
    assert f"\n1{mark} one\n2{mark} two\n3{mark} three\n4{mark} four\n\n## Resume" in out
    assert parse(out).checkpoint == new


@pytest.mark.parametrize(("status", "added"), [
    ("1. [X] Phase 1: a\n   * [x] step\n2. [ ] Phase 2: b\n", "3. [ ] Phase 3: c\n"),
    ("* [X] Phase 1: a\n* [ ] Phase 2: b\n\nA note after.\n", "* [ ] Phase 3: c\n"),
])
def test_an_added_phase_follows_the_persons_list_as_it_is(status, added):
    """Found by a newcomer: `--phase "Phase 3: c"` re-rendered a hand-written phase list (`1.` and `*` became `-`,
    `[X]` became `[x]`, steps re-indented): a new phase is appended after the last, the rest as written."""
    body = f"## Goal\ng\n\n## Current status\n{status}\n## Resume instruction\nGo.\n"
    cp = parse(body).checkpoint
    new = apply_edits(cp, Edits(phases=("Phase 3: c",)))
    out = render_update(new, body)
    lines = status.split("\n\n")[0].rstrip("\n") + "\n"
    assert lines + added in out and out.split("-->\n", 1)[-1].replace(added, "") == body
    assert parse(out).checkpoint == new


def test_a_new_section_goes_where_the_canonical_order_puts_it():
    cp = parse(EDITED).checkpoint
    new = apply_edits(cp, Edits(risks=("slow on big inputs",)))
    out = render_update(new, EDITED)
    assert "+ keep v1\r\n" in out and out.index("## Remaining risks") < out.index("## CI")
    assert parse(out).checkpoint == new and untouched_lines(EDITED, out, {"risks"}) == []


def test_a_body_without_a_trailing_newline_or_marker():
    body = "## Goal\nShip it.\n\n## Status\n- [ ] Phase 1: a"
    cp = parse(body).checkpoint
    new = cp._replace(verification="passing")
    out = render_update(new, body)
    assert out.startswith("<!-- ghstate:v1") and "## Status\n- [ ] Phase 1: a\n\n## Verification\npassing\n" in out
    assert parse(out).checkpoint == new


def test_a_leading_title_heading_is_rendered_canonically():
    body = "# My task\n\n## Goal\nShip it.\n"
    new = parse(body).checkpoint._replace(resume="Go")
    assert render_update(new, body) == render_body(new)


def test_a_template_that_loses_data_falls_back(tmp_path):
    from ghstate.templating import environment

    (tmp_path / "checkpoint.md.j2").write_text("{{ marker }}\nCUSTOM\n")
    new = parse(EDITED).checkpoint._replace(resume="Go")
    out = render_update(new, EDITED, environment(str(tmp_path)))
    assert out == "{}\nCUSTOM\n".format(out.split("\n", 1)[0])  # the caller's check refuses this body


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.md")) if CORPUS.is_dir() else [], ids=lambda p: p.name)
def test_corpus_bodies_keep_their_bytes_when_ci_records_a_result(path):
    body = path.read_bytes().decode("utf-8")
    new = parse(body).checkpoint._replace(verification="failing at 4f2c1e9").with_meta(revision=1)
    out = render_update(new, body)
    assert same_state(parse(out).checkpoint, new)
    if spliceable(body):
        assert untouched_lines(body, out, {"verification"}) == []


def test_filling_an_empty_section_in_place_keeps_the_unknown_sections_where_they_stand():
    body = ("# Decisions locked\n# Notes alpha\nalpha\n# Open questions\n### Current status\nalpha\n"
            "# Goal\n### Notes beta")
    new = apply_edits(parse(body).checkpoint, Edits(decisions=("a decision",))).with_meta(revision=1)
    out = render_update(new, body)
    assert out.endswith("# Decisions locked\n- a decision\n\n# Notes alpha\nalpha\n# Open questions\n"
                        "### Current status\nalpha\n# Goal\n### Notes beta")
