"""``ghstate split`` and ``ghstate ready``: a checkpoint's phases as child tasks, and the ones to take."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options, usage_errors
from ghstate.services.tasks import ReadyRequest, SplitRequest, run_ready, run_split


@click.command()
@click.argument("issue", type=ISSUE)
@store_options
@click.option("--phase", multiple=True, metavar="PHASE", help="Split this phase (name, label or number; repeatable; "
              "default: every phase not done).")
@click.option("--in-order", is_flag=True, help="Each child waits for the one before, instead of what its phase line "
              "says with (after PHASE, …).")
@click.option("--allow-secrets", is_flag=True, help="Make the children even if the text they carry looks like it "
              "holds a credential (a decision the parent's write was allowed).")
@click.option("--json", "as_json", is_flag=True, help="Print what it did as JSON: number (the parent), made "
              "(number, title), kept, links (number, waits_for).")
def split(issue: int, phase: tuple[str, ...], in_order: bool, allow_secrets: bool, as_json: bool) -> None:
    """Turn the checkpoint's open phases into child checkpoints (GitHub sub-issues).

    Each child's goal is its phase; it carries the parent's locked decisions, and the parent's phase
    line links it (#31). A phase line saying (after Phase 2, Phase 4) makes its child wait for theirs
    (GitHub's blocked-by). Running it again makes only what is missing. Nothing is written when a
    phase named is not there, the phases wait for each other in a circle, or GitHub's limits (100
    children, 50 links an issue) would be passed.

    \b
    Examples:
      ghstate split 24
      ghstate split 24 --phase "Phase 2" --phase "Phase 3" --in-order
    """
    request = SplitRequest(issue=issue, phase=phase, in_order=in_order, allow_secrets=allow_secrets)
    with usage_errors():
        request.check()
    app = make_app()
    outcome = run_split(app, request)
    if as_json:
        emit_json(outcome.json_data())
        return
    click.echo("\n".join(outcome.lines(app)))


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N children (of the newest parents first); says on stderr when more are left.")
@click.option("--json", "as_json", is_flag=True, help="Every child as JSON: number, title, state (ready, claimed, "
              "blocked, done), blocked_by, claimed_by, lease_until, parent, moved, moved_to.")
def ready(issue: int | None, limit: int | None, as_json: bool) -> None:
    """The child tasks that are open, wait for nothing open, and nobody holds, in the parent's order.

    ISSUE is the parent (default: every open checkpoint that has children). On GitHub one request for
    ISSUE. One line per ready child: its number, title and parent; when none is ready, why (on stderr).
    A child a person moved to another parent is named, with where it went (on stderr). A child whose
    body does not show the claim its ref holds is shown it again.

    \b
    Examples:
      ghstate ready 24
      ghstate ready --limit 5
      ghstate ready 24 --json | jq '.[] | select(.state == "claimed")'
    """
    request = ReadyRequest(issue=issue, json=as_json, limit=limit)
    app = make_app(send_kept=True)
    found = run_ready(app, request)
    if as_json:
        rows = found.json_rows()
        emit_json(rows)
        every = sum(len(f.children) for _, _, f in found.families)
        for line in [*found.repaired, found.more(len(rows), every)]:
            if line:
                click.echo(line, err=True)
        return
    out, said = found.lines(app)
    for line in out:
        click.echo(line)
    for line in said:
        click.echo(line[0].upper() + line[1:] + ("" if line.endswith(".") else "."), err=True)
