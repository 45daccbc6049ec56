"""``ghstate close``: a finished checkpoint closed, so that ``list`` and the branch's lookup pass it by."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options


@click.command()
@click.argument("issue", type=ISSUE)
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the closed checkpoint as JSON (issue, url, state).")
def close(issue: int, as_json: bool) -> None:
    """Close a finished checkpoint: on GitHub the issue, closed as completed; in the local store, the
    file moves to .ghstate/closed/. It stays readable by number (show, resume, log); list, the
    branch's lookup and the next write of the branch pass it by.

    \b
    Example:
      ghstate close 24
    """
    from ghstate.services import interrupt

    app = make_app()
    stored = app.store.get(issue)
    label = app.label(issue)
    if stored.state == "closed":
        closed, said = stored, f"{label} was closed already"
    else:
        interrupt.note(f"whether {label} was closed could not be told: 'ghstate list' shows the open ones")
        closed, said = app.store.close(stored), f"Closed {label}"
        interrupt.note(f"{label} was closed")
    location = app.where(closed)
    if as_json:
        emit_json({"issue": issue, "url": location, "state": closed.state})
        return
    click.echo(f"{said}: {location}")
