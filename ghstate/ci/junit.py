"""JUnit XML reports → test results (what the decision logic in ``ghstate.ci.verdict`` reads).

Reports come from many runners (pytest, jest-junit, Maven Surefire, Gradle, go, PHPUnit, .NET,
TestNG, googletest) and do not agree on shape: a root ``<testsuites>`` or ``<testsuite>``, nested
suites, summary attributes that contradict the elements, a byte-order mark, CDATA. Results are
counted from the ``<testcase>`` elements, never from the summaries, and no message or output text is
dropped. Counting follows the runners and the tools that read their reports:

- each ``<testcase>`` is one result, as every reader of these reports counts them (dorny's
  test-reporter, mikepenz's action-junit-report, Jenkins): a test reported twice is two results
  unless the report says it is a re-run. It says so with ``<flakyFailure>``/``<rerunFailure>``
  elements inside one test case (Surefire, Gradle's ``mergeReruns``), or in pytest-rerunfailures'
  shape in a report pytest wrote: a re-run attempt is an empty ``<testcase>`` right before its
  namesake, and the suite's ``tests`` counts it out (``_fold_reruns``); the same shape in another
  runner's report (Jenkins' junit-report-bad-duration.xml) is two results, as Jenkins counts them.
  Otherwise only ``retries`` (``ghstate ci --retries``,
  as mikepenz's ``check_retries``) makes a repeated test (``Case.key``) one test whose last attempt
  decides (``merge``). Two results that share a name are one entry for the ledger, failed if either
  failed (``results_of``): a failure is never hidden by another test's pass;
- ``status="disabled"`` / ``status="notrun"`` (googletest's DISABLED_ tests) count as skipped;
- ``<flakyFailure>``/``<flakyError>`` (Surefire, Gradle's ``mergeReruns``) mean the test failed, was
  re-run and passed: it counts as passed, and is marked flaky; ``<rerunFailure>``/``<rerunError>``
  beside a ``<failure>`` are the other failed attempts of a test that failed every time;
- an ``<error>`` or ``<failure>`` directly inside a ``<testsuite>``, outside any test case (a suite
  that failed to load: ``NoClassDefFoundError``, a broken fixture module), is kept as one errored
  entry standing for the suite, the way pytest reports a collection error, and classified as a
  build/setup failure with its message.
"""

from __future__ import annotations

import glob
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

from defusedxml import DefusedXmlException, DTDForbidden
from defusedxml.ElementTree import fromstring

from ghstate.ci.ledger import CaseResult

