"""The writer's protocol, against a store double that records every call (tests/memstore.py): what is read,
committed and written, in which order, and what a reader sees when writers and people meet on one
checkpoint's chain."""

from __future__ import annotations

import json

import pytest
from bodies import ENV, render_body, with_marker
from conftest import SAMPLE
from hypothesis import given, settings
from hypothesis import strategies as st
from memstore import MemoryStore
from strategies import checkpoints, examples

from ghstate.core import chain
from ghstate.core.edits import Edits
from ghstate.core.intent import CiResult, Intent, WriteSpec, pack, sections_from_data, sections_to_data, unpack
from ghstate.core.model import SECTION_KEYS, Checkpoint
from ghstate.core.parse import parse
from ghstate.core.verification import Verification
from ghstate.services.reader import checkpoint_of, current
from ghstate.services.writer import Writer


def store_with_sample() -> MemoryStore:
    store = MemoryStore()
    store.add_issue(1, with_marker(SAMPLE))
    return store


def write(store: MemoryStore, *, number: int | None = 1, **edits) -> object:
    return Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(**edits)), number=number))


def state(store: MemoryStore, number: int = 1) -> Checkpoint:
    return checkpoint_of(store.get(number))


def seen_by_reader(store: MemoryStore, number: int = 1) -> Checkpoint:
    return current(store, store.get(number))


# ------------------------------------------------------------------------------------ the protocol


def test_an_uncontended_update_reads_once_commits_moves_and_mirrors():
    store = store_with_sample()
    write(store, decisions=("keep v1",))
    assert store.calls == [("get", 1), ("commit", 1), ("ref", 1), ("mirror", 1)]
    [link] = store.chain(1)
    assert [e.revision.revision for e in link.entries] == [1, 2] and link.entries[-1].write
    body, key = chain.split(store.bodies[1])
    assert body == link.body and key == chain.MirrorKey(store.heads[1], chain.digest(body))
    assert state(store).decisions[-1] == "keep v1"


def test_the_next_write_builds_on_the_head_it_read():
    store = store_with_sample()
    write(store, decisions=("one",))
    store.calls.clear()
    write(store, decisions=("two",))
    assert [name for name, _ in store.calls] == ["get", "commit", "ref", "mirror"]
    first, second = store.chain(1)
    assert store.commits[store.heads[1]][0] != "" and second.root and not second.adopted and first.adopted


def test_a_write_that_changes_nothing_reads_once_and_writes_nothing():
    store = store_with_sample()
    result = write(store, decisions=("required flags, not positional",))
    assert store.calls == [("get", 1)] and not result.changed and not store.heads


def test_a_create_writes_the_body_and_its_chain_starts_at_its_first_update():
    store = MemoryStore()
    Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(goal="g", phases=("Phase 1: a",))), number=None,
                                           lookup=False))
    assert [name for name, _ in store.calls] == ["create"] and not store.heads
    write(store, decisions=("d",))
    [link] = store.chain(1)
    assert [e.revision.revision for e in link.entries] == [1, 2]
    assert link.entries[0].revision.changes == ("created with 1 phase (0 done)",)


# --------------------------------------------------------------------------- writers and people meet


def test_a_write_that_loses_its_race_is_built_again_on_the_new_head():
    store = store_with_sample()
    write(store, decisions=("first",))
    stale = store.get(1)  # read before the other write
    write(store, risks=("other",))
    store.calls.clear()
    writer = Writer(store, env=ENV)
    read = __import__("ghstate.services.reader", fromlist=["view"]).view(store, stale, whole=True)
    draft = writer.drafter.draft(WriteSpec(Intent(edits=Edits(questions=("late",))), number=1), read, own=True)
    assert store.append(stale, draft.link).landed is False  # its head moved: refused
    write(store, questions=("late",))
    cp = seen_by_reader(store)
    assert {"first"} <= set(cp.decisions) and "other" in cp.risks and "late" in cp.questions


def test_a_web_edit_from_an_older_page_keeps_the_person_and_the_writers():
    store = store_with_sample()
    write(store, risks=("before the page",))
    page = store.bodies[1]  # a person opens the editor
    write(store, done=("2",), resume="Start at Phase 3")
    write(store, decisions=("decided meanwhile",))
    store.web_edit(1, page.replace("## Open questions\n", "## Open questions\n- asked by a person\n"))
    cp = seen_by_reader(store)
    assert "asked by a person" in cp.questions
    assert cp.phases[1].done and cp.resume == "Start at Phase 3" and "decided meanwhile" in cp.decisions
    write(store, risks=("next",))
    cp = state(store)
    assert "asked by a person" in cp.questions and cp.phases[1].done and "decided meanwhile" in cp.decisions
    edit = [e for e in store.entries(1) if e.revision.event == "edit"]
    assert [e.revision.author for e in edit] == ["mona"]


