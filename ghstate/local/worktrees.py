"""A worktree's own store taken into the clone's: ``.ghstate/`` of a worktree held the local store before it became
one per clone (``Settings.store_dir``, ``<git common dir>/ghstate``). The first command run there afterwards takes
what it holds, under the clone's lock, so that nothing it held is lost and every worktree finds it:

- a checkpoint (``N.md`` or ``closed/N.md``, with ``chain/N/``, ``log/N.jsonl`` and ``claims/N/``) keeps its
  number when the clone's store has nothing numbered so;
- one the clone's store holds already (another worktree had the same committed ``.ghstate/``: every
  generation of its chain is there byte for byte, and its body is one the clone's chain holds) is not taken
  twice, but what it holds beyond the clone's is: a close made there (the clone's copy is closed too), the
  newer generations of a claim made there; one whose chain goes on from the clone's takes its newer
  generations (the clone's ``N.md`` reads as its chain's head);
- any other is taken under the next number nothing has (a checkpoint both worktrees went on writing is
  kept twice, rather than one copy lost); the numbers its marker names (a child's parent, the children it
  waits for) are changed with those it moved, in ``N.md`` and its chain's records alike (``renumber``). A
  phase line's ``(#N)`` is text, left as it is: each move is said, and recorded in ``moved.log``;
- kept writes (``pending/``) of this machine are moved as they are (their names are unique), claims with
  their checkpoint.

What git tracks there, or would show as untracked (``shown``: a store an older ghstate committed, which every
clone of the repository has), is copied and left in place, never deleted from the work tree: a command, the
hooks and the readers included, changes nothing ``git status`` shows. What was taken from such files is
recorded in ``taken.json`` of the clone's store (by the digest of each checkpoint's files, and the folder's
fingerprint), so that it is taken once, and how to stop tracking them is said once. A kept write among them
is never taken: a repository's file is no write of this machine's, and is never sent with its token (said
once). Only files git ignores (this machine's own, as the ``.gitignore`` ghstate writes there says) are moved.

A process killed in the middle leaves what it had not moved yet where it was, and the next command goes on;
at worst a checkpoint is found twice, never lost. What is left in ``.ghstate/`` is the worktree's own: the
config file, templates, and what git tracks there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from ghstate.local.store import _DIGITS, _OLD_LOG, LocalStore, _numbered, atomic_write, holds_store

MOVED = "moved.log"  # in the clone's store: one line per checkpoint moved (when, from where, which number)
TAKEN = "taken.json"  # in the clone's store: what was taken from files left in a worktree (taken once)
TAKEN_KEPT = 200  # digests of checkpoints taken that the record keeps per folder


def gather(old: Path, store: LocalStore, own: Callable[[], frozenset[str] | None] = lambda: None,
           root: Path | None = None) -> list[str]:
    """Take the store ``old`` holds into ``store``; what was done, in words ([] when there was nothing new).
    ``own``: the paths under ``old`` git ignores, this machine's own (asked only when something there is new;
    None: git could not tell, and no file is taken as this machine's); every other file is the repository's (one
    git tracks or shows, or one behind a committed link or in a submodule, which git lists not at all). ``root``:
    the work tree, for the paths a person types."""
    if old.resolve() == store.directory.resolve() or not holds_store(old):
        return []
    with store.lock():
        if not holds_store(old):  # another command, in another worktree of the same folder, moved it
            return []
        taken = _Taken.load(store.directory, old)
        if taken.stamp == _fingerprint(old):  # nothing there but what was taken already
            return []
        mine = own()
        left = (lambda _: True) if mine is None or old.is_symlink() else (lambda rel: rel not in mine)
        src = LocalStore(old)
        numbers = [n for n in sorted({*src.numbers(), *src._closed_numbers(), *_numbered(old / "chain", _DIGITS),
                                      *_numbered(old / "log", _OLD_LOG)}) if _digest(src, n) not in taken.digests]
        stays = {n for n in numbers if any(left(rel) for rel in _files_of(src, n))}
        plan = _plan(src, store, numbers)
        renumbered = {n: to for n, to in plan.items() if to is not None and to != n}
        said = []
        for n in numbers:
            if n in stays:
                taken.digests.append(_digest(src, n))
            said += _move(src, store, n, plan[n], renumbered, keep=n in stays)
        kept, refused = _move_pending(src.pending_dir, store.pending_dir, left)
        _drop_claims(old, left)
        for name in ("chain", "closed", "log", "pending"):
            with contextlib.suppress(OSError):
                (old / name).rmdir()  # emptied
        _record(store.directory, old, [(n, plan[n]) for n in numbers])
        store.mark_from_repository(plan[n] or n for n in stays)  # the repository's text: no branch's checkpoint
        taken.stamp = _fingerprint(old)
        taken.save()
    return _words(old, store, root, plan, stays, kept, [*said, *refused], left)


def _words(old: Path, store: LocalStore, root: Path | None, plan: dict[int, int | None], stays: set[int],
           kept: int, said: list[str], left: Callable[[str], bool]) -> list[str]:
    """What a take did, for a person: one note."""
    parts = [f"#{n} as #{to}" if to and to != n else f"#{n}" if to else f"#{n} (held by the clone's #{n} already)"
             for n, to in plan.items()]
    if kept:
        parts.append(f"{kept} write{'s' if kept != 1 else ''} kept for push")
    lines = [f"{'copied' if stays else 'moved'} this worktree's local store ({old}) into the clone's, which every "
             f"worktree shares ({store.directory}): {', '.join(parts)}"] if parts else []
    lines += said
    if stays:
        where = os.path.relpath(old, root) if root is not None else str(old)
        parts = [name for name in _names(old) if name in STORE_PARTS or (name.endswith(".md") and name[:-3].isdigit())]
        tops = sorted(name for name in parts if any(left(rel) for rel in _beneath(old, name)))
        lines.append(f"git tracks that store's files, so they were left in the work tree: the store is the "
                     f"clone's now, not kept in git, and 'git rm --cached -r {' '.join(f'{where}/{t}' for t in tops)}' "
                     "stops tracking them (docs/checkpoint.md, 'Where the local store is')")
    elif plan:
        lines.append("the store is not kept in git (docs/checkpoint.md, 'Where the local store is')")
    return ["; ".join(lines)] if lines else []


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _beneath(old: Path, name: str) -> list[str]:
    """``name`` of ``old`` (a file, or a folder's files, followed as a listing does), relative to ``old``."""
    path = old / name
    if not path.is_dir():
        return [name]
    return [Path(current, f).relative_to(old).as_posix() for current, _, files in os.walk(path, followlinks=True)
            for f in files] or [name]


class _Taken:
    """What was taken from one folder whose files stay (``TAKEN`` in the clone's store): the digests of the
    checkpoints taken, and the folder's fingerprint when it was last looked at."""

    def __init__(self, path: Path, key: str, data: dict) -> None:
        self.path, self.key, self.data = path, key, data
        mine = data.get(key) if isinstance(data.get(key), dict) else {}
        self.stamp = str(mine.get("stamp") or "")
        self.digests = [d for d in mine.get("taken") or () if isinstance(d, str)]

    @classmethod
    def load(cls, directory: Path, old: Path) -> _Taken:
        path = directory / TAKEN
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        folders = data.get("folders") if isinstance(data, dict) and isinstance(data.get("folders"), dict) else {}
        return cls(path, str(old.resolve()), folders)

    def save(self) -> None:
        self.data[self.key] = {"stamp": self.stamp, "taken": self.digests[-TAKEN_KEPT:]}
        with contextlib.suppress(OSError):
            atomic_write(self.path, json.dumps({"version": 1, "folders": self.data}, ensure_ascii=False) + "\n")


STORE_PARTS = ("chain", "closed", "log", "claims", "pending")


def _fingerprint(old: Path) -> str:
    """The store files of ``old`` as they are (names, sizes, times): one listing of each folder."""
    entries = []
    for folder in (old, *(old / part for part in STORE_PARTS)):
        for current, dirs, names in os.walk(folder):
            if current == str(old):
                dirs[:] = []  # its folders are walked one by one above
            for name in names:
                path = Path(current) / name
                rel = path.relative_to(old).as_posix()
                if name.startswith(".") or (current == str(old) and not (name.endswith(".md") and name[:-3].isdigit())):
                    continue
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    entries.append(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(entries)).encode()).hexdigest()[:32]


