"""``ghstate push``: publish checkpoints kept locally while GitHub could not be reached."""

from __future__ import annotations

from pathlib import Path

import click

from ghstate.commands.common import make_app, store_options
from ghstate.edit import make_change
from ghstate.errors import ConfigError, GhstateError
from ghstate.gitinfo import WorkTree
from ghstate.model import Execution
from ghstate.parse import execution_from_dict
from ghstate.writer import WriteSpec


@click.command()
@store_options
@click.option("--dry-run", is_flag=True, help="List what would be published; write nothing.")
def push(dry_run: bool) -> None:
    """Publish checkpoints that were saved locally because GitHub could not be reached.

    Each kept write is merged into the issue as it is now, so edits made on GitHub meanwhile are kept.
    A write that is published is removed from .ghstate/pending/.

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
    from ghstate.writer import Writer

    writer = Writer(app.store, env=app.env, max_body_chars=app.settings.policy.max_body_chars, pending=None,
                    repo=app.settings.repo, api_url=app.settings.api_url)
    failures = 0
    for path, record in records:
        name = app.display_path(str(path))
        if record.get("repo") != app.settings.repo:
            click.echo(f"Skipped {name}: it is for {record.get('repo')}; run 'ghstate push -R {record.get('repo')}'",
                       err=True)
            continue
        issue = record.get("issue")
        what = f"#{issue}" if issue else f"a new checkpoint for {record.get('branch') or 'no branch'}"
        if dry_run:
            click.echo(f"Would publish {name} to {what} (saved {record.get('saved_at', '?')})")
            continue
        new_id = record.get("new_id") if isinstance(record.get("new_id"), str) else ""
        if not issue and new_id:  # a create whose answer was lost may have landed
            try:
                landed = app.store.find_open(f'"id":"{new_id}"')  # type: ignore[attr-defined]
            except GhstateError as exc:
                failures += 1
                click.echo(f"Could not publish {name}: {exc}", err=True)
                continue
            issue = landed.number if landed else None
        execution = record.get("execution")
        spec = WriteSpec(
            number=issue,
            change=make_change(record.get("intent") or {}),
            intent=record.get("intent") or {},
            tree=WorkTree(record.get("branch") or "", record.get("commit") or ""),
            execution=execution_from_dict(execution) if isinstance(execution, dict) else Execution(event="push"),
            event=record.get("event") or "push",
            title=record.get("title"),
            log=bool(record.get("log", True)),
            lookup=bool(record.get("lookup", True)),
            create=bool(record.get("create", True)),
            allow_secrets=bool(record.get("allow_secrets", False)),
            reapply=bool(record.get("reapply", False)),
            new_id=new_id,
        )
        try:
            result = writer.write(spec)
        except GhstateError as exc:
            failures += 1
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
