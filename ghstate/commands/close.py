"""``ghstate close``: a finished checkpoint closed, so that ``list`` and the branch's lookup pass it by; and
``close --stale``: the ones ``list --stale`` names, closed as not planned."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options

if TYPE_CHECKING:
    from ghstate.core.model import Checkpoint
    from ghstate.services.app import App
    from ghstate.store import Stored


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--stale", is_flag=True, help="Close what 'list --stale' names, as not planned, saying each and why.")
@click.option("--days", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --stale: days without a write (default: stale_days of the config, GHSTATE_STALE_DAYS, 30).")
@click.option("--dry-run", is_flag=True, help="Say what would be closed; close nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the closed checkpoint as JSON (issue, url, state).")
def close(issue: int | None, stale: bool, days: int | None, dry_run: bool, as_json: bool) -> None:
    """Close a finished checkpoint: on GitHub the issue, closed as completed; in the local store, the
    file moves to closed/ of the store (the clone's, in its git folder). It stays readable by number
    (show, resume, log); list, the branch's lookup and the next write of the branch pass it by.

    With --stale, every open checkpoint 'list --stale' names is closed as not planned: its branch
    gone, its pull request closed, or no write for --days.

    \b
    Examples:
      ghstate close 24
      ghstate close 24 --dry-run
      ghstate close --stale --dry-run
      ghstate close --stale --days 60
    """
    if stale == (issue is not None):
        raise click.UsageError("give an ISSUE, or --stale" if not stale else "give an ISSUE or --stale, not both")
    if not stale and days is not None:
        raise click.UsageError("--days goes with --stale")
    if stale:
        _close_stale(days, dry_run, as_json)
        return
    from ghstate.services import interrupt

    assert issue is not None
    app = make_app(send_kept=True)  # this machine's kept writes go first: none lands on it after the close
    from ghstate.services.reader import checkpoint_of

    stored = app.store.get(issue)
    cp = checkpoint_of(stored)
    label = app.label(issue)
    left = _open_children(app, stored, cp, dry_run)
    if stored.state == "closed":  # its refs folded, where they were not (a store with an archive)
        closed, said = (stored if dry_run else app.store.close(stored)), f"{label} was closed already"
    elif dry_run:
        closed, said = stored, f"Would close {label}"
    else:
        interrupt.note(f"whether {label} was closed could not be told: 'ghstate list' shows the open ones")
        closed, said = app.store.close(stored), f"Closed {label}"
        interrupt.note(f"{label} was closed")
    if not dry_run:
        _remember(app, closed, cp)
    if as_json:  # the url as list gives it: absolute (the issue's, or the file's path)
        emit_json({"number": issue, "issue": issue, "url": closed.location, "state": closed.state})
        return
    click.echo(f"{said}: {app.where(closed)}")
    if left:
        click.echo(f"Warning: {left}", err=True)


def _open_children(app: App, stored: Stored, cp: Checkpoint, dry_run: bool) -> str:
    """What closing a plan with open children leaves ("": none): they stay open and are offered no more. On a
    terminal it is asked first (no: nothing is closed); elsewhere it is said."""
    from ghstate.services.family import open_children

    if stored.state == "closed":
        return ""
    children = open_children(app, stored, cp)
    if not children:
        return ""
    names = ", ".join(app.label(c.number) for c in children)
    said = (f"{app.label(stored.number)} has {len(children)} open child{'ren' if len(children) != 1 else ''} "
            f"({names}): {'they stay' if len(children) != 1 else 'it stays'} open, and 'ghstate ready' and 'claim "
            "--next' offer none of them once it is closed (finish them with 'ghstate done CHILD', or close them)")
    if not dry_run and sys.stdin.isatty():
        click.confirm(f"{said}. Close it anyway?", default=False, abort=True, err=True)
        return ""
    return said


def _close_stale(days: int | None, dry_run: bool, as_json: bool) -> None:
    """Each stale checkpoint closed as not planned (or, ``dry_run``, named), one line each with why."""
    from ghstate.core.present import printable
    from ghstate.services import interrupt, lifecycle

    app = make_app(send_kept=True)
    found = lifecycle.stale(app, days)
    app.flush_notices()
    rows = []
    for item in found:
        label = app.label(item.stored.number)
        state = item.stored.state
        if not dry_run:
            interrupt.note(f"whether {label} was closed could not be told: 'ghstate list --stale' shows what is left")
            done = app.store.close(item.stored, "not_planned")
            state = done.state
            interrupt.note(f"{label} was closed")
            _remember(app, done, item.checkpoint)
        rows.append({"number": item.stored.number, "issue": item.stored.number, "url": item.stored.location,
                     "state": state, "stale": list(item.reasons)})
        if not as_json:
            verb = "Would close" if dry_run else "Closed"
            click.echo(printable(f"{verb} {label} as not planned: {'; '.join(item.reasons)}"))
    if as_json:
        emit_json(rows)
    elif not found:
        click.echo(f"No stale checkpoints in {app.searched(why=False)}.", err=True)


def _remember(app: App, closed: Stored, cp: Checkpoint) -> None:
    """On GitHub, this machine's copy of the checkpoint says it is closed: without GitHub, the branch's
    lookup passes it by, as GitHub's does."""
    if app.store.remote:
        from ghstate.services import outage

        outage.remember(app, closed, cp, closed.body)
