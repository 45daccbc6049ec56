"""``ghstate push``: publish checkpoints kept locally while GitHub could not be reached."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ghstate.commands.common import App, emit_json, make_app, store_options
from ghstate.core.intent import Intent
from ghstate.errors import ConfigError, GhstateError
from ghstate.local.store import PendingWrite
from ghstate.services.writer import Writer, WriteResult

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.store import GitHubStore


def _target(record: PendingWrite) -> str:
    """What a kept write is for: an issue, or the new checkpoint of a branch."""
    write = record.write
    return f"#{write.number}" if write.number else f"a new checkpoint for {write.tree.branch or 'no branch'}"


def _publish(store: GitHubStore, writer: Writer, record: PendingWrite, before: tuple[Intent, ...]) -> WriteResult:
    """Replay one kept write, as it was made, on the checkpoint as it is now (``before``: the kept writes
    to it published before it)."""
    write = record.write
    if not write.number and write.new_id:  # a create whose answer was lost may have landed
        landed = store.find_open(f'"id":"{write.new_id}"')
        if landed is not None:
            write = replace(write, number=landed.number)
    return writer.write(write, kept=True, before=before)


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
    later ones for the same checkpoint wait behind it.

    \b
    Example:
      ghstate push
    """
    app = make_app()
    records = app.local.pending()
    if not records:
        if as_json:
            emit_json([])
        click.echo("Nothing to push.", err=True)
        return
    from ghstate.github.store import GitHubStore

    if not isinstance(app.store, GitHubStore):
        raise ConfigError(f"{len(records)} write{'s are' if len(records) != 1 else ' is'} waiting in "
                          f"{app.local.pending_dir}, but GitHub is not configured: set GH_TOKEN (or GITHUB_TOKEN) "
                          "and -R OWNER/NAME, then run 'ghstate push' again")
    outcomes = _publish_all(app, app.store, records, dry_run)
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
        raise GhstateError(f"{failures} kept write{'s' if failures != 1 else ''} could not be published and "
                           f"stay in {app.local.pending_dir}; run 'ghstate push' again later")


@dataclass
class Pushed:
    """What became of one kept write."""

    file: str
    target: str
    result: str  # created | updated | unchanged | would publish | skipped | held | failed
    issue: int | None = None
    url: str = ""
    error: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.result in ("failed", "held")

    def data(self) -> dict[str, object]:
        return {"file": self.file, "target": self.target, "result": self.result, "issue": self.issue,
                "url": self.url or None, "error": self.error or None}

    def line(self) -> str:
        if self.result == "would publish":
            return f"Would publish {self.file} to {self.target} ({self.error or 'saved ?'})"
        if self.result == "skipped":
            return f"Skipped {self.file}: {self.error}"
        if self.result == "held":
            return f"Held back {self.file}: {self.error}"
        if self.result == "failed":
            return f"Could not publish {self.file}: {self.error}"
        verb = {"created": "created", "updated": "updated"}.get(self.result, "already up to date:")
        return f"Published {self.file}: {verb} #{self.issue} {self.url}"


def _publish_all(app: App, store: GitHubStore, records: list, dry_run: bool) -> list[Pushed]:
    writer = app.writer(keep_pending=False)
    out: list[Pushed] = []
    held: set[str] = set()  # checkpoints with an earlier write that failed: later ones keep their order
    before: dict[str, tuple[Intent, ...]] = {}  # the kept writes published so far, by checkpoint
    for path, record in records:
        name = app.display_path(str(path))
        if isinstance(record, GhstateError):
            out.append(Pushed(name, "", "failed", error=str(record)))
            continue
        target = _target(record)
        if record.repo != app.settings.repo:
            out.append(Pushed(name, target, "skipped", error=f"it is for {record.repo}; run 'ghstate push -R "
                                                            f"{record.repo}'"))
        elif dry_run:
            out.append(Pushed(name, target, "would publish", error=f"saved {record.saved_at or '?'}"))
        elif target in held:
            out.append(Pushed(name, target, "held", error=f"an earlier kept write for {target} is not published yet"))
        else:
            out.append(_push_one(app, store, writer, (path, name, target), record, held, before))
    return out


def _push_one(app: App, store: GitHubStore, writer: Writer, where: tuple[str, str, str], record: PendingWrite,
              held: set[str], before: dict[str, tuple[Intent, ...]]) -> Pushed:
    path, name, target = where
    try:
        result = _publish(store, writer, record, before.get(target, ()))
    except GhstateError as exc:
        held.add(target)
        return Pushed(name, target, "failed", error=str(exc))
    Path(path).unlink()
    if isinstance(record.write.intent, Intent):
        before[target] = (*before.get(target, ()), record.write.intent)
    stored = result.stored
    assert stored is not None
    verb = "created" if result.created else ("updated" if result.changed else "unchanged")
    beside = [f"{c} of {app.label(stored.number)} changed after this write was kept: that change stands, and this "
              "write's is kept beside it, under a heading ending in \"(concurrent edit)\"" for c in result.conflicts]
    return Pushed(name, target, verb, stored.number, stored.location,
                  warnings=[*beside, *result.warnings, *app.keep_project(stored, result.checkpoint)])
