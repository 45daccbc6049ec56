"""JUnit XML reports → test results, and a CI outcome → the classification a resume can act on.

Reports come from many runners (pytest, jest-junit, Maven Surefire, Gradle, go, PHPUnit, .NET,
TestNG) and do not agree on shape: a root ``<testsuites>`` or ``<testsuite>``, nested suites, summary
attributes that contradict the elements, a byte-order mark, CDATA. Results are counted from the
``<testcase>`` elements, never from the summaries, and no message or output text is dropped.
"""

from __future__ import annotations

import glob
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, NamedTuple

MAX_REPORT_BYTES = 50 << 20


class JUnitError(ValueError):
    """A report that is not JUnit XML; the message names the file and what is wrong."""


class Case(NamedTuple):
    name: str
    classname: str = ""
    file: str = ""
    status: str = "passed"  # passed | failed | error | skipped
    message: str = ""  # the one-line reason
    detail: str = ""  # the full failure text (stack trace, diff)
    time: float = 0.0
    output: str = ""  # system-out and system-err of the case

    @property
    def label(self) -> str:
        """How to name the test to a person: ``classname::name`` (or the file), without repeats."""
        where = self.file or self.classname
        if where and where != self.name:
            return f"{where}::{self.name}"
        return self.name


class Report(NamedTuple):
    source: str
    cases: tuple[Case, ...]
    output: str = ""  # suite-level system-out and system-err

    def counts(self) -> dict[str, int]:
        return count(self.cases)


