"""``ghstate hook session-start|pre-compact|checkpoint-due``: hook entry points for Claude Code, Codex CLI and
Gemini CLI.

The three hosts send the same input fields (``source``, ``session_id``, ``transcript_path``, ``cwd``,
``trigger``, ``stop_hook_active``) and read the same answers, ``hookSpecificOutput.additionalContext`` at a
session's start (Codex checks its shape strictly: ``hookEventName`` and nothing else unknown) and
``{"decision": "block", "reason": …}`` after a turn (``checkpoint-due``: the reason is the agent's next
prompt). What differs is told by ``--host``, which
``ghstate init`` writes into each host's hook command: the sources a host sends (Gemini CLI has no
``compact``), the agent recorded, and the pointer given at startup (MCP hosts call the resume tool).

Hooks run inside someone else's session, so they never fail it: whatever stdin holds, they exit 0,
print nothing when there is nothing to say, report problems on stderr only, and finish within a few
seconds even offline: GitHub gets at most 4 s, and when it does not answer, the session gets the checkpoint
as this machine last saw it, with its kept writes on top, said as such (``ghstate.services.outage``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

MAX_INPUT = 1 << 20
HOST_AGENTS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}
HOST = click.option("--host", type=click.Choice(list(HOST_AGENTS)), default="claude", show_default=True,
                    help="The agent host that runs the hook ('ghstate init' writes it).")
GITHUB_BUDGET = 4.0  # seconds for all GitHub requests of one hook: no attempt starts that could end past it
GITHUB_TIMEOUT = 3  # seconds one request may take
DEADLINE = 8  # seconds for the whole hook, whatever a server or a disk does; then it gives up quietly
SEND_KEPT = 1.5  # seconds into the hook after which no kept write starts to go out (each costs ~2 s of pacing)


def _read_event() -> dict[str, Any] | None:
    raw = sys.stdin.buffer.read(MAX_INPUT + 1) if not sys.stdin.isatty() else b""
    if len(raw) > MAX_INPUT:
        raise ValueError("the hook input is larger than 1 MiB")
    if not raw.strip():
        raise ValueError("no hook input on stdin")
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("the hook input is not a JSON object")
    for key in ("cwd", "source", "session_id", "transcript_path", "trigger"):
        if key in data and data[key] is None:  # Codex sends "transcript_path": null when there is none
            del data[key]
        elif key in data and not isinstance(data[key], str):
            click.echo(f"ghstate hook: ignored {key!r} in the hook input (not a string)", err=True)
            del data[key]
    return data


def _app(event: dict[str, Any]) -> Any:
    from ghstate.commands.common import make_app

    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
        os.chdir(cwd)
    app = make_app(github={"timeout": GITHUB_TIMEOUT, "total": GITHUB_BUDGET, "deadline": True})
    app.template_fallback = True  # a repository's template that cannot be used: the shipped one, said on stderr
    return app


class _OutOfTime(Exception):
    def __str__(self) -> str:
        return f"gave up after {DEADLINE} s (stdin, GitHub or a runtime check did not answer in time)"


def _alarm(signum: int, frame: Any) -> None:
    raise _OutOfTime()


def _quietly(fn: Any) -> None:
    """Run a hook body; any failure becomes one line on stderr, and the exit status stays 0. A hard
    deadline (SIGALRM, where there is one) ends it even when a read hangs in the middle of a call."""
    import signal

    timed = hasattr(signal, "SIGALRM")
    if timed:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(DEADLINE)
    try:
        try:
            fn()
        finally:
            if timed:
                signal.alarm(0)
    except Exception as exc:  # noqa: BLE001 - a hook must never break the session it serves
        from ghstate.config import debugging

        if debugging():
            raise
        message = " ".join(str(exc).split()) or type(exc).__name__
        click.echo(f"ghstate hook: {message}", err=True)
    sys.exit(0)


@click.group()
def hook() -> None:
    """Hook entry points for Claude Code, Codex CLI and Gemini CLI (read the hook's JSON on stdin;
    always exit 0).

    \b
    Example (.claude/settings.json, as 'ghstate init' writes it):
      {"hooks": {"SessionStart": [{"matcher": "startup|resume|clear|compact",
                 "hooks": [{"type": "command", "command": "ghstate hook session-start"}]}]}}
    """


@hook.command("session-start")
@HOST
def session_start(host: str) -> None:
    """Give a fresh session the branch's checkpoint as context.

    After /clear, a compaction or a resumed session: the full rehydration prompt. At startup: one line
    naming the checkpoint and how to load it, since a new session may be about something else. On a
    branch whose checkpoint closed (its pull request merged): one line saying so, never the open task.

    \b
    Examples:
      echo '{"hook_event_name":"SessionStart","source":"clear","cwd":"."}' | ghstate hook session-start
      echo '{"hook_event_name":"SessionStart","source":"compact","cwd":"."}' | ghstate hook session-start --host codex
    """

    def run() -> None:
        import time

        started = time.monotonic()
        event = _read_event()
        assert event is not None
        source = event.get("source") or "startup"
        app = _app(event)
        from ghstate.git import gitinfo

        tree = gitinfo.head_tree(app.settings.root if app.settings.in_git else None)
        # kept writes go out first while the hook has time; GitHub's silence falls back to this machine's copy
        app.reads_last_seen = True
        found = app.read(None, tree=tree, closed=True, until=started + SEND_KEPT)
        if found is None:  # a branch renamed since its checkpoint was made: the one of its former name, said
            hint = app.renamed_from(tree.branch) if tree.branch else ""
            if not hint:
                return  # nothing to say
            from ghstate.core.present import fenced

            context = ("This branch has no ghstate checkpoint under its name; what ghstate found of a former name "
                       "(branch names from git and from a checkpoint) follows. "
                       + fenced(hint + ".", "git and the checkpoints") + "Read that checkpoint before going on if "
                       "this session continues that work.")
        else:
            context = _context_of(app, found, tree, event, source, host)
            if not context:
                return  # this session start was already answered (fired twice: the host's, or plugin and init)
        click.echo(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                      "additionalContext": context}}))

    _quietly(run)


def _context_of(app: Any, found: Any, tree: Any, event: dict[str, Any], source: str, host: str) -> str:
    """What a session start says of the branch's checkpoint ("" when this session was answered already)."""
    from ghstate.services.resume import hook_context

    stored, cp = found
    if stored.state == "closed":  # the branch's work merged or was dropped: a line, not an open task
        from ghstate.services.lifecycle import why_closed

        why = why_closed(app, stored, cp)
        return (f"This branch's ghstate checkpoint {app.label(stored.number)} was {why}: its task is not open. Do "
                f"not continue it unless the user asks; `ghstate resume {stored.number}` shows its record.")
    return hook_context(app, stored, cp, tree, {**event, "source": source},  # once per session, revision
                        host=HOST_AGENTS[host])


