"""A worktree's own store moved into the clone's: ``.ghstate/`` of a worktree held the local store before it
became one per clone (``Settings.store_dir``, ``<git common dir>/ghstate``). The first command run there
afterwards moves what it holds, under the clone's lock, so that nothing it held is lost and every worktree
finds it:

- a checkpoint (``N.md`` or ``closed/N.md``, with ``chain/N/``, ``log/N.jsonl`` and ``claims/N/``) keeps its
  number when the clone's store has nothing numbered so;
- one the clone's store holds already (another worktree had the same committed ``.ghstate/``: every
  generation of its chain is there byte for byte, and its body is one the clone's chain holds) is dropped;
- any other is moved under the next number nothing has (a checkpoint both worktrees went on writing is
  kept twice, rather than one copy lost). References between checkpoints (a child's parent) are not
  renumbered: each move is said, and recorded in ``moved.log`` of the clone's store;
- kept writes (``pending/``) are moved as they are (their names are unique), claims with their checkpoint.

A process killed in the middle leaves what it had not moved yet where it was, and the next command goes on;
at worst a checkpoint is found twice, never lost. What is left in ``.ghstate/`` is the worktree's own: the
config file, templates, the hooks' seen-file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

from ghstate.local.store import _DIGITS, _OLD_LOG, LocalStore, _numbered, holds_store

MOVED = "moved.log"  # in the clone's store: one line per checkpoint moved (when, from where, which number)


def gather(old: Path, store: LocalStore) -> list[str]:
    """Move the store ``old`` holds into ``store``; what was done, in words ([] when there was nothing)."""
    if old.resolve() == store.directory.resolve() or not holds_store(old):
        return []
    with store.lock():
        if not holds_store(old):  # another command, in another worktree of the same folder, moved it
            return []
        src = LocalStore(old)
        numbers = sorted({*src.numbers(), *src._closed_numbers(), *_numbered(old / "chain", _DIGITS),
                          *_numbered(old / "log", _OLD_LOG)})
        moves = [(n, _move(src, store, n)) for n in numbers]
        kept = _move_pending(src.pending_dir, store.pending_dir)
        with contextlib.suppress(OSError):
            shutil.rmtree(old / "claims")  # claims of no checkpoint: leases of nothing
        for name in ("chain", "closed", "log", "pending"):
            with contextlib.suppress(OSError):
                (old / name).rmdir()  # emptied
        _record(store.directory, old, moves)
    parts = [f"#{n} as #{to}" if to and to != n else f"#{n}" if to else f"#{n} (held by the clone's #{n} already)"
             for n, to in moves]
    if kept:
        parts.append(f"{kept} write{'s' if kept != 1 else ''} kept for push")
    return [f"moved this worktree's local store ({old}) into the clone's, which every worktree shares "
            f"({store.directory}): {', '.join(parts) or 'nothing'}. If git tracked them, commit their removal: the "
            "store is not kept in git (docs/checkpoint.md, 'Where the local store is')"]


def _move(src: LocalStore, store: LocalStore, n: int) -> int | None:
    """Checkpoint ``n`` of ``src`` moved into ``store``: the number it has there (None: it was there already)."""
    closed = not src.path(n).exists() and src.closed_path(n).exists()
    body_path = src.closed_path(n) if closed else src.path(n)
    there = next((p for p in (store.path(n), store.closed_path(n)) if p.exists()), None)
    target: int | None
    if _free(store, n):
        target = n
    elif _chain_held(src, store, n) and (there is None or _body_held(body_path, store, n, there)):
        target = None if there is not None else n  # n: a move cut short, its chain there and its body not yet
    else:
        target = store.taken() + 1
        while not _free(store, target):
            target += 1
    if target is not None:
        _copy_tree(src._chain(n), store._chain(target), n, target)
        if src._old_log(n).is_file():
            _copy_file(src._old_log(n), store._old_log(target))
        claims = store.directory / "claims" / str(target)
        if (src.directory / "claims" / str(n)).is_dir() and not claims.exists():
            _copy_tree(src.directory / "claims" / str(n), claims)
        if body_path.is_file():  # last: the number is taken once the body is there
            _create(store.closed_path(target) if closed else store.path(target), body_path.read_bytes())
    for piece in (src._chain(n), src.directory / "claims" / str(n)):
        shutil.rmtree(piece, ignore_errors=True)
    for piece in (src._old_log(n), body_path):
        with contextlib.suppress(OSError):
            piece.unlink()
    return target


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


def _copy_tree(source: Path, target: Path, number: int = 0, renumbered: int = 0) -> None:
    """The files of ``source`` copied into ``target`` (a chain's records naming ``renumbered`` for ``number``)."""
    import json

    try:
        names = sorted(os.listdir(source))
    except OSError:
        return
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        data = (source / name).read_bytes()
        if renumbered and renumbered != number and name.endswith(".json"):
            with contextlib.suppress(ValueError):
                record = json.loads(data)
                if isinstance(record, dict) and record.get("checkpoint") == number:
                    data = (json.dumps({**record, "checkpoint": renumbered}, ensure_ascii=False) + "\n").encode()
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


def _move_pending(source: Path, target: Path) -> int:
    """The kept writes moved (their names, made unique when they were kept, stay); how many."""
    try:
        names = sorted(os.listdir(source))
    except OSError:
        return 0
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        try:
            os.replace(source / name, target / name)
        except OSError:  # another file system: copied, then removed
            shutil.copy2(source / name, target / name)
            (source / name).unlink()
    return sum(name.endswith(".json") for name in names)


def _record(directory: Path, old: Path, moves: list[tuple[int, int | None]]) -> None:
    """One line per checkpoint moved, in ``moved.log`` of the clone's store: found later by whoever looks."""
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = "".join(f"{at} {old} #{n} -> {f'#{to}' if to else f'held already as #{n}'}\n" for n, to in moves)
    with contextlib.suppress(OSError), open(directory / MOVED, "a", encoding="utf-8") as fh:
        fh.write(lines)
