"""CI's record of a task as the checkpoint keeps it: the verification, its failing tests and the
per-test ledger, with the bounds that keep them small, and the words that show them.

Pure data: what the records mean for the next run is decided in ``ghstate.ci`` (``verdict``,
``ledger``). ``Verification.to_dict`` / ``from_dict`` are the marker's shape; ``from_dict`` reads every
shape earlier versions wrote.
"""


import json
import re
from typing import Any, NamedTuple

from ghstate.core.markup import KEPT_COMMIT, code_span, short_commit, visible

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


def run_entry(commit: str, digest: str) -> str:
    """One run in the ledger: ``<commit key>/<digest of the tests that ran>``."""
    return f"{commit}/{digest}"


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
    def from_dict(cls, data: Any) -> "Verification":
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


def code_list(names: Any) -> str:
    """Names as code spans, separated by commas."""
    return ", ".join(code_span(name) for name in names or ())


_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#])")


def escape_inline(text: str) -> str:
    """``text`` on one line, with every character GitHub could read as inline markup backslash-escaped
    (CommonMark shows an escaped ASCII punctuation character as itself), so that it shows as written."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(str(text or "").split()))
