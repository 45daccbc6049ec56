"""``ghstate doctor``: check the set-up, one line a check (ok, FAILED, or a dash for what does not apply)."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options
from ghstate.errors import GhstateError

# What ghstate does about a failure of what the write log and claims rely on, and how to go on.
_UNPROTECTED = ("writes go to the issue's body alone and concurrent writers are not protected (each command "
                "says so); claims fall back to the child's body: give the token Contents: write")
CONSEQUENCES = {
    "Git objects can be written (Contents: write)": _UNPROTECTED,
    "a ref in refs/ghstate/ can be made from none": _UNPROTECTED,
    "a move from a value the ref no longer holds is refused": (
        "this GitHub's updateRefs does not compare: concurrent writers can overwrite each other; keep one "
        "writer at a time per checkpoint and report the GitHub version to ghstate's developers"),
    "a move from the value the ref holds is made (compare-and-swap)": _UNPROTECTED,
    "a commit's message is read back whole": (
        "a large checkpoint cannot be kept on its chain here: keep checkpoints small, and report the GitHub "
        "version to ghstate's developers"),
    "a write's answer holds its version and the one before": (
        "a person's save that lands while a write is under way may be written over without being merged "
        "(GitHub keeps it in the issue's edit history)"),
    "two quick saves by one token are two versions": (
        "a person's save made within a moment of an agent's write, under the same account, can be kept as one "
        "version with it and lost: give agents a token of their own"),
}


@click.command()
@store_options
@click.option("--github", "probe_github", is_flag=True,
              help="Probe, on a throwaway issue and ref of the repository, what the write log and claims rely on.")
@click.option("--issue", type=ISSUE, help="With --github: read this issue's newest versions as a write reads them.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(probe_github: bool, issue: int | None, as_json: bool) -> None:
    """Check the set-up: git, configuration, token, store folder, agent hosts, MCP SDK.

    With --github, also what GitHub must do for the write log (a chain of commits on a ref per
    checkpoint) and claims, probed on the configured repository: one throwaway issue (label
    ghstate-doctor, closed at the end) and one ref under refs/ghstate/doctor/ (deleted at the end).
    Exits 1 when a check fails.

    \b
    Examples:
      ghstate doctor
      ghstate doctor --github -R owner/name
    """
    from ghstate.services.doctor import local_rows

    if issue is not None and not probe_github:
        raise click.UsageError("--issue reads an issue's edit history on GitHub: give it with --github")
    options = click.get_current_context().meta.get("store_options", {})
    rows = local_rows(options.get("repo"), options.get("store"))
    if probe_github:
        rows.extend(_github_rows(issue))
    if as_json:
        emit_json([{"check": r.name, "ok": r.ok, "detail": r.detail} for r in rows])
    else:
        width = max(len(r.name) for r in rows)
        for r in rows:
            mark = "ok" if r.ok else "FAILED" if r.ok is False else "-"
            click.echo(f"{mark:<6}  {r.name:<{width}}  {r.detail}")
            if r.ok is False and r.name in CONSEQUENCES:
                click.echo(f"{'':<6}  {'':<{width}}  what ghstate does: {CONSEQUENCES[r.name]}")
    failed = [r.name for r in rows if r.ok is False]
    if failed:
        raise GhstateError(f"{len(failed)} check{'s' if len(failed) != 1 else ''} failed: {', '.join(failed)}")


def _github_rows(issue: int | None) -> list:
    from ghstate.github.probes import github_probes, issue_probe
    from ghstate.services.doctor import Row

    try:
        app = make_app(store="github")
        api = app.github().api
        probes = issue_probe(api, issue) if issue is not None else github_probes(api)
    except GhstateError as exc:  # no token, no repository, GitHub unreachable: a failed row like the others
        return [Row("GitHub", False, " ".join(str(exc).split()))]
    return [Row(p.name, p.ok, p.detail) for p in probes]
