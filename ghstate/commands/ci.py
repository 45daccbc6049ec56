"""``ghstate ci``: what the GitHub Action runs. Records a CI result on the branch's checkpoint.

It never fails the job for its own reasons: no checkpoint, unreadable reports, GitHub out of reach,
bad configuration: each is a ``::notice::`` or ``::warning::`` and exit 0. Only usage errors (a
missing --result) stop it, since those are mistakes in the workflow file.
"""

from __future__ import annotations

import json
import os
import secrets as _random
from pathlib import Path
from typing import Any

import click

from ghstate.model import Checkpoint, Execution

RESULTS = ("success", "failure", "cancelled")
MAX_FAILING = 10


def command_escape(text: str) -> str:
    """A value safe inside a workflow command (``::warning::…``): no newline can start a new command."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotate(kind: str, message: str) -> None:
    click.echo(f"::{kind}::{command_escape('ghstate: ' + message)}")


def append_file(env_name: str, text: str) -> None:
    path = os.environ.get(env_name)
    if path:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:  # the result is recorded on the issue; only the runner's file is missing
            annotate("warning", f"cannot write {env_name} ({exc.strerror or exc})")


def write_outputs(values: dict[str, str]) -> None:
    lines = []
    for key, value in values.items():
        delimiter = f"ghstate_{_random.token_hex(8)}"  # a value can never contain it
        lines.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
    append_file("GITHUB_OUTPUT", "".join(lines))


def pull_request_head(env: dict[str, str]) -> dict[str, Any]:
    """The ``pull_request.head`` of the event, when the run is about a pull request."""
    event_path = env.get("GITHUB_EVENT_PATH")
    if not event_path or not Path(event_path).is_file():
        return {}
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
        head = (event.get("pull_request") or {}).get("head") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return head if isinstance(head, dict) else {}


def ci_branch(env: dict[str, str]) -> str:
    """The branch a run is about: the PR's head on pull requests, else the pushed ref."""
    if env.get("GITHUB_HEAD_REF"):
        return env["GITHUB_HEAD_REF"]
    head = pull_request_head(env).get("ref")
    return head if isinstance(head, str) and head else env.get("GITHUB_REF_NAME", "")


def ci_commit(env: dict[str, str]) -> str:
    """The commit tested: on pull requests GITHUB_SHA is a merge commit that is on no branch, so the head's."""
    head = pull_request_head(env).get("sha")
    return head if isinstance(head, str) and head else env.get("GITHUB_SHA", "")


def next_verification(previous: dict[str, Any] | None, *, result: str, reports: list | None, block_after: int,
                      env: dict[str, str], branch: str, now: str) -> dict[str, Any]:
    """The new verification data from the previous one and this run (pure)."""
    from ghstate.junit import classify, clip, count
    from ghstate.secrets import redact

    prev = previous or {}
    commit = ci_commit(env)
    attempts = int(prev.get("attempt_count") or 0) + 1
    consecutive = int(prev.get("consecutive_failures") or 0)
    if result == "success":
        consecutive = 0
        status = "passing"
    elif result == "failure":
        # Failures in a row count failing commits: the same commit failing again (a re-run, or a
        # second workflow on one push) is another attempt, not another failure in a row.
        last_failed = prev.get("failed_commit", prev.get("commit") if prev.get("status") != "passing" else "")
        again = bool(consecutive) and last_failed == commit != ""
        consecutive += 0 if again else 1
        status = "blocked" if consecutive >= block_after else "failing"
    else:  # cancelled: says nothing about the code; keep what was known
        status = prev.get("status") if prev.get("status") in ("passing", "failing", "blocked") else "unknown"
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    run_id = env.get("GITHUB_RUN_ID", "")
    run_url = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{run_id}" if run_id and env.get(
        "GITHUB_REPOSITORY") else ""
    cases = [c for r in reports or [] for c in r.cases]
    failing = [c for c in cases if c.status in ("failed", "error")]
    return {
        "status": status,
        "result": result,
        "commit": commit,
        "branch": redact(branch),  # shown in the section: a name can look like a credential
        "run_id": run_id,
        "run_url": run_url,
        "workflow": env.get("GITHUB_WORKFLOW", ""),
        "at": now,
        "counts": count(cases),
        "failing_tests": [{"name": redact(clip(c.label, 200)), "message": redact(clip(c.message or c.status, 200))}
                          for c in failing[:MAX_FAILING]],
        **{k: redact(v) if isinstance(v, str) else v for k, v in classify(result, reports, run_url).items()},
        "attempt_count": attempts,
        "consecutive_failures": consecutive,
        # the last failing commit: a cancelled run in between does not make it look new again
        "failed_commit": commit if result == "failure" else (
            prev.get("failed_commit", "") if result == "cancelled" else ""),
        "block_after": block_after,
    }


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
def ci(result: str, issue_ref: str, junit: str, phase: str, block_after: str, post_prompt: str) -> None:
    """Record a CI result on the checkpoint (what the GitHub Action runs).

    Reads the runner's environment (GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_RUN_ID, …), parses the JUnit
    reports, and updates only the Verification section and the ghstate:ci-failing / ghstate:blocked
    labels. Writes the job summary and the outputs `issue` and `status`. Never fails the job.

    \b
    Example (in a workflow step, with GITHUB_TOKEN in the environment):
      ghstate ci --result failure --junit 'reports/*.xml' --phase "Phase 2"
    """
    flag = post_prompt.strip().lower()
    if flag not in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
        annotate("warning", f"post-prompt must be true or false, not {post_prompt!r}; taken as false")
    try:
        _run(result, issue_ref.strip().lstrip("#"), junit, phase.strip(), block_after.strip(),
             flag in ("1", "true", "yes", "on"))
    except Exception as exc:  # noqa: BLE001 - the user's job must not fail because of ghstate
        from ghstate.config import debugging

        if debugging():
            raise
        annotate("warning", f"{' '.join(str(exc).split()) or type(exc).__name__}; the result was not recorded")