def test_an_older_mirror_over_a_newer_one_is_read_as_the_head_and_repaired():
    store = store_with_sample()
    write(store, decisions=("one",))
    older = store.bodies[1]
    write(store, decisions=("two",))
    store.web_edit(1, older, editor="octocat")  # the first write's mirror, landing after the second's
    assert {"one", "two"} <= set(seen_by_reader(store).decisions)
    result = write(store, decisions=("one",))  # changes nothing, and repairs the body
    assert not result.changed and {"one", "two"} <= set(state(store).decisions)
    assert not [e for e in store.entries(1) if e.revision.event == "edit"]


def test_of_two_ci_results_at_once_the_later_on_the_chain_stands():
    store = store_with_sample()

    def ci(cp: Checkpoint) -> Intent:
        runs = (cp.verification_data.attempt_count if cp.verification_data else 0) + 1
        return Intent(verification=CiResult(f"{runs} runs", Verification(attempt_count=runs)))

    first = Writer(store, env=ENV)
    first.write(WriteSpec(ci, number=1, write_id="aaaaaaaaaaaa"))
    Writer(store, env=ENV).write(WriteSpec(ci, number=1, write_id="bbbbbbbbbbbb"))
    body = state(store)
    assert body.verification_data.attempt_count == 2 and "concurrent edit" not in store.bodies[1]
    assert [e.write for e in store.entries(1) if e.write] == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]


# ---------------------------------------------------------------------------- the intent as data


# Drawing a checkpoint is what costs (~0.1 s; the laws take ms): each one drawn is held to both round trips.
@settings(max_examples=examples(60))
@given(checkpoints(), st.sets(st.sampled_from(SECTION_KEYS)))
def test_sections_and_an_intent_round_trip_through_their_data(cp, keys):
    keys = frozenset(keys)
    back = sections_from_data(unpack(pack(sections_to_data(cp, keys))))
    for key in keys:
        assert getattr(back, key) == getattr(cp, key)
    assert back.extra == cp.extra and back.title == cp.title
    # an intent round trips, and applies the same after
    intent = Intent(edits=Edits(decisions=("d",), done=("1",) if cp.phases else ()), incoming=cp,
                    present=frozenset(k for k in SECTION_KEYS if getattr(cp, k)), tick="")
    again = Intent.from_data(unpack(pack(intent.to_data())))
    assert again.to_data() == intent.to_data()
    base = parse(render_body(Checkpoint(decisions=("old",)))).checkpoint
    assert again.apply(base) == intent.apply(base)


def test_a_large_intent_is_packed_under_the_comment_limit():
    big = Checkpoint(decisions=tuple(f"decision {i} " + "x" * 300 for i in range(250)))
    data = Intent(incoming=big, present=frozenset({"decisions"})).to_data()
    packed = pack(data)
    assert set(packed) == {"z"} and len(str(packed)) < 65_536 < len(str(data))
    assert unpack(packed) == data


def test_malformed_intents_are_refused_as_such():
    for bad in ([], {"edits": []}, {"edits": {"decisions": [1]}}, {"incoming": {"phases": "x"}, "present": ["phases"]}):
        with pytest.raises(ValueError):
            Intent.from_data(bad)


def test_a_write_serialises_whole_and_back():
    from ghstate.core.intent import LabelRule
    from ghstate.core.marker import Execution
    from ghstate.core.model import WorkTree

    spec = WriteSpec(Intent(edits=Edits(decisions=("d",), done=("2",))), number=7,
                     tree=WorkTree("feature/x", "4f2c1e9aa1", ("src/a.py",)), fingerprints={"src/a.py": "0a1b2c3d"},
                     execution=Execution("rev", "reviewer", "s-9"), event="checkpoint", title="T", create=False,
                     lookup=False, record_tree=False, allow_secrets=True, new_id="abc",
                     labels=LabelRule("ci-failing", "blocked"), write_id="w1", made_at="t", base="a" * 40)
    assert WriteSpec.from_data(json.loads(json.dumps(spec.to_data()))) == spec
    with pytest.raises(ValueError):
        WriteSpec(lambda cp: Intent()).to_data()  # made when applied: never kept


def test_a_save_the_body_write_beside_a_refused_move_wrote_over_is_merged():
    """Where the chain cannot be written, the store's refused move says which person's save the body's write
    sent beside it wrote over (``Unprotected.overwritten``): the writer merges it, as it merges a landed
    write's (it dropped them)."""
    from ghstate.store import BodyVersion, Unprotected

    store = store_with_sample()
    write(store, risks=("before",))
    saved = store.bodies[1].replace("## Open questions\n", "## Open questions\n- asked by mona\n")

    class Refusing(MemoryStore):
        def append(self, stored, link, title=None, labels=None):
            self._save(1, link.body, "octocat")  # the body's write in the refused request ran, over mona's save
            raise Unprotected("no Contents: write", (BodyVersion(saved, "mona", "2026-01-01T00:00:00Z"),))

    refusing = Refusing()
    refusing.__dict__.update(store.__dict__)
    write(refusing, decisions=("from the agent",))
    cp = seen_by_reader(refusing)
    assert "asked by mona" in cp.questions and "from the agent" in cp.decisions
