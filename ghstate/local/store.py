"""The local store: ``.ghstate/`` at the git root, one markdown file per checkpoint.

``1.md``, ``2.md``, … hold exactly the body an issue would carry, written atomically (temporary file,
fsync, rename; a new one appears whole or not at all). ``log/N.jsonl`` is the write log: each write
appends its entry as one line before it writes the body (``{}`` for a write that logs nothing), so a
write is durable from that line on; ``pending/`` keeps writes meant for GitHub that could not be made
yet. A lock file serialises writers on one machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.marker import LogState, text
from ghstate.core.model import Revision
from ghstate.errors import InputError, NotFound
from ghstate.store import Stored, StoreKind

if TYPE_CHECKING:  # pragma: no cover  (a reader that needs no log or kept write never loads them)
    from ghstate.core.intent import WriteSpec
    from ghstate.core.writelog import LogEntry

_NUMBERED = re.compile(r"^([1-9][0-9]{0,8})\.md$")


def _written(path: Path, text: str) -> str:
    """A temporary file beside ``path`` holding ``text``, on disk; its name."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write(path: Path, text: str) -> None:
    tmp = _written(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the duration."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks, writes stay atomic
            yield
            return
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def atomic_create(path: Path, text: str) -> bool:
    """Write ``path`` whole, only if it does not exist (False then). A process killed at any moment
    leaves either no ``path`` or all of it, never an empty placeholder."""
    tmp = _written(path, text)
    try:
        os.link(tmp, path)  # fails if path exists: create-if-absent, with its content already there
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


GITIGNORE = ".gitignore"
# What in the store folder is this machine's alone and never belongs in a commit: the seen-file of the
# hooks, the lock files, writes kept for GitHub and writes reported to it (they hold this machine's state)
# and leftovers of an interrupted atomic write. The checkpoints (N.md) and their write logs (log/) stay committable.
IGNORED = """# Written by ghstate: this machine's own files, kept out of git. Checkpoints (N.md, log/) are committable.
/seen.json
/.seen.lock
/.lock
/pending/
/reported/
/.*.tmp
"""


def keep_out_of_git(directory: Path) -> None:
    """Give the store folder its ``.gitignore`` the first time ghstate writes there (one stat after that)."""
    path = directory / GITIGNORE
    if not path.exists():
        with contextlib.suppress(OSError):
            atomic_create(path, IGNORED)


class LocalStore:
    kind: StoreKind = "local"
    remote = False
    log_via = "comments"  # the log is log/N.jsonl beside the body (a marker's LogState names it so)

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.notices: list[str] = []  # problems worth a warning that did not stop the command

    # ---------------------------------------------------------------------------------- paths

    def path(self, number: int) -> Path:
        return self.directory / f"{number}.md"

    def closed_path(self, number: int) -> Path:
        """Where a closed checkpoint lives: ``closed/N.md``, out of ``list`` and branch lookups, its number
        never given again, its log where it was."""
        return self.directory / "closed" / f"{number}.md"

    def _log_path(self, number: int) -> Path:
        return self.directory / "log" / f"{number}.jsonl"

    def numbers(self) -> list[int]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(_NUMBERED.match, names) if m)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Serialise writers on this machine (two agents in one repository)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        keep_out_of_git(self.directory)
        return file_lock(self.directory / ".lock")

    # ----------------------------------------------------------------------------- checkpoints

    def get(self, number: int) -> Stored:
        path = self.path(number)
        if not path.exists() and self.closed_path(number).exists():
            path = self.closed_path(number)
        try:
            raw = path.read_bytes()
            stat = path.stat()
            if not raw:  # left by a create that an earlier version did not finish: not a checkpoint
                raise FileNotFoundError(path)
        except FileNotFoundError:
            known = self.numbers()
            hint = f"local checkpoints are {', '.join(map(str, known))}" if known else "there are none yet"
            raise NotFound(f"no local checkpoint #{number} in {self.directory}; {hint}") from None
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; restore it from git or delete it") from None
        return Stored(number, "", body, str(path), version=f"{stat.st_mtime_ns}:{stat.st_size}",
                      comments=len(self._log_lines(number)), state="closed" if path.parent.name == "closed" else "open")

    def _readable(self, numbers: Iterable[int]) -> Iterator[Stored]:
        """The checkpoints of ``numbers`` that can be read; the others become notices, not failures."""
        for number in numbers:
            try:
                yield self.get(number)
            except InputError as exc:
                self.notices.append(str(exc))
            except NotFound:  # removed meanwhile
                continue

    def list_open(self) -> list[Stored]:
        return list(self._readable(self.numbers()))

    def list_all(self) -> list[Stored]:
        """The open checkpoints and the closed ones (``closed/``), by number."""
        return list(self._readable(sorted({*self.numbers(), *self._closed_numbers()})))

    def iter_open(self) -> Iterator[Stored]:
        """Checkpoints, newest first, read one at a time (branch lookup stops at the first match)."""
        return self._readable(reversed(self.numbers()))

    def create(self, title: str, body: str, unique: str = "", entry: LogEntry | None = None) -> Stored:
        """Write the body under the next free number (callers hold the lock)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        number = (max([*self.numbers(), *self._closed_numbers()], default=0)) + 1
        while not atomic_create(self.path(number), body):
            number += 1
        with contextlib.suppress(FileNotFoundError):  # a log left by a checkpoint that was deleted
            self._log_path(number).unlink()
        self._append(number, entry)
        return self.get(number)

    def reread(self, stored: Stored) -> Stored | None:
        current = self.get(stored.number)
        return None if current.version == stored.version else current

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: LogEntry | None = None) -> Stored:
        """Log the write (its line, from which on it is durable), then write the body."""
        self._append(stored.number, entry)
        atomic_write(self.closed_path(stored.number) if stored.state == "closed" else self.path(stored.number), body)
        return self.get(stored.number)

    def close(self, stored: Stored) -> Stored:
        """Move the checkpoint to ``closed/`` (one rename: it is open or closed, never both)."""
        if stored.state != "closed":
            self.closed_path(stored.number).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.path(stored.number), self.closed_path(stored.number))
        return self.get(stored.number)

    def _closed_numbers(self) -> list[int]:
        try:
            names = os.listdir(self.directory / "closed")
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [int(m.group(1)) for m in map(_NUMBERED.match, names) if m]

    # -------------------------------------------------------------------------------- history

    def notify(self, stored: Stored, text: str) -> str:
        """Nobody to tell: a local checkpoint is read by whoever writes it."""
        return ""

    def _append(self, number: int, entry: LogEntry | None) -> None:
        """Append a write's entry to the write log (``{}`` when it logs nothing). One ``write`` of a whole
        line with O_APPEND, flushed to disk: a process killed meanwhile leaves at most a torn last line,
        which readers skip."""
        path = self._log_path(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry.to_data() if entry else {}, ensure_ascii=False, separators=(",", ":")) + "\n"
        with open(path, "a", encoding="utf-8") as fh:
            if fh.tell() and not self._ends_with_newline(path):
                fh.write("\n")  # a torn line from a killed writer stays one (unreadable) line
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    @staticmethod
    def _ends_with_newline(path: Path) -> bool:
        with open(path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"

    def _log_lines(self, number: int) -> list[str]:
        try:
            return self._log_path(number).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []

    def log_length(self, stored: Stored, state: LogState) -> int:
        return stored.comments

    def stored_size(self, body: str, entry: LogEntry | None) -> int:
        return len(body)  # the entry is a line of the log, beside the body

    def version(self, stored: Stored, position: int) -> Stored | None:
        return None  # the log's lines are writes, not versions of the body

    def log_since(self, stored: Stored, when: str) -> list[LogEntry]:
        return [e for e in self.log(stored, LogState(), 0) if e.revision.at >= when]

    def lacking(self, stored: Stored, state: LogState) -> bool:
        return stored.comments > state.seen and not state.complete(stored.comments)

    def log(self, stored: Stored, state: LogState, after: int, pages: int = 0) -> list[LogEntry]:
        from ghstate.core.writelog import LogEntry

        out = []
        for position, line in enumerate(self._log_lines(stored.number)[after:], start=after + 1):
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict):
                out.append(LogEntry.from_data(data, position=position))
            else:
                out.append(LogEntry(Revision(0), position=position, problem="not a log entry"))
        return out

    def revisions(self, number: int) -> list[Revision]:
        stored = self.get(number)  # a clear error for a checkpoint that does not exist
        return [e.revision for e in self.log(stored, LogState(), 0) if e.revision.revision]

    # -------------------------------------------------------------------------------- pending

    @property
    def pending_dir(self) -> Path:
        return self.directory / "pending"

    def save_pending(self, record: PendingWrite) -> Path:
        """Keep a write meant for GitHub until ``ghstate push``; returns the file it is in."""
        self.pending_dir.mkdir(parents=True, exist_ok=True)
        keep_out_of_git(self.directory)
        target = record.write.number or "new"  # named by the nanosecond, so that push replays in order
        path = self.pending_dir / f"{time.time_ns():020d}-{target}-{os.getpid()}-{os.urandom(3).hex()}.json"
        atomic_write(path, json.dumps(record.to_data(), ensure_ascii=False, indent=1) + "\n")
        return path

    def pending(self) -> list[tuple[Path, PendingWrite | InputError]]:
        """The kept writes, oldest first; one that cannot be read comes as the error that says so."""
        try:
            names = sorted(os.listdir(self.pending_dir))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            if not name.endswith(".json"):
                continue
            path = self.pending_dir / name
            record: PendingWrite | InputError
            try:
                record = PendingWrite.from_data(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                record = InputError(f"the kept write is malformed ({exc}); move it out of the pending folder")
            out.append((path, record))
        return out


class PendingWrite(NamedTuple):
    """A write GitHub could not take, kept whole (``WriteSpec``, its one serialisation) with where it was
    meant to go; ``push`` replays it as it was made, on the checkpoint as it is then."""

    write: WriteSpec
    repo: str | None = None
    api_url: str = ""
    saved_at: str = ""

    def to_data(self) -> dict[str, Any]:
        return {"kind": "ghstate-pending", "version": 3, "repo": self.repo, "api_url": self.api_url,
                "saved_at": self.saved_at, "write": self.write.to_data()}

    @classmethod
    def from_data(cls, data: Any) -> PendingWrite:
        from ghstate.core.intent import WriteSpec

        if not isinstance(data, dict) or data.get("kind") != "ghstate-pending":
            raise ValueError("not a pending write of ghstate")
        repo = data.get("repo")
        return cls(WriteSpec.from_data(data["write"] if data.get("version") == 3 else _older_write(data)),
                   repo=repo if isinstance(repo, str) else None, api_url=text(data.get("api_url")),
                   saved_at=text(data.get("saved_at")))


def _older_write(data: dict[str, Any]) -> dict[str, Any]:
    """A write as versions before 3 kept it: some of its fields, and its intent (before version 2, the
    JSON state and the digests it had read)."""
    from ghstate.core.intent import unpack

    intent = unpack(data.get("intent") or {})
    if data.get("version") != 2:
        intent = _older_intent(intent)
    older_id = re.search(r'"id":"([^"]+)"', str(data.get("unique") or ""))
    return {
        "intent": intent, "number": data.get("issue"), "tree": {"branch": data.get("branch"),
                                                                "commit": data.get("commit")},
        "execution": data.get("execution"), "event": text(data.get("event")) or "push", "title": data.get("title"),
        "create": data.get("create", True), "lookup": data.get("lookup", True), "log": data.get("log", True),
        "allow_secrets": data.get("allow_secrets", False),
        "new_id": text(data.get("new_id")) or (older_id.group(1) if older_id else ""),
    }


def _older_intent(data: Any) -> dict[str, Any]:
    """A pending intent as versions before the write log kept it."""
    if not isinstance(data, dict):
        raise ValueError("its intent is not an object")
    from ghstate.core.intent import sections_to_data
    from ghstate.core.state_json import StateError, from_json

    out = {k: data[k] for k in ("edits", "force", "verification", "tick") if k in data}
    incoming = data.get("incoming")
    if isinstance(incoming, dict):
        try:
            state = from_json(incoming.get("state"))
        except StateError as exc:
            raise ValueError(f"its state is invalid ({exc})") from None
        present = frozenset(k for k in incoming.get("present") or () if isinstance(k, str))
        out["incoming"] = sections_to_data(state, present)
        out["present"] = sorted(present)
    if isinstance(data.get("base_sections"), dict):
        out["base"] = data["base_sections"]
    return out