@hook.command("pre-compact")
@HOST
def pre_compact(host: str) -> None:
    """Record the session that is about to be compacted on the branch's checkpoint.

    Adds an execution (agent, session id, transcript file) as a new revision without a history
    comment; the checkpoint's sections are left as they are. Silent when the branch has no checkpoint.
    Claude Code and Codex call it on PreCompact, Gemini CLI on PreCompress.

    \b
    Example:
      echo '{"hook_event_name":"PreCompact","session_id":"s-1","trigger":"auto"}' | ghstate hook pre-compact
    """

    def run() -> None:
        import time

        started = time.monotonic()
        event = _read_event()
        assert event is not None
        app = _app(event)
        from ghstate.core.intent import Intent, WriteSpec
        from ghstate.core.marker import Execution
        from ghstate.core.markup import visible

        # machine text: no control or invisible character of it reaches the marker or a prompt raw
        session = visible(event.get("session_id")) if isinstance(event.get("session_id"), str) else ""
        transcript = visible(event.get("transcript_path")) if isinstance(event.get("transcript_path"), str) else ""
        if app.store.remote:
            transcript = Path(transcript).name  # a local path (a home folder, a user name) stays local
        trigger = event.get("trigger") if event.get("trigger") in ("manual", "auto") else ""
        execution = Execution(agent=app.settings.agent or HOST_AGENTS[host], role=app.settings.role or "editor",
                              session=app.settings.session or session or "",
                              event=f"pre-compact:{trigger}" if trigger else "pre-compact",
                              transcript=transcript or "")
        tree = app.tree()
        spec = WriteSpec(Intent(), tree=tree, execution=execution, event="pre-compact", create=False,
                         record_tree=False)
        from ghstate.errors import NotFound
        from ghstate.local import seen

        seen.forget(app.settings.store_dir, event.get("session_id") or "")  # its context is about to go
        writer = app.writer(keep_pending=False)  # a record of a compaction is not worth keeping for GitHub …
        if app.store.remote:  # … but it never lands over a kept write: those go first, within the hook's time
            from ghstate.services import kept

            writer.send_kept = lambda: kept.send_first(app, until=started + SEND_KEPT).outcome
        try:
            writer.write(spec)
        except NotFound:
            return  # no checkpoint for this branch: nothing to record

    _quietly(run)


@hook.command("checkpoint-due")
@HOST
def checkpoint_due(host: str) -> None:
    """Ask the agent to write the checkpoint when the context fills (after each turn).

    Reads how full the session's context is from the host's own transcript; when it reaches checkpoint_at
    (config; default 60% of the window, 0: never) and something changed since the checkpoint was last
    written, the agent's stop is blocked once with what to write and how. Once per crossing, never in a
    loop (a turn a Stop hook continued is never blocked again); local files only. Claude Code and Codex
    call it on Stop, Gemini CLI on AfterAgent.

    \b
    Example (.claude/settings.json, as 'ghstate init' writes it):
      {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ghstate hook checkpoint-due"}]}]}}
    """

    def run() -> None:
        event = _read_event()
        assert event is not None
        cwd = event.get("cwd")
        if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
            os.chdir(cwd)
        from ghstate.agents.pressure import checkpoint_due as due

        reason = due(event, host)
        if reason:
            click.echo(json.dumps({"decision": "block", "reason": reason}))

    _quietly(run)
