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

from bodies import ENV
from conftest import SAMPLE
from hypothesis import example, given, settings
from hypothesis import strategies as st
from memstore import MemoryStore
from strategies import examples

from ghstate.edit import Edits
from ghstate.intent import Intent, CiResult
from ghstate.lookup import checkpoint_of, current
from ghstate.model import Checkpoint
from ghstate.parse import parse
from ghstate.writer import Writer, WriteSpec


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


ACTIONS = st.sampled_from(["decision", "tick", "resume", "risk", "ci"])


def writer_action(store: MemoryStore, kind: str, k: int, log: dict):
    """An actor: one ``ghstate`` write of a kind, and what it must leave behind."""
    if kind == "decision":
        intent, check = Intent(edits=Edits(decisions=(f"decision {k}",))), (lambda cp: f"decision {k}" in cp.decisions)
    elif kind == "risk":
        intent, check = Intent(edits=Edits(risks=(f"risk {k}",))), (lambda cp: f"risk {k}" in cp.risks)
    elif kind == "tick":
        n = k % 3 + 1
        intent, check = Intent(edits=Edits(done=(str(n),))), (lambda cp: cp.phases[n - 1].done)
    elif kind == "resume":
        intent, check = Intent(edits=Edits(resume=f"resume {k}")), (lambda cp: cp.resume.startswith("resume "))
    else:
        def intent(cp: Checkpoint) -> Intent:
            runs = int((cp.verification_data or {}).get("runs", 0)) + 1
            return Intent(verification=CiResult(f"CI run {runs}", {"runs": runs}))

        def check(cp: Checkpoint) -> bool:
            return int((cp.verification_data or {}).get("runs", 0)) >= log["ci"]

    def act() -> None:
        Writer(store, env=ENV).write(WriteSpec(intent, number=1))
        if kind == "ci":
            log["ci"] = log.get("ci", 0) + 1

    return act, check


def web_edit(store: MemoryStore, text: str):
    """A person opens the editor (reads the body), and saves it with one more question, later."""
    def act() -> None:
        page = store.get(1).body
        store.get(1)  # the time they spend typing: one more step for the others
        store.web_edit(1, page.replace("## Open questions\n", f"## Open questions\n- {text}\n"))

    return act


@settings(max_examples=examples(150))
@example(kinds=["decision"] * 4, person=True, choices=[24, 44])  # the person saves last: the next write converges
@example(kinds=["ci", "ci"], person=True, choices=[1, 1, 2, 2])  # a CI result made anew is logged anew
@given(st.lists(ACTIONS, min_size=2, max_size=7), st.booleans(), st.lists(st.integers(0, 50), max_size=400))
def test_no_reported_write_is_lost_in_any_interleaving(kinds, person, choices):
    store = MemoryStore()
    store.add_issue(1, SAMPLE)
    log: dict = {}
    actors, checks = [], []
    for k, kind in enumerate(kinds):
        act, check = writer_action(store, kind, k, log)
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
        last = [k for k, kind in enumerate(kinds) if kind == "resume"]
        assert seen.resume in {f"resume {k}" for k in last}
    if person:
        text = "asked by a person"
        if text not in body.questions:  # only a write built on a read made before the save may drop it …
            assert in_the_window(scheduler.events, person_id=len(actors) - 1), scheduler.events
            assert any(text in parse(b).checkpoint.questions for b in store.history[1])  # … and it is kept there


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
