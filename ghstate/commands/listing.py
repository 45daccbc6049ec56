"""``ghstate list`` and ``ghstate log``: where the project stands, and what happened to a task."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options
from ghstate.core import present

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.model import Checkpoint
    from ghstate.store import Stored


LIMIT = click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
                     help="At most N, newest first; says on stderr when more are left.")
PAGE = 10  # what `list` shows unless --limit says otherwise: one request on GitHub
BODILESS = frozenset({"number", "issue", "title", "url"})  # the fields of a row that need no body


@click.command(name="list")
@store_options
@LIMIT
@click.option("--stale", is_flag=True, help="Only the stale ones, each with why: its branch gone (or merged into the "
              "default branch, on the local store), its pull request closed, or no write for --days.")
@click.option("--days", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --stale: days without a write (default: stale_days of the config, GHSTATE_STALE_DAYS, 30).")
@click.option("--json", "as_json", is_flag=True, help="Print every checkpoint as a JSON object.")
def list_(limit: int | None, stale: bool, days: int | None, as_json: bool) -> None:
    """Open checkpoints of the repository (or the local store), one line each, newest first: the newest 10
    unless --limit says how many (one request on GitHub for 10; --json issue,title,url reads no bodies).

    \b
    Examples:
      ghstate list
      ghstate list --limit 20
      ghstate list --stale --days 14    # then: ghstate close --stale
      ghstate list --json | jq '.[] | select(.verification == "failing")'
    """
    from ghstate.services import lifecycle

    if days is not None and not stale:
        raise click.UsageError("--days goes with --stale")
    app = make_app(send_kept=True)  # what this machine kept goes out first: the listing shows it
    more = False
    reasons: dict[int, tuple[str, ...]] = {}
    if stale:
        found = lifecycle.stale(app, days)
        pairs = [(s.stored, s.checkpoint) for s in found]
        reasons = {s.stored.number: s.reasons for s in found}
        more = limit is not None and len(pairs) > limit
        pairs = pairs[:limit]
    else:
        fields = click.get_current_context().meta.get("json_fields")
        bodies = not (as_json and fields and set(fields) <= BODILESS)
        pairs, more = lifecycle.read_open(app, limit or PAGE, bodies)
    app.flush_notices()
    rows = [_row(stored, cp) | ({"stale": list(reasons[stored.number])} if stale else {}) for stored, cp in pairs]
    if more:
        said = lifecycle.more_line(len(rows), "stale checkpoints" if stale else "open checkpoints")
    if as_json:
        emit_json(rows)
        if more:
            click.echo(said, err=True)
        return
    if not rows:
        what = "stale checkpoints" if stale else "open checkpoints"
        click.echo(f"No {what} in {app.searched(why=False)}.", err=True)  # the warning said why
        return
    for row in rows:
        label = app.label(row["issue"])
        progress = f"{row['phases_done']}/{row['phases_total']}"
        if stale:
            why = "; ".join(row["stale"])
            click.echo(present.printable(f"{label:<10} {row['branch'] or '-':<24} {row['title']} | stale: {why}"))
            continue
        nxt = (f"next: {row['next_phase']}" if row["next_phase"] else
               "all phases done" if row["phases_total"] else "no phases")
        ci = f"CI {row['verification']}" if row["verification"] else "no CI"
        click.echo(f"{label:<10} {row['branch'] or '-':<24} {progress:>5}  {row['title']} | {nxt} | {ci}")
    if more:
        click.echo(said, err=True)


def _row(stored: Stored, cp: Checkpoint) -> dict[str, Any]:
    nxt = cp.next_phase
    status = cp.verification_data.status if cp.verification_data else ("recorded" if cp.verification else None)
    return {
        "number": stored.number,  # as ready and close name it; "issue", the older name, stays
        "issue": stored.number,
        "title": cp.title,
        "url": stored.location,
        "branch": cp.meta.branch,
        "status": "done" if cp.phases and nxt is None else ("blocked" if nxt and nxt.status == "blocked"
                                                             else "open"),
        "phases_done": sum(p.done for p in cp.phases),
        "phases_total": len(cp.phases),
        "next_phase": nxt.name if nxt else None,
        "verification": status,
        "revision": cp.meta.revision,
        "updated_at": cp.meta.updated_at,
    }


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the revisions as JSON.")
def log(issue: int | None, as_json: bool) -> None:
    """The revision history: who wrote each revision, when, and what changed.

    \b
    Example:
      ghstate log 24
    """
    app = make_app()
    stored, cp = app.find(issue)
    revisions = app.store.revisions(stored.number)
    if not revisions:  # no chain yet: what the body records
        from ghstate.core.chain import prior_entries

        revisions = [e.revision for e in prior_entries(cp)]
    if as_json:
        emit_json([r.as_dict() for r in revisions])
        return
    if not revisions:
        click.echo(f"No recorded revisions for {app.label(stored.number)}.", err=True)
        return
    for r in revisions:
        who = ", ".join(x for x in (r.role, f"session {r.session}" if r.session else "") if x)
        who = f"{r.agent or r.author or '(unnamed)'}{f' ({who})' if who else ''}"
        if r.event == "edit":  # a person's edit of the body, merged into the log
            who = f"{r.author or 'a person'} (edited the body)"
        changes = "; ".join(r.changes) or "no visible change"
        click.echo(present.printable(present.oneline(f"r{r.revision:<4} {r.at or '?':<20} {who}: {changes}")))
