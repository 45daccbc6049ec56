"""JUnit reports from many runners: parse without raising, count from the elements, lose no text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ghstate.ci.junit import JUnitError, count, load_reports, merge, parse_report, results_of
from ghstate.ci.verdict import Run, next_verification

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "junit"
FIXTURES = Path(__file__).parent / "fixtures" / "junit"
CORPUS_FILES = sorted(CORPUS.glob("*.xml")) if CORPUS.is_dir() else []


def classify(result: str, reports: list | None) -> dict:
    """What a first run with these reports is classified as (failure_type, detail, focus)."""
    v = next_verification(None, Run(result, commit="a" * 40, tests=results_of(reports) if reports else None))
    return {"failure_type": v.failure_type, "failure_detail": v.failure_detail, "suggested_focus": v.suggested_focus}


def element_counts(raw: bytes) -> dict[str, int]:
    text = raw.decode("utf-8-sig")
    cases = re.findall(r"<testcase\b.*?(?:/>|</testcase>)", text, re.DOTALL)
    return {
        "tests": len(cases),
        "failed": sum("<failure" in c for c in cases),
        "errors": sum("<error" in c and "<failure" not in c for c in cases),
        "skipped": sum("<skipped" in c and "<failure" not in c and "<error" not in c for c in cases),
    }


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_reports(path):
    raw = path.read_bytes()
    report = parse_report(raw, path.name)
    counts = report.counts()
    expected = element_counts(raw)
    assert {k: counts[k] for k in expected} == expected, "counted from elements, not from summary attributes"
    for case in report.cases:
        if case.status in ("failed", "error"):
            assert case.message, f"{case.label} failed without a reason"
    # no failure text or output is lost
    everything = "\n".join([report.output, *(c.detail + c.message + c.output for c in report.cases)])
    for chunk in re.findall(r"<(?:failure|error)[^>]*>(.*?)</(?:failure|error)>", raw.decode("utf-8-sig"), re.DOTALL):
        words = re.findall(r"[A-Za-z]{6,}", chunk)[:5]
        assert all(w in everything for w in words), words


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_summaries_that_lie():
    gotestsum = parse_report((CORPUS / "gotestsum-junitxml-report.xml").read_bytes(), "g").counts()
    assert gotestsum["tests"] == 60 and gotestsum["errors"] == 0
    jest = parse_report((CORPUS / "jest-junit-suite-failed-to-run.xml").read_bytes(), "j").counts()
    assert jest["errors"] == 2 and jest["tests"] == 2
    bom = parse_report((CORPUS / "dotnet-junitxml-testlogger-bom.xml").read_bytes(), "d")
    assert bom.counts()["failed"] == 14


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_testng_retry_is_two_results_unless_told_it_is_a_retry():
    """TestNG writes a retried attempt as a skipped test case beside the failed one; dorny's
    test-reporter shows this report (its pulsar-test-results-no-merge) as 1 failed, 1 skipped."""
    report = parse_report((CORPUS / "testng-pulsar-retry-cdata.xml").read_bytes(), "t")
    assert report.counts() == {"tests": 2, "passed": 0, "failed": 1, "errors": 0, "skipped": 1, "flaky": 0}
    assert report.counts(retries=True) == {"tests": 1, "passed": 0, "failed": 1, "errors": 0, "skipped": 0,
                                           "flaky": 0}


def test_pytest_fixture_and_classification():
    report = parse_report((FIXTURES / "pytest-two-failures.xml").read_bytes(), "pytest.xml")
    assert report.counts() == {"tests": 4, "passed": 1, "failed": 2, "errors": 0, "skipped": 1, "flaky": 0}
    first = [c for c in report.cases if c.status == "failed"][0]
    assert first.label == "tests.test_parser::test_strict_flags"
    assert first.message == "AssertionError: assert 'x' == 'y'" and "parse(\"x\")" in first.detail
    verdict = classify("failure", [report])
    assert verdict["failure_type"] == "test"
    assert verdict["failure_detail"] == "tests.test_parser::test_strict_flags: AssertionError: assert 'x' == 'y'"
    assert verdict["suggested_focus"].startswith("Fix tests.test_parser::test_strict_flags first (and 1 more)")


def test_classification_without_failing_tests():
    passing = parse_report((FIXTURES / "all-pass.xml").read_bytes(), "ok.xml")
    assert classify("failure", [passing])["failure_type"] == "build"
    assert classify("failure", None)["failure_type"] == "unknown"
    assert classify("cancelled", None)["failure_type"] == "cancelled"
    assert classify("success", [passing]) == {"failure_type": None, "failure_detail": None, "suggested_focus": None}


@pytest.mark.parametrize(("data", "message"), [
    (b"", "empty file"),
    (b"<testsuite><testcase", "not well-formed XML"),
    (b"<html><body/></html>", "the root element is <html>"),
])
def test_bad_reports(data, message):
    with pytest.raises(JUnitError, match=message):
        parse_report(data, "x.xml")


def test_load_reports_globs_and_warnings(tmp_path):
    (tmp_path / "reports").mkdir()
    for name in ("pytest-two-failures.xml", "malformed.xml"):
        (tmp_path / "reports" / name).write_bytes((FIXTURES / name).read_bytes())
    reports, warnings = load_reports(["reports/*.xml", "missing/*.xml"], tmp_path)
    assert [r.source for r in reports] == ["reports/pytest-two-failures.xml"]
    assert warnings[0].startswith("skipped reports/malformed.xml: not well-formed XML (unclosed token")
    assert warnings[1:] == ["no JUnit report matches 'missing/*.xml'"]


LAUGHS = b"".join(b'<!ENTITY l%d "%s">' % (i, b"&l%d;" % (i - 1) * 10 if i else b"lol") for i in range(10))
HOSTILE = {
    # a billion laughs: ten levels of ten, 10^9 "lol"s if expanded
    "laughs.xml": b'<?xml version="1.0"?><!DOCTYPE lolz [' + LAUGHS + b']><testsuite><testcase name="&l9;"/>'
                  b"</testsuite>",
    # an external entity: the runner's own files read into a test name
    "xxe.xml": b'<?xml version="1.0"?><!DOCTYPE testsuite [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
               b'<testsuite><testcase name="&x;"/></testsuite>',
    # a plain internal subset, no entity at all: its attribute defaults would still change what is read
    "subset.xml": b'<!DOCTYPE testsuite [<!ATTLIST testcase status CDATA "disabled">]>'
                  b'<testsuite><testcase name="a"/></testsuite>',
    "bare.xml": b'<?xml version="1.0"?><!DOCTYPE testsuite><testsuite><testcase name="a"/></testsuite>',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_document_type_declaration_is_refused_unread(name, tmp_path):
    """JUnit reports never need a DTD, and one is how a report makes a reader expand a billion laughs or
    read the runner's files: any is refused before anything in it is read, in one warning naming the file."""
    doctype = re.search(rb"<!DOCTYPE (\w+)", HOSTILE[name]).group(1).decode()
    said = (f"{name}: declares a document type <!DOCTYPE {doctype}>, which a JUnit report never needs; "
            "not read, and nothing in it expanded")
    with pytest.raises(JUnitError) as refused:
        parse_report(HOSTILE[name], name)
    assert str(refused.value) == said
    (tmp_path / name).write_bytes(HOSTILE[name])
    (tmp_path / "good.xml").write_bytes((FIXTURES / "all-pass.xml").read_bytes())
    reports, warnings = load_reports(["*.xml"], tmp_path)
    assert [r.source for r in reports] == ["good.xml"] and warnings == [f"skipped {said}"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_build_failures_dressed_as_tests_are_builds_with_their_cause():
    go = classify("failure", [parse_report((CORPUS / "go-junit-report-build-errors.xml").read_bytes(), "g")])
    assert go["failure_type"] == "build" and "undefined: x" in go["failure_detail"]
    jest = classify("failure", [parse_report((CORPUS / "jest-junit-suite-failed-to-run.xml").read_bytes(), "j")])
    assert jest["failure_type"] == "build" and "TS6258" in jest["failure_detail"]
    gotestsum = parse_report((CORPUS / "gotestsum-junitxml-report.xml").read_bytes(), "t")
    assert "fails_test.go:50: failed sub a" in {c.message.split(": ", 1)[-1] for c in gotestsum.cases}


def test_one_unreadable_report_does_not_sink_the_others(tmp_path):
    (tmp_path / "good.xml").write_bytes((FIXTURES / "pytest-two-failures.xml").read_bytes())
    (tmp_path / "gbk.xml").write_bytes(b'<?xml version="1.0" encoding="GBK"?><testsuite/>')
    (tmp_path / "deep.xml").write_bytes(b"<testsuites>" + b"<testsuite>" * 5000 + b"</testsuite>" * 5000
                                        + b"</testsuites>")
    (tmp_path / "dir.xml").mkdir()
    reports, warnings = load_reports(["*.xml"], tmp_path)
    assert [r.source for r in reports] == ["good.xml"]
    deep, gbk = warnings
    assert deep.startswith("skipped deep.xml: cannot read it as XML (RecursionError: maximum recursion depth")
    assert gbk == "skipped gbk.xml: cannot read it as XML (ValueError: multi-byte encodings are not supported)"
    (tmp_path / "reports").mkdir()
    _, warnings = load_reports(["reports"], tmp_path)
    assert warnings == ["'reports' matches only folders; give the XML files, e.g. 'reports/**/*.xml'"]


def fixture(name: str):
    return parse_report((FIXTURES / name).read_bytes(), name)


def test_disabled_and_notrun_count_as_skipped():
    report = fixture("gtest-disabled-notrun.xml")
    assert report.counts() == {"tests": 5, "passed": 1, "failed": 1, "errors": 0, "skipped": 3, "flaky": 0}
    skipped = {c.name: c.message for c in report.cases if c.status == "skipped"}
    assert skipped == {"DISABLED_Slow": "notrun", "Legacy": "disabled", "SkipsOnCi": "parser_test.cc:31 not on CI"}


def test_a_suite_that_failed_to_load_is_kept_as_a_build_failure_with_its_message():
    report = fixture("suite-failed-to-load.xml")
    assert report.counts() == {"tests": 2, "passed": 1, "failed": 0, "errors": 1, "skipped": 0, "flaky": 0}
    broken = report.cases[0]
    assert broken.setup and broken.label == "example.OrderServiceTest (suite failed to load)"
    assert broken.message.startswith("java.lang.NoClassDefFoundError: Could not initialize class")
    assert "missing datasource url" in broken.detail
    verdict = classify("failure", [report])
    assert verdict["failure_type"] == "build" and "NoClassDefFoundError" in verdict["failure_detail"]
    assert verdict["suggested_focus"].startswith("Make example.OrderServiceTest (suite failed to load) build or load")


def test_surefire_reruns_flaky_passes_and_failures_every_time():
    report = fixture("surefire-flaky-rerun.xml")
    assert report.counts() == {"tests": 3, "passed": 2, "failed": 1, "errors": 0, "skipped": 0, "flaky": 1}
    flaky, failed, _ = report.cases
    assert flaky.status == "passed" and flaky.flaky == 1 and "Expected: <false>" in flaky.message
    assert "first attempt timed out" in flaky.detail  # the attempt's output is kept
    assert failed.status == "failed" and "<502>" in failed.detail and "<500>" in failed.message
    outcomes = {r.name: r.outcome for r in results_of([report])}
    assert outcomes == {"example.WebhookTest::createsWebhook": "flaky", "example.WebhookTest::deletesWebhook": "failed",
                        "example.WebhookTest::listsWebhooks": "passed"}


def test_the_same_test_failed_and_passed_is_two_results_unless_told_it_is_a_retry():
    report = fixture("gradle-reruns-unmerged.xml")
    # Gradle without mergeReruns writes every execution as a test case of its own: every reader counts
    # three results, one failed, and the failure is not passed off as the namesake's pass
    assert report.counts() == {"tests": 3, "passed": 2, "failed": 1, "errors": 0, "skipped": 0, "flaky": 0}
    results = {r.name: r for r in results_of([report])}
    assert results["example.CacheTest::evictsOldest()"].outcome == "failed"
    assert "expected: <2> but was: <3>" in results["example.CacheTest::evictsOldest()"].message
    # told that repeats are re-runs (ghstate ci --retries): one test, passed after a failed attempt
    assert report.counts(retries=True) == {"tests": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0,
                                           "flaky": 1}
    results = {r.name: r for r in results_of([report], retries=True)}
    assert results["example.CacheTest::evictsOldest()"].outcome == "flaky"
    assert "expected: <2> but was: <3>" in results["example.CacheTest::evictsOldest()"].message
    assert results["example.CacheTest::keepsNewest()"].outcome == "passed"
    v = next_verification(None, Run("success", commit="a" * 40, tests=tuple(results.values())))
    assert dict(v.test_classes) == {"flaky": ("example.CacheTest::evictsOldest()",)}


@pytest.mark.parametrize("order", [("failure", "pass"), ("pass", "failure")])
def test_a_failure_is_never_hidden_by_a_namesakes_pass(order):
    """Two test cases of one name (Jenkins' duplicate test methods, a parametrised id written twice):
    the run failed, in the counts, in the ledger's entry and in the verdict, whichever comes first."""
    element = {"failure": '<testcase classname="t.C" name="m"><failure message="boom"/></testcase>',
               "pass": '<testcase classname="t.C" name="m"/>'}
    report = parse_report(f'<testsuite tests="2">{"".join(element[o] for o in order)}</testsuite>'.encode(), "d")
    assert report.counts()["failed"] == 1 and report.counts()["tests"] == 2
    assert [(r.name, r.outcome) for r in results_of([report])] == [("t.C::m", "failed")]
    v = next_verification(None, Run("failure", commit="a" * 40, tests=results_of([report])))
    assert [t.name for t in v.failing_tests] == ["t.C::m"] and v.class_counts == {"new": 1}


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_reports_classify_without_surprises(path):
    """Each real report, as a task's first failing run then its re-run: every failing test is new,
    then (the same failures on the same commit) still new, never flaky, and counted once."""
    report = parse_report(path.read_bytes(), path.name)
    results = results_of([report])
    failing = [r for r in results if r.outcome == "failed"]
    counts = report.counts()
    assert len(failing) <= counts["failed"] + counts["errors"]
    assert {r.name for r in failing} == {c.label for c in report.cases if c.status in ("failed", "error")}
    first = next_verification(None, Run("failure", commit="a" * 40, tests=results))
    again = next_verification(first, Run("failure", commit="a" * 40, tests=results))
    for v in (first, again):
        assert v.class_counts == ({"new": len(failing)} if failing else {})
        assert v.consecutive_failures == 1


# ------------------------------------------------------------------ verdicts that match the reports


def verdict_of(result: str, *names: str, previous=None, retries=False):
    reports = [fixture(name) for name in names]
    counts = count([c for r in reports for c in r.cases], retries)
    return next_verification(previous, Run(result, commit="a" * 40, tests=results_of(reports, retries),
                                           counts=counts))


def test_a_test_is_its_suite_class_name_and_file_two_tests_of_one_name_are_two_tests():
    v = verdict_of("failure", "same-name-three-suites.xml")
    assert v.counts["failed"] == 3 and v.counts["tests"] == 6
    assert [(t.name, t.cls) for t in v.failing_tests] == [("TestA::A", "new"), ("TestA::B", "new"), ("TestA::C", "new")]
    assert v.failure_type == "test" and v.failure_detail == "TestA::A: A broke in TestA"
    assert v.class_counts == {"new": 3} and v.consecutive_failures == 1
    # the same class and name in two suites (PHPUnit's and Jest's nested suites): named with the suite
    report = parse_report(b'<testsuites><testsuite name="unit"><testcase classname="t.Foo" name="a"><failure/>'
                          b'</testcase></testsuite><testsuite name="integration"><testcase classname="t.Foo" name="a"/>'
                          b'</testsuite></testsuites>', "nested.xml")
    assert report.counts()["tests"] == 2
    assert {(r.name, r.outcome) for r in results_of([report])} == {("unit › t.Foo::a", "failed"),
                                                                  ("integration › t.Foo::a", "passed")}


@pytest.mark.parametrize(("name", "retries"), [("surefire-all-flaky.xml", False), ("gradle-reruns-unmerged.xml", True),
                                               ("pytest-rerunfailures-flaky-only.xml", False),
                                               ("flaky-failure-only.xml", False), ("flaky-beside-passed.xml", False)])
def test_a_failed_job_whose_tests_all_passed_in_the_end_is_a_build_failure_naming_the_flaky_ones(name, retries):
    """Every test passed, some only on a re-run, and the job failed: the reports show no failing test, so
    what failed the job is not a test (a later step, or a runner that fails on re-runs): ``build``, as
    for a failed job with no failing test at all, and it counts toward blocked as a build failure does.
    The tests that passed on a re-run are still listed and named, class flaky."""
    v = verdict_of("failure", name, retries=retries)
    flaky = [t.name for t in v.failing_tests]
    assert flaky and all(t.cls == "flaky" for t in v.failing_tests)
    assert v.failure_type == "build" and v.failure_detail.startswith("the job failed, but no test in the reports "
                                                                      "failed")
    assert "passed only when re-run" in v.failure_detail
    assert v.suggested_focus.startswith("Read the failing step's log")
    assert all(n in v.suggested_focus for n in flaky[:3])
    # counts, names and verdict agree: as many flaky in the counts as named, none failed
    assert v.counts["flaky"] == len(flaky) == v.class_counts["flaky"] and v.counts["failed"] == 0
    assert (v.status, v.consecutive_failures) == ("failing", 1)


def test_two_namesakes_are_two_tests_unless_the_report_says_re_run():
    """Jenkins' junit-report-bad-duration.xml shape: an empty test case before its namesake and a suite
    whose tests="1" counts one, in a report that is not pytest's: two tests, as Jenkins counts them."""
    report = fixture("namesakes-nothing-says-rerun.xml")
    assert report.counts() == {"tests": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0, "flaky": 0}
    assert [(r.name, r.outcome) for r in results_of([report])] == [("ClockTest::testTicks", "passed")]
    assert report.counts(retries=True)["tests"] == 1  # the workflow says re-run: one test
    # pytest-rerunfailures' report says it: pytest wrote it (its root <testsuites name="pytest tests">, or
    # its suite named "pytest") and counts each test once; without pytest's names it is any report
    raw = (FIXTURES / "pytest-rerunfailures.xml").read_text()
    assert parse_report(raw.encode(), "p.xml").counts()["tests"] == 3
    root_only = raw.replace('<testsuite name="pytest"', '<testsuite name="api"')
    assert parse_report(root_only.encode(), "p.xml").counts()["tests"] == 3
    suite_only = raw.replace('<testsuites name="pytest tests">', "<testsuites>")
    assert parse_report(suite_only.encode(), "p.xml").counts()["tests"] == 3
    neither = root_only.replace('<testsuites name="pytest tests">', "<testsuites>")
    assert parse_report(neither.encode(), "p.xml").counts() == {"tests": 6, "passed": 5, "failed": 1, "errors": 0,
                                                                "skipped": 0, "flaky": 0}


def test_pytest_reruns_a_test_failing_every_time_is_one_failed_test_and_the_flaky_one_is_named():
    """pytest-rerunfailures' own shape: re-run attempts are empty test cases before their namesake, and
    the suite's tests attribute counts each test once: that is the report saying they are re-runs."""
    report = fixture("pytest-rerunfailures.xml")
    assert report.counts() == {"tests": 3, "passed": 2, "failed": 1, "errors": 0, "skipped": 0, "flaky": 1}
    v = verdict_of("failure", "pytest-rerunfailures.xml")
    assert [(t.name, t.cls) for t in v.failing_tests] == [("tests/test_api.py::test_always_fails", "new"),
                                                          ("tests/test_api.py::test_sometimes", "flaky")]
    assert v.suggested_focus.startswith("Fix tests/test_api.py::test_always_fails first (and 1 more)")
    assert "flaky, re-run before chasing: tests/test_api.py::test_sometimes" in v.suggested_focus
    assert v.consecutive_failures == 1


@pytest.mark.parametrize("tests_attribute", ["6", "", "three"])
def test_empty_namesakes_are_results_of_their_own_when_the_suite_does_not_count_them_out(tests_attribute):
    """The same shape without the suite's word for it (it counts every test case, or nothing) is
    read as every other reader reads it: each test case is a result."""
    raw = (FIXTURES / "pytest-rerunfailures.xml").read_text().replace('tests="3"', f'tests="{tests_attribute}"')
    report = parse_report(raw.encode(), "r.xml")
    assert report.counts() == {"tests": 6, "passed": 5, "failed": 1, "errors": 0, "skipped": 0, "flaky": 0}


def test_a_flaky_failure_beside_a_real_one_is_named_in_the_focus():
    v = verdict_of("failure", "surefire-flaky-rerun.xml")
    assert v.suggested_focus.startswith("Fix example.WebhookTest::deletesWebhook first")
    assert "flaky, re-run before chasing: example.WebhookTest::createsWebhook" in v.suggested_focus
    assert [(t.name, t.cls) for t in v.failing_tests] == [("example.WebhookTest::deletesWebhook", "new"),
                                                          ("example.WebhookTest::createsWebhook", "flaky")]


def test_a_suite_error_keeps_its_type_beside_its_message():
    report = fixture("suite-error-with-type.xml")
    assert report.cases[0].message == "java.lang.NoClassDefFoundError: Could not initialize class example.Warehouse"
    v = verdict_of("failure", "suite-error-with-type.xml")
    assert v.failure_type == "build" and "java.lang.NoClassDefFoundError: Could not" in v.failure_detail


def test_a_cancelled_run_keeps_the_failures_of_its_partial_report_without_a_class():
    v = verdict_of("cancelled", "pytest-rerunfailures.xml")
    assert v.failure_type == "cancelled" and v.class_counts == {}
    assert [t.to_dict() for t in v.failing_tests][0] == {"name": "tests/test_api.py::test_always_fails",
                                                         "message": "assert 500 == 200"}


@pytest.mark.parametrize(("name", "counts", "retried", "outcomes"), [
    # every test case a result, as dorny's test-reporter and mikepenz's action-junit-report (without
    # check_retries) count; told they are retries (--retries, as check_retries): one test each
    ("xcode-repetitions.xml", {"tests": 7, "passed": 4, "failed": 3, "errors": 0, "skipped": 0, "flaky": 0},
     {"tests": 4, "passed": 3, "failed": 1, "errors": 0, "skipped": 0, "flaky": 1},
     {"CartStoreTests::sync keeps the newest cart": "flaky", "CartStoreTests::an empty cart is not saved": "failed",
      "CartStoreTests::totals are rounded": "passed", 'CartStoreTests::a coupon applies ("SPRING")': "passed"}),
    # mikepenz/action-junit-report's flaky_with_classname_file.xml and flaky_all_failures.xml (check_retries)
    ("retries-beside-a-namesake.xml", {"tests": 6, "passed": 2, "failed": 2, "errors": 2, "skipped": 0, "flaky": 0},
     {"tests": 3, "passed": 2, "failed": 0, "errors": 1, "skipped": 0, "flaky": 1},
     {"tests/test_cart.py::test_total": "flaky", "tests/test_order.py::test_total": "passed",
      "tests/test_pay.py::test_refund": "failed"}),
    # EnricoMi/publish-unit-test-result-action's flaky.xml: failed every time (with reruns) is a failure,
    # <flakyFailure>/<flakyError> alone is a pass: the report says so, with or without --retries
    ("surefire-flaky-rerun.xml", {"tests": 3, "passed": 2, "failed": 1, "errors": 0, "skipped": 0, "flaky": 1},
     {"tests": 3, "passed": 2, "failed": 1, "errors": 0, "skipped": 0, "flaky": 1},
     {"example.WebhookTest::createsWebhook": "flaky", "example.WebhookTest::deletesWebhook": "failed",
      "example.WebhookTest::listsWebhooks": "passed"}),
])
def test_retries_read_as_other_readers_read_them_in_their_own_fixtures(name, counts, retried, outcomes):
    report = fixture(name)
    assert report.counts() == counts
    assert report.counts(retries=True) == retried
    assert {r.name: r.outcome for r in results_of([report], retries=True)} == outcomes
    # without --retries, no test that failed in any test case reads as passed or flaky
    plain = {r.name: r.outcome for r in results_of([report])}
    failed = {c.label for c in report.cases if c.status in ("failed", "error")}
    assert {n for n, o in plain.items() if o == "failed"} == failed


def test_with_retries_a_test_passed_when_one_of_its_attempts_passed_as_check_retries_reads_it():
    """mikepenz's check_retries (its flaky_success_first.xml): an attempt that passed makes the test
    pass, flaky, wherever it stands; every attempt failing is one failure with every attempt's text."""
    report = parse_report(b'<testsuite><testcase classname="t.C" name="m"/>'
                          b'<testcase classname="t.C" name="m"><failure message="one">first</failure></testcase>'
                          b'<testcase classname="t.C" name="n"><failure message="a">attempt a</failure></testcase>'
                          b'<testcase classname="t.C" name="n"><error message="b">attempt b</error></testcase>'
                          b'</testsuite>', "r.xml")
    assert report.counts(retries=True) == {"tests": 2, "passed": 1, "failed": 0, "errors": 1, "skipped": 0,
                                           "flaky": 1}
    outcomes = {r.name: r.outcome for r in results_of([report], retries=True)}
    assert outcomes == {"t.C::m": "flaky", "t.C::n": "failed"}
    failed = [c for c in merge(list(report.cases)) if c.name == "n"][0]
    assert "attempt a" in failed.detail and "attempt b" in failed.detail


def test_the_reports_read_are_bounded_in_files_and_bytes_before_reading(tmp_path, monkeypatch):
    """Issue 53: a workspace may hold anything the tests wrote; the reports a run reads are bounded in number and
    in bytes, each file's size looked at before it is read (a huge one is never loaded), and what was left is
    said in one line."""
    from ghstate.ci import junit

    case = b'<testsuite name="s"><testcase name="t%d"/></testsuite>'
    (tmp_path / "r").mkdir()
    for i in range(6):
        (tmp_path / "r" / f"{i}.xml").write_bytes(case % i)
    monkeypatch.setattr(junit, "MAX_REPORTS", 4)
    reports, warnings = load_reports(["r/*.xml"], tmp_path)
    assert [r.cases[0].name for r in reports] == ["t0", "t1", "t2", "t3"]
    assert warnings == ["2 more reports (from r/4.xml) not read: a run reads at most 4 reports and 200 MiB in all; "
                        "give narrower patterns"]
    monkeypatch.setattr(junit, "MAX_REPORTS", 100)
    monkeypatch.setattr(junit, "MAX_TOTAL_BYTES", 3 * len(case % 0))
    reports, warnings = load_reports(["r/*.xml"], tmp_path)
    assert len(reports) == 3 and "3 more reports (from r/3.xml) not read" in warnings[0]
    monkeypatch.setattr(junit, "MAX_REPORT_BYTES", 20)
    read: list[Path] = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or original(self))
    reports, warnings = load_reports(["r/0.xml"], tmp_path)
    assert reports == [] and read == [] and warnings == ["skipped r/0.xml: larger than 0 MiB; not read"]
