"""parse(render(s)) == s for every valid state; render(parse(body)) keeps every word of body."""

from __future__ import annotations

from bodies import render_body
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import checkpoints, examples

from ghstate.core.model import Checkpoint, Extra, Phase
from ghstate.core.parse import parse
from ghstate.core.state_json import from_json, to_json

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


# Drawing a checkpoint is what costs (~0.1 s; the laws take ~1 ms): each one drawn is held to both round trips.
@SETTINGS
@given(checkpoints())
# Found by Hypothesis: two texts that show the same, one plain and one a person's escape, each keep their
# own markdown (the "markdown" key of one must not be taken by the other).
@example(Checkpoint(goal="#", extra=(Extra(None, "~", 2, "phases"), Extra("a", "\\~", 1, "runtime")),
                    files=("#",), runtime=("#",)))
def test_parse_of_render_and_the_json_round_trip_are_identities(cp):
    body = render_body(cp)
    assert parse(body).checkpoint == cp
    assert from_json(to_json(cp)) == cp


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(checkpoints(), st.integers(100, 600))
def test_long_lists_round_trip(cp, n):
    """Hypothesis keeps its lists short; a checkpoint near GitHub's size limit has hundreds of items."""
    long = cp._replace(decisions=tuple(f"decision {i}: keep `mod{i}` | stable" for i in range(n)),
                       phases=(*cp.phases, *(Phase(f"Phase {i}: step {i}", i % 2 == 0) for i in range(n // 4))),
                       files=tuple(f"`src/m{i}.py`" for i in range(n // 3)))
    assert parse(render_body(long)).checkpoint == long
    assert from_json(to_json(long)) == long



paths = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30).map(
    str.strip).filter(bool)


@SETTINGS
@given(st.lists(paths, min_size=1, max_size=4, unique=True))
@example(["my docs/read me.md"])  # found by a newcomer: the path came back as '`my docs/read me.md`'
@example(["a b.py", "src/a.py"])
@example(["npm test"])
def test_a_json_states_paths_come_back_as_given_whatever_their_characters(given):
    """The files of a JSON state written without ``file_items`` (a person's, a script's) are written as code and
    read back as the same paths: through the JSON round trip and through the body, spaces included."""
    cp = from_json({"files": given})
    assert to_json(cp)["files"] == given
    assert to_json(parse(render_body(cp)).checkpoint)["files"] == given


STATUSES = ("pending", "in_progress", "blocked", "done")


@given(st.sampled_from(["Phase 1: a", "Phase 1: a (blocked by infra)", "Phase 1: a (in progress)",
                        "Phase 1: a BLOCKED"]), st.sampled_from(STATUSES))
@example("Phase 1: a (blocked)", "pending")  # found by a newcomer: "No changes", the phase stayed blocked
def test_a_phases_status_in_a_json_state_is_the_status_it_gets(name, status):
    """A state's ``status`` sets the phase's status, from whatever its line said (the marks that say otherwise
    go; the rest of the name stays as written), and the body reads back with it."""
    cp = from_json({"phases": [{"name": name, "status": status}]})
    assert cp.phases[0].status == status
    assert parse(render_body(cp)).checkpoint.phases[0].status == status
    assert cp.phases[0].name.startswith("Phase 1: a")
