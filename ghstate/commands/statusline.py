"""``ghstate statusline``: one line for Claude Code's status line (local files only)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

MAX_INPUT = 1 << 20


@click.command()
def statusline() -> None:
    """One line for Claude Code's status line: the branch's checkpoint, what changed since, the context's fill.

    Reads the session's JSON that Claude Code gives on stdin (its context_window among it), this machine's
    copy of the checkpoint, the seen-file and git: never GitHub. Always exits 0; what it cannot read it
    leaves out of the line.

    \b
    Example (.claude/settings.local.json, as 'ghstate init' writes it where no status line is set):
      {"statusLine": {"type": "command", "command": "ghstate statusline"}}
    """
    event: dict = {}
    try:
        raw = sys.stdin.buffer.read(MAX_INPUT) if not sys.stdin.isatty() else b""
        loaded = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        event = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        event = {}
    workspace = event.get("workspace") if isinstance(event.get("workspace"), dict) else {}
    cwd = workspace.get("current_dir") or event.get("cwd")
    if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
        os.chdir(cwd)
    from ghstate.agents.statusline import status_line

    try:
        line = status_line(event)
    except Exception as exc:  # noqa: BLE001 - a status line never fails the session it shows
        from ghstate.config import debugging

        if debugging():
            raise
        line = "ghstate: " + " ".join(str(exc).split())[:60]
    click.echo(line)