def _files_of(src: LocalStore, n: int) -> list[str]:
    """The files of checkpoint ``n`` in ``src``, relative to its folder."""
    out = [p for p in (src.path(n), src.closed_path(n), src._old_log(n)) if p.is_file()]
    for folder in (src._chain(n), src.directory / "claims" / str(n)):
        with contextlib.suppress(OSError):
            out += [folder / name for name in os.listdir(folder)]
    return [p.relative_to(src.directory).as_posix() for p in out]


def _digest(src: LocalStore, n: int) -> str:
    """What checkpoint ``n`` of ``src`` holds, all its files: taken once."""
    h = hashlib.sha256()
    for rel in sorted(_files_of(src, n)):
        with contextlib.suppress(OSError):
            h.update(rel.encode() + b"\0" + (src.directory / rel).read_bytes() + b"\0")
    return h.hexdigest()[:32]


def _plan(src: LocalStore, store: LocalStore, numbers: list[int]) -> dict[int, int | None]:
    """The number each checkpoint of ``src`` gets in ``store`` (None: it is there already): its own when
    nothing has it there, the same when it is held already, its chain goes on from the clone's or a move of it
    was cut short, else the next free."""
    plan: dict[int, int | None] = {}
    reserved: set[int] = set()

    def free(number: int) -> bool:
        return number not in reserved and _free(store, number)

    for n in numbers:
        closed = not src.path(n).exists() and src.closed_path(n).exists()
        body_path = src.closed_path(n) if closed else src.path(n)
        there = next((p for p in (store.path(n), store.closed_path(n)) if p.exists()), None)
        held = n not in reserved and _chain_held(src, store, n)
        if free(n):
            target: int | None = n
        elif held and there is not None and _body_held(body_path, store, n, there):
            target = None
        elif held and there is None and src._generations(n):
            target = n  # a move cut short: its chain is there, its body not yet
        elif n not in reserved and _chain_held(store, src, n) and store._generations(n):
            target = n  # its chain goes on from the clone's (which reads its newer generations as its head)
        else:
            target = max(store.taken(), *reserved, 0) + 1
            while not free(target):
                target += 1
        plan[n] = target
        reserved.add(target or n)
    return plan


