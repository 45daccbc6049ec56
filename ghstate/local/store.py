"""The local store: one per clone, ``ghstate/`` in the git folder every worktree of the clone shares
(``Settings.store_dir``; ``GHSTATE_DIR`` when set, ``.ghstate/`` outside git), one markdown file per checkpoint.

``1.md``, ``2.md``, … hold exactly the body an issue would carry, written atomically (temporary file,
fsync, rename; a new one appears whole or not at all). ``chain/N/G.json`` is checkpoint N's chain of
writes (``ghstate.core.chain``): generation G is created only if nothing has it, its record whole in it
(the compare-and-swap of the local store, as claims use), and the body is its mirror. ``pending/``
keeps writes meant for GitHub that could not be made yet. A lock file serialises writers on one
machine; the chain keeps writers apart wherever the folder is shared. A number is never given again while
anything of it is there, and an ``N.md`` newer than its chain is merged into it, never read as the older head.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.marker import text
from ghstate.core.model import Revision
from ghstate.errors import InputError, NotFound
from ghstate.store import BodyVersion, Stored, StoreKind, Unchecked, WriteOutcome

if TYPE_CHECKING:  # pragma: no cover  (a reader that needs no chain or kept write never loads them)
    from ghstate.core.chain import Head, Link
    from ghstate.core.intent import WriteSpec

_NUMBERED = re.compile(r"^([1-9][0-9]{0,8})\.md$")
_GENERATION = re.compile(r"^([1-9][0-9]{0,9})\.json$")
_DIGITS = re.compile(r"^([1-9][0-9]{0,8})$")
_OLD_LOG = re.compile(r"^([1-9][0-9]{0,8})\.jsonl$")
SEARCHED_GENERATIONS = 100  # newest generations looked through for a write


def _temp_beside(path: Path, text: str) -> str:
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
    tmp = _temp_beside(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def file_lock(path: Path, wait: float | None = None) -> Iterator[bool]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the duration. ``wait``: seconds
    (of the real clock) to try for it, after which the holder goes on without it (False), as it does when
    the file cannot be opened; None: wait as long as it takes (and an unusable folder is an error)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a+b")  # noqa: SIM115 - closed below, whatever the body does
    except OSError:
        if wait is None:
            raise
        yield False
        return
    with fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks, writes stay atomic
            yield True
            return
        if not _flock(fh.fileno(), fcntl, wait):
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _flock(fd: int, fcntl: Any, wait: float | None) -> bool:
    """Take the lock on ``fd``: at once, or polling for ``wait`` seconds (False when it did not come)."""
    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def atomic_create(path: Path, text: str) -> bool:
    """Write ``path`` whole, only if it does not exist (False then). A process killed at any moment
    leaves either no ``path`` or all of it, never an empty placeholder."""
    tmp = _temp_beside(path, text)
    try:
        os.link(tmp, path)  # fails if path exists: create-if-absent, with its content already there
        return True
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


GITIGNORE = ".gitignore"
# What of ``.ghstate/`` belongs in git: config.toml and templates/ (the repository's policy) and the .gitignore
# itself. Everything else there is this machine's: the hooks' seen-file, the lock files, leftovers of an
# interrupted atomic write (and reported/, which an older ghstate wrote), and a local store when GHSTATE_DIR puts
# one there (or a worktree's own, from before the store was the clone's): its checkpoints, chains, claims and
# writes kept for GitHub. A store in git is rolled back by every checkout and stash of another revision.
_HEADER = """# Written by ghstate. In git: config.toml, templates/ and this file. The rest is this machine's:
# the hooks' seen-file, locks and a local store (it is the clone's, in the git folder; kept out of git even
# where GHSTATE_DIR puts it here: a checkout or stash would roll its checkpoints back).
"""
# The one list of what ghstate keeps out of git, each line with what it is. ``record``: a file only this
# machine's ghstate reads (what sessions were given, locks, an older ghstate's reports), which ``init --remove``
# deletes with the .gitignore when nothing else is left; ``store``: a local store's checkpoints, chains, claims
# and writes kept for GitHub, which it never deletes; ``leftover``: an interrupted atomic write's; ``working``:
# the draft the /checkpoint command writes and reads back (templates/claude-checkpoint.md). The local store's
# first write, ``init`` and ``init --remove`` all read this list.
KEPT_OUT: tuple[tuple[str, str], ...] = (
    ("/seen.json", "record"),
    ("/.seen.lock", "record"),
    ("/.lock", "record"),
    ("/pending/", "store"),
    ("/reported/", "record"),
    ("/.*.tmp", "leftover"),
    ("/[1-9]*.md", "store"),
    ("/chain/", "store"),
    ("/closed/", "store"),
    ("/claims/", "store"),
    ("/log/", "store"),
    ("/moved.log", "store"),
    ("/replica/", "store"),
    ("/draft.md", "working"),
)
IGNORED = _HEADER + "".join(f"{pattern}\n" for pattern, _ in KEPT_OUT)
# The names of the ``record`` lines, as the folder lists them.
RECORDS = tuple(pattern.strip("/") for pattern, what in KEPT_OUT if what == "record")


# The first lines earlier versions wrote at the top of IGNORED: ``init --remove`` knows a .gitignore of theirs
# as ghstate's own too.
EARLIER_HEADERS = (
    "# Written by ghstate: this machine's own files, kept out of git. N.md and chain/ are committable.",
    "# Written by ghstate: this machine's own files, kept out of git. Checkpoints (N.md, log/) are committable.",
)


def keep_out_of_git(directory: Path) -> None:
    """Give the store folder its ``.gitignore`` the first time ghstate writes there (one stat after that)."""
    path = directory / GITIGNORE
    if not path.exists():
        with contextlib.suppress(OSError):
            atomic_create(path, IGNORED)


STORE_NAMES = ("chain", "closed", "pending", "claims", "log")  # a store's folders, beside its N.md files


def holds_store(folder: Path, kept_writes_only: bool = False) -> bool:
    """Whether ``folder`` (a worktree's ``.ghstate/``) holds a local store (``kept_writes_only``: writes kept for
    GitHub, ``pending/``): one listing."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    if "pending" in names:  # an empty pending/, or one with a lock alone, holds no kept write
        try:
            kept = any(name.endswith(".json") and not name.startswith(".") for name in os.listdir(folder / "pending"))
        except OSError:
            kept = False
        if kept:
            return True
    if kept_writes_only:
        return False
    return any((name in STORE_NAMES and name != "pending") or _NUMBERED.match(name) for name in names)


