"""``ghstate checkpoint``: write a revision of the working state before the context is cleared."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options
from ghstate.core.edits import Edits
from ghstate.core.state_json import to_json
from ghstate.services.checkpoint import ChangeError, CheckpointRequest, check_changes, run_checkpoint
from ghstate.services.inputs import load_input


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("-f", "--file", "file_", metavar="PATH", help="Markdown body or JSON state to write ('-' reads stdin).")
@click.option("--title", help="Title of the checkpoint (the issue title on GitHub).")
@click.option("--goal", metavar="TEXT", help="Set the goal.")
@click.option("--done", multiple=True, metavar="PHASE", help="Tick a phase: its name, label ('Phase 2') or number.")
@click.option("--undo", multiple=True, metavar="PHASE", help="Untick a phase.")
@click.option("--phase", multiple=True, metavar="TEXT", help="Add a phase.")
@click.option("--decision", multiple=True, metavar="TEXT", help="Add a locked decision.")
@click.option("--question", multiple=True, metavar="TEXT", help="Add an open question.")
@click.option("--risk", multiple=True, metavar="TEXT", help="Add a remaining risk.")
@click.option("--read", multiple=True, metavar="PATH", help="Add a file to re-read.")
@click.option("--resume-at", metavar="TEXT", help="Set the exact resume instruction.")
@click.option("--agent", metavar="NAME", help="Who writes this revision (default: GHSTATE_AGENT).")
@click.option("--role", metavar="ROLE", help="In which role: editor, reviewer, ci, … (default: GHSTATE_ROLE).")
@click.option("--session", metavar="ID", help="The runtime session (default: GHSTATE_SESSION).")
@click.option("--new", "force_new", is_flag=True, help="Create a new checkpoint even if the branch has one.")
@click.option("--dry-run", is_flag=True, help="Print the body that would be written; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the written state as JSON.")
@click.option("--no-log", is_flag=True, help="Do not leave a history comment for this revision.")
@click.option("--force", is_flag=True, help="Let the --file sections replace the current ones, unmerged.")
@click.option("--allow-secrets", is_flag=True, help="Write even if the text looks like it holds a credential.")
@click.option("--project", metavar="PROJECT", help="GitHub Project (v2) to keep current: orgs/OWNER/projects/N, "
              "users/NAME/projects/N or its URL (default: GHSTATE_PROJECT, then project in the config).")
def checkpoint(issue: int | None, file_: str | None, title: str | None, goal: str | None, done: tuple[str, ...],
               undo: tuple[str, ...], phase: tuple[str, ...], decision: tuple[str, ...],
               question: tuple[str, ...], risk: tuple[str, ...], read: tuple[str, ...], resume_at: str | None,
               agent: str | None, role: str | None, session: str | None, force_new: bool, dry_run: bool,
               as_json: bool, no_log: bool, force: bool, allow_secrets: bool, project: str | None) -> None:
    """Write a checkpoint: create it, or update ISSUE (default: the branch's open checkpoint).

    \b
    Examples:
      ghstate checkpoint --file checkpoint.md
      ghstate checkpoint --done "Phase 2" --decision "keep the v1 API" --resume-at "Start Phase 3"
      ghstate show 24 --json | jq '.goal = "…"' | ghstate checkpoint 24 --file -
    """
    if issue is not None and force_new:
        raise click.UsageError("give either ISSUE or --new, not both")
    try:
        check_changes({"--title": (title,), "--goal": (goal,), "--done": done, "--undo": undo, "--phase": phase,
                       "--decision": decision, "--question": question, "--risk": risk, "--read": read,
                       "--resume-at": (resume_at,), "--agent": (agent,), "--role": (role,),
                       "--session": (session,)})
    except ChangeError as exc:
        if exc.flag is None:
            raise click.UsageError(str(exc)) from None
        raise click.BadParameter(str(exc), param_hint=exc.flag) from None
    edits = Edits(title=title, goal=goal, resume=resume_at, done=done, undo=undo, phases=phase,
                  decisions=decision, questions=question, risks=risk, reads=read)
    incoming = None
    if file_ is not None:
        cp, present, _ = load_input(file_)
        incoming = (cp, present)
    elif not edits:
        raise click.UsageError("nothing to write: give --file PATH or flags such as --phase, --done, "
                               "--decision, --resume-at")
    app = make_app(agent=agent, role=role, session=session, project=project)
    outcome = run_checkpoint(app, CheckpointRequest(issue=issue, edits=edits, incoming=incoming, force=force,
                                                    title=title, force_new=force_new, dry_run=dry_run,
                                                    log=not no_log, allow_secrets=allow_secrets))
    for warning in outcome.warnings:
        click.echo(f"Warning: {warning}", err=True)
    result = outcome.result
    if dry_run:
        click.echo(result.body, nl=False)
        return
    if as_json:
        assert result.stored is not None
        emit_json(to_json(result.checkpoint, issue=result.stored.number, url=result.stored.location))
        return
    click.echo("\n".join(outcome.lines()))
