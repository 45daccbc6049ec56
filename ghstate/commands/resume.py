"""``ghstate resume`` and ``ghstate show``: a checkpoint read back for a fresh session or a person."""

from __future__ import annotations

from typing import NamedTuple

import click

from ghstate import drift as drift_mod
from ghstate import gitinfo, render
from ghstate.commands.common import ISSUE, App, make_app, store_options
from ghstate.errors import ConfigError
from ghstate.model import Checkpoint, runtime_entry, with_digests
from ghstate.stores import Stored


def observe(app: App, cp: Checkpoint, tree: gitinfo.WorkTree) -> tuple[drift_mod.Drift, list[str]]:
    """Check reality: drift of the working tree since the checkpoint, and the runtime probes."""
    root = app.settings.root if app.settings.in_git else None
    changes = (gitinfo.changes_since(root, cp.meta.commit) if drift_mod.recorded_in_repository(cp)
               else gitinfo.Changes(False))
    changes = changes._replace(changed_files=app.own_files_removed(changes.changed_files))
    recorded = cp.meta.other.get(drift_mod.FINGERPRINTS_KEY)
    fingerprints = gitinfo.fingerprints(root, tuple(recorded)) if isinstance(recorded, dict) else {}
    drift = drift_mod.compute(cp, tree, changes, fingerprints, in_repository=root is not None)
    statuses = []
    if cp.runtime:
        from ghstate import probes

        statuses = probes.probe_all([runtime_entry(item)[1] for item in cp.runtime])
    return drift, statuses


def resume_text(app: App, stored: Stored, cp: Checkpoint, fmt: str, tree: gitinfo.WorkTree,
                notes: list | None = None, skipped: int = 0) -> str:
    if fmt == "markdown":  # the body as stored, its marker's digests those of what it holds now
        body = render.replace_marker(stored.body, with_digests(cp))
        return body if body.endswith("\n") else body + "\n"
    drift, statuses = observe(app, cp, tree)
    if fmt == "json":
        import json

        from ghstate.state_json import to_json


        data = to_json(with_digests(cp), issue=stored.number, url=stored.location, drift=drift.as_dict(),
                       runtime_status=statuses)
        data["notes"] = [{"author": n.author, "created_at": n.created_at, "body": n.body} for n in notes or []]
        data["notes_left_out"] = skipped
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if fmt == "short":
        return render.short(cp, label=app.label(stored.number), drift=drift, env=app.env) + "\n"
    return render.prompt(cp, source=app.describe_source(stored), drift=drift, runtime_status=statuses,
                         notes=notes, skipped_notes=skipped, env=app.env).rstrip("\n") + "\n"


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--format", "fmt", type=click.Choice(["prompt", "short", "json", "markdown"]), default="prompt",
              show_default=True, help="prompt: for a fresh session; short: one line; json: the state; "
              "markdown: the body as stored.")
@click.option("--post", is_flag=True, help="Also post the prompt as a comment on the issue (GitHub store).")
def resume(issue: int | None, fmt: str, post: bool) -> None:
    """Print the rehydration prompt for a fresh session. Reads only, unless --post.

    ISSUE defaults to the open checkpoint of the current git branch. The prompt names the next phase,
    repeats locked decisions, lists files to re-read, quotes the resume instruction and reports what
    changed on this machine since the checkpoint (commits, files, branch, dev servers).

    \b
    Examples:
      ghstate resume            # the current branch's checkpoint
      ghstate resume 24 --format short
      ghstate resume 24 --post  # leave the prompt on the issue for the next session
    """
    app = make_app()
    reading = read_resume(app, issue, fmt)
    click.echo(reading.text, nl=False)
    if post:
        if app.store.kind != "github":
            raise ConfigError("--post needs the GitHub store; the prompt was printed above")
        prompt = reading.text if fmt == "prompt" else reading.render("prompt")
        url = app.store.post_comment(reading.stored, prompt, allow_secrets=False)  # type: ignore[attr-defined]
        click.echo(f"Posted the prompt: {url}", err=True)


class Reading(NamedTuple):
    """A checkpoint read back for a fresh session, and what it was read with."""

    app: App
    stored: Stored
    checkpoint: Checkpoint
    tree: gitinfo.WorkTree
    notes: list
    skipped: int
    text: str

    def render(self, fmt: str) -> str:
        return resume_text(self.app, self.stored, self.checkpoint, fmt, self.tree, self.notes, self.skipped)


def read_resume(app: App, issue: int | None, fmt: str) -> Reading:
    """ISSUE (or the branch's checkpoint) in one of resume's formats: what ``ghstate resume`` prints and
    the MCP server's ``resume`` tool answers. Reads only."""
    # Only the branch is needed to find the checkpoint: read it from HEAD rather than run git status.
    tree = gitinfo.head_tree(app.settings.root if app.settings.in_git else None)
    stored, cp = app.find(issue, tree=tree)
    notes, skipped = [], 0
    if app.store.kind == "github" and fmt in ("prompt", "json"):
        notes, skipped = app.store.notes_since(stored, cp.meta.updated_at, app.settings.policy)  # type: ignore[attr-defined]
    reading = Reading(app, stored, cp, tree, notes, skipped, "")
    return reading._replace(text=reading.render(fmt))


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
def show(issue: int | None, as_json: bool) -> None:
    """Show a checkpoint as a person reads it in a terminal.

    \b
    Examples:
      ghstate show 24
      ghstate show 24 --json | jq .next_phase
    """
    click.echo(show_text(make_app(), issue, as_json).rstrip("\n"))


def show_text(app: App, issue: int | None, as_json: bool) -> str:
    """What ``ghstate show`` prints (and the MCP server's ``show`` tool answers)."""
    stored, cp = app.find(issue, tree=gitinfo.head_tree(app.settings.root if app.settings.in_git else None))
    if as_json:
        import json

        from ghstate.state_json import to_json

        return json.dumps(to_json(with_digests(cp), issue=stored.number, url=stored.location), ensure_ascii=False,
                          indent=2) + "\n"
    location = stored.location if app.store.kind == "github" else app.display_path(stored.location)
    return render.show(cp, label=app.label(stored.number), location=location, env=app.env).rstrip("\n") + "\n"