class LocalStore:
    kind: StoreKind = "local"
    remote = False

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.notices: list[str] = []  # problems worth a warning that did not stop the command
        self.unchecked: list[Unchecked] = []  # (a mirror here replaces one file: what it replaced is known)
        self._holding = False  # this store holds the lock (``lock``): a close inside a write takes it not again
        # The files of a folder of the work tree that git ignores (``gitinfo.ignored``), when the store is in the
        # work tree (GHSTATE_DIR there): a kept-write file not among them is the repository's, never read
        self.ignored: Callable[[Path], frozenset[str] | None] | None = None

    # ---------------------------------------------------------------------------------- paths

    def path(self, number: int) -> Path:
        return self.directory / f"{number}.md"

    def closed_path(self, number: int) -> Path:
        """Where a closed checkpoint lives: ``closed/N.md``, out of ``list`` and branch lookups, its number
        never given again, its chain where it was."""
        return self.directory / "closed" / f"{number}.md"

    def _chain(self, number: int) -> Path:
        return self.directory / "chain" / str(number)

    def _old_log(self, number: int) -> Path:
        return self.directory / "log" / f"{number}.jsonl"

    def numbers(self) -> list[int]:
        if self.directory.exists() and not self.directory.is_dir():  # a store that cannot be, not one with none
            raise InputError(f"the local store {self.directory} is a file, not a folder; point GHSTATE_DIR at a "
                             "folder, or move the file away")
        return _numbered(self.directory, _NUMBERED)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Serialise writers on this machine (two agents in one repository); held already by this store (a
        close inside a write), it is not taken twice (a second flock of the file by one process would wait
        for itself)."""
        if self._holding:
            return contextlib.nullcontext()
        keep_out_of_git(self.directory)
        return self._held(file_lock(self.directory / ".lock"))

    @contextlib.contextmanager
    def _held(self, lock: contextlib.AbstractContextManager[Any]) -> Iterator[None]:
        with lock:
            self._holding = True
            try:
                yield
            finally:
                self._holding = False

    # ----------------------------------------------------------------------------- checkpoints

    def get(self, number: int) -> Stored:
        path = self.path(number)
        if not path.exists() and self.closed_path(number).exists():
            path = self.closed_path(number)
        try:
            raw = path.read_bytes()
            stat = path.stat()
            if not raw:  # left by a create that an earlier version did not finish, or emptied by hand
                raise FileNotFoundError(path)
        except FileNotFoundError:
            kept = self._from_chain(number, path)
            if kept is not None:
                return kept
            known = [n for n in self.numbers() if n != number]
            hint = f"local checkpoints are {', '.join(map(str, known))}" if known else "there are none yet"
            raise NotFound(f"no local checkpoint #{number} in {self.directory}; {hint}") from None
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; restore it from git or delete it") from None
        head = self._head(number)
        if head is not None and head.link is not None:
            head = self._caught_up(number, body, head)
        return Stored(number, "", body, str(path), version=f"{stat.st_mtime_ns}:{stat.st_size}",
                      state="closed" if path.parent.name == "closed" else "open", head=head,
                      edited_at=_file_time(stat.st_mtime), **self._provenance(number))

    # A checkpoint copied from a store the repository committed (``local.worktrees``): whoever could commit to the
    # repository wrote it, so, as an issue an untrusted author opened, it is no branch's checkpoint (``find_branch``)
    # until this machine writes it by its number (``append``: the person chose it).
    FROM_REPOSITORY = "repository.json"

    def from_repository(self) -> set[int]:
        """The numbers of the checkpoints copied from a store the repository committed, not written here since."""
        try:
            data = json.loads((self.directory / self.FROM_REPOSITORY).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        numbers = data.get("numbers") if isinstance(data, dict) else None
        return {n for n in numbers if isinstance(n, int) and not isinstance(n, bool)} if isinstance(numbers, list) \
            else set()

    def mark_from_repository(self, numbers: Iterable[int], mine: bool = False) -> None:
        """Record ``numbers`` as copied from the repository's committed store (``mine``: as this machine's now)."""
        known = self.from_repository()
        updated = known - set(numbers) if mine else known | set(numbers)
        if updated != known:
            atomic_write(self.directory / self.FROM_REPOSITORY,
                         json.dumps({"version": 1, "numbers": sorted(updated)}) + "\n")

    def _provenance(self, number: int) -> dict[str, object]:
        if number not in self.from_repository():
            return {}
        return {"author": "a store committed in the repository", "association": "COMMITTED", "trusted": False}

    def _from_chain(self, number: int, path: Path) -> Stored | None:
        """A checkpoint whose ``N.md`` is empty or gone (an editor's crash, a truncation, a file deleted or taken
        away by a ``git stash`` of a committed store) while its chain holds it: its head's body, read as the
        mirror (said); the next write writes the file again. None when there is no chain."""
        from ghstate.core.chain import embed

        head = self._head(number)
        if head is None or head.link is None:
            return None
        what = "is empty" if path.exists() else "is gone"
        said = f"local checkpoint #{number}: {path} {what}"
        if any(n.startswith(said) for n in self.notices):
            said = ""  # read again in this command (a write reads before and after): said once
        if said:
            self.notices.append(f"{said}; read from its chain ({self._chain(number)}, revision {head.link.revision}), "
                                "and written again by its next write")
        stat = (self._chain(number) / f"{head.oid}.json").stat()
        return Stored(number, "", embed(head.link.body, head.oid), str(self.path(number)),
                      version=f"{stat.st_mtime_ns}:0", state="open", head=head, edited_at=_file_time(stat.st_mtime))

    def _readable(self, numbers: Iterable[int]) -> Iterator[Stored]:
        """The checkpoints of ``numbers`` that can be read; the others become notices, not failures."""
        for number in numbers:
            try:
                yield self.get(number)
            except InputError as exc:
                self.notices.append(str(exc))
            except NotFound:  # removed meanwhile
                continue

    def list_open(self, bodies: bool = True) -> list[Stored]:
        return list(self._readable(self.numbers()))

    def list_all(self) -> list[Stored]:
        """The open checkpoints and the closed ones (``closed/``), by number."""
        return list(self._readable(sorted({*self.numbers(), *self._closed_numbers()})))

    def iter_open(self, heads: bool = False, bodies: bool = True, page: int = 0) -> Iterator[Stored]:
        """Checkpoints, newest first, read one at a time (branch lookup stops at the first match)."""
        return self._readable(reversed(self.numbers()))

    def find_branch(self, branch: str) -> Stored | None:
        """The newest open checkpoint whose marker names ``branch``, else the newest closed one (``closed/``);
        a marker broken by hand that still names it when there is none. Files are cheap to read: no index."""
        from ghstate.core.parse import branch_match
        from ghstate.store import passed_over

        broken: Stored | None = None
        for stored in self.iter_open():
            found = branch_match(stored.body, stored.title, branch)
            if found and not stored.trusted:  # copied from the repository's committed store: not this machine's
                passed_over(self.notices, stored.number, stored.author, stored.association, branch)
                continue
            if found == 2:
                return stored
            broken = broken or (stored if found else None)
        return broken or next((stored for stored in self._readable(reversed(self._closed_numbers()))
                               if stored.trusted and branch_match(stored.body, stored.title, branch) == 2), None)

    def pull_request(self, branch: str) -> None:
        return None  # no pull requests here (``ghstate.git``'s merged branches stand for them: stale)

    def index_branch(self, stored: Stored, branch: str, leaving: str = "") -> int:
        return stored.number  # no index: the files are looked through (writers on this machine hold the lock)

    def taken(self) -> int:
        """The highest number anything of the store holds: a checkpoint open or closed, a chain, an old log.
        A number whose ``N.md`` is gone (deleted by hand, or taken away by a ``git stash`` or checkout of a
        committed store) still has its history, and is never given to another checkpoint."""
        return max([*self.numbers(), *self._closed_numbers(), *_numbered(self.directory / "chain", _DIGITS),
                    *_numbered(self.directory / "log", _OLD_LOG)], default=0)

    def create(self, title: str, body: str, unique: str = "") -> Stored:
        """Write the body under the next number nothing has (callers hold the lock), its chain's first generation
        first: from its creation on, the chain holds what ``N.md`` mirrors, so that a person's edit of the file
        (a marker broken by hand, an emptied file) before its second write is merged as theirs, never taken
        for the checkpoint's own record."""
        from ghstate.core.chain import Link, embed, prior_entries, split
        from ghstate.local import parsecache

        text = split(body)[0]
        number = self.taken() + 1
        while not atomic_create(self.path(number), text):  # the number first: stopped here, it is a checkpoint
            number += 1  # whose chain starts with its next write, as before
        link = Link(number, text, prior_entries(parsecache.checkpoint(text)), title)
        if atomic_create(self._chain(number) / "1.json",
                         json.dumps({**link.to_data(), "parent": None}, ensure_ascii=False) + "\n"):
            atomic_write(self.path(number), embed(text, "1"))  # its mirror, now that the chain holds it
        return self.get(number)

    def missing_label(self, stored: Stored) -> str:
        return ""  # every file of the store is a checkpoint

    def close(self, stored: Stored, reason: str = "completed") -> Stored:
        """Move the checkpoint to ``closed/`` (one rename: it is open or closed, never both); the local store
        keeps no reason."""
        with self.lock():  # a write under way ends first (its mirror would make N.md again), or starts after
            self.closed_path(stored.number).parent.mkdir(parents=True, exist_ok=True)
            if self.path(stored.number).exists():
                os.replace(self.path(stored.number), self.closed_path(stored.number))
            elif not self.closed_path(stored.number).exists():  # its file gone, its chain read (``_from_chain``)
                atomic_write(self.closed_path(stored.number), stored.body)
        return self.get(stored.number)

    def _closed_numbers(self) -> list[int]:
        return _numbered(self.directory / "closed", _NUMBERED)

    # ------------------------------------------------------------------------------- the chain

    def _generations(self, number: int) -> list[int]:
        return _numbered(self._chain(number), _GENERATION)

    def _link(self, number: int, generation: int) -> Link | None:
        from ghstate.core.chain import Link

        try:
            data = json.loads((self._chain(number) / f"{generation}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return Link.from_data(data)

    def _head(self, number: int) -> Head | None:
        from ghstate.core.chain import Head

        generations = self._generations(number)
        return Head(str(generations[-1]), self._link(number, generations[-1])) if generations else None

    def retire_branch(self, branch: str, stored: Stored) -> bool:
        """No branch index here: nothing to drop."""
        return False

    def saves(self, stored: Stored) -> tuple[BodyVersion, ...]:
        """The body as read, alone: no versions are kept to tell people's saves apart."""
        return (BodyVersion(stored.body, stored.editor, stored.edited_at),)

    def _caught_up(self, number: int, body: str, head: Head) -> Head:
        """The head, unless ``N.md`` is the mirror of a newer generation than the chain has (its files taken
        away by a ``git stash``, a checkout or ``git clean`` of a committed store, or by hand): then that
        generation is made again from the file, with the writes its marker records since the head, and
        said. What ``N.md`` holds is never rolled back to an older head."""
        from ghstate.core.chain import Entry, Head, Link, split

        text, key = split(body)
        newer = key is not None and _GENERATION.match(f"{key.head}.json") and int(key.head) > int(head.oid)
        if key is None or not newer or head.link is None:
            return head
        from ghstate.local import parsecache

        cp = parsecache.checkpoint(text)
        if cp.meta.revision <= head.link.revision:  # not newer than the chain: the chain's head stands
            return head
        note = f"restored from {number}.md: chain/{number} had lost this write"
        entries = tuple(Entry(Revision(e.revision, at=e.at, agent=e.agent, role=e.role, session=e.session,
                                       event=e.event or "checkpoint", changes=(note,)))
                        for e in cp.executions if e.revision > head.link.revision)
        link = Link(number, text, entries or (Entry(Revision(cp.meta.revision, at=cp.meta.updated_at,
                                                             changes=(note,))),),
                    title=head.link.title, merged=head.link.merged, root=head.link.root or head.oid)
        record = json.dumps({**link.to_data(), "parent": int(head.oid)}, ensure_ascii=False) + "\n"
        try:
            made = atomic_create(self._chain(number) / f"{key.head}.json", record)
        except OSError:  # a folder it cannot write: read as the file says, written by the next write that can
            return Head(key.head, link)
        if made:
            self.notices.append(f"local checkpoint #{number}: {number}.md holds revision {cp.meta.revision}, but "
                                f"its chain ({self._chain(number)}) ended at revision {head.link.revision}: the "
                                f"missing write was made again from {number}.md, so nothing it holds is lost")
        return self._head(number) or head

    def with_head(self, stored: Stored) -> Stored:
        return stored

    def link(self, stored: Stored, oid: str) -> Link | None:
        return self._link(stored.number, int(oid)) if oid.isdigit() else None

    def links(self, stored: Stored, count: int) -> list[tuple[str, Link]]:
        found = ((str(g), self._link(stored.number, g)) for g in reversed(self._generations(stored.number)[-count:]
                                                                                  if count else []))
        return [(oid, link) for oid, link in found if link is not None]

    def look_back(self, stored: Stored, look: Unchecked) -> tuple[BodyVersion, ...] | None:
        """No history to look in: what a mirror replaced was known when it was written."""
        return ()

    def has_write(self, stored: Stored, write: str) -> bool:
        links = self.links(stored, SEARCHED_GENERATIONS) if write else []
        return any(e.write == write for _, link in links for e in link.entries)

    def append(self, stored: Stored, link: Link, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        """The next generation after the head ``stored`` was read with, created only if nothing has it
        (its file is linked into place whole: of any number of writers that read one head, exactly one
        makes the next); then the body written as its mirror."""
        from ghstate.core.chain import embed

        number = stored.number
        seen = int(stored.head.oid) if stored.head is not None else 0
        folder = self._chain(number)  # made by atomic_create
        record = {**link.to_data(), "parent": seen or None}
        if not atomic_create(folder / f"{seen + 1}.json", json.dumps(record, ensure_ascii=False) + "\n"):
            return WriteOutcome(False, self.get(number))
        self.mark_from_repository([number], mine=True)  # written here: this machine's now
        oid = str(seen + 1)
        written = self.mirror(stored, embed(link.body, oid))  # read back with the head as it is now
        return written._replace(moved=written.stored.head is not None and written.stored.head.oid != oid)

    def mirror(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        """Write the body; what was there when it was replaced, if it is not what the write had read (a
        person's save made in between), comes back as ``overwritten``."""
        path = self.closed_path(stored.number) if stored.state == "closed" else self.path(stored.number)
        try:
            there = path.read_text(encoding="utf-8") or stored.body  # an empty file is no checkpoint (``get``)
        except (OSError, UnicodeDecodeError):
            there = stored.body
        atomic_write(path, body)
        overwritten = () if there in (stored.body, body) else (BodyVersion(there),)
        return WriteOutcome(True, self.get(stored.number), overwritten)

    # -------------------------------------------------------------------------------- history

    def notify(self, stored: Stored, text: str) -> str:
        """Nobody to tell: a local checkpoint is read by whoever writes it."""
        return ""

    def revisions(self, number: int) -> list[Revision]:
        """The writes: those an earlier ghstate logged in ``log/N.jsonl`` before the chain, then the chain's."""
        stored = self.get(number)  # a clear error for a checkpoint that does not exist
        out = []
        with contextlib.suppress(OSError):
            for line in self._old_log(number).read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):  # a line broken off: the others stand
                    data = json.loads(line)
                    if isinstance(data, dict) and data.get("revision"):
                        out.append(Revision.from_dict(data))
        logged = {r.revision for r in out}
        for _, link in reversed(self.links(stored, len(self._generations(number)))):
            out.extend(e.revision for e in link.entries if e.revision.revision not in logged)
        return out

    @property
    def pending_dir(self) -> Path:
        return self.directory / "pending"

    def save_pending(self, record: PendingWrite) -> Path:
        """Keep a write meant for GitHub until ``ghstate push``; returns the file it is in."""
        keep_out_of_git(self.directory)
        target = record.write.number or "new"  # named by the nanosecond, so that push replays in order
        path = self.pending_dir / f"{time.time_ns():020d}-{target}-{os.getpid()}-{os.urandom(3).hex()}.json"
        atomic_write(path, json.dumps(record.to_data(), ensure_ascii=False, indent=1) + "\n")
        return path

    @property
    def aside_dir(self) -> Path:
        """Where a kept write GitHub refused for good waits for a person (``pending/aside/``)."""
        return self.pending_dir / "aside"

    def set_aside(self, path: Path, why: str, at: str) -> Path:
        """A kept write GitHub refused for good (``path``, in ``pending/``) moved to ``pending/aside/`` with why
        and when, for a person to drop or send again: no later write waits behind it. Where it is now."""
        target = self.aside_dir / path.name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict):
            atomic_write(target, json.dumps({**data, "set_aside": {"why": why, "at": at}}, ensure_ascii=False,
                                            indent=1) + "\n")
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        return target

    def aside(self) -> list[tuple[Path, PendingWrite | InputError, str]]:
        """The kept writes set aside (``set_aside``), oldest first, each with why."""
        try:
            names = sorted(name for name in os.listdir(self.aside_dir) if name.endswith(".json"))
        except OSError:
            return []
        out: list[tuple[Path, PendingWrite | InputError, str]] = []
        for path, record in self._records(self.aside_dir, names):
            try:
                why = json.loads(path.read_text(encoding="utf-8"))["set_aside"]["why"]
            except (OSError, ValueError, LookupError, TypeError):
                why = ""
            out.append((path, record, str(why)))
        return out

    def pending(self) -> list[tuple[Path, PendingWrite | InputError]]:
        """The kept writes, oldest first; one that cannot be read comes as the error that says so."""
        try:
            names = sorted(name for name in os.listdir(self.pending_dir) if name.endswith(".json"))
        except FileNotFoundError:
            return []
        return self._records(self.pending_dir, names)

    def _records(self, folder: Path, names: list[str]) -> list[tuple[Path, PendingWrite | InputError]]:
        """The kept-write files ``names`` of ``folder``, read; one that cannot be read (or that git tracks: a
        repository's file) comes as the error that says so."""
        own = self.ignored(folder) if self.ignored is not None and names else None
        theirs = {name for name in names if own is not None and name not in own}
        out = []
        for name in names:
            path = folder / name
            record: PendingWrite | InputError
            if name in theirs:
                out.append((path, InputError("git does not ignore this file: it is the repository's, not a write this "
                                             "machine kept, and is never sent (take it out of git and of this "
                                             "folder)")))
                continue
            try:
                record = PendingWrite.from_data(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, LookupError, TypeError, AttributeError, RecursionError) as exc:
                record = InputError(f"the kept write is malformed ({exc or type(exc).__name__}); move it out of "
                                    "the pending folder")
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
        if data.get("version") == 3 and not isinstance(data.get("write"), dict):
            raise ValueError("it holds no write")
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


def _numbered(folder: Path, pattern: re.Pattern[str]) -> list[int]:
    """The numbers the names in ``folder`` that match ``pattern`` carry, in order (none: no such folder)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(m.group(1)) for m in map(pattern.match, names) if m)


def _file_time(seconds: float) -> str:
    """A file's time as ghstate writes times (UTC)."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
