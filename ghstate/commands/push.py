"""``ghstate push``: publish checkpoints kept locally while GitHub could not be reached."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from ghstate.commands.common import App, make_app, store_options
from ghstate.edit import make_change
from ghstate.errors import ConfigError, GhstateError, InputError
from ghstate.model import WorkTree
from ghstate.parse import execution_from_dict
from ghstate.writer import Writer, WriteResult, WriteSpec


def _target(record: dict[str, Any]) -> str:
    """What a kept write is for: an issue, or the new checkpoint of a branch."""
    issue = record.get("issue")
    return f"#{issue}" if issue else f"a new checkpoint for {record.get('branch') or 'no branch'}"


def _new_id(record: dict[str, Any]) -> str:
    new_id = record.get("new_id")
    if isinstance(new_id, str) and new_id:
        return new_id
    older = re.search(r'"id":"([^"]+)"', str(record.get("unique") or ""))  # records kept by an earlier version
    return older.group(1) if older else ""


def _publish(app: App, writer: Writer, record: dict[str, Any]) -> WriteResult:
    """Replay one kept write on the checkpoint as it is now."""
    issue = record.get("issue")
    new_id = _new_id(record)
    if not issue and new_id:  # a create whose answer was lost may have landed
        landed = app.store.find_open(f'"id":"{new_id}"')  # type: ignore[attr-defined]
        issue = landed.number if landed else None
    execution = record.get("execution")
    intent = record.get("intent") or {}
    try:
        change = make_change(intent)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"the kept write is malformed ({exc}); move it out of the pending folder") from None
    return writer.write(WriteSpec(
        number=issue,
        change=change,
        intent=intent,
        tree=WorkTree(record.get("branch") or "", record.get("commit") or ""),
        execution=execution_from_dict(execution) if isinstance(execution, dict) else None,
        event=record.get("event") or "push",
        title=record.get("title"),
        log=bool(record.get("log", True)),
        lookup=bool(record.get("lookup", True)),
        create=bool(record.get("create", True)),
        allow_secrets=bool(record.get("allow_secrets", False)),
        reapply=bool(record.get("reapply", False)),
        new_id=new_id,
    ))


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
    if app.store.kind != "github":
        raise ConfigError(f"{len(records)} write{'s are' if len(records) != 1 else ' is'} waiting in "
                          f"{app.local.pending_dir}, but GitHub is not configured: set GH_TOKEN (or GITHUB_TOKEN) "
                          "and -R OWNER/NAME, then run 'ghstate push' again")
    writer = Writer(app.store, env=app.env, max_body_chars=app.settings.policy.max_body_chars, pending=None,
                    repo=app.settings.repo, api_url=app.settings.api_url)
    failures = 0
    held: set[str] = set()  # checkpoints with an earlier write that failed: later ones keep their order
    for path, record in records:
        name = app.display_path(str(path))
        if record.get("repo") != app.settings.repo:
            click.echo(f"Skipped {name}: it is for {record.get('repo')}; run 'ghstate push -R {record.get('repo')}'",
                       err=True)
            continue
        target = _target(record)
        if dry_run:
            click.echo(f"Would publish {name} to {target} (saved {record.get('saved_at', '?')})")
            continue
        if target in held:
            failures += 1
            click.echo(f"Held back {name}: an earlier kept write for {target} is not published yet", err=True)
            continue
        try:
            result = _publish(app, writer, record)
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
    if failures:
        raise GhstateError(f"{failures} kept write{'s' if failures != 1 else ''} could not be published and "
                           f"stay in {app.local.pending_dir}; run 'ghstate push' again later")
