"""Many writers on one checkpoint, interleaved at every store call by a scheduler the test controls.

Each writer runs in its own thread, but only one thread moves at a time: before each store operation a
writer waits until the scheduler, following a Hypothesis-drawn sequence, picks it. Every schedule is
therefore reproducible, and Hypothesis searches thousands of them (GHSTATE_SOAK=N for more). A person's
web edit, saved from a page opened earlier, is one of the actors. After every schedule:

- every writer that returned has its change in what a reader sees (``resume``);
- the body itself holds every writer's change (it converged, with no further write);
- the person's text is in the body, or, when their save landed between a writer's re-read and its
  write (the one window GitHub's API leaves open), in the issue's edit history, as on github.com.
"""

from __future__ import annotations

import threading

import pytest
from bodies import ENV, with_marker
from conftest import SAMPLE
from hypothesis import example, given, settings
from hypothesis import strategies as st
from memstore import MemoryEditStore, MemoryStore
from strategies import examples

from ghstate.core.edits import Edits
from ghstate.core.intent import CiResult, Intent, WriteSpec
from ghstate.core.model import Checkpoint
from ghstate.core.parse import parse
from ghstate.core.verification import Verification
from ghstate.github import history
from ghstate.services.reader import checkpoint_of, current
from ghstate.services.writer import Writer


class Scheduler:
    """Lets one actor at a time run to its next store operation, in the order ``choices`` says."""

    def __init__(self, choices: list[int]) -> None:
        self.choices = iter(choices)
        self.cv = threading.Condition()
        self.waiting: set[int] = set()
        self.finished: set[int] = set()
        self.running: int | None = None
        self.local = threading.local()
        self.events: list[tuple[int, str]] = []  # (actor, operation), in the order they happened

    def before(self, name: str) -> None:
        me = self.local.id
        with self.cv:
            self.waiting.add(me)
            self.running = None
            self.cv.notify_all()
            self.cv.wait_for(lambda: self.running == me)
            self.waiting.discard(me)
            self.events.append((me, name))

    def run(self, actors: list) -> dict[int, BaseException | None]:
        outcome: dict[int, BaseException | None] = {}

        def body(i: int, fn) -> None:
            self.local.id = i
            self.before("start")
            try:
                fn()
                outcome[i] = None
            except BaseException as exc:  # noqa: BLE001 - reported to the test, which judges it
                outcome[i] = exc
            with self.cv:
                self.finished.add(i)
                self.running = None
                self.cv.notify_all()

        threads = [threading.Thread(target=body, args=(i, fn), daemon=True) for i, fn in enumerate(actors)]
        for t in threads:
            t.start()
        while True:
            with self.cv:
                self.cv.wait_for(lambda: self.running is None
                                 and len(self.waiting) + len(self.finished) == len(actors), timeout=30)
                if len(self.finished) == len(actors):
                    break
                ready = sorted(self.waiting)
                assert ready, "a writer is stuck outside the store"
                self.running = ready[next(self.choices, 0) % len(ready)]
                self.cv.notify_all()
        for t in threads:
            t.join(timeout=10)
        return outcome


ACTIONS = st.sampled_from(["decision", "tick", "resume", "risk", "ci", "comment"])


def writer_action(store: MemoryStore, kind: str, k: int, log: dict):
    """An actor: one ``ghstate`` write of a kind, and what it must leave behind; or a person's comment
    (not a write, but it moves the count every writer and reader goes by)."""
    if kind == "comment":
        def comment() -> None:
            store.before("comment by a person")
            store.add_comment(1, None, summary=f"a person's comment {k}")

        return comment, (lambda cp: True)
    if kind == "decision":
        intent, check = Intent(edits=Edits(decisions=(f"decision {k}",))), (lambda cp: f"decision {k}" in cp.decisions)
    elif kind == "risk":
        intent, check = Intent(edits=Edits(risks=(f"risk {k}",))), (lambda cp: f"risk {k}" in cp.risks)
    elif kind == "tick":
        n = k % 3 + 1
        intent, check = Intent(edits=Edits(done=(str(n),))), (lambda cp: cp.phases[n - 1].done)
    elif kind == "resume":
        intent, check = Intent(edits=Edits(resume=f"resume {k}")), (
            lambda cp: cp.resume == last_logged(store, "resume"))
    else:
        def intent(cp: Checkpoint) -> Intent:  # made from what the run read, as ghstate ci does
            runs = (cp.verification_data.attempt_count if cp.verification_data else 0) + 1
            return Intent(verification=CiResult(f"CI run {runs} ({k})", Verification(attempt_count=runs,
                                                                                     run_id=str(k))))

        def check(cp: Checkpoint) -> bool:  # the result logged last stands
            logged = last_logged(store, "verification")
            return cp.verification_data == (Verification.from_dict(logged) if logged else None)

    def act() -> None:
        log.setdefault("warnings", []).extend(Writer(store, env=ENV).write(WriteSpec(intent, number=1)).warnings)

    return act, check


def last_logged(store: MemoryStore, key: str):
    """What the write logged last set for ``key`` ("resume", "verification"): log order decides."""
    found = None
    for data in store.logged(1):
        intent = data.get("intent") or {}
        if key == "resume" and "resume" in intent.get("edits", {}):
            found = intent["edits"]["resume"]
        if key == "verification" and intent.get("verification"):
            found = intent["verification"]["data"]
    return found


