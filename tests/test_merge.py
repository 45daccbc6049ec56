"""``merge3``: a person's edit (theirs, from the page of ``base``) merged onto the chain's head (ours).

The race and write-log tests reach it through whole bodies; these hold the parts they never reach: a phase
both sides changed (ticks, steps and detail three-way), sections outside the fixed set (extras), and the
laws every merge keeps whatever the checkpoints hold.
"""

from __future__ import annotations

from hypothesis import given, settings
from strategies import checkpoints, examples

from ghstate.core.merge import merge3
from ghstate.core.model import Checkpoint, Extra, Phase, Step

BASE = Checkpoint(
    goal="Ship the parser",
    phases=(Phase("Parse", steps=(Step("lexer"), Step("grammar"))), Phase("Render", detail="uses jinja")),
    extra=(Extra("Notes", "first note", 2, "resume"),),
)


def test_a_phase_both_changed_keeps_each_sides_tick_and_steps():
    """Ours (the head) ticks a step and adds one; theirs (a person) ticks the phase. Every tick and step
    stands. Fails if a phase both sides changed is taken from one side."""
    ours = BASE._replace(phases=(Phase("Parse", steps=(Step("lexer", True), Step("grammar"), Step("errors"))),
                                 BASE.phases[1]))
    theirs = BASE._replace(phases=(Phase("Parse", True, BASE.phases[0].steps), BASE.phases[1]))
    merged, conflicts = merge3(BASE, ours, theirs)
    assert merged.phases[0] == Phase("Parse", True, (Step("lexer", True), Step("grammar"), Step("errors")))
    assert conflicts == []


def test_a_tick_only_one_side_took_back_stays_taken_back():
    """With a base a tick is the side's that changed it: theirs unticks a phase ours left ticked (and ours
    changed another). Fails if a tick on either side wins (the union that an unknown base uses)."""
    base = BASE._replace(phases=(BASE.phases[0]._replace(done=True), BASE.phases[1]))
    ours = base._replace(phases=(base.phases[0], base.phases[1]._replace(done=True)))
    theirs = base._replace(phases=(base.phases[0]._replace(done=False), base.phases[1]))
    merged, _ = merge3(base, ours, theirs)
    assert [p.done for p in merged.phases] == [False, True]


def test_a_phase_detail_both_rewrote_is_theirs_with_ours_kept_beside():
    ours = BASE._replace(phases=(BASE.phases[0], BASE.phases[1]._replace(detail="uses jinja2 sandbox", done=True)))
    theirs = BASE._replace(phases=(BASE.phases[0], BASE.phases[1]._replace(detail="uses string.Template")))
    merged, conflicts = merge3(BASE, ours, theirs)
    assert merged.phases[1] == Phase("Render", True, (), "uses string.Template")
    assert conflicts == ["Current status"]
    assert Extra("Current status (concurrent edit)", "uses jinja2 sandbox", 2, "phases") in merged.extra


def test_an_extra_section_one_side_edited_is_that_sides():
    ours = BASE._replace(goal="Ship the parser, fast")
    theirs = BASE._replace(extra=(Extra("Notes", "first note, corrected", 3, "resume"),))
    merged, conflicts = merge3(BASE, ours, theirs)
    assert merged.goal == "Ship the parser, fast" and merged.extra == theirs.extra and conflicts == []


def test_an_extra_section_both_rewrote_is_theirs_with_ours_kept_beside_it():
    """Kept under its own heading, where the section is. Fails if it is kept as "Section (concurrent edit)"
    before every section (as it was)."""
    ours = BASE._replace(extra=(Extra("Notes", "the head's note", 2, "resume"),))
    theirs = BASE._replace(extra=(Extra("Notes", "the person's note", 2, "resume"),))
    merged, conflicts = merge3(BASE, ours, theirs)
    assert merged.extra[0].body == "the person's note" and conflicts == ["Notes"]
    assert Extra("Notes (concurrent edit)", "the head's note", 2, "resume") in merged.extra


def test_an_extra_section_both_added_keeps_both_texts():
    ours = BASE._replace(extra=(*BASE.extra, Extra("Links", "ours", 2, "resume")))
    theirs = BASE._replace(extra=(*BASE.extra, Extra("Links", "theirs", 2, "resume")))
    merged, _ = merge3(BASE, ours, theirs)
    links = [e for e in merged.extra if e.heading == "Links"]
    assert len(links) == 1 and "ours" in links[0].body and "theirs" in links[0].body


# Drawing checkpoints is what costs (~0.1 s each; a merge takes ~1 ms): each pair drawn is held to both laws.
@settings(max_examples=examples(60), deadline=None)
@given(checkpoints(), checkpoints())
def test_a_side_that_changed_nothing_leaves_the_other_sides_checkpoint(base, other):
    """theirs == base: the person's page changed nothing, so the head stands whole, with nothing said.
    ours == base: nothing was written since the person's page, so every section they changed is theirs
    (machine data and the title stay the head's)."""
    assert merge3(base, other, base) == (other, [])
    merged, conflicts = merge3(base, base, other)
    assert conflicts == []
    for key in ("goal", "resume", "verification", "decisions", "questions", "risks", "files", "runtime", "phases",
                "extra"):
        assert getattr(merged, key) == getattr(other, key), key
    assert merged.meta == base.meta and merged.title == base.title
