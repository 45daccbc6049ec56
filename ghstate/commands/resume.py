"""``ghstate resume`` and ``ghstate show``: a checkpoint read back for a fresh session or a person."""

from __future__ import annotations

import click

from ghstate.commands.common import ISSUE, emit_json_text, make_app, store_options
from ghstate.errors import ConfigError
from ghstate.services.app import READ_BUDGET
from ghstate.services.resume import FORMATS, SOURCES, ResumeRequest, rehydrate, show_text


@click.command()
@click.argument("issue", type=ISSUE, required=False)
@store_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="prompt",
              show_default=True, help="prompt: for a fresh session; short: one line; json: the state; "
              "markdown: the body as stored.")
@click.option("--json", "as_json", is_flag=True, help="The state as JSON: the same as --format json.")
@click.option("--post", is_flag=True, help="Also post the prompt as a comment on the issue (GitHub store).")
@click.option("--budget", type=click.IntRange(min=0), default=None, metavar="CHARS",
              help="Fit the prompt into CHARS characters by leaving out whole items of the lowest rank "
              "(default: prompt_budget of the config; 0: no limit).")
@click.option("--session", "session_id", metavar="ID", help="Give what session ID has not been given yet "
              "(as the SessionStart hook does); remembered in the worktree's .ghstate/.")
@click.option("--source", type=click.Choice(SOURCES), default="resume",
              show_default=True, help="With --session: how the session starts.")
def resume(issue: int | None, fmt: str, as_json: bool, post: bool, budget: int | None, session_id: str | None,
           source: str) -> None:
    """Print the rehydration prompt for a fresh session. Reads only, unless --post (or --session); writes this
    machine kept while GitHub was out of reach are sent first.

    ISSUE defaults to the open checkpoint of the current git branch (or, when it has none open, its
    closed one: said on stderr, and the prompt marked as closed). The prompt names the next phase,
    repeats locked decisions, lists files to re-read, quotes the resume instruction and reports what
    changed on this machine since the checkpoint (commits, files, branch, dev servers) and what in
    it contradicts itself or the tree. With --budget it fits by rank and names what it left out. When
    GitHub does not answer within 15 s, it gives the checkpoint as this machine last saw it, with this
    machine's kept writes on top, and says so (exit 0).

    \b
    Examples:
      ghstate resume            # the current branch's checkpoint
      ghstate resume 24 --format short
      ghstate resume 24 --budget 8000 --format json
      ghstate resume 24 --post  # leave the prompt on the issue for the next session
    """
    if as_json:
        if fmt not in ("prompt", "json"):
            raise click.UsageError(f"--json and --jq print the state (--format json), not --format {fmt}: give one "
                                   "of them")
        fmt = "json"
    if budget is not None and fmt in ("short", "markdown"):  # one line, and the body as stored: nothing to fit
        raise click.UsageError(f"--budget fits the prompt (and --format json's 'fit'), not --format {fmt}: give one "
                               "of them")
    app = make_app(github=None if post else dict(READ_BUDGET))  # a post waits out GitHub's limits as writes do
    app.reads_last_seen = True  # without GitHub: this machine's copy, said
    reading = rehydrate(app, ResumeRequest(issue=issue, fmt=fmt, budget=budget, session=session_id or "",
                                           source=source if session_id else None))
    text = reading.text()
    if reading.closed:  # a branch whose checkpoint closed: said, and its closed state shown (exit 0)
        click.echo(f"Note: {reading.label} {reading.closed}; this is its closed state, not an open task.", err=True)
    if fmt == "json":
        emit_json_text(text)  # --json FIELD,… and --jq take part of it
    else:
        click.echo(text, nl=False)
    if post:
        if not app.store.remote:
            raise ConfigError("--post needs the GitHub store; the prompt was printed above")
        from ghstate.github.store import PROMPT_MARKER  # a prompt ghstate posted is no person's note

        prompt = text if fmt == "prompt" and not session_id else reading.text("prompt")
        url = app.github().post_comment(reading.stored, f"{PROMPT_MARKER}\n{prompt}", allow_secrets=False)
        click.echo(f"Posted the prompt: {url}", err=True)


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
    app = make_app(github=dict(READ_BUDGET))
    app.reads_last_seen = True  # without GitHub: this machine's copy, said
    text = show_text(app, issue, as_json, provenance=provenance)
    if as_json:
        emit_json_text(text)
    else:
        click.echo(text.rstrip("\n"))