def _move(src: LocalStore, store: LocalStore, n: int, target: int | None, renumbered: dict[int, int],
          keep: bool = False) -> list[str]:
    """Checkpoint ``n`` of ``src`` taken into ``store`` as ``target`` (None: it is there already), the numbers
    of ``renumbered`` its marker names (its parent, the children it waits for) changed with it; what it holds
    beyond the clone's copy (a close, a claim's newer generations) taken too. ``keep``: its files stay where
    they are (git tracks them). What the take did beyond the plain, in words."""
    closed = not src.path(n).exists() and src.closed_path(n).exists()
    body_path = src.closed_path(n) if closed else src.path(n)
    said = _claims(src.directory / "claims" / str(n), store.directory / "claims" / str(target or n), target or n)
    if target is not None:
        _copy_tree(src._chain(n), store._chain(target), n, target, renumbered)
        if src._old_log(n).is_file():
            _copy_file(src._old_log(n), store._old_log(target))
        if body_path.is_file():  # last: the number is taken once the body is there
            data = body_path.read_bytes()
            with contextlib.suppress(UnicodeDecodeError):
                data = renumber(data.decode("utf-8"), renumbered).encode("utf-8")
            _create(store.closed_path(target) if closed else store.path(target), data)
    if closed and store.path(target or n).exists():  # closed there: closed in the clone's store too
        store.closed_path(target or n).parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.replace(store.path(target or n), store.closed_path(target or n))
            said.append(f"#{target or n} closed, as it was closed there")
    if keep:
        return said
    for piece in (src._chain(n), src.directory / "claims" / str(n)):
        shutil.rmtree(piece, ignore_errors=True)
    for piece in (src._old_log(n), body_path):
        with contextlib.suppress(OSError):
            piece.unlink()
    return said