MAX_REPORT_BYTES = 50 << 20  # one report; a larger one is not read (its size is looked at first)
MAX_REPORTS = 2_000  # reports read in one run; more matching files are said, not read
MAX_TOTAL_BYTES = 200 << 20  # all reports of one run together; past it, the rest are said, not read


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
    flaky: int = 0  # failed attempts before the passing one (flakyFailure, flakyError, repeated elements)
    setup: bool = False  # stands for a suite that failed to load, not for one test
    suite: str = ""  # the path of the suites it is in, outermost first, joined by " › "

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What the test is: its suite path, class name, name and file. Two test cases with different
        keys are two tests; two with one key are two results, or one test re-run (``merge``)."""
        return (self.suite, self.classname, self.name, self.file)

    @property
    def label(self) -> str:
        """How to name the test to a person: ``classname::name`` (or the file, else the suite), without
        repeats. ``results_of`` adds the suite path where two tests of a run would share a label."""
        where = self.file if self.setup else (self.file or self.classname or self.suite)
        if where and where != self.name:
            return f"{where}::{self.name}"
        return self.name


class Report(NamedTuple):
    source: str
    cases: tuple[Case, ...]
    output: str = ""  # suite-level system-out and system-err

    def counts(self, retries: bool = False) -> dict[str, int]:
        return count(self.cases, retries)


def count(cases: tuple[Case, ...] | list[Case], retries: bool = False) -> dict[str, int]:
    """Results by their outcome in the run: one per test case, or with ``retries`` one per test
    (``merge``); ``flaky``: those of the passed that failed first and passed on a re-run within the run."""
    tests = merge(cases) if retries else cases
    out = {"tests": len(tests), "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "flaky": 0}
    for case in tests:
        out[{"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped"}[case.status]] += 1
        out["flaky"] += bool(case.flaky)
    return out


def merge(cases: tuple[Case, ...] | list[Case]) -> list[Case]:
    """One case per test (``Case.key``), in the order first seen, for a run whose repeated tests are
    re-runs (``ghstate ci --retries``; Gradle without ``mergeReruns``, TestNG's retries, a re-run step),
    read as mikepenz's ``check_retries`` reads them: a test passed when one of its attempts passed (and
    is flaky when another failed); otherwise its last attempt that ran decides. Every attempt's failure
    text is kept."""
    attempts: dict[tuple[str, str, str, str], list[Case]] = {}
    for case in cases:
        attempts.setdefault(case.key, []).append(case)
    merged = []
    for runs in attempts.values():
        if len(runs) == 1:
            merged.append(runs[0])
            continue
        ran = [c for c in runs if c.status != "skipped"] or runs
        passes = [c for c in ran if c.status == "passed"]
        final = passes[-1] if passes else ran[-1]
        failures = [c for c in ran if c.status in ("failed", "error") and c is not final]
        detail = "\n\n".join(c.detail for c in (*failures, final) if c.detail)
        output = "\n".join(c.output for c in runs if c.output)
        if final.status == "passed" and (failures or final.flaky):
            first = failures[0] if failures else final
            merged.append(final._replace(flaky=final.flaky + len(failures), message=final.message or first.message,
                                         detail=detail, output=output))
        else:
            merged.append(final._replace(detail=detail, output=output))
    return merged


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
    if case.setup:
        return True
    text = f"{case.name} {case.classname} {case.message}".lower()
    return any(m in text for m in ("[build failed]", "build error", "build failed", "test suite failed to run",
                                   "setup failed", "compilation error", "failed to compile"))


_SKIPPED_STATUS = {"disabled", "notrun", "skipped", "ignored"}  # googletest, CTest-style reporters
_SKIPPED_RESULT = {"suppressed", "skipped"}  # googletest's result= beside status="notrun"/"run"


def _case(element: ET.Element, suite_file: str, suite: str = "") -> Case:
    status, message, detail = "passed", "", ""
    flaky = 0
    output: list[str] = []
    for child in element:
        tag = _local(child.tag)
        if tag in ("failure", "error") and status in ("passed", "skipped"):
            status = "failed" if tag == "failure" else "error"
            body = _text(child)
            message = _reason(child.get("message") or "", body) or child.get("type") or tag
            detail = f"{body}\n\n{detail}".strip() if detail else body
        elif tag in ("failure", "error", "rerunFailure", "rerunError", "flakyFailure", "flakyError"):
            # another attempt (retries, teardown, reruns): keep its text too
            if tag.startswith("flaky"):
                flaky += 1
                if status == "passed" and not message:  # why it was re-run
                    message = _reason(child.get("message") or "", _text(child)) or child.get("type") or tag
            attempt = "\n".join(x for x in (child.get("message") or "", _text(child)) if x)
            detail = f"{detail}\n\n{attempt}".strip()
        elif tag == "skipped" and status == "passed":
            status = "skipped"
            message = (child.get("message") or _text(child)).strip()
        elif tag in ("system-out", "system-err"):
            text = _text(child)
            if text:
                output.append(text)
    marked = (element.get("status") or "").strip().lower()
    if status == "passed" and (marked in _SKIPPED_STATUS or (element.get("result") or "").lower() in _SKIPPED_RESULT):
        status = "skipped"
        message = message or marked or "not run"
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
        flaky=flaky if status == "passed" else 0,
        suite=suite,
    )


def _suite_failure(element: ET.Element, problem: ET.Element, suite_file: str, suite: str) -> Case:
    """An ``<error>``/``<failure>`` of the suite itself: the suite did not load or set up. Its type
    (``java.lang.NoClassDefFoundError``) stays beside its message, as the runner prints it."""
    body = _text(problem)
    kind = (problem.get("type") or "").strip()
    message = _reason(problem.get("message") or "", body)
    if kind and kind not in message:
        message = f"{kind}: {message}" if message else kind
    message = message or _local(problem.tag)
    name = element.get("name") or suite_file or "(unnamed suite)"
    return Case(name=f"{name} (suite failed to load)", classname="", file=suite_file, status="error",
                message=" ".join(message.split()), detail=body, setup=True, suite=suite)


def _xml(data: bytes, source: str) -> ET.Element:
    """The document's root element. A document type declaration is refused before anything in it is
    read: JUnit reports never need one, and its entities are how a report would make the reader expand
    a billion laughs or read a file of the runner (``<!ENTITY x SYSTEM "file:///...">``)."""
    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except ET.ParseError as exc:
        raise JUnitError(f"{source}: not well-formed XML ({exc})") from None
    except DefusedXmlException as exc:
        named = f" <!DOCTYPE {exc.name}>" if isinstance(exc, DTDForbidden) else ""
        raise JUnitError(f"{source}: declares a document type{named}, which a JUnit report never needs; "
                         "not read, and nothing in it expanded") from None


def _empty_attempt(case: Case) -> bool:
    """A test case that says nothing but that it ran: how pytest writes an attempt it re-ran."""
    return case.status == "passed" and not (case.flaky or case.message or case.detail or case.setup)


def _fold_reruns(cases: list[Case], declared: str | None) -> list[Case]:
    """pytest-rerunfailures' shape (16.x with pytest's junitxml, in a report pytest wrote): every attempt
    that will be re-run is an empty ``<testcase>`` right before its namesake, the last attempt holds the
    result, and the suite's ``tests`` counts the test once. Only when ``tests`` says so are those
    attempts one test (failed attempts before a pass: flaky); otherwise every test case stays a result
    of its own."""
    groups: list[list[Case]] = []
    for case in cases:
        if groups and groups[-1][-1].key == case.key and _empty_attempt(groups[-1][-1]):
            groups[-1].append(case)
        else:
            groups.append([case])
    if len(groups) == len(cases) or (declared or "").strip() != str(len(groups)):
        return cases
    folded = []
    for *attempts, last in groups:
        output = "\n".join(c.output for c in (*attempts, last) if c.output)
        if attempts and last.status == "passed":
            tries = f"{len(attempts)} attempt{'s' if len(attempts) > 1 else ''}"
            last = last._replace(flaky=len(attempts), message=last.message or f"failed {tries}, then passed")
        folded.append(last._replace(output=output))
    return folded


def parse_report(data: bytes, source: str) -> Report:
    if len(data) > MAX_REPORT_BYTES:
        raise JUnitError(_too_large(source))
    if not data.strip():
        raise JUnitError(f"{source}: empty file")
    root = _xml(data.removeprefix(b"\xef\xbb\xbf"), source)
    if _local(root.tag) not in ("testsuites", "testsuite", "testcase"):
        raise JUnitError(f"{source}: the root element is <{_local(root.tag)}>, not <testsuites> or <testsuite>")
    cases: list[Case] = []
    output: list[str] = []
    # pytest's junitxml names its root so (and its suite "pytest", unless junit_suite_name says otherwise):
    # only pytest's reports say re-run by an empty namesake (pytest-rerunfailures' attempts)
    by_pytest = _local(root.tag) == "testsuites" and root.get("name") == "pytest tests"

    def walk(element: ET.Element, suite_file: str, path: tuple[str, ...]) -> None:
        if _local(element.tag) == "testsuite":
            path = (*path, " ".join((element.get("name") or "").split()))
        suite = " › ".join(name for name in path if name)
        start, nested = len(cases), False
        for child in element:
            tag = _local(child.tag)
            if tag == "testsuite":
                nested = True
                walk(child, child.get("file") or suite_file, path)
            elif tag == "testcase":
                cases.append(_case(child, suite_file, suite))
            elif tag in ("error", "failure") and _local(element.tag) == "testsuite":
                cases.append(_suite_failure(element, child, suite_file, suite))
            elif tag in ("system-out", "system-err"):
                text = _text(child)
                if text:
                    output.append(text)
        if not nested and _local(element.tag) == "testsuite" and (by_pytest or element.get("name") == "pytest"):
            cases[start:] = _fold_reruns(cases[start:], element.get("tests"))

    if _local(root.tag) == "testcase":
        cases.append(_case(root, ""))
    else:
        walk(root, root.get("file") or "", ())
    return Report(source, tuple(cases), "\n".join(output))


class _Budget:
    """What a run's reports may take before reading stops: MAX_REPORTS files, MAX_TOTAL_BYTES bytes in all (a
    workspace may hold anything the tests wrote: each file's size is looked at before it is read)."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0
        self.left: list[str] = []  # what was not read past the bounds

    def take(self, path: str, shown: str) -> bool:
        """Whether ``path`` may be read (counted); a report past one of the run's bounds is not (said at the end,
        ``said``), and one larger than a report may be is refused (``JUnitError``) before it is read."""
        size = os.stat(path).st_size
        if size > MAX_REPORT_BYTES:
            raise JUnitError(_too_large(shown))
        if self.files >= MAX_REPORTS or self.bytes + size > MAX_TOTAL_BYTES:
            self.left.append(shown)
            return False
        self.files, self.bytes = self.files + 1, self.bytes + size
        return True

    def said(self) -> list[str]:
        if not self.left:
            return []
        return [f"{len(self.left):,} more report{'s' if len(self.left) != 1 else ''} (from {self.left[0]}) not read: "
                f"a run reads at most {MAX_REPORTS:,} reports and {MAX_TOTAL_BYTES >> 20} MiB in all; give narrower "
                "patterns"]


