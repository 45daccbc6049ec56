"""What this machine last saw of each GitHub checkpoint: the replica a reader falls back to when GitHub does
not answer within a command's budget.

One file per checkpoint, ``<machine dir>/replica/<repository>--<N>.json`` (``Settings.machine_dir``: inside
the clone's git folder, shared by its worktrees, never committed nor shown by ``git status``), holding the
body of the state a command read or wrote (the head of its chain, people's edits merged), which revision and
commit that is, its branch, its title, URL and state, and when it was seen. Each is replaced atomically
(a temporary file, then a rename: a process killed mid-write leaves the previous copy whole), with a digest
of what it holds, never over a copy of a later revision; the newest ``BOUND`` files are kept, older ones
removed. A replica is never read while
GitHub answers: it only stands in for a GitHub that did not. A file that is cut short, edited or not
ghstate's is set aside (moved to ``replica/aside/``) with one notice, never a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

BOUND = 100  # checkpoints kept, the most recently seen
KIND = "ghstate-replica"
VERSION = 1
_FIELDS = {"repo": str, "number": int, "title": str, "url": str, "state": str, "branch": str, "revision": int,
           "head": str, "body": str, "seen_at": str}


class Seen(NamedTuple):
    """One checkpoint as this machine last saw it on GitHub."""

    repo: str  # [host/]owner/name: the API URL's host when it is not github.com's
    number: int
    title: str
    url: str
    state: str  # open | closed
    branch: str
    revision: int
    head: str  # the commit of its chain the state is (""; the body was the state: no chain)
    body: str  # the state, as a body ghstate renders (no chain key in its marker)
    seen_at: str  # when it was read or written (UTC, ghstate's format)
    # a trusted author's (only those are kept since the check of who opened an issue): a copy without it, kept by
    # an earlier ghstate that took anyone's issue, is read by number alone, never as a branch's checkpoint
    trusted: bool = False

    def to_data(self) -> dict[str, Any]:
        fields = {name: value for name, value in self._asdict().items() if name in _FIELDS}
        return {"kind": KIND, "version": VERSION, **fields, "trusted": self.trusted, "digest": _digest(fields)}

    @classmethod
    def from_data(cls, data: Any) -> Seen:
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError("not a replica file of ghstate")
        if data.get("version") != VERSION:
            raise ValueError(f"replica version {data.get('version')!r}, not {VERSION}")
        for name, kind in _FIELDS.items():
            value = data.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"its {name} is not a {kind.__name__}")
        if data["number"] < 1 or data["revision"] < 0:
            raise ValueError("its number or revision is out of range")
        fields = {name: data[name] for name in _FIELDS}
        if data.get("digest") != _digest(fields):  # edited since ghstate wrote it: not what GitHub had
            raise ValueError("its content is not what ghstate wrote (edited?)")
        return cls(**fields, trusted=data.get("trusted") is True)


def _digest(fields: dict[str, Any]) -> str:
    """What a replica file's content was when ghstate wrote it (an edit by hand or by another program shows)."""
    import hashlib

    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def repository_key(api_url: str, repo: str) -> str:
    """The repository as a replica names it: ``owner/name``, with the host of a GitHub Enterprise Server."""
    host = re.sub(r"^https?://", "", api_url or "").split("/")[0]
    return repo if host in ("", "api.github.com") else f"{host}/{repo}"


class Replica:
    """The replica folder of one clone (``directory``), for one repository (``repo``)."""

    def __init__(self, directory: Path, repo: str) -> None:
        self.directory = directory
        self.repo = repo
        self.notices: list[str] = []  # files set aside: said as warnings by the command

    def _path(self, number: int) -> Path:
        return self.directory / f"{re.sub(r'[^A-Za-z0-9_.-]', '+', self.repo)}--{number}.json"

    def keep(self, seen: Seen) -> None:
        """Keep ``seen`` as the newest copy of its checkpoint (atomically), then hold the folder to its bound;
        never over a copy of a later revision (a slow read ending after this machine's own later write: the
        copy never steps back). A folder that cannot be written is passed over: the replica is a convenience,
        never a failure."""
        from ghstate.local.store import atomic_write, file_lock

        with contextlib.suppress(OSError), file_lock(self.directory / ".lock", wait=2.0):
            there = self._read(self._path(seen.number))
            if there is not None and there.revision > seen.revision:
                return
            atomic_write(self._path(seen.number), json.dumps(seen.to_data(), ensure_ascii=False) + "\n")
            self._bound()

    def _bound(self) -> None:
        names = [n for n in os.listdir(self.directory) if n.endswith(".json")]
        if len(names) <= BOUND:
            return
        def age(name: str) -> float:
            try:
                return (self.directory / name).stat().st_mtime
            except OSError:
                return 0.0
        for name in sorted(names, key=age)[: len(names) - BOUND]:
            with contextlib.suppress(OSError):
                (self.directory / name).unlink()

    def get(self, number: int) -> Seen | None:
        """Checkpoint ``number`` as last seen; None when it never was (or its file had to be set aside)."""
        return self._read(self._path(number))

    def by_branch(self, branch: str, closed: bool = False) -> Seen | None:
        """The checkpoint of ``branch`` as last seen: the most recently seen open one that names it, else
        (``closed``, as a branch's lookup on GitHub) the most recently seen closed one; never a child task
        (``ghstate split``'s children carry their parent's branch, and are no branch's checkpoint)."""
        from ghstate.core.parse import is_child

        found = [seen for seen in self._all() if seen.branch == branch and (closed or seen.state == "open")
                 and seen.trusted and not is_child(seen.body)]
        found.sort(key=lambda seen: (seen.state == "open", seen.seen_at))
        return found[-1] if found else None

    def _all(self) -> Iterator[Seen]:
        """This repository's files: its name, then ``--N.json`` (``a/b``'s are not ``a/b--2``'s)."""
        mine = re.compile(re.escape(f"{re.sub(r'[^A-Za-z0-9_.-]', '+', self.repo)}--") + r"[1-9][0-9]*\.json")
        try:
            names = sorted(n for n in os.listdir(self.directory) if mine.fullmatch(n))
        except OSError:
            return
        for name in names:
            seen = self._read(self.directory / name)
            if seen is not None:
                yield seen

    def _read(self, path: Path) -> Seen | None:
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self._aside(path, str(exc))
        try:
            seen = Seen.from_data(json.loads(raw))
        except (ValueError, TypeError, RecursionError) as exc:  # cut short, edited, or not ghstate's
            return self._aside(path, str(exc) or type(exc).__name__)
        if seen.repo != self.repo or path.name != self._path(seen.number).name:
            return self._aside(path, f"it holds #{seen.number} of {seen.repo}, not what its name says")
        return seen

    def _aside(self, path: Path, why: str) -> None:
        """Move a replica file that cannot be trusted out of the way (kept for a person to look at), said once."""
        aside = self.directory / "aside" / path.name
        try:
            aside.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, aside)
            where = f"moved to {aside}"
        except OSError:
            where = "left where it is"
        self.notices.append(f"this machine's copy of a checkpoint, {path}, could not be read "
                            f"({' '.join(why.split())[:200]}): it was set aside ({where}) and is not used")
        return None