def web_edit(store: MemoryStore, text: str):
    """A person opens the editor (reads the body), and saves it with one more question, later."""
    def act() -> None:
        page = store.get(1).body
        store.get(1)  # the time they spend typing: one more step for the others
        store.web_edit(1, page.replace("## Open questions\n", f"## Open questions\n- {text}\n"))

    return act


@settings(max_examples=examples(150))
@example(kinds=["decision"] * 4, person=True, choices=[24, 44])  # the person saves last: the next write converges
@example(kinds=["ci", "ci"], person=True, choices=[1, 1, 2, 2])
@example(kinds=["resume", "resume", "decision"], person=True, choices=[0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0])  # review
@example(kinds=["resume", "resume"], person=False, choices=[0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0])  # review: log order
@given(st.lists(ACTIONS, min_size=2, max_size=7), st.booleans(), st.lists(st.integers(0, 50), max_size=400))
@pytest.mark.parametrize("kind", [MemoryEditStore, MemoryStore], ids=["edit log", "comment log"])
def test_no_reported_write_is_lost_in_any_interleaving(kind, kinds, person, choices):
    store = kind()
    # GitHub's store finds what a page without the marker was edited from; a log apart from the body reads
    # such a body as a person's text holding all of it, and ghstate's own checkpoints have the marker
    store.add_issue(1, SAMPLE if kind is MemoryEditStore else with_marker(SAMPLE))
    log: dict = {}
    actors, checks = [], []
    for k, action in enumerate(kinds):
        act, check = writer_action(store, action, k, log)
        actors.append(act)
        checks.append(check)
    if person:
        actors.append(web_edit(store, "asked by a person"))
    scheduler = Scheduler(choices)
    store.before = scheduler.before
    outcome = scheduler.run(actors)
    store.before = None
    failures = {i: exc for i, exc in outcome.items() if exc is not None}
    assert not failures, failures

    seen = current(store, store.get(1))
    body_writes = [op for _, op in scheduler.events if op in ("update", "save")]
    if body_writes[-1:] == ["save"]:
        # A person's save from an older page came last: no write is left to bring the body up to date,
        # so the next one does (readers have everything meanwhile).
        for check in checks:
            assert check(seen), "a reader does not see a write that returned"
        Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(decisions=("the next write",))), number=1))
    body = checkpoint_of(store.get(1))
    for check in checks:
        assert check(seen), "a reader does not see a write that returned"
        assert check(body), "the body did not converge"
    if "resume" in kinds:
        assert seen.resume == body.resume == last_logged(store, "resume"), "the resume logged last must stand"
    if person and "asked by a person" not in body.questions:
        # a write builds on a person's version saved between its read and its own; only a version saved
        # among other writes may be written over, and then a warning says whose and when, and GitHub's
        # history keeps it
        if kind is MemoryStore:  # no versions: a save between a writer's re-read and its write is not seen
            assert in_the_window(scheduler.events, person_id=len(actors) - 1), scheduler.events
        else:
            assert any("saved by mona" in w for w in log.get("warnings", ())), (scheduler.events, log)
        assert any("asked by a person" in parse(history.split(b)[0]).checkpoint.questions
                   for b in store.history[1])


def in_the_window(events: list[tuple[int, str]], person_id: int) -> bool:
    """Whether a writer wrote the body after the person's save while its last read came before it."""
    save = events.index((person_id, "save"))
    for i in range(save + 1, len(events)):
        actor, op = events[i]
        if op == "update":
            reads = [j for j in range(i) if events[j][0] == actor and events[j][1] in ("get", "reread")]
            if reads and reads[-1] < save:
                return True
    return False


def test_a_maintainer_deleting_comments_while_two_writers_run_loses_neither():
    """Found in review of the comment log: a maintainer deleting comments while two writers run lost one of
    them. Writes are logged in the body's edit history now: comments are no one's positions."""
    store = MemoryEditStore()
    store.add_issue(1, SAMPLE)
    for i in range(5):
        store.add_comment(1, None, summary=f"note {i}")
    log: dict = {}
    w, check_w = writer_action(store, "decision", 0, log)
    x, check_x = writer_action(store, "decision", 1, log)

    def maintainer() -> None:
        store.before("delete")
        del store.comments[1][0:2]

    scheduler = Scheduler([0, 1, 2, 0, 0, 1, 1, 1, 0, 1, 1, 1, 2, 0])
    store.before = scheduler.before
    outcome = scheduler.run([w, x, maintainer])
    store.before = None
    assert not any(outcome.values()), outcome
    for check in (check_w, check_x):
        assert check(current(store, store.get(1))) and check(checkpoint_of(store.get(1)))


def test_a_logged_tick_of_a_phase_renamed_since_is_left_out_not_fatal():
    """Found in review: replaying --done of a phase a person renamed failed every later command."""
    from ghstate.errors import RemoteError

    store = MemoryStore()  # a log apart from the body: the entry is logged, then the body cannot be written
    store.add_issue(1, SAMPLE)
    real = store._set

    def gone(*args, **kwargs):
        raise RemoteError("the body could not be written", retryable=True)

    store._set = gone
    with pytest.raises(RemoteError):
        Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(done=("Phase 3",))), number=1))
    assert store.logged(1)[-1]["intent"]["edits"]["done"] == ["Phase 3"]
    store._set = real
    store.web_edit(1, store.bodies[1].replace("Phase 3: wire config", "Phase 3b: wire the config"))
    assert [p.name for p in current(store, store.get(1)).phases][-1] == "Phase 3b: wire the config"
    Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(decisions=("next",))), number=1))
    assert "next" in checkpoint_of(store.get(1)).decisions
