"""``ghstate init --remove``: take ghstate out of a repository again. The files are worked out in
``ghstate.agents.removal`` (what init wrote, for every host, and what taking it out leaves); on GitHub, with
``--github``, the labels and the refs under ``refs/ghstate/`` go too (``ghstate.github.repository``), after
the person says yes. The checkpoint issues and the local store's checkpoints stay: they are the work."""

from __future__ import annotations

import click

from ghstate.agents import removal
from ghstate.commands.common import make_app
from ghstate.config import DOCTOR_LABEL
from ghstate.errors import GhstateError

ON_GITHUB = ("the labels {labels} and the refs under refs/ghstate/ (the checkpoints' write logs and claims) of {repo}")


def remove_setup(force: bool, on_github: bool, yes: bool) -> None:
    app = make_app(store="github" if on_github else "local")
    settings = app.settings
    policy = settings.policy
    labels = [name for name, _, _ in policy.labels()] + [DOCTOR_LABEL]
    changes = removal.plan(settings.root, settings.state_dir, force)  # a file it cannot read stops it here
    report: list[tuple[str, str]] = []
    if on_github:
        what = ON_GITHUB.format(labels=", ".join(labels), repo=settings.repo)
        if not yes and not click.confirm(f"Delete {what}? The issues stay", err=True, default=False):
            raise GhstateError("not confirmed: nothing was changed (answer y, or pass --yes)")
        from ghstate.github.repository import PREFIX, delete_labels, delete_refs

        api = app.github().api
        for name, deleted in delete_labels(api, labels):
            report.append((f"label {name}", "deleted" if deleted else "not there"))
        count = delete_refs(api)
        report.append((f"{PREFIX} refs", f"{count} deleted" if count else "none listed"))
    from ghstate.services import interrupt

    interrupt.note("init --remove stopped part-way; run it again: it removes only what is left")
    removal.apply(settings.root, changes)
    report.extend((c.target, c.outcome) for c in changes)
    if not changes:
        report.append(("files", "nothing of ghstate's found"))
    if not on_github:
        report.append(("on GitHub", "not touched: 'ghstate init --remove --github' deletes " + ON_GITHUB.format(
            labels=", ".join(labels), repo="the repository") + "; the issues stay"))
    echo_report(report)


def echo_report(report: list[tuple[str, str]]) -> None:
    """One line a file or label: its name, then what was done."""
    width = max(len(name) for name, _ in report)
    for name, outcome in report:
        click.echo(f"{name:<{width}}  {outcome}")