def _run(result: str, issue_ref: str, junit: str, phase: str, block_after_text: str, post_prompt: bool) -> None:
    from ghstate.commands.common import make_app
    from ghstate.errors import ConfigError, GhstateError, NotFound
    from ghstate.intent import Intent, Verification
    from ghstate.junit import load_reports
    from ghstate.model import WorkTree, find_phase
    from ghstate.writer import WriteSpec, utc_now

    env = dict(os.environ)
    if issue_ref and not issue_ref.isdigit():
        raise ConfigError(f"issue must be an issue number, not {issue_ref!r}")
    app = make_app(store="github")
    policy = app.settings.policy
    try:
        block_after = int(block_after_text) if block_after_text else policy.block_after
    except ValueError:
        raise ConfigError(f"block-after must be a whole number, not {block_after_text!r}") from None
    if block_after < 1:
        raise ConfigError("block-after must be at least 1")
    branch = ci_branch(env)
    number = int(issue_ref) if issue_ref else None

    reports = None
    if junit.strip():
        root = Path(env.get("GITHUB_WORKSPACE") or ".")
        found, warnings = load_reports(junit.replace("\n", " ").split(), root)
        for warning in warnings:
            annotate("warning", warning)
        reports = found or None
    now = utc_now()

    def intent(cp: Checkpoint) -> Intent:
        """The result as data, made from the verification recorded so far: it is logged as it is."""
        data = next_verification(cp.verification_data, result=result, reports=reports, block_after=block_after,
                                 env=env, branch=branch, now=now)
        text = app.env.get_template("verification.md.j2").render(v=data).strip()
        tick = phase if result == "success" and phase else ""
        if tick:
            try:
                find_phase(cp.phases, tick)
            except LookupError as exc:
                annotate("warning", f"phase not ticked: {exc}")
                tick = ""
        return Intent(verification=Verification(text, data), tick=tick)

    def labels(current: tuple[str, ...], cp: Checkpoint) -> tuple[str, ...]:
        status = (cp.verification_data or {}).get("status")
        if result == "cancelled":
            return current
        kept = [x for x in current if x not in (policy.ci_failing_label, policy.blocked_label)]
        if status in ("failing", "blocked"):
            kept.append(policy.ci_failing_label)
        if status == "blocked":
            kept.append(policy.blocked_label)
        return tuple(kept)

    spec = WriteSpec(
        intent, number=number, event="ci", labels=labels, record_tree=False, tree=WorkTree(branch=branch),
        create=False,
        execution=Execution(agent="github-actions", role="ci", session=env.get("GITHUB_RUN_ID", ""), event="ci"),
    )
    try:
        written = app.writer(keep_pending=False).write(spec)
    except NotFound as exc:
        annotate("notice", f"{exc}; nothing recorded" if number else
                 f"no open checkpoint for branch {branch or '(unknown)'}; nothing recorded")
        write_outputs({"issue": "", "status": ""})
        return
    cp, stored = written.checkpoint, written.stored
    assert stored is not None
    before = {p.name for p in written.previous.phases if p.done} if written.previous else set()
    ticked = [p.name for p in cp.phases if p.done and p.name not in before]
    data = cp.verification_data or {}
    previous = ((written.previous.verification_data or {}).get("status") if written.previous else None)
    if post_prompt and data.get("status") == "blocked" and previous != "blocked":
        from ghstate import present

        prompt = present.prompt(cp, source=f"GitHub issue #{stored.number} ({stored.location})", env=app.env)
        try:
            app.github().post_comment(stored, "<!-- ghstate:prompt -->\n" + prompt, allow_secrets=True)
        except GhstateError as exc:  # the result itself is recorded: only the comment is missing
            annotate("warning", f"the rehydration prompt could not be posted ({exc})")
    write_outputs({"issue": str(stored.number), "status": str(data.get("status", ""))})
    nxt = cp.next_phase
    append_file("GITHUB_STEP_SUMMARY", app.env.get_template("summary.md.j2").render(
        number=stored.number, url=stored.location, title=cp.title, v=data, done=sum(p.done for p in cp.phases),
        total=len(cp.phases), next=nxt.name if nxt else "", ticked=", ".join(ticked)))
    for warning in written.warnings:
        annotate("warning", warning)
    click.echo(f"Recorded {result} on #{stored.number} ({data.get('status')}): {stored.location}")

