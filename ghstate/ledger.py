"""The per-test ledger: what each test did over a task's last CI runs, and each test's class from it.

Pure and small on purpose: it lives in the checkpoint's hidden marker (``verification.ledger``), so
it is bounded whatever the suite: at most MAX_RUNS runs and MAX_TESTS tests, test names kept only as
short hashes (``LEDGER_MAX_CHARS`` is the most it takes). A test is tracked from its first failure;
a run keeps its commit and a digest of the set of tests that ran, so that a re-run of exactly the same
tests tells which untracked tests passed on that commit before.
"""


import hashlib
import json
import re
from typing import Any, NamedTuple

from ghstate.model import KEPT_COMMIT

# The ledger's bound: at most MAX_RUNS runs of at most MAX_TESTS tests, each test a 10-hex key and
# one character per run, each run a 12-character commit key and a 6-hex digest of the tests that ran.
# See LEDGER_MAX_CHARS.
MAX_RUNS = 10
MAX_TESTS = 40
KEY_CHARS = 10
COMMIT_CHARS = KEPT_COMMIT
DIGEST_CHARS = 6
# a test in one run: passed, failed, failed then passed on a re-run within the run, not reported
# (absent or skipped), or unknown (not tracked then, so it did not fail)
PASSED, FAILED, FLAKY, ABSENT, UNKNOWN = "P", "F", "R", "-", "?"
MARKS = "PFR-?"


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


def run_entry(commit: str, digest: str) -> str:
    """One run in the ledger: ``<commit key>/<digest of the tests that ran>``."""
    return f"{commit}/{digest}"


def _entry(entry: str) -> tuple[str, str]:
    """(commit key, digest) of a run entry."""
    commit, _, digest = entry.partition("/")
    return commit, digest


class Ledger(NamedTuple):
    """Per-test outcomes over the task's last runs (cancelled runs are not runs here).

    ``runs`` holds one entry per run, oldest first (``run_entry``: its commit, and a digest of the
    tests that ran); ``tests`` maps a test's key to one character per run: ``P``
    passed, ``F`` failed, ``R`` failed and passed on a re-run within the run, ``-`` not reported,
    ``?`` not tracked then (it did not fail). Only tests that failed in one of the runs are kept.
    ``green`` is the commit of the last passing run, however old.
    """

    runs: tuple[str, ...] = ()
    tests: tuple[tuple[str, str], ...] = ()
    green: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"runs": list(self.runs), "tests": dict(self.tests), "green": self.green}

    @classmethod
    def from_dict(cls, data: Any) -> "Ledger":
        if not isinstance(data, dict):
            return cls()
        runs = data.get("runs")
        runs = tuple(r for r in runs if isinstance(r, str) and re.fullmatch(r"[0-9a-f]{0,12}/[0-9a-f]{0,6}", r))[
            -MAX_RUNS:] if isinstance(runs, list) else ()
        tests = data.get("tests")
        kept = []
        if isinstance(tests, dict):
            for key, marks in tests.items():
                if isinstance(key, str) and isinstance(marks, str) and re.fullmatch(r"[0-9a-f]{1,16}", key):
                    marks = "".join(m if m in MARKS else UNKNOWN for m in marks)[-len(runs):] if runs else ""
                    kept.append((key[:KEY_CHARS], marks.rjust(len(runs), UNKNOWN)))
        green = data.get("green")
        return cls(runs, tuple(kept[-MAX_TESTS:]), green[:COMMIT_CHARS] if isinstance(green, str) else "")


def ledger_max_chars() -> int:
    """The most characters the ledger takes in the marker (as compact JSON, ASCII only)."""
    full = Ledger(runs=tuple(run_entry("f" * COMMIT_CHARS, "f" * DIGEST_CHARS) for _ in range(MAX_RUNS)),
                  tests=tuple((f"{i:0{KEY_CHARS}x}", FAILED * MAX_RUNS) for i in range(MAX_TESTS)),
                  green="f" * COMMIT_CHARS)
    return len(json.dumps(full.to_dict(), separators=(",", ":")))


LEDGER_MAX_CHARS = ledger_max_chars()


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
