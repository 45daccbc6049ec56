"""CI verification: the next verification of a task from the last one and the facts of one run.

Pure: no environment, no files, no templates, no GitHub. ``ghstate ci`` gathers a run's facts once
(``Run``), and this module decides what they mean for the task:

- the status (``passing``, ``failing``, ``blocked``, ``unknown``) and failures in a row, where a
  commit failing again (a re-run, a second workflow) is another attempt, not another failure in a row,
  and a failure made only of flaky tests does not count either;
- each failing test's class, from a small ledger of per-test outcomes over the task's last runs
  (``Ledger``, kept in the checkpoint's hidden marker): ``new``, ``persistent``, ``flaky``, and
  ``fixed`` for a test that failed before and passes now;
- what to look at first (``suggested_focus``), new failures first.

``Verification.to_dict`` / ``from_dict`` are the marker's shape; ``from_dict`` reads every shape
earlier versions wrote.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ghstate.ledger import CaseResult, Ledger, classify_test, commit_key, ledger_key, record, run_entry, tests_digest
from ghstate.markup import code_span, visible
from ghstate.model import short_commit

CLASSES = ("new", "persistent", "flaky", "fixed")
STATUSES = ("passing", "failing", "blocked", "unknown")
MAX_FAILING = 10  # failing tests listed (with their message and class)
MAX_CLASS_NAMES = 5  # names listed per class (the counts are whole)
NAME_CHARS = 200  # a test name as shown; longer ones are clipped with "…"

_WEIGHT = {"<": 6, ">": 6, '"': 2, "\\": 2}  # what a character costs in the marker's JSON


def clip(text: str, limit: int) -> str:
    """One line that takes at most ``limit`` characters in the marker (where ``<`` becomes ``\\u003c``),
    so that what a test report holds cannot grow a checkpoint past its bound."""
    text = visible(" ".join((text or "").split()))
    if sum(_WEIGHT.get(ch, 1) for ch in text) <= limit:
        return text
    used = 0
    for i, ch in enumerate(text):
        used += _WEIGHT.get(ch, 1)
        if used > limit - 1:
            return text[:i] + "…"
    return text  # pragma: no cover - the sum above says otherwise


# ------------------------------------------------------------------------------------ the facts


class Run(NamedTuple):
    """The facts of one CI run, gathered once by the command."""

    result: str  # success | failure | cancelled
    commit: str = ""
    branch: str = ""
    run_id: str = ""
    run_url: str = ""
    workflow: str = ""
    at: str = ""
    block_after: int = 3
    tests: tuple[CaseResult, ...] | None = None  # None: no readable report
    counts: dict[str, int] = {}


# ------------------------------------------------------------------------------------ verification


class FailingTest(NamedTuple):
    name: str
    message: str
    cls: str = ""  # one of CLASSES ("" in records written before classes existed)

    def to_dict(self) -> dict[str, str]:
        data = {"name": self.name, "message": self.message}
        if self.cls:
            data["class"] = self.cls
        return data


class Verification(NamedTuple):
    """CI's record of the task, kept in the checkpoint's marker (``to_dict``/``from_dict``)."""

    status: str = "unknown"
    result: str = ""
    commit: str = ""
    branch: str = ""
    run_id: str = ""
    run_url: str = ""
    workflow: str = ""
    at: str = ""
    counts: dict[str, int] = {}
    failing_tests: tuple[FailingTest, ...] = ()
    test_classes: dict[str, tuple[str, ...]] = {}  # class → test names (at most MAX_CLASS_NAMES each)
    class_counts: dict[str, int] = {}  # class → how many tests
    since: str = ""  # the last green commit before this run
    failure_type: str | None = None  # test | build | cancelled | unknown
    failure_detail: str | None = None
    suggested_focus: str | None = None
    attempt_count: int = 0
    consecutive_failures: int = 0
    failed_commit: str = ""  # the last commit whose failure counted
    block_after: int = 3
    ledger: Ledger = Ledger()
    other: dict[str, Any] = {}  # keys a newer version wrote, kept

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status, "result": self.result, "commit": self.commit, "branch": self.branch,
            "run_id": self.run_id, "run_url": self.run_url, "workflow": self.workflow, "at": self.at,
            "counts": dict(self.counts),
            "failing_tests": [t.to_dict() for t in self.failing_tests],
            "test_classes": {k: list(v) for k, v in self.test_classes.items()},
            "class_counts": dict(self.class_counts),
            "since": self.since,
            "failure_type": self.failure_type, "failure_detail": self.failure_detail,
            "suggested_focus": self.suggested_focus,
            "attempt_count": self.attempt_count, "consecutive_failures": self.consecutive_failures,
            "failed_commit": self.failed_commit, "block_after": self.block_after,
            "ledger": self.ledger.to_dict(),
        }
        for key, value in self.other.items():
            data.setdefault(key, value)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Verification:
        """Any verification a checkpoint carries: this version's, an older one's, or a hand edit's."""
        if not isinstance(data, dict):
            return cls()

        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        def number(key: str, default: int = 0) -> int:
            value = data.get(key)
            if isinstance(value, bool):
                return default
            if isinstance(value, int):
                return value
            if isinstance(value, str) and value.strip().isdigit():
                return int(value)
            return default

        def optional(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        counts = data.get("counts")
        failing = data.get("failing_tests")
        classes = data.get("test_classes")
        class_counts = data.get("class_counts")
        known = set(cls._fields) - {"other"}
        return cls(
            status=text("status") or "unknown",
            result=text("result"), commit=text("commit"), branch=text("branch"), run_id=text("run_id"),
            run_url=text("run_url"), workflow=text("workflow"), at=text("at"),
            counts={k: v for k, v in counts.items() if isinstance(v, int)} if isinstance(counts, dict) else {},
            failing_tests=tuple(
                FailingTest(str(t.get("name", "")), str(t.get("message", "")),
                            t.get("class") if t.get("class") in CLASSES else "")
                for t in failing if isinstance(t, dict)) if isinstance(failing, list) else (),
            test_classes={k: tuple(n for n in v if isinstance(n, str)) for k, v in classes.items()
                          if k in CLASSES and isinstance(v, list)} if isinstance(classes, dict) else {},
            class_counts={k: v for k, v in class_counts.items() if k in CLASSES and isinstance(v, int)}
            if isinstance(class_counts, dict) else {},
            since=text("since"),
            failure_type=optional("failure_type"), failure_detail=optional("failure_detail"),
            suggested_focus=optional("suggested_focus"),
            attempt_count=number("attempt_count"), consecutive_failures=number("consecutive_failures"),
            # records older than failed_commit kept the failing commit in "commit" while not passing
            failed_commit=text("failed_commit") if "failed_commit" in data else (
                text("commit") if data.get("status") != "passing" else ""),
            block_after=number("block_after", 3) or 3,
            ledger=Ledger.from_dict(data.get("ledger")),
            other={k: v for k, v in data.items() if k not in known},
        )


def next_verification(previous: Verification | None, run: Run) -> Verification:
    """The task's verification after ``run``, from the one before it (None: the first run)."""
    prev = previous or Verification()
    tests = run.tests or ()
    now = run_entry(commit_key(run.commit), tests_digest(run.tests))
    ledger = prev.ledger
    if run.result == "cancelled":  # says nothing about the code: keep what was known, ledger and classes too
        classes: dict[str, list[CaseResult]] = {}
    else:
        rows = dict(ledger.tests)
        classes = {name: [] for name in CLASSES}
        for test in tests:
            found = classify_test(test.outcome, rows.get(ledger_key(test.name)), ledger.runs, now)
            if found:
                classes[found].append(test)
        ledger = record(ledger, now, run.tests, passed=run.result == "success")
    # a test that failed and passed on a re-run within this run failed too, unless the job passed
    failing = [t for t in tests if t.outcome == "failed" or t.outcome == "flaky" and run.result != "success"]
    flaky_names = {t.name for t in classes.get("flaky", ())}
    only_flaky = bool(failing) and all(t.name in flaky_names and not t.build for t in failing)

    consecutive = prev.consecutive_failures
    failed_commit = prev.failed_commit
    if run.result == "success":
        consecutive, failed_commit, status = 0, "", "passing"
    elif run.result == "failure":
        again = bool(consecutive) and failed_commit == run.commit != ""
        if not (again or only_flaky):
            consecutive += 1
        if not only_flaky:
            failed_commit = run.commit
        status = "blocked" if consecutive >= run.block_after else "failing"
    else:
        status = prev.status if prev.status in ("passing", "failing", "blocked") else "unknown"

    order = {"new": 0, "persistent": 1, "flaky": 2}
    class_of = {t.name: cls for cls, members in classes.items() for t in members}
    failing.sort(key=lambda t: (not t.build, order.get(class_of.get(t.name, ""), 3)))
    since = prev.ledger.green
    verdict = _verdict(run, failing, class_of, since)
    from ghstate.secrets import redact  # a CI write's: readers of a verification never load the scanner

    named = {cls: tuple(redact(clip(t.name, NAME_CHARS)) for t in members[:MAX_CLASS_NAMES])
             for cls, members in classes.items() if members}
    counted = {cls: len(members) for cls, members in classes.items() if members}
    if run.result == "cancelled":
        named, counted, since = prev.test_classes, prev.class_counts, prev.since
    return Verification(
        status=status, result=run.result, commit=visible(run.commit), branch=redact(visible(run.branch)),
        run_id=visible(run.run_id), run_url=visible(run.run_url), workflow=visible(run.workflow), at=visible(run.at),
        counts=dict(run.counts),
        failing_tests=tuple(FailingTest(redact(clip(t.name, NAME_CHARS)), redact(clip(t.message, NAME_CHARS)),
                                        class_of.get(t.name, "")) for t in failing[:MAX_FAILING]),
        test_classes=named, class_counts=counted, since=since,
        **{k: redact(v) if isinstance(v, str) else v for k, v in verdict.items()},
        attempt_count=prev.attempt_count + 1, consecutive_failures=consecutive, failed_commit=failed_commit,
        block_after=run.block_after, ledger=ledger, other=prev.other,
    )


def _verdict(run: Run, failing: list[CaseResult], class_of: dict[str, str], since: str) -> dict[str, Any]:
    """failure_type, failure_detail and suggested_focus: what the outcome means, and where to start."""
    link = f" (run: {run.run_url})" if run.run_url else ""
    if run.result == "success":
        return {"failure_type": None, "failure_detail": None, "suggested_focus": None}
    if run.result == "cancelled":
        return {"failure_type": "cancelled", "failure_detail": "the run was cancelled before it finished",
                "suggested_focus": f"Re-run the job before drawing conclusions{link}."}
    if failing:
        first = failing[0]
        label = clip(first.name, 120)
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        detail = clip(f"{first.name}: {first.message}", 500)
        if first.build:
            focus = f"Make {label} build or load again first{more}; it says: {clip(first.message, 160)}"
            return {"failure_type": "build", "failure_detail": detail, "suggested_focus": focus}
        cls = class_of.get(first.name, "")
        if all(t.outcome == "flaky" for t in failing):  # every failure passed when re-run in the run
            names = ", ".join(clip(t.name, 120) for t in failing[:3])
            more = f" (and {len(failing) - 3} more)" if len(failing) > 3 else ""
            detail = clip(f"{first.name}: {first.message} (passed when re-run)", 500)
            focus = (f"Every failing test passed when re-run within the run (flaky): {names}{more}; the job "
                     f"failed all the same, so read the failing step's log{link} (a step after the tests, or "
                     f"a runner that fails on re-runs), and make them deterministic when there is time; the "
                     f"first failure says: {clip(first.message, 160)}")
            return {"failure_type": "test", "failure_detail": detail, "suggested_focus": focus}
        if cls == "flaky":
            names = ", ".join(clip(t.name, 120) for t in failing[:3])
            focus = (f"Only flaky tests failed (each passed and failed on one commit): {names}; re-run the "
                     f"job, and make them deterministic when there is time; its failure says: "
                     f"{clip(first.message, 160)}")
        else:
            why = {"new": f", new since {short_commit(since)}" if since else "", "persistent": ", failing since before"}
            focus = f"Fix {label} first{why.get(cls, '')}{more}; its failure says: {clip(first.message, 160)}"
            flaky = [clip(t.name, 120) for t in failing if class_of.get(t.name) == "flaky"]
            if flaky:
                focus += f"; flaky, re-run before chasing: {', '.join(flaky[:3])}"
        return {"failure_type": "test", "failure_detail": detail, "suggested_focus": focus}
    if run.tests is not None:
        return {"failure_type": "build", "failure_detail": "the job failed, but no test in the reports failed",
                "suggested_focus": f"Read the failing step's log: the build, lint or setup broke before or "
                                   f"around the tests{link}."}
    return {"failure_type": "unknown", "failure_detail": "the job failed and left no readable test report",
            "suggested_focus": f"Open the run's log to see which step failed{link}."}


# ------------------------------------------------------------------------------------ words


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def classes_sentence(data: dict[str, Any] | None) -> str:
    """The classes in one clause: ``2 new failures since a1b2c3d; 1 flaky: tests/test_x.py::test_y``."""
    v = Verification.from_dict(data)
    counts, names = v.class_counts, v.test_classes
    parts = []
    if counts.get("new"):
        parts.append(_plural(counts["new"], "new failure") + (f" since {short_commit(v.since)}" if v.since else ""))
    if counts.get("persistent"):
        parts.append(f"{counts['persistent']} still failing from before")
    for cls in ("flaky", "fixed"):
        if counts.get(cls):
            shown = ", ".join(clip(n, 120) for n in names.get(cls, ())[:3])
            rest = counts[cls] - min(3, len(names.get(cls, ())))
            parts.append(f"{counts[cls]} {cls}: {shown}{f' (and {rest} more)' if rest > 0 else ''}")
    return "; ".join(parts)


def verification_line(data: dict[str, Any] | None, text: str = "") -> str:
    """The latest verification in one line, from CI's data or (hand-written) the section's first line."""
    data = data or {}
    status = data.get("status")
    if not status:
        return text.strip().split("\n", 1)[0] if text else ""
    v = Verification.from_dict(data)
    parts = [str(status)]
    if v.commit:
        parts.append(f"at {short_commit(v.commit)}")
    run = data.get("run_id")
    if isinstance(run, (str, int)) and not isinstance(run, bool) and str(run):
        parts.append(f"(CI run {run})")
    if v.counts.get("tests"):
        flaky = f", {v.counts['flaky']} flaky" if v.counts.get("flaky") else ""
        parts.append(f"({v.counts.get('failed', 0)} failed of {v.counts['tests']}{flaky})")
    if status != "passing":
        if v.failure_detail:
            parts.append(f"- {clip(v.failure_detail, 200)}")
        if v.consecutive_failures > 1:
            parts.append(f"[{v.consecutive_failures} failures in a row]")
    line = " ".join(parts)
    classes = classes_sentence(data)
    return f"{line}; {classes}" if classes else line


# ------------------------------------------------------------------------------------ markdown


def code_list(names: Any) -> str:
    """Names as code spans, separated by commas."""
    return ", ".join(code_span(name) for name in names or ())


_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#])")


def escape_inline(text: str) -> str:
    """``text`` on one line, with every character GitHub could read as inline markup backslash-escaped
    (CommonMark shows an escaped ASCII punctuation character as itself), so that it shows as written."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(str(text or "").split()))
