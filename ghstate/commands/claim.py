"""``ghstate claim``, ``ghstate release`` and ``ghstate done``: one agent per child task, exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ghstate.commands.common import ISSUE, App, emit_json, make_app, store_options, usage_errors
from ghstate.core.claims import DEFAULT_LEASE
from ghstate.services.claims import ClaimRequest, DoneRequest, Outcome, ReleaseRequest, run_claim, run_done, run_release

AGENT = click.option("--agent", metavar="NAME", help="The agent that holds the claim (default: GHSTATE_AGENT).")
LEASE = click.option("--lease", default=DEFAULT_LEASE, show_default=True, metavar="DURATION",
                     help="How long the claim holds unless renewed: 90s, 30m, 2h, 1d.")
SESSION = click.option("--session", metavar="ID", help="The agent's session: with the agent, who holds a claim "
                       "(default: GHSTATE_SESSION, else the session id of the agent host it runs in).")


JSON = click.option("--json", "as_json", is_flag=True, help="Print what it did as JSON (number, claimed, claimed_by, "
                    "lease_until; done: parent, released, unblocked; release: released).")


def _run(runner: Callable[[App, Any], Outcome], app: App, request: Any, as_json: bool = False) -> None:
    """The service's answer to ``request``, printed (``as_json``: its JSON alone on stdout, what it did for a
    person on stderr); a request it refuses as one that cannot be meant is a usage error (the service checks
    it before anything is read)."""
    with usage_errors():
        outcome = runner(app, request)
    for warning in outcome.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if as_json:
        emit_json(outcome.json_data())
    for line in outcome.out if not as_json else ():
        click.echo(line)
    for line in outcome.said:
        click.echo(line, err=True)
    if outcome.failure is not None:  # after the rest was done and said (done --claim-next: nothing ready)
        raise outcome.failure


@click.command()
@click.argument("child", type=ISSUE, required=False)
@store_options
@click.option("--next", "parent", type=ISSUE, metavar="ISSUE", help="Claim the first ready child of ISSUE (the next "
              "one if another agent wins it first).")
@AGENT
@LEASE
@SESSION
@JSON
def claim(child: int | None, parent: int | None, agent: str | None, lease: str, session: str | None,
          as_json: bool) -> None:
    """Claim a child task: exactly one of any number of agents racing for it wins.

    Prints the claimed #N. Exit 3 when nothing is ready to claim, 4 when another agent holds CHILD
    (its name and the lease's end are said). Claiming again renews one's own claim; a claim whose
    lease ran out may be taken over.

    \b
    Examples:
      N=$(ghstate claim --next 24 --agent worker-1) && ghstate resume "$N"
      ghstate claim 31 --agent worker-1 --lease 2h
    """
    app = make_app(agent=agent, session=session)
    request = ClaimRequest(child=child, next=parent, agent=app.settings.agent, lease=lease,
                           session=app.settings.session)
    _run(run_claim, app, request, as_json)


@click.command()
@click.argument("child", type=ISSUE)
@store_options
@AGENT
@SESSION
@click.option("--force", is_flag=True, help="Release it whoever holds it.")
@JSON
def release(child: int, agent: str | None, session: str | None, force: bool, as_json: bool) -> None:
    """Free a claimed child task: only its holder (the agent in its session), or anyone with --force.

    \b
    Example:
      ghstate release 31 --agent worker-1
    """
    app = make_app(agent=agent, session=session)
    request = ReleaseRequest(child=child, agent=app.settings.agent, force=force, session=app.settings.session)
    _run(run_release, app, request, as_json)


@click.command()
@click.argument("child", type=ISSUE)
@store_options
@AGENT
@click.option("--claim-next", is_flag=True, help="Then claim a child this one unblocked (else another ready one).")
@LEASE
@SESSION
@click.option("--force", is_flag=True, help="Finish it whoever holds it.")
@JSON
def done(child: int, agent: str | None, claim_next: bool, lease: str, session: str | None, force: bool,
         as_json: bool) -> None:
    """Finish a child task: close it as completed, tick its phase in the parent, release its claim, and
    print the children it unblocked.

    With --claim-next, what it did goes to stderr and the child it then claimed to stdout, #N alone
    (as claim prints it); exit 3 when nothing is ready (the done still made and said). A child another
    agent holds is finished only by it (--agent NAME) or with --force (exit 4 otherwise, as for release).

    \b
    Examples:
      ghstate done 31 --agent worker-1
      ghstate done 31 --agent worker-1 --claim-next
    """
    app = make_app(agent=agent, session=session)
    request = DoneRequest(child=child, agent=app.settings.agent, claim_next=claim_next, lease=lease,
                          session=app.settings.session, force=force)
    _run(run_done, app, request, as_json)
