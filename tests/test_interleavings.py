"""Many writers on one checkpoint, interleaved at every store call by a scheduler the test controls.

Each writer runs in its own thread, but only one thread moves at a time: before each store operation a
writer waits until the scheduler, following a Hypothesis-drawn sequence, picks it. Every schedule is
therefore reproducible, and Hypothesis searches thousands of them (GHSTATE_SOAK=N for more). A person's
web edit, saved from a page opened earlier, is one of the actors; a write's ref moves and its body is
written in two steps another actor may come between (as in one GitHub request), and a refused move's
body is written or not (GitHub may run the mutations after a failed one). After every schedule:

- every writer that returned has its change in what a reader sees (``resume``), in chain order: of
  writes that set one value, the one later on the chain stands;
- the body itself holds every writer's change (it converged, with no further write), unless the
  person saved last from an older page: then the next write converges it;
- the person's question stands, in what a reader sees and in the body.
"""

from __future__ import annotations

import threading

from bodies import ENV, with_marker
from conftest import SAMPLE
from hypothesis import example, given, settings
from hypothesis import strategies as st
from memstore import MemoryStore
from strategies import examples

from ghstate.core.edits import Edits
from ghstate.core.intent import CiResult, Intent, WriteSpec
from ghstate.core.model import Checkpoint
from ghstate.core.verification import Verification
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


ACTIONS = st.sampled_from(["decision", "tick", "resume", "risk", "ci"])


def writer_action(store: MemoryStore, kind: str, k: int, log: dict):
    """An actor: one ``ghstate`` write of a kind (its write id ``wK``), and what it must leave behind."""
    if kind == "decision":
        intent, check = Intent(edits=Edits(decisions=(f"decision {k}",))), (lambda cp: f"decision {k}" in cp.decisions)
    elif kind == "risk":
        intent, check = Intent(edits=Edits(risks=(f"risk {k}",))), (lambda cp: f"risk {k}" in cp.risks)
    elif kind == "tick":
        n = k % 3 + 1
        intent, check = Intent(edits=Edits(done=(str(n),))), (lambda cp: cp.phases[n - 1].done)
    elif kind == "resume":
        intent, check = Intent(edits=Edits(resume=f"resume {k}")), (
            lambda cp: cp.resume == f"resume {last_on_chain(store, log, 'resume')}")
    else:
        def intent(cp: Checkpoint) -> Intent:  # made from what the run read, as ghstate ci does
            runs = (cp.verification_data.attempt_count if cp.verification_data else 0) + 1
            return Intent(verification=CiResult(f"CI run {runs} ({k})", Verification(attempt_count=runs,
                                                                                     run_id=str(k))))

        def check(cp: Checkpoint) -> bool:  # the result later on the chain stands
            return cp.verification_data is not None and \
                cp.verification_data.run_id == str(last_on_chain(store, log, "ci"))
    log.setdefault("kinds", {})[f"w{k}"] = (kind, k)

    def act() -> None:
        result = Writer(store, env=ENV).write(WriteSpec(intent, number=1, write_id=f"w{k}"))
        log.setdefault("warnings", []).extend(result.warnings)

    return act, check


def last_on_chain(store: MemoryStore, log: dict, kind: str) -> int | None:
    """The writer of ``kind`` whose write is latest on the chain: chain order decides, never clocks."""
    found = None
    for entry in store.entries(1):
        wanted = log["kinds"].get(entry.write)
        if wanted and wanted[0] == kind:
            found = wanted[1]
    return found


def web_edit(store: MemoryStore, text: str):
    """A person opens the editor (reads the body), and saves it with one more question, later."""
    def act() -> None:
        page = store.get(1).body
        store.get(1)  # the time they spend typing: one more step for the others
        store.web_edit(1, page.replace("## Open questions\n", f"## Open questions\n- {text}\n"))

    return act


@settings(max_examples=examples(150))
@example(kinds=["decision"] * 4, person=True, refused_mirrors=True, choices=[24, 44])
@example(kinds=["ci", "ci"], person=True, refused_mirrors=False, choices=[1, 1, 2, 2])
@example(kinds=["resume", "resume", "decision"], person=True, refused_mirrors=True,
         choices=[0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0])
@example(kinds=["resume", "resume"], person=False, refused_mirrors=True, choices=[0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0])
# found by soaks of the chain: a person's save the first write's mirror wrote over; a pre-chain body read as
# a person's edit while the first commit's mirror was on its way, then a mirror older than its head last
@example(kinds=["decision", "decision"], person=True, refused_mirrors=False, choices=[0, 0, 2, 2, 50, 50])
@example(kinds=["decision", "decision"], person=True, refused_mirrors=False, choices=[1, 1, 1, 1, 2, 14, 26, 26, 1])
@example(kinds=["decision", "decision"], person=False, refused_mirrors=False, choices=[1, 1, 1, 1])
# the person's save read as the checkpoint before its chain by a write that lost the chain's first commit
@example(kinds=["decision", "decision", "decision", "tick"], person=True, refused_mirrors=True,
         choices=[0, 1, 1, 1, 23, 33, 3, 3, 3, 3, 0, 1])
# a body older than the one the chain began from, carried by a write that lost, read as a person's edit
@example(kinds=["decision", "decision"], person=True, refused_mirrors=False, choices=[1, 1, 2, 50, 50, 50])
@given(st.lists(ACTIONS, min_size=2, max_size=7), st.booleans(), st.booleans(),
       st.lists(st.integers(0, 50), max_size=400))
def test_no_reported_write_is_lost_in_any_interleaving(kinds, person, refused_mirrors, choices):
    store = MemoryStore(mirror_after_refusal=refused_mirrors)
    store.add_issue(1, with_marker(SAMPLE))
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
    for check in checks:
        assert check(seen), "a reader does not see a write that returned"
    if person:
        assert "asked by a person" in seen.questions, "a person's edit was undone"
    body_writes = [op for _, op in scheduler.events if op in ("mirror", "save")]
    if body_writes[-1:] == ["save"]:
        # A person's save from an older page came last: no write is left to bring the body up to date,
        # so the next one does (readers have everything meanwhile).
        Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(decisions=("the next write",))), number=1))
    body = checkpoint_of(store.get(1))
    for check in checks:
        assert check(body), "the body did not converge"
    if person:
        assert "asked by a person" in body.questions, "a person's edit was undone"
    revisions = [e.revision.revision for e in store.entries(1)]
    assert revisions == sorted(set(revisions)), "revision numbers repeat or go back"
