"""Three-way merge: concurrent edits of one checkpoint are combined, never overwritten."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import checkpoints

from ghstate.edit import Edits, apply_edits
from ghstate.merge import merge3
from ghstate.model import Checkpoint, Extra, Phase, Step
from ghstate.parse import parse

BASE = Checkpoint(
    title="T", goal="g",
    phases=(Phase("Phase 1: a", True, (Step("s1", True),)), Phase("Phase 2: b", False, (Step("x"), Step("y"))),
            Phase("Phase 3: c")),
    decisions=("d1",), questions=("q1", "q2"), risks=("r1",), files=("`a.py`",), resume="Start at Phase 2",
    verification="passing",
)


def test_a_person_ticks_a_box_while_an_agent_adds_a_decision():
    ours = apply_edits(BASE, Edits(decisions=("d2",)))
    theirs = BASE._replace(phases=(BASE.phases[0], BASE.phases[1]._replace(done=True), BASE.phases[2]))
    merged = merge3(BASE, ours, theirs)
    assert merged.conflicts == []
    assert merged.checkpoint.decisions == ("d1", "d2")
    assert [p.done for p in merged.checkpoint.phases] == [True, True, False]


def test_ci_updates_verification_while_an_agent_ticks_a_phase():
    ours = apply_edits(BASE, Edits(done=("Phase 2",), resume="Start at Phase 3"))
    theirs = BASE._replace(verification="failing", verification_data={"status": "failing"})
    cp = merge3(BASE, ours, theirs).checkpoint
    assert cp.verification == "failing" and cp.verification_data == {"status": "failing"}
    assert cp.phases[1].done and cp.resume == "Start at Phase 3"


def test_both_edit_the_same_text_ours_wins_theirs_is_kept_beside_it():
    ours = BASE._replace(resume="Start at Phase 3 (ours)")
    theirs = BASE._replace(resume="Start at Phase 2, carefully (theirs)")
    merged = merge3(BASE, ours, theirs)
    assert merged.conflicts == ["Resume instruction"]
    assert merged.checkpoint.resume == "Start at Phase 3 (ours)"
    assert Extra("Resume instruction (concurrent edit)", "Start at Phase 2, carefully (theirs)", 2, "resume") \
        in merged.checkpoint.extra


def test_deletions_on_one_side_additions_on_both():
    ours = BASE._replace(questions=("q2", "q3"))  # answered q1, asked q3
    theirs = BASE._replace(questions=("q1", "q2", "q4"), risks=())  # asked q4, dropped the risk
    cp = merge3(BASE, ours, theirs).checkpoint
    assert cp.questions == ("q2", "q4", "q3") or set(cp.questions) == {"q2", "q3", "q4"}
    assert cp.risks == ()


def test_changed_on_one_side_deleted_on_the_other_is_kept():
    ours = BASE._replace(phases=BASE.phases[:2])  # ours dropped Phase 3
    theirs = BASE._replace(phases=(*BASE.phases[:2], BASE.phases[2]._replace(done=True)))  # theirs ticked it
    cp = merge3(BASE, ours, theirs).checkpoint
    assert [p.name for p in cp.phases] == ["Phase 1: a", "Phase 2: b", "Phase 3: c"]
    assert cp.phases[2].done


def test_steps_merge_inside_a_phase():
    ours = BASE._replace(phases=(BASE.phases[0], BASE.phases[1]._replace(steps=(Step("x", True), Step("y"))),
                                 BASE.phases[2]))
    theirs = BASE._replace(phases=(BASE.phases[0], BASE.phases[1]._replace(steps=(Step("x"), Step("y", True),
                                                                                  Step("z"))), BASE.phases[2]))
    steps = merge3(BASE, ours, theirs).checkpoint.phases[1].steps
    assert steps == (Step("x", True), Step("y", True), Step("z"))


def test_unknown_base_keeps_both_sides_lists():
    ours = BASE._replace(decisions=("d1", "mine"))
    theirs = BASE._replace(decisions=("theirs",))
    assert set(merge3(None, ours, theirs).checkpoint.decisions) == {"d1", "mine", "theirs"}


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(checkpoints(), checkpoints())
def test_one_sided_changes_are_taken_as_they_are(base, other):
    assert merge3(base, other, base).checkpoint.phases == other.phases
    assert merge3(base, base, other).checkpoint.decisions == other.decisions
    assert merge3(base, base, other).checkpoint.goal == other.goal


@SETTINGS
@given(checkpoints(), st.data())
def test_merged_result_is_a_valid_body(base, data):
    ours = apply_edits(base, Edits(decisions=("added by ours",), resume="ours"))
    theirs = base._replace(questions=(*base.questions, "added by theirs"))
    merged = merge3(base, ours, theirs).checkpoint
    assert "added by ours" in merged.decisions and "added by theirs" in merged.questions
    from bodies import render_body

    assert parse(render_body(merged)).checkpoint.decisions == merged.decisions
