"""``ghstate list`` and ``ghstate log``: where the project stands, and what happened to a task."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options
from ghstate.core import present
from ghstate.services.reader import current


@click.command(name="list")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print every checkpoint as a JSON object.")
def list_(as_json: bool) -> None:
    """Open checkpoints of the repository (or the local store), one line each.

    \b
    Examples:
      ghstate list
      ghstate list --json | jq '.[] | select(.verification == "failing")'
    """
    app = make_app()
    rows = []
    stored_list = app.store.list_open()
    app.flush_notices()
    for stored in stored_list:
        cp = current(app.store, stored)
        nxt = cp.next_phase
        status = cp.verification_data.status if cp.verification_data else ("recorded" if cp.verification else None)
        rows.append({
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
        })
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(f"No open checkpoints in {app.searched(why=False)}.", err=True)  # the warning said why
        return
    for row in rows:
        label = app.label(row["issue"])
        progress = f"{row['phases_done']}/{row['phases_total']}"
        nxt = (f"next: {row['next_phase']}" if row["next_phase"] else
               "all phases done" if row["phases_total"] else "no phases")
        ci = f"CI {row['verification']}" if row["verification"] else "no CI"
        click.echo(f"{label:<10} {row['branch'] or '-':<24} {progress:>5}  {row['title']} | {nxt} | {ci}")


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
