"""``ghstate ci``: what the GitHub Action runs. Records a CI result on the branch's checkpoint.

It never fails the job for its own reasons: no checkpoint, unreadable reports, GitHub out of reach,
bad configuration: each is a ``::notice::`` or ``::warning::`` and exit 0. Only usage errors (a
missing --result) stop it, since those are mistakes in the workflow file.
"""

from __future__ import annotations

import click

from ghstate.ci.runner import annotate, append_file, write_outputs
from ghstate.config import CiRun, ci_run
from ghstate.services.ci import RESULTS


@click.command()
@click.option("--result", type=click.Choice((*RESULTS, "skipped")), envvar="GHSTATE_RESULT", default=None,
              help="The job's outcome: ${{ job.status }}, or ${{ needs.test.result }} from a second job ('skipped' "
                   "says no more about the code than 'cancelled', and is recorded as it). Needed except on "
                   "pull_request and delete events, which link, close or record it when given.")
@click.option("--issue", "issue_ref", envvar="GHSTATE_ISSUE", default="", metavar="ISSUE",
              help="Checkpoint to update (default: the open checkpoint of the branch).")
@click.option("--junit", "junit", envvar="GHSTATE_JUNIT", default="", metavar="GLOBS",
              help="JUnit XML reports: glob patterns, separated by newlines or spaces.")
@click.option("--tick", "--phase", "phase", envvar="GHSTATE_PHASE", default="", metavar="PHASE",
              help="Tick this phase on success (--phase, the older name, works too: it adds a phase elsewhere).")
@click.option("--block-after", envvar="GHSTATE_BLOCK_AFTER", default="", metavar="N",
              help="Consecutive failures before the task is marked blocked (default 3, or block_after in config).")
@click.option("--post-prompt", envvar="GHSTATE_POST_PROMPT", default="false", metavar="BOOL",
              help="Post a rehydration prompt on the issue when the task becomes blocked.")
@click.option("--project", default="", metavar="PROJECT",
              help="GitHub Project (v2) whose item to keep current (default: GHSTATE_PROJECT, then the config).")
@click.option("--retries", is_flag=True, envvar="GHSTATE_RETRIES",
              help="A test reported more than once in the reports was re-run: count it once, its last attempt "
                   "decides (passed after a failure: flaky). Without it, every <testcase> is a result.")
def ci(result: str | None, issue_ref: str, junit: str, phase: str, block_after: str, post_prompt: str, project: str,
       retries: bool) -> None:
    """Record a CI result on the checkpoint (what the GitHub Action runs).

    Reads the runner's environment (GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_RUN_ID, …), parses the JUnit
    reports, and updates only the Verification section and the ghstate:ci-failing / ghstate:blocked
    labels. Writes the job summary and the outputs `issue` and `status`. Never fails the job.

    On pull_request events it links the pull request to its head branch's checkpoint; when it merged,
    the checkpoint closes as completed (the result recorded first, when given); closed unmerged with
    its branch gone, as not planned. On a delete event, the branch's checkpoint closes as not planned.

    \b
    Example (in a workflow step, with GITHUB_TOKEN in the environment):
      ghstate ci --result failure --junit 'reports/*.xml' --tick "Phase 2"
    """
    runner = ci_run()  # the run's environment, read once
    if result is None and runner.pull is None and runner.event_name != "delete":
        raise click.UsageError("--result is needed (it may be left out on pull_request and delete events only)")
    flag = post_prompt.strip().lower()
    if flag not in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
        annotate("warning", f"post-prompt must be true or false, not {post_prompt!r}; taken as false")
    result = "cancelled" if result == "skipped" else (result or "")  # a test job that did not run: nothing known
    try:
        _run(runner, result, issue_ref.strip().lstrip("#"), junit, phase.strip(), block_after.strip(),
             flag in ("1", "true", "yes", "on"), project.strip(), retries)
    except Exception as exc:  # noqa: BLE001 - the user's job must not fail because of ghstate
        if runner.debug:
            raise
        annotate("warning", f"{' '.join(str(exc).split()) or type(exc).__name__}; the result was not recorded")


def _run(runner: CiRun, result: str, issue_ref: str, junit: str, phase: str, block_after_text: str,
         post_prompt: bool, project: str = "", retries: bool = False) -> None:
    from ghstate.commands.common import make_app
    from ghstate.errors import ConfigError
    from ghstate.services.ci import CiRequest
    from ghstate.services.ci_events import follow

    if issue_ref and not issue_ref.isdigit():
        raise ConfigError(f"issue must be an issue number, not {issue_ref!r}")
    try:
        block_after = int(block_after_text) if block_after_text else None
    except ValueError:
        raise ConfigError(f"block-after must be a whole number, not {block_after_text!r}") from None
    app = make_app(store="github", project=project or None)
    outcome = follow(app, runner, CiRequest(result, int(issue_ref) if issue_ref else None, junit, phase,
                                            block_after, post_prompt, retries))
    for kind, message in outcome.annotations:
        annotate(kind, message)
    write_outputs(runner, outcome.outputs)
    if outcome.written is None or not result:
        return
    stored = outcome.written.stored
    assert stored is not None
    append_file(runner.summary_path, "GITHUB_STEP_SUMMARY", outcome.summary)
    click.echo(f"Recorded {result} on #{stored.number} ({outcome.outputs['status']}): {stored.location}")
