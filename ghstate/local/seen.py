"""What each agent session was last given of a checkpoint, so that a hook injects it once.

A resumed session gets only what changed since it last saw the checkpoint (one line when nothing
did); after a compaction or a /clear it gets the whole prompt again, whether or not the pre-compact
hook ran. A SessionStart that repeats the one before it (the same session, source and revision within
a few seconds, nothing delivered in between) gets nothing: the host fired it twice, or two set-ups of
the hook fired at once (a plugin installed for the person, and ``ghstate init``'s in the repository),
and the session already has what the first one gave.

The memory is one small JSON file in the clone's store folder (``<git common dir>/ghstate/seen.json``;
GHSTATE_DIR when set), never in the work tree (a hook changes nothing ``git status`` shows), bounded to the
last MAX_SESSIONS sessions, read and written under its own lock and replaced atomically, so that
hooks firing at once (SessionStart fires twice on some resumes) see each other's writes.
"""


import collections
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.core.model import Checkpoint
from ghstate.core.provenance import digest
from ghstate.core.sections import PROVENANCE

FILE = "seen.json"
LOCK = ".seen.lock"
MAX_SESSIONS = 32
MAX_CHECKPOINTS = 4  # per session
MAX_BYTES = 1 << 20  # a larger file is not ours to trust: start afresh


REPEAT_SECONDS = 10.0  # the same source again this soon, nothing delivered in between: the same start, again


def _now() -> float:
    """The wall clock the repeat window is measured on, in one place so that a test can set it."""
    import time

    return time.time()


def _items(cp: Checkpoint, key: str) -> list[str]:
    """A list section's items as the seen-file knows them: a file by its paths (its own), the others as written."""
    return cp.file_paths if key == "files" else list(getattr(cp, key))


def snapshot(cp: Checkpoint, *, full: bool, source: str = "", at: float | None = None) -> dict[str, Any]:
    """Digests of what a session was shown, enough to tell later what changed; and what it was last
    given (``source`` of that SessionStart, and when), to tell a host firing it twice from a new one."""
    v = cp.verification_data
    return {
        "rev": cp.meta.revision, "full": full, "src": source, "at": round(_now() if at is None else at, 3),
        "title": digest(cp.title), "goal": digest(cp.goal),
        "phases": {digest(p.name): p.done for p in cp.phases},
        "steps": {digest(p.name + "\n" + s.text): bool(s.done) for p in cp.phases for s in p.steps},
        **{code: [digest(x) for x in _items(cp, key)] for code, key in PROVENANCE},
        "resume": digest(cp.resume), "v": digest(json.dumps([cp.verification, v.to_dict() if v else None],
                                                            sort_keys=True, default=str)),
    }


# What changed in a checkpoint since a session saw it: since/revision, what of the title, goal and phases changed,
# then for each list whose items carry provenance (the table's) the items new since, what was removed (counts by
# section), and whether the resume instruction and the verification changed. Texts are the checkpoint's (data).
_LISTS = tuple(key for _, key in PROVENANCE)
_ChangesFields = collections.namedtuple("_ChangesFields", [
    "since", "revision", "title", "goal", "done", "reopened", "new_phases", "steps", "next_changed", *_LISTS,
    "removed", "resume", "verification"], defaults=[False, False, (), (), (), (), False, *(() for _ in _LISTS),
                                                    {}, False, False])


class Changes(_ChangesFields):
    """What changed in a checkpoint since a session saw it (the fields above). ``done``: phases ticked since;
    ``steps``: steps ticked since, as "phase: step"."""

    __slots__ = ()
    since: int
    revision: int
    removed: dict[str, int]

    def __bool__(self) -> bool:
        return any(value for key, value in self._asdict().items() if key not in ("since", "revision", "next_changed"))

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self._asdict().items()}


def changes(old: dict[str, Any], cp: Checkpoint) -> Changes:
    new = snapshot(cp, full=True)
    phases = old.get("phases") if isinstance(old.get("phases"), dict) else {}
    steps = old.get("steps") if isinstance(old.get("steps"), dict) else {}
    done = tuple(p.name for p in cp.phases if p.done and phases.get(digest(p.name)) is False)
    reopened = tuple(p.name for p in cp.phases if not p.done and phases.get(digest(p.name)) is True)
    added_phases = tuple(p.name for p in cp.phases if digest(p.name) not in phases)
    ticked = tuple(f"{p.label}: {s.text}" for p in cp.phases for s in p.steps
                   if s.done and steps.get(digest(p.name + "\n" + s.text)) is False)

    def fresh(key: str, items: list[str]) -> tuple[str, ...]:
        before = set(old.get(key) or ())
        return tuple(item for item in items if digest(item) not in before)

    removed = {}
    for key, name in PROVENANCE:
        gone = len(set(old.get(key) or ()) - set(new[key]))
        if gone:
            removed[name] = gone
    gone_phases = len(set(phases) - set(new["phases"]))
    if gone_phases:
        removed["phases"] = gone_phases
    old_next = next((d for d, is_done in phases.items() if not is_done), None)
    nxt = cp.next_phase
    return Changes(
        since=old.get("rev") if isinstance(old.get("rev"), int) else 0, revision=cp.meta.revision,
        title=old.get("title") != new["title"], goal=old.get("goal") != new["goal"], done=done,
        reopened=reopened, new_phases=added_phases, steps=ticked,
        next_changed=(digest(nxt.name) if nxt else None) != old_next,
        **{key: fresh(code, _items(cp, key)) for code, key in PROVENANCE}, removed=removed,
        resume=old.get("resume") != new["resume"], verification=old.get("v") != new["v"],
    )


