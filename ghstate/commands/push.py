"""``ghstate push``: publish checkpoints kept locally while GitHub could not be reached."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ghstate.commands.common import make_app, store_options
from ghstate.errors import ConfigError, GhstateError
from ghstate.local.store import PendingWrite
from ghstate.services.writer import Writer, WriteResult

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.store import GitHubStore


def _target(record: PendingWrite) -> str:
    """What a kept write is for: an issue, or the new checkpoint of a branch."""
    write = record.write
    return f"#{write.number}" if write.number else f"a new checkpoint for {write.tree.branch or 'no branch'}"


def _publish(store: GitHubStore, writer: Writer, record: PendingWrite) -> WriteResult:
    """Replay one kept write, as it was made, on the checkpoint as it is now."""
    write = record.write
    if not write.number and write.new_id:  # a create whose answer was lost may have landed
        landed = store.find_open(f'"id":"{write.new_id}"')
        if landed is not None:
            write = replace(write, number=landed.number)
    return writer.write(write, kept=True)


@click.command()
@store_options
@click.option("--dry-run", is_flag=True, help="List what would be published; write nothing.")
def push(dry_run: bool) -> None:
    """Publish checkpoints that were saved locally because GitHub could not be reached.

    Kept writes are replayed in the order they were made, each merged into the issue as it is now, so
    edits made on GitHub meanwhile are kept. A write that is published is removed from
    .ghstate/pending/; when one fails, the later ones for the same checkpoint wait behind it.

    \b
    Example:
      ghstate push
    """
    app = make_app()
    records = app.local.pending()
    if not records:
        click.echo("Nothing to push.", err=True)
        return
    from ghstate.github.store import GitHubStore

    if not isinstance(app.store, GitHubStore):
        raise ConfigError(f"{len(records)} write{'s are' if len(records) != 1 else ' is'} waiting in "
                          f"{app.local.pending_dir}, but GitHub is not configured: set GH_TOKEN (or GITHUB_TOKEN) "
                          "and -R OWNER/NAME, then run 'ghstate push' again")
    writer = app.writer(keep_pending=False)
    failures = 0
    held: set[str] = set()  # checkpoints with an earlier write that failed: later ones keep their order
    for path, record in records:
        name = app.display_path(str(path))
        if isinstance(record, GhstateError):
            failures += 1
            click.echo(f"Could not publish {name}: {record}", err=True)
            continue
        if record.repo != app.settings.repo:
            click.echo(f"Skipped {name}: it is for {record.repo}; run 'ghstate push -R {record.repo}'", err=True)
            continue
        target = _target(record)
        if dry_run:
            click.echo(f"Would publish {name} to {target} (saved {record.saved_at or '?'})")
            continue
        if target in held:
            failures += 1
            click.echo(f"Held back {name}: an earlier kept write for {target} is not published yet", err=True)
            continue
        try:
            result = _publish(app.store, writer, record)
        except GhstateError as exc:
            failures += 1
            held.add(target)
            click.echo(f"Could not publish {name}: {exc}", err=True)
            continue
        Path(path).unlink()
        stored = result.stored
        assert stored is not None
        verb = "created" if result.created else ("updated" if result.changed else "already up to date:")
        click.echo(f"Published {name}: {verb} #{stored.number} {stored.location}")
        for warning in [*result.warnings, *app.keep_project(stored, result.checkpoint)]:
            click.echo(f"Warning: {warning}", err=True)
    if failures:
        raise GhstateError(f"{failures} kept write{'s' if failures != 1 else ''} could not be published and "
                           f"stay in {app.local.pending_dir}; run 'ghstate push' again later")
