"""The per-test ledger: what each test did over a task's last CI runs, and each test's class from it.

Pure and small on purpose: it lives in the checkpoint's hidden marker (``verification.ledger``; the
record and its bounds are ``ghstate.core.verification.Ledger``): at most MAX_RUNS runs and MAX_TESTS
tests, test names kept only as short hashes. A test is tracked from its first failure;
a run keeps its commit and a digest of the set of tests that ran, so that a re-run of exactly the same
tests tells which untracked tests passed on that commit before.
"""


import hashlib
import re
from typing import NamedTuple

from ghstate.core.verification import (
    ABSENT,
    COMMIT_CHARS,
    DIGEST_CHARS,
    FAILED,
    FLAKY,
    KEY_CHARS,
    MAX_RUNS,
    MAX_TESTS,
    PASSED,
    UNKNOWN,
    Ledger,
)


class CaseResult(NamedTuple):
    """One test's outcome in one run, as the reports give it."""

    name: str
    outcome: str  # passed | failed | flaky (failed, re-run, passed) | skipped
    message: str = ""
    build: bool = False  # stands for code that did not build or load, not for a test's assertion


def ledger_key(name: str) -> str:
    """A test's key in the ledger: short, fixed-size, and free of whatever the name holds."""
    return hashlib.sha1(name.encode("utf-8")).hexdigest()[:KEY_CHARS]


def commit_key(commit: str) -> str:
    """A commit's key in the ledger ("" when unknown: such runs are never "the same commit")."""
    commit = commit.strip().lower()
    if not commit:
        return ""
    if re.fullmatch(r"[0-9a-f]{7,64}", commit):
        return commit[:COMMIT_CHARS]
    return hashlib.sha1(commit.encode("utf-8")).hexdigest()[:COMMIT_CHARS]


def tests_digest(tests: tuple[CaseResult, ...] | None) -> str:
    """A digest of which tests ran (were not skipped): two runs with the same one ran the same tests
    ("" without a readable report)."""
    if tests is None:
        return ""
    names = sorted({t.name for t in tests if t.outcome != "skipped"})
    return hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()[:DIGEST_CHARS]




def _entry(entry: str) -> tuple[str, str]:
    """(commit key, digest) of a run entry."""
    commit, _, digest = entry.partition("/")
    return commit, digest








def _history(marks: str, runs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(commit key, mark) of the runs that say how the test did."""
    return [(_entry(run)[0], mark) for run, mark in zip(runs, marks, strict=False) if mark in (PASSED, FAILED, FLAKY)]


def _flaked(history: list[tuple[str, str]]) -> bool:
    """Passed and failed on one commit, anywhere in the ledger's runs."""
    by_commit: dict[str, set[str]] = {}
    for commit, mark in history:
        if mark == FLAKY:
            return True
        if commit:
            by_commit.setdefault(commit, set()).add(mark)
    return any({PASSED, FAILED} <= marks for marks in by_commit.values())


def classify_test(outcome: str, marks: str | None, runs: tuple[str, ...], now: str) -> str | None:
    """The class of a test with this ``outcome`` now, given its ``marks`` over the ledger's ``runs``
    (None: not tracked, it did not fail in them), in the run whose entry is ``now``.

    A failing test is ``flaky`` when it passed on this commit too (or on a re-run within this run;
    an earlier run of this commit in which exactly the same tests ran, and this one was not tracked,
    counts as a pass: it ran there and did not fail),
    ``persistent`` when its last result on an earlier commit was a failure, ``flaky`` again when it
    passed and failed on one commit earlier in the ledger and has not failed since, else ``new``.
    A passing test is ``flaky`` when it failed on this commit, ``fixed`` when its last result was a
    failure and it is not known to be flaky (a flaky test passing again is not news), else it has no
    class.
    """
    commit, digest = _entry(now)
    marks = UNKNOWN * len(runs) if marks is None else marks
    history = _history(marks, runs)
    here = {mark for c, mark in history if commit and c == commit}
    if commit and digest and any(_entry(run) == (commit, digest) and mark == UNKNOWN
                                 for run, mark in zip(runs, marks, strict=False)):
        here.add(PASSED)
    before = [mark for c, mark in history if not commit or c != commit]
    if outcome == "flaky":
        return "flaky"
    if outcome == "failed":
        if here & {PASSED, FLAKY}:
            return "flaky"
        if before and before[-1] == FAILED:
            return "persistent"
        if _flaked(history):
            return "flaky"
        return "new"
    if outcome == "passed":
        if FAILED in here:
            return "flaky"
        if history and history[-1][1] == FAILED and not _flaked(history):
            return "fixed"
    return None


def record(ledger: Ledger, now: str, tests: tuple[CaseResult, ...] | None, passed: bool) -> Ledger:
    """The ledger after the run ``now`` (not a cancelled one): bounded to MAX_RUNS runs, MAX_TESTS tests."""
    column = {ledger_key(t.name): {"passed": PASSED, "failed": FAILED, "flaky": FLAKY}.get(t.outcome, ABSENT)
              for t in tests or ()}
    runs = (*ledger.runs, now)
    rows = {key: marks + column.get(key, ABSENT) for key, marks in ledger.tests}
    commit, digest = _entry(now)
    # a test tracked from now on passed in the earlier runs of this commit where the same tests ran
    # a test failing now passed in the earlier runs of this commit where the same tests ran and it was
    # not tracked yet: write that down, so that it is still known once this commit is history
    same = [bool(commit and digest and _entry(run) == (commit, digest)) for run in ledger.runs]
    for key, mark in column.items():
        if mark in (FAILED, FLAKY):
            before = rows.get(key, UNKNOWN * len(ledger.runs) + mark)
            rows[key] = "".join(PASSED if m == UNKNOWN and i < len(same) and same[i] else m
                                for i, m in enumerate(before))
    drop = max(0, len(runs) - MAX_RUNS)
    runs = runs[drop:]
    rows = {key: marks[drop:] for key, marks in rows.items()}
    kept = [(key, marks) for key, marks in rows.items() if FAILED in marks or FLAKY in marks]

    def last_failure(item: tuple[str, str]) -> int:
        marks = item[1]
        return max(marks.rfind(FAILED), marks.rfind(FLAKY))

    if len(kept) > MAX_TESTS:  # forget the tests whose last failure is oldest
        kept = sorted(kept, key=last_failure, reverse=True)[:MAX_TESTS]
        kept.sort(key=lambda item: list(rows).index(item[0]))
    return Ledger(runs, tuple(kept), _entry(now)[0] if passed else ledger.green)