def count(cases: tuple[Case, ...] | list[Case]) -> dict[str, int]:
    out = {"tests": len(cases), "passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for case in cases:
        out[{"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped"}[case.status]] += 1
    return out


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _text(element: ET.Element | None) -> str:
    if element is None:
        return ""
    return "".join(element.itertext()).strip()


_GENERIC = {"failed", "failure", "error", "build error", "build failed", "test suite failed to run", "fail"}
_NOISE = ("=== ", "--- ", "FAIL\t", "FAIL ")  # go test's progress lines, not the reason


def _reason(message: str, body: str) -> str:
    """The one-line reason: the message, with the body's first telling line when the message only says
    that something failed (go's "Build error", gotestsum's "Failed", jest's "Test suite failed to run")."""
    plain = message.strip().strip("●").strip()
    lines = [line.strip().strip("●").strip() for line in body.splitlines()]
    lines = [line for line in lines if line and not line.startswith(_NOISE)]
    if not plain:
        plain, lines = (lines[0], lines[1:]) if lines else ("", [])
    if plain.lower().rstrip(".:") in _GENERIC:
        telling = next((line for line in lines if line.lower().rstrip(".:") not in _GENERIC), "")
        if telling:
            return f"{plain}: {telling}"
    return plain


def looks_like_build_failure(case: Case) -> bool:
    """A "test" that stands for code that did not compile or load (go's [build failed], jest's suite)."""
    text = f"{case.name} {case.classname} {case.message}".lower()
    return any(m in text for m in ("[build failed]", "build error", "build failed", "test suite failed to run",
                                   "setup failed", "compilation error", "failed to compile"))


def _case(element: ET.Element, suite_file: str) -> Case:
    status, message, detail = "passed", "", ""
    output: list[str] = []
    for child in element:
        tag = _local(child.tag)
        if tag in ("failure", "error") and status in ("passed", "skipped"):
            status = "failed" if tag == "failure" else "error"
            body = _text(child)
            message = _reason(child.get("message") or "", body) or child.get("type") or tag
            detail = body
        elif tag in ("failure", "error"):  # a second one (retries, teardown): keep its text too
            detail = f"{detail}\n\n{child.get('message') or ''}\n{_text(child)}".strip()
        elif tag == "skipped" and status == "passed":
            status = "skipped"
            message = (child.get("message") or _text(child)).strip()
        elif tag in ("system-out", "system-err"):
            text = _text(child)
            if text:
                output.append(text)
    try:
        seconds = float(element.get("time") or 0)
    except ValueError:
        seconds = 0.0
    return Case(
        name=element.get("name") or "(unnamed test)",
        classname=element.get("classname") or "",
        file=element.get("file") or suite_file,
        status=status,
        message=" ".join(message.split()),
        detail=detail,
        time=seconds,
        output="\n".join(output),
    )


def parse_report(data: bytes, source: str) -> Report:
    if len(data) > MAX_REPORT_BYTES:
        raise JUnitError(f"{source}: larger than {MAX_REPORT_BYTES >> 20} MiB; not read")
    if not data.strip():
        raise JUnitError(f"{source}: empty file")
    try:
        root = ET.fromstring(data.removeprefix(b"\xef\xbb\xbf"))
    except ET.ParseError as exc:
        raise JUnitError(f"{source}: not well-formed XML ({exc})") from None
    if _local(root.tag) not in ("testsuites", "testsuite", "testcase"):
        raise JUnitError(f"{source}: the root element is <{_local(root.tag)}>, not <testsuites> or <testsuite>")
    cases: list[Case] = []
    output: list[str] = []

    def walk(element: ET.Element, suite_file: str) -> None:
        for child in element:
            tag = _local(child.tag)
            if tag == "testsuite":
                walk(child, child.get("file") or suite_file)
            elif tag == "testcase":
                cases.append(_case(child, suite_file))
            elif tag in ("system-out", "system-err"):
                text = _text(child)
                if text:
                    output.append(text)

    if _local(root.tag) == "testcase":
        cases.append(_case(root, ""))
    else:
        walk(root, root.get("file") or "")
    return Report(source, tuple(cases), "\n".join(output))


def load_reports(patterns: list[str], root: Path) -> tuple[list[Report], list[str]]:
    """Reports matching the glob ``patterns`` (relative to ``root``), and one warning per problem."""
    reports: list[Report] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for pattern in patterns:
        pattern = pattern.strip()
        if not pattern:
            continue
        full = pattern if os.path.isabs(pattern) else str(root / pattern)
        matches = sorted(glob.glob(full, recursive=True))
        if not matches:
            warnings.append(f"no JUnit report matches {pattern!r}")
            continue
        for path in matches:
            if path in seen or not os.path.isfile(path):
                continue
            seen.add(path)
            shown = os.path.relpath(path, root) if path.startswith(str(root)) else path
            try:
                reports.append(parse_report(Path(path).read_bytes(), shown))
            except JUnitError as exc:
                warnings.append(f"skipped {exc}")
            except OSError as exc:
                warnings.append(f"skipped {shown}: {exc.strerror or exc}")
            except (ValueError, LookupError, RecursionError) as exc:  # an encoding expat lacks, deep nesting
                warnings.append(f"skipped {shown}: cannot read it as XML ({type(exc).__name__}: {exc})")
        if matches and not any(os.path.isfile(path) for path in matches):
            example = f"{pattern.rstrip('/')}/**/*.xml"
            warnings.append(f"{pattern!r} matches only folders; give the XML files, e.g. {example!r}")
    return reports, warnings


# ------------------------------------------------------------------------------ classification


def classify(result: str, reports: list[Report] | None, run_url: str = "") -> dict[str, Any]:
    """What a CI outcome means for the task, in the seed's terms.

    ``reports`` None: no readable report (none configured, or all malformed).
    """
    cases = [c for r in reports or [] for c in r.cases]
    failing = [c for c in cases if c.status in ("failed", "error")]
    run = f" (run: {run_url})" if run_url else ""
    if result == "success":
        return {"failure_type": None, "failure_detail": None, "suggested_focus": None}
    if result == "cancelled":
        return {"failure_type": "cancelled", "failure_detail": "the run was cancelled before it finished",
                "suggested_focus": f"Re-run the job before drawing conclusions{run}."}
    if failing:
        broken = [c for c in failing if looks_like_build_failure(c)]
        first = (broken or failing)[0]
        label = clip(first.label, 120)
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        if broken:
            return {
                "failure_type": "build",
                "failure_detail": clip(f"{first.label}: {first.message or first.status}", 500),
                "suggested_focus": f"Make {label} build or load again first{more}; it says: "
                                   f"{clip(first.message, 160)}",
            }
        return {
            "failure_type": "test",
            "failure_detail": clip(f"{first.label}: {first.message or first.status}", 500),
            "suggested_focus": f"Fix {label} first{more}; its failure says: {clip(first.message, 160)}",
        }
    if reports:
        return {"failure_type": "build", "failure_detail": "the job failed, but no test in the reports failed",
                "suggested_focus": f"Read the failing step's log: the build, lint or setup broke before or "
                                   f"around the tests{run}."}
    return {"failure_type": "unknown", "failure_detail": "the job failed and left no readable test report",
            "suggested_focus": f"Open the run's log to see which step failed{run}."}


def clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
