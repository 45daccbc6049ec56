"""``ghstate doctor``: check the set-up, one line a check (ok, FAILED, or a dash for what does not apply)."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json, make_app, store_options
from ghstate.errors import GhstateError

# What ghstate does about a failure of what the write log relies on, and how to go on.
CONSEQUENCES = {
    "every save is a version, two quick saves by one token too": (
        "GitHub keeps quick saves by one editor as one version here: a write can vanish from the history. "
        "ghstate re-applies what this machine reported (.ghstate/reported/); agents on other machines that "
        "share the token can still lose writes: give each agent its own token (each is its own editor)"),
    "a write's answer holds the version it made": (
        "every write costs one more read to confirm it; nothing is lost"),
    "versions are listed newest first, the creation among them": (
        "ghstate cannot place versions in this GitHub's history: do not trust it with concurrent writers; "
        "report the GitHub version to ghstate's developers"),
    "a version's text is the whole body, not a difference": (
        "ghstate cannot read writes back from this history: keep one writer at a time per checkpoint"),
}


@click.command()
@store_options
@click.option("--github", "probe_github", is_flag=True,
              help="Probe, on a throwaway issue of the repository, what the write log and claims rely on.")
@click.option("--issue", type=ISSUE, help="With --github: read this issue's edit history as the log reads it.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(probe_github: bool, issue: int | None, as_json: bool) -> None:
    """Check the set-up: git, configuration, token, store folder, agent hosts, MCP SDK.

    With --github, also what GitHub must do for the write log and claims, probed on the configured
    repository: one throwaway issue (label ghstate-doctor, closed at the end) and one ref under
    refs/ghstate/doctor/ (deleted at the end). Exits 1 when a check fails.

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
    from ghstate.github.probes import history_probes, issue_probe
    from ghstate.github.tasks import claim_probes
    from ghstate.services.doctor import Row

    try:
        app = make_app(store="github")
        api = app.github().api
        probes = issue_probe(api, issue) if issue is not None else [*history_probes(api), *claim_probes(api)]
    except GhstateError as exc:  # no token, no repository, GitHub unreachable: a failed row like the others
        return [Row("GitHub", False, " ".join(str(exc).split()))]
    return [Row(p.name, p.ok, p.detail) for p in probes]
