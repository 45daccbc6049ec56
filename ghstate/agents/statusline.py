"""``ghstate statusline``: one line for Claude Code's status line, shown under every turn: the branch's
checkpoint (#N and revision), the commits made since it was written, and how full the context is, with
"checkpoint due" once the fill is past ``checkpoint_at`` and something changed since the last write.

Claude Code runs a status line command after each update, with the session's JSON on stdin (its
``context_window.used_percentage`` among it), so this reads local files only and starts no more than Python
does: the replica or the local store (the checkpoint's marker, never the markdown parser), the seen-file (what
the session was already asked), git (HEAD from its files; one process only when HEAD moved), and the
transcript's tail when Claude Code gave no fill. Never GitHub, never PyGithub; any failure is a shorter line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

WIDTH = 79  # under 80 characters, whatever the names


def _fill(event: dict[str, Any], settings: Any) -> float | None:
    """The context's fill in percent, as Claude Code gives it, else as its transcript says."""
    window = event.get("context_window")
    used = window.get("used_percentage") if isinstance(window, dict) else None
    if isinstance(used, (int, float)) and not isinstance(used, bool) and 0 <= used <= 100:
        return float(used)
    transcript = event.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return None
    from ghstate.agents.pressure import reader_for, tail
    from ghstate.core import pressure

    found = pressure.fill_of(tail(Path(transcript), reader_for("claude", settings.root)), 0)
    return found.percent if found is not None else None


def status_line(event: dict[str, Any]) -> str:
    """The line (see the module's text)."""
    from ghstate import config
    from ghstate.agents.pressure import branch_checkpoint
    from ghstate.core.markup import printable
    from ghstate.git import gitinfo

    settings = config.without_token()
    root = settings.root if settings.in_git else None
    branch = gitinfo.head_tree(root).branch
    fill = _fill(event, settings)
    context = f"context {fill:.0f}%" if fill is not None else ""
    found = branch_checkpoint(settings, branch)
    if found is None:
        parts = ["ghstate: no checkpoint on this branch" if branch else "ghstate: no branch", context]
        return _line(parts, printable)
    commits = gitinfo.commits_since(root, found.meta.commit)
    since = "" if commits is None else f"{commits} commit{'s' if commits != 1 else ''} since"
    threshold = settings.policy.checkpoint_at
    due = fill is not None and 0 < threshold <= fill and bool(commits) and not _asked(settings, event)
    parts = [f"ghstate {found.label} rev {found.meta.revision}", since, context + (": checkpoint due" if due else "")]
    return _line(parts, printable)


def _asked(settings: Any, event: dict[str, Any]) -> bool:
    """Whether this session was already asked for this crossing (the seen-file), so that the line stops saying
    it is due once the agent has been told."""
    from ghstate.core.pressure import Record
    from ghstate.local import seen

    session = event.get("session_id")
    if not isinstance(session, str) or not session:
        return False
    return Record.from_data(seen.peek(settings.store_dir).pressure(session)).answered


def _line(parts: list[str], printable: Any) -> str:
    line = " · ".join(p for p in parts if p)
    line = " ".join(printable(line).split())
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"