def _too_large(source: str) -> str:
    return f"{source}: larger than {MAX_REPORT_BYTES >> 20} MiB; not read"


def load_reports(patterns: list[str], root: Path) -> tuple[list[Report], list[str]]:
    """Reports matching the glob ``patterns`` (relative to ``root``), and one warning per problem; at most
    MAX_REPORTS files and MAX_TOTAL_BYTES in all are read (``_Budget``)."""
    reports: list[Report] = []
    warnings: list[str] = []
    seen: set[str] = set()
    budget = _Budget()
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
                if budget.take(path, shown):
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
    return reports, warnings + budget.said()


# ------------------------------------------------------------------------------ the run's facts


_SEVERITY = {"skipped": 0, "passed": 1, "flaky": 2, "failed": 3}


def results_of(reports: list[Report], retries: bool = False) -> tuple[CaseResult, ...]:
    """One result per test name across ``reports``, for the ledger. Tests are named by ``Case.label``;
    where two tests of the run would share one (``A`` in suites ``TestA`` and ``TestB``), each is named
    with its suite path too. With ``retries``, a test reported more than once is one test (``merge``:
    failed, then passed is flaky); without, test cases of one name are one entry whose worst outcome
    stands (failed over flaky over passed over skipped): a failure is never hidden by a namesake's pass."""
    cases = [c for r in reports for c in r.cases]
    tests = merge(cases) if retries else cases
    keys: dict[str, set[tuple[str, str, str, str]]] = {}
    for case in tests:
        keys.setdefault(case.label, set()).add(case.key)
    results: dict[str, CaseResult] = {}
    for case in tests:
        name = case.label
        if len(keys[name]) > 1 and case.suite and case.suite not in name:
            name = f"{case.suite} › {name}"
        outcome = {"passed": "flaky" if case.flaky else "passed", "failed": "failed", "error": "failed",
                   "skipped": "skipped"}[case.status]
        held = results.get(name)
        if held is None or _SEVERITY[outcome] > _SEVERITY[held.outcome]:
            results[name] = CaseResult(name, outcome, case.message or case.status, looks_like_build_failure(case))
    return tuple(results.values())