def _claims(source: Path, target: Path, number: int) -> list[str]:
    """A claim's generations (``claims/N/G.json``) taken into the clone's store: all of them where it has none,
    else those after its newest, when the ones both have are alike (the claim went on there); a claim that went
    another way in each stays the clone's, said."""
    try:
        names = sorted(os.listdir(source), key=lambda name: (len(name), name))
    except OSError:
        return []
    try:
        theirs = set(os.listdir(target))
    except OSError:
        theirs = set()
    if not theirs:
        _copy_tree(source, target)
        return []
    try:
        alike = all((source / name).read_bytes() == (target / name).read_bytes() for name in names if name in theirs)
    except OSError:
        alike = False
    if not alike:
        return [f"the claim on #{number} went another way there than in the clone's store, whose claim stands"]
    for name in names:
        if name not in theirs and not name.startswith("."):
            _copy_file(source / name, target / name)
    return []


def renumber(text: str, numbers: dict[int, int]) -> str:
    """A body (a mirror, a chain's record of one) whose marker names checkpoints by the numbers they had: its
    task's parent and the children it waits for given the numbers they have now. A mirror stays one (its key's
    digest made again for the new text), a person's edit stays an edit; any other text is returned as it is."""
    import json

    from ghstate.core.chain import digest, embed, split
    from ghstate.core.marker import MARKER_LINE

    body, key = split(text)
    match = MARKER_LINE.search(body) if numbers else None
    try:
        data = json.loads(match.group(1)) if match else None
    except (ValueError, RecursionError):
        data = None
    task = data.get("task") if isinstance(data, dict) else None
    if match is None or not isinstance(data, dict) or not isinstance(task, dict):
        return text
    new = {**task}
    if isinstance(task.get("parent"), int):
        new["parent"] = numbers.get(task["parent"], task["parent"])
    if isinstance(task.get("after"), list):
        new["after"] = sorted(numbers.get(n, n) if isinstance(n, int) else n for n in task["after"]
                              if isinstance(n, int))
    if new == task:
        return text
    raw = json.dumps({**data, "task": new}, ensure_ascii=False, separators=(",", ":"))
    changed = body[: match.start(1)] + raw.replace("<", "\\u003c").replace(">", "\\u003e") + body[match.end(1):]
    if key is None:
        return changed
    return embed(changed, key.head, protected=bool(key.digest) and key.digest == digest(body))


def _free(store: LocalStore, n: int) -> bool:
    return not any(p.exists() for p in (store.path(n), store.closed_path(n), store._chain(n), store._old_log(n)))


def _chain_held(src: LocalStore, store: LocalStore, n: int) -> bool:
    """Whether every generation of ``src``'s chain of ``n`` is in ``store``'s, byte for byte."""
    chain, theirs = src._chain(n), store._chain(n)
    try:
        return all((chain / name).read_bytes() == (theirs / name).read_bytes()
                   for name in (os.listdir(chain) if chain.is_dir() else ()))
    except OSError:
        return False