class Decision(NamedTuple):
    kind: str  # "full", "changes", "line" (already has it), "pointer" (startup: where the checkpoint is)
    changes: Changes | None = None
    seen_revision: int = 0


def repeated(source: str, record: dict[str, Any] | None, now: float | None = None) -> bool:
    """Is this SessionStart the one that left ``record`` (a session's last start, ``Book.last_start``),
    fired again? Yes when that start had the same source within REPEAT_SECONDS; a later compaction
    or /clear (the host summarised or cleared in between, which takes longer) is not."""
    if not record or record.get("src") != source:
        return False
    at = record.get("at")
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return False
    elapsed = (_now() if now is None else now) - at
    return -1.0 <= elapsed <= REPEAT_SECONDS


def decide(source: str, record: dict[str, Any] | None, cp: Checkpoint) -> Decision:
    """What a SessionStart of ``source`` gives a session that was last given ``record``."""
    rev = record.get("rev") if record else None
    if source in ("clear", "compact"):
        # Its context was just replaced, whatever it was given before (the pre-compact hook may not have
        # run): the whole prompt. (The same start fired twice is answered before this: ``Book.last_start``.)
        return Decision("full")
    if source == "resume" and record:
        found = changes(record, cp)
        if not found and rev == cp.meta.revision:
            return Decision("line", seen_revision=rev)
        return Decision("changes", found, seen_revision=rev if isinstance(rev, int) else 0) if found \
            else Decision("line", seen_revision=rev if isinstance(rev, int) else 0)
    return Decision("pointer")


class Book:
    """The seen-file, open under its lock: read with ``get``, change with ``put`` and ``forget``."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE
        self.data: dict[str, Any] = {"v": 1, "sessions": {}}
        self.dirty = False
        try:
            raw = self.path.read_bytes() if self.path.stat().st_size <= MAX_BYTES else b""
            loaded = json.loads(raw.decode("utf-8")) if raw else None
        except (OSError, ValueError):
            loaded = None
        if isinstance(loaded, dict) and isinstance(loaded.get("sessions"), dict):
            self.data = loaded

    @property
    def sessions(self) -> dict[str, Any]:
        return self.data["sessions"]

    def get(self, session: str, key: str) -> dict[str, Any] | None:
        entry = self.sessions.get(session)
        record = entry.get(key) if isinstance(entry, dict) else None
        return record if isinstance(record, dict) else None

    def put(self, session: str, key: str, record: dict[str, Any]) -> None:
        entry = self.sessions.pop(session, None)
        entry = entry if isinstance(entry, dict) else {}
        entry.pop(key, None)
        entry[key] = record
        while len(entry) > MAX_CHECKPOINTS:
            entry.pop(next(iter(entry)))
        self.sessions[session] = entry  # the most recent last
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.pop(next(iter(self.sessions)))
        self.dirty = True

    def last_start(self, session: str) -> dict[str, Any] | None:
        """The session's last SessionStart answered: its source, when, which checkpoint at which revision."""
        starts = self.data.get("starts")
        record = starts.get(session) if isinstance(starts, dict) else None
        return record if isinstance(record, dict) else None

    def started(self, session: str, key: str, source: str, revision: int) -> None:
        starts = self.data.get("starts")
        starts = starts if isinstance(starts, dict) else {}
        starts.pop(session, None)
        starts[session] = {"key": key, "src": source, "rev": revision, "at": round(_now(), 3)}
        while len(starts) > MAX_SESSIONS:
            starts.pop(next(iter(starts)))
        self.data["starts"] = starts
        self.dirty = True

    def forget(self, session: str) -> None:
        starts = self.data.get("starts")
        if self.sessions.pop(session, None) is not None:
            self.dirty = True
        if isinstance(starts, dict) and starts.pop(session, None) is not None:
            self.dirty = True
        # What the session was told of its context's fill stays: a compaction empties the context, and the next
        # look at it (under the threshold) ends the crossing. Gemini CLI 0.61 fires PreCompress before every turn,
        # compressing or not: forgetting it here would ask again at each.

    def pressure(self, session: str) -> dict[str, Any]:
        """What the session was told of its context's fill (``core.pressure.Record``'s data; {} when nothing)."""
        table = self.data.get("pressure")
        record = table.get(session) if isinstance(table, dict) else None
        return record if isinstance(record, dict) else {}

    def set_pressure(self, session: str, record: dict[str, Any]) -> None:
        table = self.data.get("pressure")
        table = table if isinstance(table, dict) else {}
        table.pop(session, None)
        if record:
            table[session] = record
        while len(table) > MAX_SESSIONS:
            table.pop(next(iter(table)))
        self.data["pressure"] = table
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        from ghstate.local.store import atomic_write

        atomic_write(self.path, json.dumps(self.data, separators=(",", ":")) + "\n")


@contextlib.contextmanager
def book(directory: Path) -> Iterator[Book]:
    """The seen-file of ``directory``, locked against other hooks for the duration; saved on exit."""
    from ghstate.local.store import file_lock, keep_out_of_git

    directory.mkdir(parents=True, exist_ok=True)
    keep_out_of_git(directory)
    with file_lock(directory / LOCK):
        opened = Book(directory)
        yield opened
        opened.save()


def peek(directory: Path) -> Book:
    """The seen-file as it is, read without its lock and never saved (a hook that will most often change nothing
    looks first, and takes the lock only to write)."""
    return Book(directory)


def forget(directory: Path, session: str) -> None:
    """The session is being compacted: what it was given is about to leave its context."""
    if session and (directory / FILE).exists():
        with book(directory) as b:
            b.forget(session)
