"""``ghstate init``: set a repository up for ghstate and its agent hosts. Safe to run again: it only adds
what is missing, and what it cannot read stops it before anything is written. What it writes is decided
in ``ghstate.agents.setup``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ghstate.agents import hosts
from ghstate.agents.setup import (
    CODEX_TRUST,
    PROGRAM,
    github_recorded,
    keep_out_of_git,
    not_on_path_note,
    on_path,
    plan,
    sdk_available,
)
from ghstate.commands.common import make_app, store_options
from ghstate.commands.init_remove import echo_report, remove_setup
from ghstate.local.store import atomic_write


def choose_hosts(given: tuple[str, ...], root: Path) -> list[str]:
    """--agent values (repeated or comma-separated, 'all'), else the hosts the repository uses, else claude."""
    chosen: list[str] = []
    for value in given:
        for name in filter(None, (v.strip().lower() for v in value.split(","))):
            if name == "all":
                chosen.extend(hosts.HOSTS)
            elif name in hosts.HOSTS:
                chosen.append(name)
            else:
                raise click.BadParameter(f"{name!r} is not one of {', '.join(hosts.HOSTS)}, all", param_hint="--agent")
    chosen = chosen or hosts.detect(root) or ["claude"]
    return [h for h in hosts.HOSTS if h in chosen]


@click.command()
@store_options
@click.option("--agent", "agents", multiple=True, metavar="HOST",
              help="claude, codex, gemini, cursor or all; repeat it or give a comma list (default: the hosts the "
              "repository already uses, else claude).")
@click.option("--force", is_flag=True, help="Replace the issue form, command and rule files even if they were edited "
              "(with --remove: delete them even if they were edited).")
@click.option("--remove", is_flag=True, help="Undo what init wrote, for every host: ghstate's entries, files and "
              "AGENTS.md block; your own entries and files are kept.")
@click.option("--github", "on_github", is_flag=True,
              help="With --remove: also delete the ghstate labels and every ref under refs/ghstate/ on GitHub.")
@click.option("--yes", is_flag=True, help="With --remove --github: do not ask before deleting on GitHub.")
def init(agents: tuple[str, ...], force: bool, remove: bool, on_github: bool, yes: bool) -> None:
    """Set a repository up: labels, issue form, and each agent host's MCP server, hooks and commands.

    Creates the ghstate labels (GitHub store; it then records github = true in .ghstate/config.toml, so
    that a command without a token fails rather than use the local store) and
    .github/ISSUE_TEMPLATE/ghstate-checkpoint.yml. For
    each host it registers the 'ghstate mcp' server and the session-start hook in the host's own
    files, merged into what is there (your entries are kept), and writes its command or rule files;
    for Codex, Gemini CLI and Cursor it also keeps a marked ghstate block in AGENTS.md. Running it
    again changes nothing.

    --remove undoes it: ghstate's entries come out of the files init merged into (a file that holds
    nothing else is deleted), its own files and the AGENTS.md block go, and the local store's
    checkpoints are kept. With --github it also deletes, after asking, the labels and the refs under
    refs/ghstate/ (the checkpoints' write logs and claims); the issues stay.

    \b
    Examples:
      ghstate init                      # the hosts this repository uses (else Claude Code)
      ghstate init --agent codex
      ghstate init --agent all
      ghstate init --remove             # take ghstate out of this repository's files
      ghstate init --remove --github    # ... and its labels and refs on GitHub
    """
    if not remove and (on_github or yes):
        raise click.UsageError("--github and --yes go with --remove (ghstate init --remove --github)")
    if remove:
        if agents:
            raise click.UsageError("--remove takes out every host's set-up: give no --agent")
        remove_setup(force, on_github, yes)
    else:
        set_up(agents, force)


def set_up(agents: tuple[str, ...], force: bool) -> None:
    """What ``init`` does: the files worked out before any is written, the labels, the report."""
    app = make_app()
    root = app.settings.root
    policy = app.settings.policy
    chosen = choose_hosts(agents, root)
    program = PROGRAM  # committed files: the bare command, never one machine's path to it
    servers = sdk_available(program)
    changes = plan(root, chosen, program, force, servers)  # a file init cannot read stops it here, before any write
    changes.append(keep_out_of_git(app.settings.state_dir, root))
    if app.store.remote:  # its checkpoints are on GitHub: no command answers from the local store for want of a token
        changes.append(github_recorded(app.settings))
    report: list[tuple[str, str]] = []
    if app.store.remote:
        labels = policy.labels()
        created = set(app.github().ensure_labels(labels))
        for name, _, _ in labels:
            report.append((f"label {name}", "created" if name in created else "exists"))
    else:
        report.append(("labels", "skipped: the local store has none (run with a GitHub token to create them)"))
    from ghstate.services import interrupt

    interrupt.note("init stopped part-way; run 'ghstate init' again: it adds only what is missing")
    for change in changes:
        if change.text == "":  # a file an earlier init wrote under a name ghstate no longer uses
            (root / change.target).unlink(missing_ok=True)
        elif change.text is not None:
            atomic_write(root / change.target, change.text)
        report.append((change.target, change.outcome))
    if app.store.remote:
        report.extend(_public(app))
    if not on_path():
        report.append(("note", not_on_path_note()))
    if not servers:
        report.append(("note", "no MCP server was registered: the MCP servers need the MCP Python SDK, which "
                       f"{program} cannot import. Install it with pip install 'ghstate[mcp]' (where ghstate "
                       "is installed), then run 'ghstate init' again to add them; the hooks work meanwhile"))
    if any(c.target == ".codex/hooks.json" and c.text is not None for c in changes):
        report.append(("note", CODEX_TRUST.format(root=root)))
    echo_report(report)


def _public(app: Any) -> list[tuple[str, str]]:
    """A note when the repository is public: its checkpoints are public issues (one request)."""
    from ghstate.errors import GhstateError
    from ghstate.github.repository import PUBLIC_NOTE, visibility

    try:
        seen = visibility(app.github().api)
    except GhstateError:
        return []
    return [("note", PUBLIC_NOTE.format(repo=app.settings.repo))] if seen == "PUBLIC" else []
