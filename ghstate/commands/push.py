"""``ghstate push``: publish checkpoints kept locally while GitHub could not be reached."""

from __future__ import annotations

import contextlib

import click

from ghstate.commands.common import emit_json, make_app, store_options
from ghstate.errors import ConfigError, GhstateError
from ghstate.local.store import PendingWrite, file_lock
from ghstate.services.kept import Pushed, here, publish_all, set_aside_words, target


@click.command()
@store_options
@click.option("--dry-run", is_flag=True, help="List what would be published; write nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object per kept write: file, target, result, issue, url, error.")
def push(dry_run: bool, as_json: bool) -> None:
    """Publish checkpoints that were saved locally because GitHub could not be reached.

    Kept writes are published in the order they were made, each rebased onto its checkpoint as it is now:
    what was written or edited on GitHub after the write was made stands, and where both changed one
    value, the kept write's is kept beside it and said. A write that is published is removed from the
    local store's pending/ (the clone's: every worktree's kept writes are published); when one fails, the
    later ones for the same checkpoint wait behind it. One GitHub refuses for good (its checkpoint gone, its
    body over the bound once rebased) is set aside in pending/aside/, named with how to drop it, and holds
    nothing back. The next command that reaches GitHub sends them first as well: push is for when you want
    them out now.

    \b
    Example:
      ghstate push
    """
    app = make_app()
    records = app.local.pending()
    apart = [Pushed(app.display_path(str(path)), target(r) if isinstance(r, PendingWrite) else "", "set aside",
                    error=set_aside_words(app, path, r, why))
             for path, r, why in app.local.aside() if not isinstance(r, PendingWrite) or here(app, r)]
    if not records and not apart:
        if as_json:
            emit_json([])
        click.echo("Nothing to push.", err=True)
        return
    from ghstate.github.store import GitHubStore

    if not isinstance(app.store, GitHubStore):
        raise ConfigError(f"{len(records)} write{'s are' if len(records) != 1 else ' is'} waiting in "
                          f"{app.local.pending_dir}, but GitHub is not configured: set GH_TOKEN (or GITHUB_TOKEN) "
                          "and -R OWNER/NAME, then run 'ghstate push' again")
    # one publisher of this machine at a time (a dry run writes nothing, not even the lock's file)
    with contextlib.nullcontext() if dry_run else file_lock(app.local.pending_dir / ".push.lock"):
        outcomes = [*apart, *publish_all(app, app.store, app.local.pending(), dry_run)]
    if as_json:
        emit_json([o.data() for o in outcomes])
    else:
        for outcome in outcomes:
            click.echo(outcome.line(), err=outcome.failed or outcome.result == "skipped")
    for outcome in outcomes:
        for warning in outcome.warnings:
            click.echo(f"Warning: {warning}", err=True)
    failures = sum(o.failed for o in outcomes)
    if failures:
        aside = sum(o.result == "set aside" for o in outcomes)
        more = f" ({aside} of them set aside, waiting for you: each line says how to drop it)" if aside else ""
        raise GhstateError(f"{failures} kept write{'s' if failures != 1 else ''} could not be published and "
                           f"stay in {app.local.pending_dir}; run 'ghstate push' again later{more}")
