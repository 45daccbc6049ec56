"""The CI decision logic on sequences of runs: statuses, failures in a row, and each test's class from
the ledger (new, persistent, flaky, fixed); the ledger's bound; the marker shape, old and new."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.ci.ledger import CaseResult, ledger_key
from ghstate.ci.verdict import Run, next_verification
from ghstate.core.verification import (
    LEDGER_MAX_CHARS,
    MAX_CLASS_NAMES,
    MAX_RUNS,
    MAX_TESTS,
    Ledger,
    Verification,
    verification_line,
)

A, B, C, D, E = ("a" * 40, "b" * 40, "c" * 40, "d" * 40, "e" * 40)


class Task:
    """A task's verification, run after run, as ``ghstate ci`` would keep it in the marker."""

    def __init__(self, block_after: int = 3) -> None:
        self.v: Verification | None = None
        self.block_after = block_after

    def run(self, result: str, commit: str, tests: dict[str, str] | None = None) -> Verification:
        cases = None if tests is None else tuple(CaseResult(n, o, f"{n} says no") for n, o in tests.items())
        v = next_verification(self.v, Run(result, commit=commit, tests=cases, block_after=self.block_after))
        # through the marker's JSON, as every real run reads the one before it
        self.v = Verification.from_dict(json.loads(json.dumps(v.to_dict())))
        return self.v

    def classes(self) -> dict[str, list[str]]:
        assert self.v is not None
        return {k: list(v) for k, v in self.v.test_classes.items()}


def test_a_new_commit_failing_is_new_since_the_last_green_one_then_persistent():
    task = Task()
    task.run("success", A, {"x": "passed", "y": "passed"})
    v = task.run("failure", B, {"x": "failed", "y": "passed"})
    assert task.classes() == {"new": ["x"]} and v.since == A[:12] and v.consecutive_failures == 1
    assert [(t.name, t.cls) for t in v.failing_tests] == [("x", "new")]
    v = task.run("failure", C, {"x": "failed", "y": "failed"})
    assert task.classes() == {"new": ["y"], "persistent": ["x"]} and v.consecutive_failures == 2
    assert [t.name for t in v.failing_tests] == ["y", "x"]  # new first
    assert v.suggested_focus.startswith(f"Fix y first, new since {A[:7]} (and 1 more)")
    assert verification_line(v.to_dict()).endswith(f"; 1 new failure since {A[:7]}; 1 still failing from before")


def test_a_same_commit_re_run_that_passes_makes_the_test_flaky_and_unblocks():
    task = Task(block_after=2)
    task.run("success", A, {"x": "passed"})
    assert task.run("failure", B, {"x": "failed"}).consecutive_failures == 1
    v = task.run("failure", B, {"x": "failed"})  # re-run, same commit, same failure: another attempt
    assert (v.consecutive_failures, v.attempt_count, task.classes()) == (1, 3, {"new": ["x"]})
    v = task.run("success", B, {"x": "passed"})
    assert (v.status, task.classes()) == ("passing", {"flaky": ["x"]})
    # known flaky, failing on the next commit: it does not count toward blocked
    v = task.run("failure", C, {"x": "failed"})
    assert task.classes() == {"flaky": ["x"]} and (v.status, v.consecutive_failures) == ("failing", 0)
    assert v.suggested_focus.startswith("Only flaky tests failed") and v.failure_type == "test"
    assert "1 flaky: x" in verification_line(v.to_dict())
    # failing again on the commit after: no longer the benefit of the doubt
    v = task.run("failure", D, {"x": "failed"})
    assert task.classes() == {"persistent": ["x"]} and v.consecutive_failures == 1
    v = task.run("failure", E, {"x": "failed"})
    assert (v.status, v.consecutive_failures) == ("blocked", 2)


def test_a_re_run_of_the_same_tests_that_fails_where_they_passed_is_flaky():
    task = Task()
    task.run("success", A, {"x": "passed", "y": "passed"})  # x is not tracked: it never failed
    task.run("failure", A, {"x": "failed", "y": "passed"})  # the re-run of the green commit fails x
    assert task.classes() == {"flaky": ["x"]} and task.v.consecutive_failures == 0
    task = Task()
    task.run("failure", A, {"x": "passed", "y": "failed"})  # a red run in which x passed
    task.run("failure", A, {"x": "failed", "y": "passed"})
    assert task.classes() == {"flaky": ["x", "y"]}
    # another workflow on the commit (other tests ran) says nothing about x; nor does a run that stopped
    # early (fewer tests ran, so x may not have)
    task = Task()
    task.run("success", A, {"lint": "passed"})
    task.run("failure", A, {"x": "failed", "z": "passed"})
    assert task.classes() == {"new": ["x"]} and task.v.consecutive_failures == 1
    task = Task()
    task.run("failure", A, {"y": "failed"})
    task.run("failure", A, {"x": "failed", "y": "passed"})
    assert task.classes() == {"new": ["x"], "flaky": ["y"]}
    # skipped tests did not run: a run that skipped x tells nothing about it
    task = Task()
    task.run("success", A, {"x": "skipped", "y": "passed"})
    task.run("failure", A, {"x": "failed", "y": "passed"})
    assert task.classes() == {"new": ["x"]}


