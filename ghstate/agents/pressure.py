"""What ``ghstate hook checkpoint-due`` does after each of the agent's turns (Claude Code's and Codex's Stop, Gemini
CLI's AfterAgent): read how full the session's context is from the host's own file, and once per crossing of
``checkpoint_at`` ask the agent to write the branch's checkpoint, saying how full, what changed since the last
write and exactly what to do (``core.pressure``). ``ghstate statusline`` reads the same checkpoint the same way.

Local files only, never the network: the session's transcript (its tail), the hosts' settings, this machine's
copy of the branch's checkpoint (the replica of what it last saw on GitHub, or the local store), git, and the
seen-file where what each session was told is kept. The markdown parser is never loaded: a checkpoint is read by
its marker alone. The common turn (the fill under the threshold, nothing recorded to change) reads the transcript's
tail, the config and the seen-file (``seen.peek``), and writes nothing.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.core import pressure

TAIL = 256 * 1024  # bytes of a transcript read first, from its end
MOST = 4 * 1024 * 1024  # bytes read in all while no answer with its usage is found (a long tool output, say)


def tail(path: Path, reader: Any) -> list[pressure.Usage]:
    """The usage of the last answers a host recorded in ``path``, read from the end: a larger piece while none
    is found, up to MOST. A line cut by where the piece begins is left out."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            want = TAIL
            while True:
                start = max(0, size - want)
                fh.seek(start)
                data = fh.read(size - start)
                lines = data.decode("utf-8", "replace").split("\n")
                found = reader(lines[1:] if start else lines)
                if found or start == 0 or want >= MOST:
                    return found
                want *= 4
    except OSError:
        return []


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def reader_for(host: str, root: Path) -> Any:
    """The host's transcript reader, told what the host's settings say of the window (a 1M model for Claude Code;
    where Gemini CLI compresses)."""
    from ghstate import config

    homes = config.host_homes()
    if host == "claude":
        files = (root / ".claude" / "settings.local.json", root / ".claude" / "settings.json",
                 homes["claude"] / "settings.json")
        model = next((m for m in (_json_file(f).get("model") for f in files) if isinstance(m, str)), "")
        long_context = model.lower().endswith("[1m]")
        return lambda lines: pressure.claude_usage(lines, long_context=long_context)
    if host == "gemini":
        threshold = pressure.GEMINI_COMPRESSION
        for f in (homes["gemini"] / "settings.json", root / ".gemini" / "settings.json"):  # the project's wins
            model = _json_file(f).get("model")
            value = model.get("compressionThreshold") if isinstance(model, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
                threshold = float(value)
        return lambda lines: pressure.gemini_usage(lines, compression=threshold)
    return pressure.READERS[host]


class Found(NamedTuple):
    """The branch's checkpoint as this machine has it, by its marker: ``label`` (#N, local #N), ``title``,
    ``meta`` (revision, commit, time)."""

    number: int
    label: str
    title: str
    meta: Any


def branch_checkpoint(settings: Any, branch: str) -> Found | None:
    """The branch's open checkpoint from this machine's files: on GitHub, the replica's copy (what this machine
    last saw of it); else, or when the replica has none, the local store's (without a token, ``checkpoint`` and
    ``resume`` keep a GitHub repository's checkpoints there, and no token is read here to tell). None when there
    is none (or no branch)."""
    from ghstate.core.parse import marker_of

    if not branch:
        return None
    if settings.store == "github" and settings.repo:
        from ghstate.local.replica import Replica, repository_key

        seen = Replica((settings.machine_dir or settings.state_dir) / "replica",
                       repository_key(settings.api_url, settings.repo)).by_branch(branch)
        marker = marker_of(seen.body) if seen is not None else None
        if seen is not None and marker is not None:
            return Found(seen.number, f"#{seen.number}", seen.title, marker.meta)
    from ghstate.errors import GhstateError
    from ghstate.local.store import LocalStore

    try:
        stored = LocalStore(settings.store_dir).find_branch(branch)
    except GhstateError:
        return None
    marker = marker_of(stored.body) if stored is not None and stored.state == "open" else None
    return Found(stored.number, f"local #{stored.number}", marker.title, marker.meta) if stored and marker else None


def work_since(settings: Any, found: Found, fill: pressure.Fill, now: datetime) -> pressure.Work:
    """What changed since the checkpoint's last write (commits, files, minutes), and whether it was written once
    the fill had crossed."""
    from ghstate import config
    from ghstate.git import gitinfo

    root = settings.root if settings.in_git else None
    changes = gitinfo.changes_since(root, found.meta.commit) if root is not None else None
    files = config.own_files_removed(settings, changes.changed_files if changes else ())
    commits = (changes.commits_since if changes.commit_known else -1) if changes else 0
    return pressure.Work(commits, files, pressure.minutes_between(found.meta.updated_at, now),
                         pressure.written_after(found.meta.updated_at, fill.crossed_at))




def checkpoint_due(event: dict[str, Any], host: str, now: datetime | None = None) -> str:
    """The reminder to block the agent's stop with ("" when there is nothing to ask): see the module's text."""
    from ghstate import config

    session = event.get("session_id") if isinstance(event.get("session_id"), str) else ""
    transcript = event.get("transcript_path") if isinstance(event.get("transcript_path"), str) else ""
    if event.get("stop_hook_active") is True or not session or not transcript:
        return ""  # a turn that goes on because a Stop hook asked: never a second time, never a loop
    settings = config.without_token()
    threshold = settings.policy.checkpoint_at
    if threshold <= 0:
        return ""
    fill = pressure.fill_of(tail(Path(transcript), reader_for(host, settings.root)), threshold)
    if fill is None:
        return ""
    from ghstate.local import seen

    is_over = pressure.over(fill, threshold)
    record = pressure.Record.from_data(seen.peek(settings.store_dir).pressure(session))
    if pressure.looked(record, is_over) == record and (not is_over or record.answered):
        return ""  # the usual turn: nothing to say, nothing to write down
    with seen.book(settings.store_dir) as book:  # under the lock: another hook of the same session waits
        record = pressure.Record.from_data(book.pressure(session))
        new = pressure.looked(record, is_over)
        said = ""
        if is_over and not new.answered:
            said, new = _answer(settings, fill, new, host, now or datetime.now(timezone.utc))
        if new != record:
            book.set_pressure(session, new.to_data())
    return said


def _answer(settings: Any, fill: pressure.Fill, record: pressure.Record, host: str,
            now: datetime) -> tuple[str, pressure.Record]:
    """What a session over the threshold is told for this crossing, and its record after it."""
    from ghstate.git import gitinfo

    branch = gitinfo.head_tree(settings.root if settings.in_git else None).branch
    found = branch_checkpoint(settings, branch)
    if found is None:
        if record.suggested or not branch:
            return "", record
        return pressure.suggestion(fill, host), record._replace(suggested=True)
    work = work_since(settings, found, fill, now)
    if work.written_since:
        return "", record._replace(answered=True)  # the checkpoint was written since the fill crossed
    if work.nothing:
        return "", record  # nothing to say yet; asked once there is
    from ghstate import templating

    # a repository's reminder.txt.j2 renders in the sandbox; one that cannot be used: the shipped one, said
    env = templating.environment(settings.templates_dir, cache_dir=settings.cache_dir, fallback=True)
    text = pressure.reminder(env, host=host, fill=fill, label=found.label, title=found.title, branch=branch,
                             work=work)
    for line in templating.fallen_back(env):
        print(f"ghstate hook: {line}", file=sys.stderr)
    return text, record._replace(answered=True)
