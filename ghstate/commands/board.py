"""``ghstate board``: one line per open checkpoint of a GitHub Project (v2), across its repositories."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import click

from ghstate.commands.common import emit_json


def _rows(store: Any, ref: Any, org: str | None, label: str, stale_days: float) -> tuple[list[Any], int, str]:
    """The board's rows, how many items the token could not see, and what was read; past the pages it reads,
    how many it left unread is said (on stderr)."""
    from ghstate.github import project_sync

    now = datetime.now(timezone.utc)
    hidden = 0
    if ref is not None:
        sync = project_sync.ProjectSync(store, ref)
        rows, pages, hidden = sync.board(label=label, now=now, stale_days=stale_days)
        source, unread, what = str(ref), sync.unread, "items"
    else:
        assert org is not None
        rows, pages, unread = project_sync.board_of_org(store, org, label=label, now=now, stale_days=stale_days)
        source, what = f"org {org}", "open checkpoints (GitHub's search gives 1,000 at most)"
    if unread:
        click.echo(f"The board read the first {pages * 100:,} {what.split(' (')[0]} of {source} ({pages} requests) "
                   f"and no more: {unread:,} {what} were not read", err=True)
    return rows, hidden, source


@click.command()
@click.option("--project", metavar="PROJECT",
              help="orgs/OWNER/projects/N, users/NAME/projects/N or the project's URL "
                   "(default: GHSTATE_PROJECT, then project in the config).")
@click.option("--org", metavar="ORG", help="Instead of a project: the open checkpoints of ORG's repositories.")
@click.option("--days", "--stale", "stale_days", type=click.FloatRange(min=0), default=3.0, show_default=True,
              metavar="DAYS", help="Days without a write after which a checkpoint is marked stale, as list's and "
              "close's --days (--stale DAYS, the older name, works too).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N lines, in the board's order (marked ones first); says on stderr when more are left.")
@click.option("--json", "as_json", is_flag=True, help="Print the board as JSON.")
def board(project: str | None, org: str | None, stale_days: float, limit: int | None, as_json: bool) -> None:
    """One line per open checkpoint of a GitHub Project, across repositories: repository and number,
    branch, progress, next phase, CI, last writer and how long ago. Blocked, failing and stale ones
    come first, marked. One request per 100 items.

    \b
    Examples:
      ghstate board --project orgs/ACME/projects/7
      ghstate board --org ACME --days 7 --json
      ghstate board --limit 20
    """
    from ghstate import config
    from ghstate.errors import ConfigError
    from ghstate.github import projects
    from ghstate.github.store import GitHubStore

    if project and org:
        raise click.UsageError("give --project or --org, not both")
    if org is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}", org):
        raise click.BadParameter(f"{org[:60]!r} is not an organization's login", param_hint="--org")
    settings = config.build(store="github", need_repo=False, project=project)
    if org is None and not settings.project:
        raise ConfigError("no project: pass --project orgs/OWNER/projects/N (or --org ORG), set GHSTATE_PROJECT, "
                          "or add project = \"…\" to .ghstate/config.toml")
    ref = config.parse_ref(settings.project) if org is None else None
    owner = org or (ref.login if ref else "")
    store = GitHubStore.connect(settings._replace(repo=settings.repo or f"{owner}/{owner}"))
    if settings.project_token and ref is not None:
        store = GitHubStore.connect(settings._replace(repo=settings.repo or f"{owner}/{owner}",
                                                      token=settings.project_token))
    rows, hidden, source = _rows(store, ref, org, settings.policy.label, stale_days)
    from ghstate.services.lifecycle import more_line

    more = more_line(limit, f"open checkpoints in {source}") if limit is not None and len(rows) > limit else ""
    rows = rows[:limit]
    if as_json:
        emit_json({"source": source, "stale_days": stale_days, "hidden": hidden,
                   "checkpoints": [r.to_json() for r in rows]})
        if more:
            click.echo(more, err=True)
        return
    if not rows:
        click.echo(f"No open checkpoints in {source}.", err=True)
    for line in projects.lines(rows):
        click.echo(line)
    if hidden:
        click.echo(f"{hidden} item{'s' if hidden != 1 else ''} of {source} could not be read with this token "
                   "(repositories it cannot see)", err=True)
    if more:
        click.echo(more, err=True)