def test_a_flaky_only_failure_does_not_hide_a_real_failure_of_the_same_commit():
    task = Task()
    task.run("success", A, {"x": "flaky"})  # Surefire's flakyFailure: failed, re-run, passed
    assert task.classes() == {"flaky": ["x"]}
    v = task.run("failure", B, {"x": "failed"})
    assert (v.consecutive_failures, v.failed_commit) == (0, "")
    v = task.run("failure", B, {"x": "failed", "y": "failed"})  # another run of B, now with a real failure
    assert task.classes() == {"new": ["y"], "flaky": ["x"]} and v.consecutive_failures == 1


def test_flaky_within_one_report_and_build_failures_always_count():
    task = Task()
    v = task.run("failure", A, {"x": "flaky", "build": "failed"})
    assert v.consecutive_failures == 1
    v = next_verification(v, Run("failure", commit=B, tests=(
        CaseResult("x", "failed", "boom"), CaseResult("suite (suite failed to load)", "failed", "NoClassDefFoundError",
                                                      build=True))))
    assert v.failure_type == "build" and v.consecutive_failures == 2
    assert v.failure_detail == "suite (suite failed to load): NoClassDefFoundError"


def test_a_cancelled_run_between_changes_nothing():
    task = Task()
    task.run("success", A, {"x": "passed"})
    task.run("failure", B, {"x": "failed"})
    before = task.v.ledger
    v = task.run("cancelled", C, {"x": "failed"})  # a cancelled run's report says nothing
    assert (v.status, v.consecutive_failures, v.ledger, task.classes()) == ("failing", 1, before, {"new": ["x"]})
    assert v.failure_type == "cancelled" and v.since == A[:12]
    v = task.run("failure", C, {"x": "failed"})
    assert task.classes() == {"persistent": ["x"]} and v.consecutive_failures == 2


def test_a_missing_report_is_skipped_over():
    task = Task()
    task.run("success", A, {"x": "passed"})
    task.run("failure", B, {"x": "failed"})
    v = task.run("failure", C, None)  # the build broke: no report
    assert v.failure_type == "unknown" and v.consecutive_failures == 2 and task.classes() == {}
    task.run("failure", D, {"x": "failed"})
    assert task.classes() == {"persistent": ["x"]}
    v = task.run("success", E, {"x": "passed"})
    assert task.classes() == {"fixed": ["x"]} and v.since == A[:12]
    task.run("success", "f" * 40, {"x": "passed"})
    assert task.classes() == {}  # fixed is reported once


def test_a_renamed_test_is_new_and_the_old_name_is_neither_fixed_nor_kept_for_ever():
    task = Task()
    task.run("success", A, {"old": "passed"})
    task.run("failure", B, {"old": "failed"})
    task.run("failure", C, {"renamed": "failed"})
    assert task.classes() == {"new": ["renamed"]}
    task.run("success", D, {"renamed": "passed"})
    assert task.classes() == {"fixed": ["renamed"]}  # "old" is gone, not fixed
    for i in range(MAX_RUNS):
        task.run("success", f"{i:040x}", {"renamed": "passed"})
    assert task.v.ledger.tests == ()  # nothing failed in the last runs: nothing is kept


def test_without_a_green_run_a_failure_is_new_with_no_baseline():
    task = Task()
    v = task.run("failure", A, {"x": "failed"})
    assert task.classes() == {"new": ["x"]} and v.since == ""
    assert v.suggested_focus.startswith("Fix x first; its failure says")
    assert verification_line(v.to_dict()).endswith("; 1 new failure")


def test_old_records_still_parse_and_carry_on():
    old = {"status": "failing", "result": "failure", "commit": B, "counts": {"tests": 2, "failed": 1},
           "failing_tests": [{"name": "x", "message": "boom"}], "failure_type": "test", "attempt_count": "2",
           "consecutive_failures": 1, "block_after": 3, "someday": {"kept": True}}
    v = Verification.from_dict(old)
    assert (v.failed_commit, v.attempt_count, v.failing_tests[0].cls, v.ledger) == (B, 2, "", Ledger())
    assert v.to_dict()["someday"] == {"kept": True}
    after = next_verification(v, Run("failure", commit=B, tests=(CaseResult("x", "failed", "boom"),)))
    assert (after.consecutive_failures, after.attempt_count) == (1, 3)  # the same commit: an attempt
    assert Verification.from_dict(None) == Verification() and Verification.from_dict("junk") == Verification()
    assert Verification.from_dict({"ledger": {"runs": "x", "tests": {"zz": 1}}}).ledger == Ledger()


outcomes = st.sampled_from(["passed", "failed", "flaky", "skipped"])
runs = st.lists(st.tuples(
    st.sampled_from(["success", "failure", "cancelled"]),
    st.sampled_from(["a1", "b2", "c3", "d4", "e5", ""]),
    st.one_of(st.none(), st.dictionaries(st.integers(0, 3 * MAX_TESTS).map(lambda i: f"t{i}"), outcomes,
                                         max_size=3 * MAX_TESTS)),
), max_size=40)


