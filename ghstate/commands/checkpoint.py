"""``ghstate checkpoint``: write a revision of the working state before the context is cleared."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options, usage_errors
from ghstate.core.sections import BY_KEY, SECTIONS
from ghstate.core.state_json import to_json
from ghstate.services.checkpoint import CheckpointRequest, check_values, run_checkpoint
from ghstate.services.inputs import read_input


def plain_list_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """A ``--flag TEXT`` (any number of times) for each plain list of the table (core.sections), in its order."""
    for section in reversed([s for s in SECTIONS if s.items == "plain"]):  # click lists the last applied first
        command = click.option(f"--{section.flag}", multiple=True, metavar="TEXT", help=f"Add {section.adds}.")(command)
    return command


class Renamed(click.Option):
    """An option whose earlier name (the table's ``was``: ``--read``, ``--resume-at``) is still taken; help
    shows the name alone, as the docs do, and says the old one after the text."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        names = self.opts
        self.opts = names[:1]
        try:
            record = super().get_help_record(ctx)
        finally:
            self.opts = names
        return None if record is None else (record[0], f"{record[1].rstrip('.')} (also {names[1]}, its old name).")


class _Command(click.Command):
    """The checkpoint command, whose "did you mean" names a flag by its name, not by its earlier one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = args[:args.index("--")] if "--" in args else args
        for old, new in _SINGLE.items():  # one value from two names: which is meant? (as the MCP tool refuses it)
            if all(any(a == name or a.startswith(f"{name}=") for a in given) for name in (old, new)):
                raise click.UsageError(f"give {new} or {old} (its old name), not both", ctx)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            exc.possibilities = list(dict.fromkeys(_NAMES.get(p, p) for p in exc.possibilities or ())) or None
            raise


_NAMES = {f"--{s.was}": f"--{s.flag}" for s in SECTIONS if s.was}  # an earlier flag, and its name now
_SINGLE = {f"--{s.was}": f"--{s.flag}" for s in SECTIONS if s.was and s.kind == "text"}  # one value, not a list


def renamed(key: str, **attrs: Any) -> Callable[..., Any]:
    """The option of the table's section ``key``: its flag, and its earlier name when it had one."""
    section = BY_KEY[key]
    names = (f"--{section.flag}", *((f"--{section.was}",) if section.was else ()))
    return click.option(*names, section.flag.replace("-", "_"), cls=Renamed if section.was else click.Option,
                        **attrs)


@click.command(cls=_Command)
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("-f", "--file", "body", metavar="PATH", help="Markdown body or JSON state to write ('-' reads stdin).")
@click.option("--title", help="Title of the checkpoint (the issue title on GitHub).")
@click.option("--goal", metavar="TEXT", help="Set the goal.")
@click.option("--done", multiple=True, metavar="PHASE", help="Tick a phase: its name, label ('Phase 2') or number.")
@click.option("--undo", multiple=True, metavar="PHASE", help="Untick a phase.")
@click.option("--phase", multiple=True, metavar="TEXT", help="Add a phase.")
@plain_list_options
@renamed("files", multiple=True, metavar="PATH", help="Add a file to re-read.")
@renamed("resume", metavar="TEXT", help="Set the exact resume instruction.")
@click.option("--agent", metavar="NAME", help="Who writes this revision (default: GHSTATE_AGENT).")
@click.option("--role", metavar="ROLE", help="In which role: editor, reviewer, ci, … (default: GHSTATE_ROLE).")
@click.option("--session", metavar="ID", help="The runtime session (default: GHSTATE_SESSION).")
@click.option("--new", is_flag=True, help="Create a new checkpoint even if the branch has one.")
@click.option("--move", is_flag=True, help="With ISSUE from another branch: make it this branch's checkpoint.")
@click.option("--adopt", is_flag=True, help="With ISSUE that is no checkpoint (no label, no marker): make it one.")
@click.option("--dry-run", is_flag=True, help="Print the body that would be written; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the written state as JSON (with --dry-run: the state "
              "that would be written).")
@click.option("--no-log", is_flag=True, hidden=True, help="No effect: every write is on the checkpoint's chain.")
@click.option("--force", is_flag=True, help="Let the --file sections replace the current ones, unmerged.")
@click.option("--allow-empty", is_flag=True,
              help="Make a new checkpoint even with neither a goal, phases nor a resume instruction.")
@click.option("--allow-secrets", is_flag=True, help="Write even if the text looks like it holds a credential.")
@click.option("--project", metavar="PROJECT", help="GitHub Project (v2) to keep current: orgs/OWNER/projects/N, "
              "users/NAME/projects/N or its URL (default: GHSTATE_PROJECT, then project in the config).")
def checkpoint(issue: int | None, body: str | None, agent: str | None, role: str | None, session: str | None,
               as_json: bool, no_log: bool, project: str | None, **fields: Any) -> None:
    """Write a checkpoint: create it, or update ISSUE (default: the branch's open checkpoint).

    \b
    Examples:
      ghstate checkpoint --file checkpoint.md
      ghstate checkpoint --done "Phase 2" --decision "keep the v1 API" --resume "Start Phase 3"
      ghstate show 24 --json | jq '.goal = "…"' | ghstate checkpoint 24 --file -
    """
    request = CheckpointRequest(issue=issue, body="" if body is not None else None, **fields)
    with usage_errors():
        request.check()
        check_values({"agent": agent, "role": role, "session": session})
    if body is not None:
        text, source = read_input(body)
        request = replace(request, body=text, source=source)
    app = make_app(agent=agent, role=role, session=session, project=project)
    with usage_errors():  # a new checkpoint with nothing to say what the task is: the flags to give
        outcome = run_checkpoint(app, request)
    for warning in outcome.warnings:
        click.echo(f"Warning: {warning}", err=True)
    result = outcome.result
    if as_json:  # with --dry-run: the state that would be written (the issue's number and URL when it is one)
        where = result.stored
        state = to_json(result.checkpoint, issue=where.number if where else None, url=where.location if where
                        else None)
        emit_json({"result": outcome.said, **state})
        return
    if request.dry_run:
        click.echo(result.body, nl=False)
        return
    click.echo("\n".join(outcome.lines()))
