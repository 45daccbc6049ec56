"""``ghstate ci``: what the GitHub Action runs. Records a CI result on the branch's checkpoint.

It never fails the job for its own reasons: no checkpoint, unreadable reports, GitHub out of reach,
bad configuration: each is a ``::notice::`` or ``::warning::`` and exit 0. Only usage errors (a
missing --result) stop it, since those are mistakes in the workflow file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ghstate.ci import verdict
from ghstate.ci.runner import annotate, append_file, write_outputs
from ghstate.config import CiRun, ci_run
from ghstate.core import verification
from ghstate.core.marker import Execution
from ghstate.core.model import Checkpoint

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.intent import Intent, LabelRule
    from ghstate.services.app import App
    from ghstate.services.writer import WriteResult

RESULTS = ("success", "failure", "cancelled")
# what CI's templates write machine text with: GitHub shows test names and messages exactly
MARKDOWN = {"code": verification.code_span, "codes": verification.code_list, "text": verification.escape_inline}


@click.command()
@click.option("--result", type=click.Choice(RESULTS), envvar="GHSTATE_RESULT", required=True,
              help="The job's outcome, typically ${{ job.status }}.")
@click.option("--issue", "issue_ref", envvar="GHSTATE_ISSUE", default="", metavar="ISSUE",
              help="Checkpoint to update (default: the open checkpoint of the branch).")
@click.option("--junit", "junit", envvar="GHSTATE_JUNIT", default="", metavar="GLOBS",
              help="JUnit XML reports: glob patterns, separated by newlines or spaces.")
@click.option("--phase", envvar="GHSTATE_PHASE", default="", metavar="PHASE", help="Tick this phase on success.")
@click.option("--block-after", envvar="GHSTATE_BLOCK_AFTER", default="", metavar="N",
              help="Consecutive failures before the task is marked blocked (default 3, or block_after in config).")
@click.option("--post-prompt", envvar="GHSTATE_POST_PROMPT", default="false", metavar="BOOL",
              help="Post a rehydration prompt on the issue when the task becomes blocked.")
@click.option("--project", default="", metavar="PROJECT",
              help="GitHub Project (v2) whose item to keep current (default: GHSTATE_PROJECT, then the config).")
def ci(result: str, issue_ref: str, junit: str, phase: str, block_after: str, post_prompt: str, project: str) -> None:
    """Record a CI result on the checkpoint (what the GitHub Action runs).

    Reads the runner's environment (GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_RUN_ID, …), parses the JUnit
    reports, and updates only the Verification section and the ghstate:ci-failing / ghstate:blocked
    labels. Writes the job summary and the outputs `issue` and `status`. Never fails the job.

    \b
    Example (in a workflow step, with GITHUB_TOKEN in the environment):
      ghstate ci --result failure --junit 'reports/*.xml' --phase "Phase 2"
    """
    runner = ci_run()  # the run's environment, read once
    flag = post_prompt.strip().lower()
    if flag not in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
        annotate("warning", f"post-prompt must be true or false, not {post_prompt!r}; taken as false")
    try:
        _run(runner, result, issue_ref.strip().lstrip("#"), junit, phase.strip(), block_after.strip(),
             flag in ("1", "true", "yes", "on"), project.strip())
    except Exception as exc:  # noqa: BLE001 - the user's job must not fail because of ghstate
        if runner.debug:
            raise
        annotate("warning", f"{' '.join(str(exc).split()) or type(exc).__name__}; the result was not recorded")


def _run(runner: CiRun, result: str, issue_ref: str, junit: str, phase: str, block_after_text: str,
         post_prompt: bool, project: str = "") -> None:
    from ghstate.commands.common import make_app
    from ghstate.core.intent import CiResult, Intent, LabelRule
    from ghstate.core.model import find_phase
    from ghstate.errors import ConfigError, GhstateError, NotFound

    if issue_ref and not issue_ref.isdigit():
        raise ConfigError(f"issue must be an issue number, not {issue_ref!r}")
    app = make_app(store="github", project=project or None)
    policy = app.settings.policy
    try:
        block_after = int(block_after_text) if block_after_text else policy.block_after
    except ValueError:
        raise ConfigError(f"block-after must be a whole number, not {block_after_text!r}") from None
    if block_after < 1:
        raise ConfigError("block-after must be at least 1")
    number = int(issue_ref) if issue_ref else None

    run = gather(runner, result, junit, block_after)
    template = app.env.get_template("verification.md.j2")
    tick = phase if result == "success" and phase else ""

    def intent(cp: Checkpoint) -> Intent:
        """This result as data, made from the verification recorded so far (again, if another run
        landed first: both count); it is logged as it is."""
        v = verdict.next_verification(cp.verification_data, run)
        text = template.render(v=v.to_dict(), **MARKDOWN).strip()
        return Intent(verification=CiResult(text, v), tick=tick)

    # a cancelled run says nothing about the code: the labels stay as they are
    labels = LabelRule(policy.ci_failing_label, policy.blocked_label) if result != "cancelled" else None

    try:
        written = _write(app, number, runner, intent, labels)
    except NotFound as exc:
        annotate("notice", f"{exc}; nothing recorded" if number else
                 f"no open checkpoint for branch {runner.branch or '(unknown)'}; nothing recorded")
        write_outputs(runner, {"issue": "", "status": ""})
        return
    cp, stored = written.checkpoint, written.stored
    assert stored is not None
    ticked = newly_done(written.previous or cp, cp)
    if tick and not ticked:
        try:
            find_phase(cp.phases, tick)
        except LookupError as exc:
            annotate("warning", f"phase not ticked: {exc}")
    data = cp.verification_data.to_dict() if cp.verification_data else {}
    before = written.previous.verification_data if written.previous else None
    previous = before.status if before else None
    status = data.get("status")
    if app.store.remote and status in ("failing", "blocked") and previous != status and \
            not (post_prompt and status == "blocked"):
        # Something a person should act on: the one CI result that comments (and so notifies). A run
        # that leaves the status as it was, and every green one, edits the body only: no one is notified.
        commit = str(data.get("commit") or "")[:9]
        what = "is blocked" if status == "blocked" else "turned failing"
        note = f"<!-- ghstate:ci -->\nCI {what}{f' at {commit}' if commit else ''}: see the Verification section."
        try:
            app.github().post_comment(stored, note, allow_secrets=True)
        except GhstateError as exc:  # the result itself is recorded: only the comment is missing
            annotate("warning", f"the CI comment could not be posted ({exc})")
    if post_prompt and data.get("status") == "blocked" and previous != "blocked":
        from ghstate.core import present

        prompt = present.prompt(cp, source=f"GitHub issue #{stored.number} ({stored.location})", env=app.env)
        try:
            app.github().post_comment(stored, "<!-- ghstate:prompt -->\n" + prompt, allow_secrets=True)
        except GhstateError as exc:  # the result itself is recorded: only the comment is missing
            annotate("warning", f"the rehydration prompt could not be posted ({exc})")
    write_outputs(runner, {"issue": str(stored.number), "status": str(data.get("status", ""))})
    nxt = cp.next_phase
    append_file(runner.summary_path, "GITHUB_STEP_SUMMARY", app.env.get_template("summary.md.j2").render(
        number=stored.number, url=stored.location, title=cp.title, v=data, done=sum(p.done for p in cp.phases),
        total=len(cp.phases), next=nxt.name if nxt else "", ticked=", ".join(ticked),
        **MARKDOWN))
    for warning in [*written.warnings, *app.keep_project(stored, cp)]:
        annotate("warning", warning)
    click.echo(f"Recorded {result} on #{stored.number} ({data.get('status')}): {stored.location}")


def gather(runner: CiRun, result: str, junit: str, block_after: int) -> verdict.Run:
    """The facts of this run, once: the runner's, and what its JUnit reports say."""
    from ghstate.ci.junit import count, load_reports, results_of
    from ghstate.services.writer import utc_now

    reports = None
    if junit.strip():
        found, warnings = load_reports(junit.replace("\n", " ").split(), Path(runner.workspace))
        for warning in warnings:
            annotate("warning", warning)
        reports = found or None
    return verdict.Run(
        result=result, commit=runner.commit, branch=runner.branch, run_id=runner.run_id, run_url=runner.run_url,
        workflow=runner.workflow, at=utc_now(), block_after=block_after,
        tests=results_of(reports) if reports else None,
        counts=count([c for r in reports or [] for c in r.cases]),
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
