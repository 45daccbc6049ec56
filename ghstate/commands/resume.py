"""``ghstate resume`` and ``ghstate show``: a checkpoint read back for a fresh session or a person."""

from __future__ import annotations

from typing import NamedTuple

import click

from ghstate import gitinfo, present
from ghstate.commands.common import ISSUE, App, make_app, store_options
from ghstate.commands.rehydrate import resume_text
from ghstate.errors import ConfigError
from ghstate.model import Checkpoint, with_digests
from ghstate.stores import Stored


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--format", "fmt", type=click.Choice(["prompt", "short", "json", "markdown"]), default="prompt",
              show_default=True, help="prompt: for a fresh session; short: one line; json: the state; "
              "markdown: the body as stored.")
@click.option("--post", is_flag=True, help="Also post the prompt as a comment on the issue (GitHub store).")
@click.option("--budget", type=click.IntRange(min=0), default=None, metavar="CHARS",
              help="Fit the prompt into CHARS characters by leaving out whole items of the lowest rank "
              "(default: prompt_budget of the config; 0: no limit).")
@click.option("--session", "session_id", metavar="ID", help="Give what session ID has not been given yet "
              "(as the SessionStart hook does); remembered in the local store folder.")
@click.option("--source", type=click.Choice(["startup", "resume", "clear", "compact"]), default="resume",
              show_default=True, help="With --session: how the session starts.")
def resume(issue: int | None, fmt: str, post: bool, budget: int | None, session_id: str | None, source: str
           ) -> None:
    """Print the rehydration prompt for a fresh session. Reads only, unless --post (or --session).

    ISSUE defaults to the open checkpoint of the current git branch. The prompt names the next phase,
    repeats locked decisions, lists files to re-read, quotes the resume instruction and reports what
    changed on this machine since the checkpoint (commits, files, branch, dev servers) and what in
    it contradicts itself or the tree. With --budget it fits by rank and names what it left out.

    \b
    Examples:
      ghstate resume            # the current branch's checkpoint
      ghstate resume 24 --format short
      ghstate resume 24 --budget 8000 --format json
      ghstate resume 24 --post  # leave the prompt on the issue for the next session
    """
    app = make_app()
    reading = read_resume(app, issue, fmt, budget=budget, delivery=(session_id, source) if session_id else None)
    click.echo(reading.text, nl=False)
    if post:
        if not app.store.remote:
            raise ConfigError("--post needs the GitHub store; the prompt was printed above")
        prompt = reading.text if fmt == "prompt" and not session_id else reading.render("prompt")
        url = app.github().post_comment(reading.stored, prompt, allow_secrets=False)
        click.echo(f"Posted the prompt: {url}", err=True)


class Reading(NamedTuple):
    """A checkpoint read back for a fresh session, and what it was read with."""

    app: App
    stored: Stored
    checkpoint: Checkpoint
    tree: gitinfo.WorkTree
    notes: list
    skipped: int
    budget: int | None
    text: str

    def render(self, fmt: str, delivery: tuple[str, str] | None = None) -> str:
        return resume_text(self.app, self.stored, self.checkpoint, fmt, self.tree, self.notes, self.skipped,
                           budget=self.budget, delivery=delivery)


def read_resume(app: App, issue: int | None, fmt: str, *, budget: int | None = None,
                delivery: tuple[str, str] | None = None) -> Reading:
    """ISSUE (or the branch's checkpoint) in one of resume's formats: what ``ghstate resume`` prints and
    the MCP server's ``resume`` tool answers. Reads only (``delivery``, a session and how it starts,
    remembers what that session was given in the local store folder)."""
    # Only the branch is needed to find the checkpoint: read it from HEAD rather than run git status.
    tree = gitinfo.head_tree(app.settings.root if app.settings.in_git else None)
    stored, cp = app.find(issue, tree=tree)
    notes, skipped = [], 0
    if app.store.remote and fmt in ("prompt", "json"):
        notes, skipped = app.github().notes_since(stored, cp.meta.updated_at)
    if budget is None:
        budget = app.settings.policy.prompt_budget
    reading = Reading(app, stored, cp, tree, notes, skipped, budget, "")
    return reading._replace(text=reading.render(fmt, delivery))


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON (with provenance per item).")
@click.option("--provenance", is_flag=True, help="Say which revision (agent, commit, time) set each item.")
def show(issue: int | None, as_json: bool, provenance: bool) -> None:
    """Show a checkpoint as a person reads it in a terminal.

    \b
    Examples:
      ghstate show 24
      ghstate show 24 --provenance
      ghstate show 24 --json | jq .next_phase
    """
    click.echo(show_text(make_app(), issue, as_json, provenance=provenance).rstrip("\n"))


def show_text(app: App, issue: int | None, as_json: bool, *, provenance: bool = False) -> str:
    """What ``ghstate show`` prints (and the MCP server's ``show`` tool answers)."""
    stored, cp = app.find(issue, tree=gitinfo.head_tree(app.settings.root if app.settings.in_git else None))
    if as_json:
        import json

        from ghstate.state_json import to_json

        return json.dumps(to_json(with_digests(cp), issue=stored.number, url=stored.location), ensure_ascii=False,
                          indent=2) + "\n"
    location = app.where(stored)
    return present.show(cp, label=app.label(stored.number), location=location, env=app.env,
                        provenance=provenance).rstrip("\n") + "\n"
