"""``ghstate checkpoint``: write a revision of the working state before the context is cleared."""

from __future__ import annotations

import click

from ghstate import gitinfo
from ghstate.commands.common import ISSUE, emit_json, load_input, make_app, store_options
from ghstate.edit import Edits, edits_to_dict, make_change
from ghstate.errors import NotFound
from ghstate.markup import control_at, describe_control
from ghstate.model import Execution
from ghstate.state_json import to_json
from ghstate.writer import WriteSpec


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
def checkpoint(issue: int | None, file_: str | None, title: str | None, goal: str | None, done: tuple[str, ...],
               undo: tuple[str, ...], phase: tuple[str, ...], decision: tuple[str, ...],
               question: tuple[str, ...], risk: tuple[str, ...], read: tuple[str, ...], resume_at: str | None,
               agent: str | None, role: str | None, session: str | None, force_new: bool, dry_run: bool,
               as_json: bool, no_log: bool, force: bool, allow_secrets: bool) -> None:
    """Write a checkpoint: create it, or update ISSUE (default: the branch's open checkpoint).

    \b
    Examples:
      ghstate checkpoint --file checkpoint.md
      ghstate checkpoint --done "Phase 2" --decision "keep the v1 API" --resume-at "Start Phase 3"
      ghstate show 24 --json | jq '.goal = "…"' | ghstate checkpoint 24 --file -
    """
    if issue is not None and force_new:
        raise click.UsageError("give either ISSUE or --new, not both")
    _check_flags({"--title": (title,), "--goal": (goal,), "--done": done, "--undo": undo, "--phase": phase,
                  "--decision": decision, "--question": question, "--risk": risk, "--read": read,
                  "--resume-at": (resume_at,), "--agent": (agent,), "--role": (role,), "--session": (session,)})
    edits = Edits(title=title, goal=goal, resume=resume_at, done=done, undo=undo, phases=phase,
                  decisions=decision, questions=question, risks=risk, reads=read)
    intent: dict = {"edits": edits_to_dict(edits)}
    if file_ is not None:
        incoming, present, _ = load_input(file_)
        intent["incoming"] = {"state": to_json(incoming), "present": sorted(present)}
        intent["force"] = force
        title = title or incoming.title or None
    elif not edits:
        raise click.UsageError("nothing to write: give --file PATH or flags such as --phase, --done, "
                               "--decision, --resume-at")
    app = make_app(agent=agent, role=role, session=session)
    settings = app.settings
    tree = app.tree()
    execution = None
    if settings.agent or settings.role or settings.session:
        execution = Execution(agent=settings.agent, role=settings.role or "editor", session=settings.session,
                              event="checkpoint")
    # A reviewer (or any role but editor) adds to the task; the working tree it records stays the editor's.
    reviewing = (settings.role or "editor") != "editor"
    spec = WriteSpec(
        number=issue,
        change=make_change(intent),
        intent=intent,
        tree=tree,
        fingerprints=gitinfo.fingerprints(settings.root if settings.in_git else None, tree.dirty),
        execution=execution,
        title=title,
        lookup=not force_new,
        create=not reviewing or force_new,
        record_tree=not reviewing,
        dry_run=dry_run,
        log=not no_log,
        allow_secrets=allow_secrets,
    )
    try:
        result = app.writer().write(spec)
    except NotFound as exc:
        if not reviewing or issue is not None:
            raise
        raise NotFound(f"{exc}; a {settings.role} adds to an existing checkpoint: give its ISSUE number "
                       "(or --new to start one)") from None
    warnings = [*result.warnings, *(f"both sides changed {c}; theirs is kept beside it" for c in result.conflicts)]
    warnings += [f"the file and the checkpoint both changed {c} since the file was made; both are kept"
                 for c in spec.change.conflicts]  # type: ignore[attr-defined]
    for warning in warnings:
        click.echo(f"Warning: {warning}", err=True)
    stored = result.stored
    if dry_run:
        click.echo(result.body, nl=False)
        return
    assert stored is not None
    location = stored.location if app.store.kind == "github" else app.display_path(stored.location)
    if as_json:
        emit_json(to_json(result.checkpoint, issue=stored.number, url=stored.location))
        return
    label = app.label(stored.number)
    if not result.changed:
        click.echo(f"No changes: {label} is up to date (revision {result.checkpoint.meta.revision}).")
    else:
        verb = "Created" if result.created else "Updated"
        summary = "; ".join(result.changes)
        click.echo(f"{verb} checkpoint {label} (revision {result.checkpoint.meta.revision})"
                   f"{': ' + summary if summary else ''}")
    click.echo(location)



_ONE_LINE = ("--agent", "--role", "--session")
_NOT_EMPTY = ("--done", "--undo", "--phase", "--decision", "--question", "--risk", "--read")


def _check_flags(values: dict[str, tuple[str | None, ...]]) -> None:
    """Flag values that cannot be meant are usage errors (exit 2), before anything is read or written."""
    for flag, given in values.items():
        for value in (v for v in given if v is not None):
            at = control_at(value)
            if at >= 0:
                raise click.BadParameter(f"holds a control character ({describe_control(value, at)}); only tab and "
                                         "newline are text (terminal output?)", param_hint=flag)
            if flag in _ONE_LINE and ("\n" in value or "\r" in value):
                raise click.BadParameter("must be one line", param_hint=flag)
            if flag in _NOT_EMPTY and not value.strip():
                raise click.BadParameter("is empty", param_hint=flag)
    both = ({" ".join(x.split()).lower() for x in values["--done"] if x}
            & {" ".join(x.split()).lower() for x in values["--undo"] if x})
    if both:
        raise click.UsageError(f"--done and --undo both name {sorted(both)[0]!r}; give one of them")
