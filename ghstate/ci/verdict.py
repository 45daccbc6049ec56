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

The record itself (``Verification``) and the words that show it are ``ghstate.core.verification``.
"""


from typing import Any, NamedTuple

from ghstate.ci.ledger import CaseResult, classify_test, commit_key, ledger_key, record, tests_digest
from ghstate.core.markup import short_commit, visible
from ghstate.core.verification import (
    CLASSES,
    MAX_CLASS_NAMES,
    MAX_FAILING,
    NAME_CHARS,
    FailingTest,
    Verification,
    clip,
    run_entry,
)

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
    # a failed job whose tests all passed in the end (some on a re-run) failed for something else: a build
    # failure, which counts; one whose failing tests are all known flaky does not
    failed = any(t.outcome == "failed" for t in failing)
    only_flaky = failed and all(t.name in flaky_names and not t.build for t in failing)

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
    from ghstate.core.secrets import redact  # a CI write's: readers of a verification never load the scanner

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
    if any(t.outcome == "failed" for t in failing):
        first = failing[0]
        label = clip(first.name, 120)
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        detail = clip(f"{first.name}: {first.message}", 500)
        if first.build:
            focus = f"Make {label} build or load again first{more}; it says: {clip(first.message, 160)}"
            return {"failure_type": "build", "failure_detail": detail, "suggested_focus": focus}
        cls = class_of.get(first.name, "")
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
        return _no_failing_test(failing, link)
    return {"failure_type": "unknown", "failure_detail": "the job failed and left no readable test report",
            "suggested_focus": f"Open the run's log to see which step failed{link}."}


def _no_failing_test(rerun: list[CaseResult], link: str) -> dict[str, Any]:
    """The verdict of a failed job whose reports show no failing test (``rerun``: the tests that passed
    only on a re-run within the run): what failed it is not a test."""
    detail, focus = "the job failed, but no test in the reports failed", (
        f"Read the failing step's log: the build, lint or setup broke before or around the tests{link}.")
    if rerun:
        names = ", ".join(clip(t.name, 120) for t in rerun[:3])
        more = f" (and {len(rerun) - 3} more)" if len(rerun) > 3 else ""
        count = f"{len(rerun)} test{'s' if len(rerun) != 1 else ''}"
        detail = clip(f"{detail} ({count} passed only when re-run: {names}{more})", 500)
        focus = (f"Read the failing step's log{link}: a step after the tests, or a runner that fails the job "
                 f"when a test passed only on a re-run ({names}{more}; make them deterministic when there is "
                 f"time); the first one's failure said: {clip(rerun[0].message, 160)}")
    return {"failure_type": "build", "failure_detail": detail, "suggested_focus": focus}


# ------------------------------------------------------------------------------------ words








# ------------------------------------------------------------------------------------ markdown