@settings(max_examples=examples(60), deadline=None)
@given(runs)
def test_the_ledger_never_grows_past_its_bound(sequence):
    task = Task()
    for result, commit, tests in sequence:
        v = task.run(result, commit * 20, tests)
        ledger = v.ledger
        assert len(ledger.runs) <= MAX_RUNS and len(ledger.tests) <= MAX_TESTS
        assert all(len(marks) == len(ledger.runs) for _, marks in ledger.tests)
        assert len(json.dumps(ledger.to_dict(), separators=(",", ":"))) <= LEDGER_MAX_CHARS
        # a test failing now is always kept, unless more than MAX_TESTS fail at once
        failing = [n for n, o in (tests or {}).items() if o in ("failed", "flaky")]
        if result != "cancelled" and len(failing) <= MAX_TESTS:
            assert {ledger_key(n) for n in failing} <= {k for k, _ in ledger.tests}


def test_the_record_stays_bounded_whatever_the_reports_hold():
    """Names and messages that swell in the marker's JSON (``<`` is written ``\\u003c``) are clipped by
    what they cost there: 60 failing tests of 1,000 such characters keep the record under 12,000."""
    task = Task()
    task.run("success", A, {f"{i}{'<' * 1000}": "passed" for i in range(60)})
    v = task.run("failure", B, {f"{i}{'<' * 1000}": "failed" for i in range(60)})
    raw = json.dumps(v.to_dict(), ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    assert v.class_counts == {"new": 60} and len(raw) < 12_000


def reference_classes(history: list[tuple[str, dict[str, str]]], commit: str, results: dict[str, str]) -> dict:
    """The README's rules over the whole history, by name, with nothing bounded or encoded: what the
    ledger must agree with while the history fits in it (every test reported in every run)."""
    out: dict[str, list[str]] = {}
    for name, outcome in results.items():
        seen = [(c, r[name]) for c, r in history if name in r]
        here = {o for c, o in seen if c == commit}
        before = [o for c, o in seen if c != commit]
        by_commit: dict[str, set[str]] = {}
        for c, o in seen:
            by_commit.setdefault(c, set()).add(o)
        flaked = any("flaky" in os_ or {"passed", "failed"} <= os_ for os_ in by_commit.values())
        cls = None
        if outcome == "flaky" or (outcome == "failed" and here & {"passed", "flaky"}):
            cls = "flaky"
        elif outcome == "failed":
            cls = "persistent" if before and before[-1] == "failed" else "flaky" if flaked else "new"
        elif outcome == "passed" and "failed" in here:
            cls = "flaky"
        elif outcome == "passed" and seen and seen[-1][1] == "failed" and not flaked:
            cls = "fixed"
        if cls:
            out.setdefault(cls, []).append(name)
    return out


full_runs = st.lists(st.tuples(
    st.sampled_from(["success", "failure"]), st.sampled_from(["a1", "b2", "c3"]),
    st.fixed_dictionaries({f"t{i}": st.sampled_from(["passed", "failed", "flaky"]) for i in range(6)}),
), max_size=MAX_RUNS)


@settings(max_examples=examples(200), deadline=None)
@given(full_runs)
def test_the_ledger_classifies_as_the_whole_history_would(sequence):
    task = Task()
    history: list[tuple[str, dict[str, str]]] = []
    for result, commit, tests in sequence:
        if result == "success":  # a green job has no failing test
            tests = {n: "passed" if o == "failed" else o for n, o in tests.items()}
        v = task.run(result, commit * 20, tests)
        expected = reference_classes(history, commit, tests)
        assert v.class_counts == {cls: len(names) for cls, names in expected.items()}
        assert task.classes() == {cls: names[:MAX_CLASS_NAMES] for cls, names in expected.items()}
        history.append((commit, tests))


def test_the_decision_logic_imports_nothing_that_does_io():
    """ghstate.ci.verdict and ghstate.ci.ledger are pure: they load with click, Jinja2, PyGithub, requests and
    subprocess blocked."""
    import subprocess
    import sys

    blocked = ("click", "jinja2", "github", "requests", "subprocess", "ghstate.config", "ghstate.git.gitinfo",
               "ghstate.store", "ghstate.services.writer", "ghstate.core.render")
    code = ("import sys\n"
            f"for name in {blocked!r}: sys.modules[name] = None\n"
            "import ghstate.ci.verdict\n"
            "loaded = sorted(m for m, mod in sys.modules.items() if m.startswith('ghstate') and mod)\n"
            "assert loaded == ['ghstate', 'ghstate.ci', 'ghstate.ci.ledger', 'ghstate.ci.verdict', 'ghstate.core', "
            "'ghstate.core.markup', 'ghstate.core.verification'], loaded\n")  # the secret scanner: a CI write's
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    assert proc.returncode == 0, proc.stderr


def test_the_readme_states_the_bound_the_code_keeps():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "docs" / "action.md").read_text()  # the README's reference
    assert f"at most {LEDGER_MAX_CHARS:,} characters" in readme and f"last {MAX_RUNS} runs" in readme
    assert f"at most {MAX_TESTS} tests" in readme
