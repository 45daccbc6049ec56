"""The hidden marker's one record: typed fields, validated once, newer keys kept untouched."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import checkpoints, examples

from ghstate.core import marker
from ghstate.core.marker import DigestsAt, Marker, Meta
from ghstate.core.parse import parse
from ghstate.core.render import render_body
from ghstate.core.verification import Verification
from ghstate.templating import environment

ENV = environment()


def test_every_key_has_a_typed_field_and_dumps_back_as_it_was_read():
    raw = {
        "revision": 4, "id": "a1b2c3d4e5f6", "title": "T", "branch": "feature/x", "commit": "4f2c1e9aa1",
        "dirty": ["src/a.py"], "created_at": "2026-11-20T09:00:00Z", "updated_at": "2026-11-20T10:00:00Z",
        "executions": [{"agent": "claude-code", "role": "editor", "session": "s-1", "revision": 4}],
        "verification": Verification(status="failing", commit="abc").to_dict(),
        "sections": {"goal": "3f2a1c0b"}, "sections_before": [{"goal": "00000000", "revision": 3}],
        "prov": {"v": 1, "d": {"3f2a1c": 4}, "resume": ["9b0e11", 4], "x": ["s"], "revs": {"4": {"c": "4f2c1e9aa1"}}},
        "dirty_sha": {"src/a.py": "0123abcd"}, "from_a_newer_version": {"kept": [1, 2]},
    }
    loaded = marker.load(raw)
    meta = loaded.meta
    assert meta.digests == {"goal": "3f2a1c0b"} and meta.digest_history == (DigestsAt(3, {"goal": "00000000"}),)
    assert meta.fingerprints == {"src/a.py": "0123abcd"}
    assert meta.provenance.entries == {"d": {"3f2a1c": 4}} and meta.provenance.resume == ("9b0e11", 4)
    assert meta.provenance.revisions[4].commit == "4f2c1e9aa1" and meta.provenance.capped == {"s"}
    assert isinstance(loaded.verification, Verification) and loaded.verification.status == "failing"
    assert meta.unknown == {"from_a_newer_version": {"kept": [1, 2]}}
    assert marker.dump(loaded) == raw
    assert list(marker.dump(loaded)) == list(raw)  # the order is fixed: newer keys last


def test_keys_that_mean_nothing_now_are_dropped_and_a_mirrors_key_is_never_carried():
    """How far a body reflected the log before the log was a chain ("log"), the entry a body carried then
    ("entry"), and the commit a mirror names ("chain"): none is loaded, so no write carries one along."""
    raw = {"revision": 4, "log": {"seen": 2, "own": 1, "applied": ["w1"]}, "entry": {"revision": 4},
           "chain": {"head": "a" * 40, "body": "0" * 16}, "newer": 1}
    loaded = marker.load(raw)
    assert loaded.meta.unknown == {"newer": 1} and marker.dump(loaded) == {"revision": 4, "newer": 1}


def test_values_of_the_wrong_shape_are_left_out_not_guessed():
    loaded = marker.load({"revision": True, "dirty": "src/a.py", "sections": {"goal": ["x"]},
                          "prov": "edited", "dirty_sha": [], "executions": {"agent": "x"}, "verification": []})
    assert loaded.meta.revision == 0 and loaded.meta.dirty == () and loaded.meta.digests is None
    assert loaded.meta.fingerprints == {} and loaded.executions == ()
    assert loaded.verification is None and loaded.meta.provenance is not None


def test_a_newer_versions_keys_survive_a_write():
    body = render_body(parse("## Goal\ng\n").checkpoint.with_meta(revision=1, unknown={"shiny": {"a": 1}}), ENV)
    cp = parse(body).checkpoint
    assert cp.meta.unknown == {"shiny": {"a": 1}}
    again = render_body(cp.with_meta(revision=2), ENV)
    data = json.loads(again.split("ghstate:v1 ", 1)[1].split(" -->", 1)[0])
    assert data["shiny"] == {"a": 1} and data["revision"] == 2


@settings(max_examples=examples(60))
@given(checkpoints())
def test_the_record_round_trips_through_a_body(cp):
    back = parse(render_body(cp, ENV)).checkpoint
    assert Marker(back.meta, back.title, back.executions, back.verification_data) == \
        Marker(cp.meta, back.title, cp.executions, cp.verification_data)


@given(st.dictionaries(st.sampled_from(marker.KNOWN + ("other",)),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                                    lambda inner: st.lists(inner, max_size=3)
                                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)))
# Found by Hypothesis: an empty provenance kind loaded as one, and dumped as none.
@example({"revision": None, "id": None, "title": None, "branch": None, "commit": None, "dirty": None,
          "created_at": None, "prov": {"d": {}}})
def test_any_json_loads_without_failing_and_dumps_to_what_loads_the_same(raw):
    loaded = marker.load(raw)
    assert marker.load(marker.dump(loaded)) == loaded
    assert isinstance(loaded.meta, Meta)


def test_shedding_keeps_the_newest_provenance_and_never_what_readers_need():
    from ghstate.core import marker

    prov = marker.ProvenanceRecord(entries={"d": {"a1": 1, "b2": 5, "c3": 9}, "r": {"d4": 2}}, resume=("e5", 3),
                                   revisions={r: marker.RevisionFacts() for r in (1, 2, 3, 5, 9)})
    meta = marker.Meta(revision=9, branch="b", commit="c" * 12, digests={"goal": "x"}, fingerprints={"f": "1"},
                       digest_history=(marker.DigestsAt(8, {"goal": "y"}),), provenance=prov)
    steps = list(marker.lighter(meta))
    assert [words for _, words in steps] == [
        "the section digests of earlier revisions",
        "the section digests of earlier revisions, the oldest half of the provenance",
        "the section digests of earlier revisions, the oldest three quarters of the provenance",
        "the section digests of earlier revisions, the provenance",
        "the section digests of earlier revisions, the provenance, the fingerprints of dirty files"]
    half = steps[1][0].provenance
    assert half.entries == {"d": {"c3": 9, "b2": 5}} and half.capped == {"d", "r"}
    assert set(half.revisions) == {3, 5, 9}  # the resume instruction's revision is still referenced
    for shed, _ in steps:  # what a reader needs is never shed
        assert (shed.revision, shed.branch, shed.commit, shed.digests) == (9, "b", "c" * 12, {"goal": "x"})


def test_a_marker_nested_past_any_depth_is_text_not_a_crash():
    """Found moving the write log into the marker: whoever may edit the body (the issue's author too)
    could put a marker no JSON parser can read in it, and every reader crashed (RecursionError)."""
    from ghstate.core.parse import parse

    body = '<!-- ghstate:v1 {"a":' + "[" * 20000 + "]" * 20000 + "} -->\n## Goal\nstill readable\n"
    cp = parse(body).checkpoint
    assert cp.goal == "still readable" and cp.meta.revision == 0