def _body_held(body_path: Path, store: LocalStore, n: int, there: Path) -> bool:
    """Whether the body ``body_path`` holds is ``store``'s ``n`` as it is (``there``) or as one of its chain's
    generations holds it (none: it is held, nothing to move)."""
    from ghstate.core.chain import digest, split

    try:
        body = body_path.read_text(encoding="utf-8") if body_path.is_file() else None
        if body is None:
            return True
        known = {digest(split(there.read_text(encoding="utf-8"))[0])}
    except (OSError, UnicodeDecodeError):
        return False
    links = [link for g in store._generations(n) if (link := store._link(n, g)) is not None]
    known |= {digest(link.body) for link in links} | {digest(link.adopted) for link in links if link.adopted}
    return digest(split(body)[0]) in known


def _copy_tree(source: Path, target: Path, number: int = 0, to: int = 0,
               renumbered: dict[int, int] | None = None) -> None:
    """The files of ``source`` copied into ``target``; a chain's records (``number`` moved ``to``) name the
    checkpoint's number now, and their bodies the numbers of ``renumbered`` as they are now."""
    import json

    try:
        names = sorted(os.listdir(source))
    except OSError:
        return
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        data = (source / name).read_bytes()
        if (to != number or renumbered) and name.endswith(".json"):
            with contextlib.suppress(ValueError):
                record = json.loads(data)
                if isinstance(record, dict) and record.get("checkpoint") == number:
                    record = {**record, "checkpoint": to or number, **{
                        field: renumber(record[field], renumbered or {}) for field in ("body", "adopted")
                        if isinstance(record.get(field), str)}}
                    data = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        _create(target / name, data)


def _copy_file(source: Path, target: Path) -> None:
    _create(target, source.read_bytes())


def _create(path: Path, data: bytes) -> None:
    """``path`` made whole with ``data`` (bytes as they were: a file that is not UTF-8 is moved too), only if
    nothing has that name."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _move_pending(source: Path, target: Path, left: Callable[[str], bool]) -> tuple[int, list[str]]:
    """This machine's kept writes moved (their names, made unique when they were kept, stay); how many, and
    what was left: a kept-write file git tracks or shows is a repository's, never this machine's write."""
    try:
        names = sorted(os.listdir(source))
    except OSError:
        return 0, []
    mine = [name for name in names if not name.startswith(".") and not left(f"pending/{name}")]
    theirs = [name for name in names if name.endswith(".json") and left(f"pending/{name}")]
    if mine:
        target.mkdir(parents=True, exist_ok=True)
    for name in mine:  # a lock or a temporary file of the old folder's is not a kept write
        try:
            os.replace(source / name, target / name)
        except OSError:  # another file system: copied, then removed
            shutil.copy2(source / name, target / name)
            (source / name).unlink()
    said = [f"{len(theirs)} kept-write file{'s' if len(theirs) != 1 else ''} git tracks in {source} "
            f"{'were' if len(theirs) != 1 else 'was'} left there: a repository's files are never this machine's "
            "writes, and are never sent"] if theirs else []
    return sum(name.endswith(".json") for name in mine), said


def _drop_claims(old: Path, left: Callable[[str], bool]) -> None:
    """What is left in ``claims/`` once each checkpoint took its own (leases of nothing), but what git tracks."""
    for current, _, names in os.walk(old / "claims", topdown=False):
        for name in names:
            path = Path(current) / name
            if not left(path.relative_to(old).as_posix()):
                with contextlib.suppress(OSError):
                    path.unlink()
        with contextlib.suppress(OSError):
            Path(current).rmdir()


def _record(directory: Path, old: Path, moves: list[tuple[int, int | None]]) -> None:
    """One line per checkpoint moved, in ``moved.log`` of the clone's store: found later by whoever looks."""
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = "".join(f"{at} {old} #{n} -> {f'#{to}' if to else f'held already as #{n}'}\n" for n, to in moves)
    with contextlib.suppress(OSError), open(directory / MOVED, "a", encoding="utf-8") as fh:
        fh.write(lines)
