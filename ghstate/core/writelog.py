"""The write log: every write is also an entry in an append-only log, and the body says which it holds.

GitHub has no compare-and-set for an issue body, so two writers can overwrite each other's write. What
was written, though, stays: each write logs its intent with the write itself (the store decides where:
GitHub keeps every version of the body, the local store a line of its log), and the body's marker
records how far it reflects the log:

- ``seen``: every logged write among the first ``seen`` entries is in this body;
- ``own``: the writer of this body logged this many entries after those (its own);
- ``applied``: the ids of writes after ``seen`` that this body holds (its own, replayed ones).

When the log has exactly ``seen + own`` entries, the body is complete and nothing is read.
Otherwise the entries after ``seen`` are read and those the body does not hold are replayed in log
order: a reader (``resume``, ``show``) sees every logged write, and a writer writes them back, so the
body converges. A replayed write never sets back a single-valued field (resume instruction, a tick) that
a later write in the log already set. Pure: entries come from the stores.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ghstate.core.intent import Intent, pack, unpack
from ghstate.core.marker import LogState
from ghstate.core.model import Checkpoint, Revision

# The problem of a trusted editor's version deleted from the history: if it was a write, it is lost (said,
# and the revision number it may have held is not given again).
DELETED = "deleted from the edit history"


class LogEntry(NamedTuple):
    """One write as the log keeps it: who and what (``revision``), and what it asked for (``intent``)."""

    revision: Revision
    write: str = ""  # the write's id, unique; "" for history written before the log carried intents
    intent: Intent | None = None
    position: int = 0  # 1-based place among the checkpoint's comments (lines of the local log)
    problem: str = ""  # why it is not replayed ("edited after it was posted", …); "" when trusted

    def to_data(self, pack_over: int | None = None) -> dict[str, Any]:
        """The entry as JSON data; an intent serialised longer than ``pack_over`` characters (the intent
        module's default when None) goes compressed."""
        data = self.revision.as_dict()
        data.pop("author", None)  # the store knows who posted it; the entry does not say it of itself
        if self.write:
            data["write"] = self.write
        if self.intent is not None:
            data["intent"] = pack(self.intent.to_data()) if pack_over is None else \
                pack(self.intent.to_data(), pack_over)
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any], *, position: int = 0, author: str = "", problem: str = "") -> LogEntry:
        write = data.get("write") if isinstance(data.get("write"), str) else ""
        intent = None
        if data.get("intent") is not None and not problem:  # what an untrusted comment carries is never read
            try:
                intent = Intent.from_data(unpack(data["intent"]))
            except (ValueError, RecursionError) as exc:
                problem = f"its intent cannot be read ({type(exc).__name__}: {str(exc)[:80]})"
        revision = Revision.from_dict({**data, "author": author})
        return cls(revision, write, intent, position, problem)

    @property
    def replayable(self) -> bool:
        return bool(self.write) and self.intent is not None and not self.problem


def log_state(cp: Checkpoint) -> LogState:
    """What ``cp``'s marker says of the log (nothing read yet, when it says nothing)."""
    return cp.meta.log or LogState()


def holds(state: LogState, entry: LogEntry) -> bool:
    return entry.position <= state.seen or entry.write in state.applied


def with_log(cp: Checkpoint, state: LogState) -> Checkpoint:
    return cp.with_meta(log=state)


class Replayed(NamedTuple):
    checkpoint: Checkpoint
    replayed: tuple[LogEntry, ...]  # the writes the body lacked, now applied
    ignored: tuple[LogEntry, ...]  # entries after ``seen`` that are not trusted intents (reported)
    applied: tuple[str, ...]  # ids of the writes after ``seen`` the result holds


def missing(state: LogState, entries: list[LogEntry]) -> list[LogEntry]:
    """The logged writes a body with ``state`` does not hold, in log order."""
    return [e for e in entries if e.replayable and not holds(state, e)]


def replay(cp: Checkpoint, entries: list[LogEntry]) -> Replayed:
    """``cp`` with the logged writes it lacks applied in log order. ``entries``: the log after the
    marker's ``seen`` (more is harmless)."""
    state = log_state(cp)
    first = {}
    for e in sorted(entries, key=lambda e: e.position):
        if e.replayable:
            first.setdefault(e.write, e.position)  # a write logged twice (a resent POST) counts once
    ordered = sorted((e for e in entries if not e.replayable or first[e.write] == e.position),
                     key=lambda e: e.position)
    lacking = missing(state, ordered)
    held = [e for e in ordered if e.replayable and holds(state, e)]
    out = cp
    failed: list[LogEntry] = []
    for entry in lacking:
        assert entry.intent is not None
        later = [e for e in held if e.position > entry.position]
        masked = frozenset().union(*(e.intent.sets(out) for e in later if e.intent is not None))
        try:
            out = entry.intent.apply(out, masked=masked, lenient=True).checkpoint
        except (ValueError, LookupError) as exc:  # data a trusted writer logged that cannot apply now
            failed.append(entry._replace(problem=f"it cannot be applied ({exc})"))
            continue
        held.append(entry)
    lacking = [e for e in lacking if all(f.write != e.write for f in failed)]
    if lacking:
        newest = max(e.revision.revision for e in lacking)
        out = out.with_meta(revision=max(out.meta.revision, newest))
    ignored = (*(e for e in ordered if e.problem and e.position > state.seen), *failed)
    applied = tuple(dict.fromkeys((*state.applied, *(e.write for e in lacking))))
    return Replayed(out, tuple(lacking), ignored, applied)


def ignored_notice(entries: tuple[LogEntry, ...]) -> str:
    """One warning for log entries that were not replayed, or ""."""
    if not entries:
        return ""
    shown = "; ".join(f"entry {e.position}{_by(e.revision)} ({e.problem})" for e in entries[:3])
    more = f" and {len(entries) - 3} more" if len(entries) > 3 else ""
    return f"{len(entries)} log entr{'ies' if len(entries) != 1 else 'y'} ignored: {shown}{more}"


def _by(revision: Revision) -> str:
    """Who saved an entry and when, as far as the store said."""
    who = f" by {revision.author}" if revision.author else ""
    return f"{who}{f' at {revision.at}' if revision.at else ''}"
