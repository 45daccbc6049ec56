"""The body's own edit history as the write log: each write's entry travels in the body it writes.

GitHub keeps every version of an issue body (``Issue.userContentEdits``: each entry's ``diff`` is that
version's whole text, newest first, the original included once the body was edited, with who saved it).
A write therefore needs no comment to be durable: the body's one hidden marker (``ghstate.core.marker``)
carries, as its last key, the entry of the write that saved it,

    <!-- ghstate:v1 {"revision": 4, ..., "entry": {"revision": 4, "write": "a1b2…", "intent": {...},
                     "body": "<digest>"}} -->

naming the write and its intent, with the digest of the body as it reads without that key. A version
counts as that write's log entry only when its text is exactly what the write saved (the digest matches)
and its editor is trusted; a person's later save that carries the key along is a person's edit, not the
write again. No request of its own, no notification: an edit of a body notifies no one. A body has one
machine comment: any reader (GitHub's own page, ``parse``, the project board) sees the marker only.

Bodies written while the entry was a hidden last line (``<!-- ghstate:log {...} -->``) are still read.

Pure: the store hands in the texts and who saved them.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ghstate.core.marker import ENTRY
from ghstate.core.model import Revision
from ghstate.core.parse import MARKER_LINE
from ghstate.core.writelog import DELETED, LogEntry

LINE = re.compile(r"\r?\n<!--\s*ghstate:log\s+(\{.*\})\s*-->\s*\Z", re.DOTALL)  # the earlier form
_KEY = json.dumps(ENTRY)
# An intent longer than this goes compressed: the entry rides in every body a write saves, and the body is
# what every reader downloads (a CI result's intent is its whole verification text and data).
PACK_OVER = 1_000


def digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _dumps(data: Any) -> str:
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return raw.replace("<", "\\u003c").replace(">", "\\u003e")  # the comment cannot be closed early


def split(text: str) -> tuple[str, dict[str, Any] | None]:
    """The body a reader sees (its marker without the entry), and the entry's data (None when there is
    none, or it is not exactly as ghstate writes it: then the text stays as it is)."""
    text = text or ""
    match = MARKER_LINE.search(text)
    if match is not None and _KEY in match.group(1):
        raw = match.group(1)
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):  # not ours, or built to break a reader
            data = None
        if isinstance(data, dict) and isinstance(data.get(ENTRY), dict) and list(data)[-1] == ENTRY:
            tail = _KEY + ":" + _dumps(data[ENTRY]) + "}"
            head = raw[: -len(tail)]
            if raw.endswith(tail) and head.endswith((",", "{")):
                marker = head.removesuffix(",") + "}" if head.endswith(",") else "{}"
                return text[: match.start(1)] + marker + text[match.end(1):], data[ENTRY]
        return text, None
    return _split_line(text)


def _split_line(text: str) -> tuple[str, dict[str, Any] | None]:
    match = LINE.search(text)
    if not match:
        return text, None
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError):
        return text, None
    if not isinstance(data, dict):
        return text, None
    return text[: match.start()], data


def embed(body: str, entry: LogEntry) -> str:
    """``body`` with ``entry`` as its marker's last key (the writer keeps the two within the bound: it
    leaves an intent too large out of the entry, and says so). A body without ghstate's marker (none is
    written, but a template could lose it) takes the entry in a hidden last line."""
    return _embed(body, entry.to_data(PACK_OVER))


def _embed(body: str, data: dict[str, Any]) -> str:
    data = {**data, "body": digest(body)}
    match = MARKER_LINE.search(body)
    if match is None or _KEY in match.group(1):
        return body + "\n<!-- ghstate:log " + _dumps(data) + " -->"
    raw = match.group(1)
    head = raw[:-1].rstrip()
    marker = head + ("" if head.endswith("{") else ",") + _KEY + ":" + _dumps(data) + "}"
    return body[: match.start(1)] + marker + body[match.end(1):]


def entry_of(text: str | None, position: int, *, editor: str, trusted: bool, at: str = "") -> LogEntry:
    """The log entry of one version of the body: a write's, when the version is exactly what that write
    saved and its editor is trusted; else an entry with no intent (a person's edit: who saved it and
    when), or with a ``problem`` when an untrusted editor saved a version that claims to be a write, or
    when a trusted editor's version was deleted from the history (it may have been a write)."""
    who = Revision(0, at=at, author=editor)
    if text is None:  # deleted from the history by someone allowed to: nothing to read
        return LogEntry(who, position=position, problem=DELETED if trusted else "")
    body, data = split(text)
    if data is None or data.get("body") != digest(body):
        return LogEntry(who, position=position)  # a person's save, whatever it carries along
    if not trusted:
        return LogEntry(Revision(0), position=position,
                        problem=f"saved by {editor or 'an unknown account'}, who is not trusted")
    data = {k: v for k, v in data.items() if k != "body"}
    return LogEntry.from_data(data, position=position, author=editor)
