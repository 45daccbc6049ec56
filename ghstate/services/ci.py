"""Recording one CI result on the branch's checkpoint, whoever asks (``ghstate ci``, what the GitHub Action
runs): the run's facts in (``CiRequest``, the runner's environment), the write and what to tell the runner
out (``CiOutcome``). No click here, and no runner output: the command says what this answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ghstate.ci import verdict
from ghstate.config import CiRun
from ghstate.core import verification
from ghstate.core.marker import Execution, PullRequest
from ghstate.core.model import Checkpoint
from ghstate.errors import ConfigError, GhstateError, NotFound
from ghstate.store import Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.intent import Intent, LabelRule
    from ghstate.services.app import App
    from ghstate.services.writer import WriteResult

RESULTS = ("success", "failure", "cancelled")
# what CI's templates write machine text with: GitHub shows test names and messages exactly
MARKDOWN = {"code": verification.code_span, "codes": verification.code_list, "text": verification.escape_inline}


class CiRequest(NamedTuple):
    result: str  # success | failure | cancelled
    issue: int | None = None  # None: the open checkpoint of the run's branch
    junit: str = ""  # glob patterns of JUnit reports, separated by newlines or spaces
    phase: str = ""  # ticked on success
    block_after: int | None = None  # consecutive failures before the task is blocked (None: the policy's)
    post_prompt: bool = False  # post the rehydration prompt when the task becomes blocked
    retries: bool = False  # a test reported more than once is one test re-run (its last attempt decides)
    pull_request: PullRequest | None = None  # the branch's pull request, linked with the result (pull_request events)


class CiOutcome(NamedTuple):
    """What was recorded (``written`` None: no checkpoint to record it on), and what to tell the runner."""

    written: WriteResult | None
    annotations: list[tuple[str, str]]  # (notice | warning, message)
    outputs: dict[str, str]  # the step's outputs
    summary: str = ""  # the job summary's text


def record_result(app: App, runner: CiRun, request: CiRequest) -> CiOutcome:
    """Record ``request`` on its checkpoint: the next verification, made from the one recorded so far."""
    policy = app.settings.policy
    block_after = policy.block_after if request.block_after is None else request.block_after
    if block_after < 1:
        raise ConfigError("block-after must be at least 1")
    notes: list[tuple[str, str]] = []
    run = gather(runner, request.result, request.junit, block_after, notes, request.retries)
    template = app.env.get_template("verification.md.j2")
    tick = request.phase if request.result == "success" and request.phase else ""

    def intent(cp: Checkpoint) -> Intent:
        """This result as data, made from the verification recorded so far (again, if another run
        landed first: both count); it is logged as it is."""
        from ghstate.core.intent import CiResult, Intent

        v = verdict.next_verification(cp.verification_data, run)
        text = template.render(v=v.to_dict(), **MARKDOWN).strip()
        return Intent(verification=CiResult(text, v), tick=tick, pull_request=request.pull_request)

    from ghstate.core.intent import LabelRule

    # a cancelled run says nothing about the code: the labels stay as they are
    labels = LabelRule(policy.ci_failing_label, policy.blocked_label) if request.result != "cancelled" else None
    try:
        written = _write(app, request.issue, runner, intent, labels)
    except NotFound as exc:
        notes.append(("notice", f"{exc}; nothing recorded" if request.issue else
                      f"no open checkpoint for branch {runner.branch or '(unknown)'}; nothing recorded"))
        return CiOutcome(None, notes, {"issue": "", "status": ""})
    return _said(app, request, written, tick, notes)


def _said(app: App, request: CiRequest, written: WriteResult, tick: str,
          notes: list[tuple[str, str]]) -> CiOutcome:
    """After the write: the phase it could not tick, the one comment a person should act on, the outputs
    and the job summary."""
    from ghstate.core.model import find_phase

    cp, stored = written.checkpoint, written.stored
    assert stored is not None
    ticked = newly_done(written.previous or cp, cp)
    if tick and not ticked:
        try:
            find_phase(cp.phases, tick)
        except LookupError as exc:
            notes.append(("warning", f"phase not ticked: {exc}"))
    data = cp.verification_data.to_dict() if cp.verification_data else {}
    before = written.previous.verification_data if written.previous else None
    notes.extend(("warning", w) for w in _tell(app, cp, stored, before.status if before else None,
                                                request.post_prompt))
    nxt = cp.next_phase
    summary = app.env.get_template("summary.md.j2").render(
        number=stored.number, url=stored.location, title=cp.title, v=data, done=sum(p.done for p in cp.phases),
        total=len(cp.phases), next=nxt.name if nxt else "", ticked=", ".join(ticked), **MARKDOWN)
    notes.extend(("warning", w) for w in [*written.warnings, *app.keep_project(stored, cp)])
    return CiOutcome(written, notes, {"issue": str(stored.number), "status": str(data.get("status", ""))},
                     summary)


def _tell(app: App, cp: Checkpoint, stored: Stored, previous: str | None, post_prompt: bool) -> list[str]:
    """Something a person should act on: the one CI result that comments (and so notifies). A run that
    leaves the status as it was, and every green one, edits the body only: no one is notified. A comment
    that cannot be posted is a warning: the result itself is recorded."""
    data = cp.verification_data.to_dict() if cp.verification_data else {}
    status = data.get("status")
    warnings = []
    if app.store.remote and status in ("failing", "blocked") and previous != status and \
            not (post_prompt and status == "blocked"):
        commit = str(data.get("commit") or "")[:9]
        what = "is blocked" if status == "blocked" else "turned failing"
        note = f"<!-- ghstate:ci -->\nCI {what}{f' at {commit}' if commit else ''}: see the Verification section."
        try:
            app.github().post_comment(stored, note, allow_secrets=True)
        except GhstateError as exc:
            warnings.append(f"the CI comment could not be posted ({exc})")
    if post_prompt and status == "blocked" and previous != "blocked":
        from ghstate.core import present

        prompt = present.prompt(cp, source=f"GitHub issue #{stored.number} ({stored.location})", env=app.env)
        try:
            app.github().post_comment(stored, "<!-- ghstate:prompt -->\n" + prompt, allow_secrets=True)
        except GhstateError as exc:
            warnings.append(f"the rehydration prompt could not be posted ({exc})")
    return warnings

def gather(runner: CiRun, result: str, junit: str, block_after: int,
           notes: list[tuple[str, str]], retries: bool = False) -> verdict.Run:
    """The facts of this run, once: the runner's, and what its JUnit reports say (what they could not
    say goes to ``notes``); with ``retries``, a test reported more than once was re-run."""
    from ghstate.ci.junit import count, load_reports, results_of
    from ghstate.services.writer import utc_now

    reports = None
    if junit.strip():
        found, warnings = load_reports(junit.replace("\n", " ").split(), Path(runner.workspace))
        notes.extend(("warning", w) for w in warnings)
        reports = found or None
    return verdict.Run(
        result=result, commit=runner.commit, branch=runner.branch, run_id=runner.run_id, run_url=runner.run_url,
        workflow=runner.workflow, at=utc_now(), block_after=block_after,
        tests=results_of(reports, retries) if reports else None,
        counts=count([c for r in reports or [] for c in r.cases], retries),
    )


def newly_done(before: Checkpoint, after: Checkpoint) -> list[str]:
    """Phases this write ticked."""
    was = {p.name for p in before.phases if p.done}
    return [p.name for p in after.phases if p.done and p.name not in was]


def _write(app: App, number: int | None, runner: CiRun, intent: Callable[[Checkpoint], Intent],
           labels: LabelRule | None) -> WriteResult:
    """The one place CI writes. Every result is logged with its write, so that a write landing
    at the same moment cannot lose it; the result is made from what is there, so two runs both count."""
    from ghstate.core.intent import WriteSpec
    from ghstate.core.model import WorkTree

    spec = WriteSpec(
        intent, number=number, event="ci", labels=labels, record_tree=False, tree=WorkTree(branch=runner.branch),
        create=False, execution=Execution(agent="github-actions", role="ci", session=runner.run_id, event="ci"),
    )
    return app.writer(keep_pending=False).write(spec)
