"""The body's own edit history as the write log: each write's entry travels in the body it writes.

GitHub keeps every version of an issue body (``Issue.userContentEdits``: each entry's ``diff`` is that
version's whole text, newest first, the original included once the body was edited, with who saved it).
A write therefore needs no comment to be durable: its body ends with one hidden line,

    <!-- ghstate:log {"revision": 4, ..., "write": "a1b2…", "intent": {...}, "body": "<digest>"} -->

that names the write and its intent, and the digest of the body above it. A version counts as that
write's log entry only when its text is exactly what the write saved (the digest matches) and its
editor is trusted; a person's later save that carries the line along is a person's edit, not the write
again. No request of its own, no notification: an edit of a body notifies no one.

Pure: the store hands in the texts and who saved them.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ghstate.model import Revision
from ghstate.writelog import LogEntry

LINE = re.compile(r"\r?\n<!--\s*ghstate:log\s+(\{.*\})\s*-->\s*\Z", re.DOTALL)
GITHUB_MAX_BODY = 65_536  # characters GitHub takes in an issue body


def digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def split(text: str) -> tuple[str, dict[str, Any] | None]:
    """The body a reader sees, and the log line's data (None when there is none, or it is not ours)."""
    match = LINE.search(text or "")
    if not match:
        return text or "", None
    body = text[: match.start()]
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError):  # not ours, or built to break a reader: the text stays as it is
        return text, None
    if not isinstance(data, dict):
        return text, None
    return body, data


def embed(body: str, entry: LogEntry) -> str:
    """``body`` with ``entry`` in its hidden last line. An intent that would take the body past GitHub's
    limit is left out (the write is then named, but not replayable)."""
    text = body + "\n" + _line(body, entry.to_data())
    if len(text) > GITHUB_MAX_BODY and entry.intent is not None:
        text = body + "\n" + _line(body, entry._replace(intent=None).to_data())
    return text


def _line(body: str, data: dict[str, Any]) -> str:
    data = {**data, "body": digest(body)}
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    raw = raw.replace("<", "\\u003c").replace(">", "\\u003e")  # the comment cannot be closed early
    return f"<!-- ghstate:log {raw} -->"


def entry_of(text: str | None, position: int, *, editor: str, trusted: bool) -> LogEntry:
    """The log entry of one version of the body: a write's, when the version is exactly what that write
    saved and its editor is trusted; else an entry with no intent (a person's edit), or with a
    ``problem`` when an untrusted editor saved a version that claims to be a write."""
    if text is None:  # deleted from the history by someone allowed to: nothing to read
        return LogEntry(Revision(0), position=position)
    body, data = split(text)
    if data is None or data.get("body") != digest(body):
        return LogEntry(Revision(0), position=position)  # a person's save, whatever line it carries along
    if not trusted:
        return LogEntry(Revision(0), position=position,
                        problem=f"saved by {editor or 'an unknown account'}, who is not trusted")
    data = {k: v for k, v in data.items() if k != "body"}
    return LogEntry.from_data(data, position=position, author=editor)
