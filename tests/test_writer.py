"""The writer's protocol, against a store double that records every call: what is read, logged and
written, in which order, and what a reader sees when writers overwrite each other."""

from __future__ import annotations

import json

import pytest
from bodies import ENV, render_body, with_marker
from conftest import SAMPLE
from ghstate.core.writelog import LogEntry, log_state, replay
from hypothesis import given, settings
from hypothesis import strategies as st
from memstore import MemoryStore
from strategies import checkpoints, examples

from ghstate.core.edits import Edits
from ghstate.core.intent import CiResult, Intent, WriteSpec, pack, sections_from_data, sections_to_data, unpack
from ghstate.core.marker import LogState
from ghstate.core.model import SECTION_KEYS, Checkpoint, Revision
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


def test_an_uncontended_update_reads_rereads_and_writes_with_its_log_entry():
    store = store_with_sample()
    write(store, decisions=("keep v1",))
    assert store.calls == [("get", 1), ("reread", 1), ("update", 1)]
    cp = state(store)
    assert cp.decisions[-1] == "keep v1"
    assert log_state(cp) == LogState(seen=0, own=1, applied=log_state(cp).applied)
    [comment] = store.comments[1]
    entry = LogEntry.from_data(comment["data"])
    assert entry.intent == Intent(edits=Edits(decisions=("keep v1",))) and entry.write in log_state(cp).applied


def test_the_next_write_needs_no_log_read_when_the_body_is_complete():
    store = store_with_sample()
    write(store, decisions=("one",))
    store.calls.clear()
    write(store, decisions=("two",))
    assert [name for name, _ in store.calls] == ["get", "reread", "update"]
    assert log_state(state(store)).seen == 1


def test_a_write_that_changes_nothing_reads_once_and_writes_nothing():
    store = store_with_sample()
    result = write(store, decisions=("required flags, not positional",))
    assert store.calls == [("get", 1)] and not result.changed and not store.comments[1]


def test_a_create_logs_its_intent_with_the_issue():
    store = MemoryStore()
    Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(goal="g", phases=("Phase 1: a",))), number=None,
                                           lookup=False))
    assert [name for name, _ in store.calls] == ["create"] and store.logged(1)
    assert log_state(state(store)).complete(len(store.comments[1]))


# --------------------------------------------------------------------- overwritten writes come back


def stale_writer_overwrites(store: MemoryStore, stale_body: str, **edits) -> None:
    """A writer that read ``stale_body`` and writes over whatever is there now, as a PATCH does."""
    fresh = MemoryStore()
    fresh.add_issue(1, stale_body)
    write(fresh, **edits)
    store.web_edit(1, fresh.bodies[1])  # its body lands over ours; its log entry too
    store.comments[1].extend(fresh.comments[1])


def test_a_reader_replays_a_logged_write_that_a_later_body_dropped():
    store = store_with_sample()
    before = store.bodies[1]
    write(store, decisions=("from writer A",))
    stale_writer_overwrites(store, before, risks=("from writer B",))
    assert "from writer A" not in state(store).decisions  # the body lost it …
    cp = seen_by_reader(store)
    assert "from writer A" in cp.decisions and "from writer B" in cp.risks  # … every reader still sees it
    write(store, questions=("from writer C",))  # and the next write puts it back
    body = state(store)
    assert "from writer A" in body.decisions and "from writer B" in body.risks and "from writer C" in body.questions


def test_a_web_edit_from_an_older_page_keeps_the_person_and_the_writers():
    store = store_with_sample()
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


def test_a_replay_never_sets_back_what_a_later_write_set():
    store = store_with_sample()
    before = store.bodies[1]
    write(store, resume="older")  # logged first …
    stale_writer_overwrites(store, before, resume="newer")  # … a later write's body drops it
    assert seen_by_reader(store).resume == "newer"
    write(store, decisions=("x",))
    assert state(store).resume == "newer"


