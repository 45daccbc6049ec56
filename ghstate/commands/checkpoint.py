"""``ghstate checkpoint``: write a revision of the working state before the context is cleared."""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from ghstate import gitinfo, trust
from ghstate.commands.common import ISSUE, App, emit_json, load_input, make_app, store_options
from ghstate.edit import Edits
from ghstate.errors import InputError, NotFound
from ghstate.intent import Intent
from ghstate.markup import control_at, describe_control
from ghstate.model import Checkpoint, Execution
from ghstate.state_json import to_json
from ghstate.writer import WriteResult, WriteSpec


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


@dataclass(frozen=True)
class CheckpointRequest:
    """What one checkpoint write asks for, whoever asks (the CLI's flags, the MCP server's tool)."""

    issue: int | None = None
    edits: Edits = field(default_factory=Edits)
    incoming: tuple[Checkpoint, frozenset[str]] | None = None  # a whole body or state, and the sections it names
    force: bool = False
    title: str | None = None
    force_new: bool = False
    dry_run: bool = False
    log: bool = True
    allow_secrets: bool = False
    event: str = "checkpoint"


@dataclass(frozen=True)
class CheckpointOutcome:
    result: WriteResult
    warnings: tuple[str, ...]
    label: str  # "#24" or "local #3"
    location: str  # the issue URL, or the local path as a person would type it

    def lines(self) -> list[str]:
        """What the CLI prints after a write (and the MCP tool answers)."""
        result = self.result
        if not result.changed:
            first = f"No changes: {self.label} is up to date (revision {result.checkpoint.meta.revision})."
        else:
            verb = "Created" if result.created else "Updated"
            summary = "; ".join(result.changes)
            first = (f"{verb} checkpoint {self.label} (revision {result.checkpoint.meta.revision})"
                     f"{': ' + summary if summary else ''}")
        return [first, self.location]


def run_checkpoint(app: App, request: CheckpointRequest) -> CheckpointOutcome:
    """Write one revision: the one place where a checkpoint request becomes a WriteSpec and is written."""
    intent = Intent(edits=request.edits)
    title = request.title
    if request.incoming is not None:
        incoming, present = request.incoming
        intent = Intent(edits=request.edits, incoming=incoming, present=present, force=request.force)
        title = title or incoming.title or None
    settings = app.settings
    tree = app.tree()
    execution = None
    if settings.agent or settings.role or settings.session:
        execution = Execution(agent=settings.agent, role=settings.role or "editor", session=settings.session,
                              event=request.event)
    # A reviewer (or any role but editor) adds to the task; the working tree it records stays the editor's.
    reviewing = (settings.role or "editor") != "editor"
    spec = WriteSpec(
        number=request.issue,
        intent=intent,
        tree=tree,
        fingerprints=gitinfo.fingerprints(settings.root if settings.in_git else None, tree.dirty),
        execution=execution,
        title=title,
        lookup=not request.force_new,
        create=not reviewing or request.force_new,
        record_tree=not reviewing,
        dry_run=request.dry_run,
        log=request.log,
        allow_secrets=request.allow_secrets,
    )
    try:
        result = app.writer().write(spec)
    except NotFound as exc:
        if not reviewing or request.issue is not None:
            raise
        raise NotFound(f"{exc}; a {settings.role} adds to an existing checkpoint: give its ISSUE number "
                       "(or --new to start one)") from None
    warnings = [*result.warnings, *(f"both sides changed {c}; theirs is kept beside it" for c in result.conflicts)]
    warnings += [f"the file and the checkpoint both changed {c} since the file was made; both are kept"
                 for c in result.file_conflicts]
    warnings += [w for w in [trust.write_warning(result.previous, result.checkpoint)] if w and result.changed]
    stored = result.stored
    if stored is None:  # a dry run
        return CheckpointOutcome(result, tuple(warnings), "", "")
    warnings += app.keep_project(stored, result.checkpoint)
    location = app.where(stored)
    return CheckpointOutcome(result, tuple(warnings), app.label(stored.number), location)


_ONE_LINE = ("--agent", "--role", "--session")
_NOT_EMPTY = ("--done", "--undo", "--phase", "--decision", "--question", "--risk", "--read")


class ChangeError(InputError):
    """A change that cannot be meant (a control character, an empty item, --done and --undo of one phase).
    ``flag`` names the option it came from, or None when it is about two of them."""

    def __init__(self, message: str, flag: str | None = None) -> None:
        super().__init__(message)
        self.flag = flag


def check_changes(values: dict[str, tuple[str | None, ...]]) -> None:
    """Refuse values that cannot be meant, before anything is read or written. Keys are the CLI's flag
    names; the CLI reports a ChangeError as a usage error (exit 2), the MCP server as a tool error."""
    for flag, given in values.items():
        for value in (v for v in given if v is not None):
            at = control_at(value)
            if at >= 0:
                raise ChangeError(f"holds a control character ({describe_control(value, at)}); only tab and "
                                  "newline are text (terminal output?)", flag)
            if flag in _ONE_LINE and ("\n" in value or "\r" in value):
                raise ChangeError("must be one line", flag)
            if flag in _NOT_EMPTY and not value.strip():
                raise ChangeError("is empty", flag)
    both = ({" ".join(x.split()).lower() for x in values.get("--done", ()) if x}
            & {" ".join(x.split()).lower() for x in values.get("--undo", ()) if x})
    if both:
        raise ChangeError(f"--done and --undo both name {sorted(both)[0]!r}; give one of them")
