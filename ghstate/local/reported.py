"""Writes this machine reported as made, remembered until a later read finds them (``.ghstate/reported/``).

GitHub's edit history is the write log, and nothing GitHub documents rules out that it could keep two
quick saves by one editor as one version (agents sharing a token are one editor): a write reported as
made could then vanish from the history with its text. So each write GitHub took is kept here, whole (its
log entry: who, when, what it asked for), one file a write, until a read of its checkpoint finds it in
the history or held by the body. A write that is found missing has its intent, so it is applied again.
Files are created whole and removed alone: concurrent commands on one machine never lose each other's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import NamedTuple

from ghstate.core.writelog import LogEntry
from ghstate.local.store import atomic_create, atomic_write, keep_out_of_git

KEEP_DAYS = 30  # a write not found again within this long is forgotten (its checkpoint went quiet here)


class Remembered(NamedTuple):
    entry: LogEntry
    said: bool = False  # the command that found it missing said so already


class Reported:
    """The writes reported as made to GitHub from this machine, by repository and checkpoint."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.directory = state_dir / "reported"

    def _folder(self, repo: str, number: int) -> Path:
        return self.directory / re.sub(r"[^\w.-]", "_", repo.replace("/", "--")) / str(number)

    def remember(self, repo: str, number: int, entry: LogEntry) -> None:
        """Keep ``entry`` until a read finds it (never fails the write it follows: a file that cannot be
        written is a write that is only as safe as GitHub keeps it)."""
        if not entry.write:
            return
        with contextlib.suppress(OSError):
            folder = self._folder(repo, number)
            folder.mkdir(parents=True, exist_ok=True)
            keep_out_of_git(self.state_dir)
            atomic_create(folder / f"{entry.write}.json", _dump(entry, said=False))

    def remembered(self, repo: str, number: int, now: datetime | None = None) -> list[Remembered]:
        """The writes still to be found, oldest first; those older than KEEP_DAYS are forgotten."""
        folder = self._folder(repo, number)
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        out = []
        cutoff = (now or datetime.now(timezone.utc)) - timedelta(days=KEEP_DAYS)
        for name in names:
            found = _load(folder / name) if name.endswith(".json") else None
            if found is None:
                continue
            at = _when(found.entry.revision.at)
            if at is not None and at < cutoff:
                self.forget(repo, number, found.entry.write)
                continue
            out.append(found)
        return sorted(out, key=lambda r: (r.entry.revision.at, r.entry.revision.revision))

    def forget(self, repo: str, number: int, write: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._folder(repo, number) / f"{write}.json")

    def said(self, repo: str, number: int, entry: LogEntry) -> None:
        """Mark a missing write as said (it stays until a write brings it back into the body)."""
        with contextlib.suppress(OSError):
            atomic_write(self._folder(repo, number) / f"{entry.write}.json", _dump(entry, said=True))


def _dump(entry: LogEntry, *, said: bool) -> str:
    return json.dumps({"kind": "ghstate-reported", "entry": entry.to_data(), "said": said},
                      ensure_ascii=False) + "\n"


def _load(path: Path) -> Remembered | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != "ghstate-reported" or not isinstance(data.get("entry"), dict):
        return None
    entry = LogEntry.from_data(data["entry"])
    return Remembered(entry, data.get("said") is True) if entry.replayable else None


def _when(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
