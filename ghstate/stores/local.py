"""The local store: ``.ghstate/`` at the git root, one markdown file per checkpoint.

``1.md``, ``2.md``, … hold exactly the body an issue would carry, written atomically (temporary file,
fsync, rename). ``log/N.jsonl`` keeps the revision history; ``pending/`` keeps writes meant for
GitHub that could not be made yet. A lock file serialises writers on one machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ghstate.errors import InputError, NotFound
from ghstate.model import Revision
from ghstate.stores import Stored

_NUMBERED = re.compile(r"^([1-9][0-9]{0,8})\.md$")


def atomic_write(path: Path, text: str) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class LocalStore:
    kind = "local"

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.notices: list[str] = []  # problems worth a warning that did not stop the command

    # ---------------------------------------------------------------------------------- paths

    def path(self, number: int) -> Path:
        return self.directory / f"{number}.md"

    def _log_path(self, number: int) -> Path:
        return self.directory / "log" / f"{number}.jsonl"

    def numbers(self) -> list[int]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(_NUMBERED.match, names) if m)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Serialise writers on this machine (two agents in one repository)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "a+b") as fh:
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

    # ----------------------------------------------------------------------------- checkpoints

    def get(self, number: int) -> Stored:
        path = self.path(number)
        try:
            raw = path.read_bytes()
            stat = path.stat()
        except FileNotFoundError:
            known = self.numbers()
            hint = f"local checkpoints are {', '.join(map(str, known))}" if known else "there are none yet"
            raise NotFound(f"no local checkpoint #{number} in {self.directory}; {hint}") from None
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; restore it from git or delete it") from None
        return Stored(number, "", body, str(path), version=f"{stat.st_mtime_ns}:{stat.st_size}")

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

    def iter_open(self) -> Iterator[Stored]:
        """Checkpoints, newest first, read one at a time (branch lookup stops at the first match)."""
        return self._readable(reversed(self.numbers()))

    def create(self, title: str, body: str, unique: str = "") -> Stored:
        """Allocate the next number (callers hold the lock) and write the body."""
        self.directory.mkdir(parents=True, exist_ok=True)
        number = (max(self.numbers(), default=0)) + 1
        while True:
            try:
                fd = os.open(self.path(number), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                number += 1
                continue
            os.close(fd)
            break
        try:
            atomic_write(self.path(number), body)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self.path(number))  # an empty placeholder must not pass for a checkpoint
            raise
        return self.get(number)

    def reread(self, stored: Stored) -> Stored | None:
        current = self.get(stored.number)
        return None if current.version == stored.version else current

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> Stored:
        atomic_write(self.path(stored.number), body)
        return self.get(stored.number)

    # -------------------------------------------------------------------------------- history

    def add_revision(self, stored: Stored, revision: Revision, text: str = "") -> None:
        path = self._log_path(stored.number)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(revision.as_dict(), ensure_ascii=False) + "\n")

    def revisions(self, number: int) -> list[Revision]:
        self.get(number)  # a clear error for a checkpoint that does not exist
        try:
            lines = self._log_path(number).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                data = json.loads(line)
                if isinstance(data, dict):
                    out.append(Revision.from_dict(data))
        return out

    # -------------------------------------------------------------------------------- pending

    @property
    def pending_dir(self) -> Path:
        return self.directory / "pending"

    def save_pending(self, record: dict[str, Any]) -> Path:
        """Keep a write meant for GitHub until ``ghstate push``; returns the file it is in."""
        self.pending_dir.mkdir(parents=True, exist_ok=True)
        target = record.get("issue") or "new"  # named by the nanosecond, so that push replays in order
        path = self.pending_dir / f"{time.time_ns():020d}-{target}-{os.getpid()}-{os.urandom(3).hex()}.json"
        atomic_write(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
        return path

    def pending(self) -> list[tuple[Path, dict[str, Any]]]:
        try:
            names = sorted(os.listdir(self.pending_dir))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            if not name.endswith(".json"):
                continue
            path = self.pending_dir / name
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InputError(f"pending write {path} cannot be read ({exc}); fix or move it aside") from None
            out.append((path, data))
        return out