@pytest.mark.parametrize("trusted, edited", [(False, False), (True, True)])
def test_forged_and_edited_history_comments_never_change_the_state(trusted, edited):
    store = store_with_sample()
    write(store, decisions=("real",))
    forged = LogEntry(Revision(9), "f0f0f0", Intent(edits=Edits(decisions=("forged",), resume="do evil"))).to_data()
    store.add_comment(1, forged, trusted=trusted, edited=edited)
    store.notices.clear()
    cp = seen_by_reader(store)
    assert "forged" not in cp.decisions and cp.resume != "do evil"
    assert store.notices and "1 log entry ignored" in store.notices[0]
    result = write(store, decisions=("after",))
    assert "forged" not in state(store).decisions and any("ignored" in w for w in result.warnings)


def test_of_two_ci_results_at_once_the_one_logged_last_stands():
    store = store_with_sample()

    def ci(cp: Checkpoint) -> Intent:
        runs = (cp.verification_data.attempt_count if cp.verification_data else 0) + 1
        return Intent(verification=CiResult(f"{runs} runs", Verification(attempt_count=runs)))

    other = MemoryStore()
    other.add_issue(1, store.bodies[1])
    Writer(other, env=ENV).write(WriteSpec(ci, number=1))

    def lands_first(name):
        if name == "reread":
            store.before = None
            store.web_edit(1, other.bodies[1])
            store.comments[1][:0] = other.comments[1]

    store.before = lands_first
    Writer(store, env=ENV).write(WriteSpec(ci, number=1))
    body = state(store)
    assert body.verification_data == Verification(attempt_count=1) and body.verification == "1 runs"  # ours, last
    assert "concurrent edit" not in store.bodies[1]  # the other is a logged write, not a person's edit
    assert [c["data"]["intent"]["verification"]["data"]["attempt_count"] for c in store.comments[1]] == [1, 1]


# ---------------------------------------------------------------------------- the intent as data


@settings(max_examples=examples(60))
@given(checkpoints(), st.sets(st.sampled_from(SECTION_KEYS)))
def test_sections_round_trip_through_their_data(cp, keys):
    keys = frozenset(keys)
    back = sections_from_data(unpack(pack(sections_to_data(cp, keys))))
    for key in keys:
        assert getattr(back, key) == getattr(cp, key)
    assert back.extra == cp.extra and back.title == cp.title


@settings(max_examples=examples(60))
@given(checkpoints())
def test_an_intent_round_trips_and_applies_the_same_after(cp):
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
    entry = LogEntry.from_data({"revision": 3, "write": "w", "intent": {"edits": 5}})
    assert entry.problem and not entry.replayable


def test_replay_applies_only_what_the_body_lacks():
    cp = parse(SAMPLE).checkpoint
    held = LogEntry(Revision(2), "held", Intent(edits=Edits(decisions=("held",))), position=2)
    lacking = LogEntry(Revision(3), "new", Intent(edits=Edits(risks=("lacking",))), position=3)
    from ghstate.core.writelog import with_log

    body = with_log(cp._replace(decisions=(*cp.decisions, "held")), LogState(seen=1, own=0, applied=("held",)))
    out = replay(body, [held, lacking])
    assert [e.write for e in out.replayed] == ["new"] and out.checkpoint.risks[-1] == "lacking"
    assert out.checkpoint.decisions.count("held") == 1


def test_a_write_serialises_whole_and_back():
    from ghstate.core.intent import LabelRule
    from ghstate.core.marker import Execution
    from ghstate.core.model import WorkTree

    spec = WriteSpec(Intent(edits=Edits(decisions=("d",), done=("2",))), number=7,
                     tree=WorkTree("feature/x", "4f2c1e9aa1", ("src/a.py",)), fingerprints={"src/a.py": "0a1b2c3d"},
                     execution=Execution("rev", "reviewer", "s-9"), event="checkpoint", title="T", create=False,
                     lookup=False, record_tree=False, log=False, allow_secrets=True, new_id="abc",
                     labels=LabelRule("ci-failing", "blocked"))
    assert WriteSpec.from_data(json.loads(json.dumps(spec.to_data()))) == spec
    with pytest.raises(ValueError):
        WriteSpec(lambda cp: Intent()).to_data()  # made when applied: never kept
