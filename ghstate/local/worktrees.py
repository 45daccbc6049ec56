"""A worktree's own store moved into the clone's: ``.ghstate/`` of a worktree held the local store before it
became one per clone (``Settings.store_dir``, ``<git common dir>/ghstate``). The first command run there
afterwards moves what it holds, under the clone's lock, so that nothing it held is lost and every worktree
finds it:

- a checkpoint (``N.md`` or ``closed/N.md``, with ``chain/N/``, ``log/N.jsonl`` and ``claims/N/``) keeps its
  number when the clone's store has nothing numbered so;
- one the clone's store holds already (another worktree had the same committed ``.ghstate/``: every
  generation of its chain is there byte for byte, and its body is one the clone's chain holds) is dropped;
- any other is moved under the next number nothing has (a checkpoint both worktrees went on writing is
  kept twice, rather than one copy lost); the numbers its marker names (a child's parent, the children it
  waits for) are changed with those it moved, in ``N.md`` and its chain's records alike (``renumber``). A
  phase line's ``(#N)`` is text, left as it is: each move is said, and recorded in ``moved.log``;
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
        plan = _plan(src, store, numbers)
        renumbered = {n: to for n, to in plan.items() if to is not None and to != n}
        for n in numbers:
            _move(src, store, n, plan[n], renumbered)
        kept = _move_pending(src.pending_dir, store.pending_dir)
        with contextlib.suppress(OSError):
            shutil.rmtree(old / "claims")  # claims of no checkpoint: leases of nothing
        for name in ("chain", "closed", "log", "pending"):
            with contextlib.suppress(OSError):
                (old / name).rmdir()  # emptied
        _record(store.directory, old, list(plan.items()))
    if not numbers and not kept:
        return []
    parts = [f"#{n} as #{to}" if to and to != n else f"#{n}" if to else f"#{n} (held by the clone's #{n} already)"
             for n, to in plan.items()]
    if kept:
        parts.append(f"{kept} write{'s' if kept != 1 else ''} kept for push")
    return [f"moved this worktree's local store ({old}) into the clone's, which every worktree shares "
            f"({store.directory}): {', '.join(parts) or 'nothing'}. If git tracked them, commit their removal: the "
            "store is not kept in git (docs/checkpoint.md, 'Where the local store is')"]


def _plan(src: LocalStore, store: LocalStore, numbers: list[int]) -> dict[int, int | None]:
    """The number each checkpoint of ``src`` gets in ``store`` (None: it is there already): its own when
    nothing has it there, the same when it is held already or a move of it was cut short, else the next free."""
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
        else:
            target = max(store.taken(), *reserved, 0) + 1
            while not free(target):
                target += 1
        plan[n] = target
        reserved.add(target or n)
    return plan


def _move(src: LocalStore, store: LocalStore, n: int, target: int | None, renumbered: dict[int, int]) -> None:
    """Checkpoint ``n`` of ``src`` moved into ``store`` as ``target`` (None: it is there already), the numbers
    of ``renumbered`` its marker names (its parent, the children it waits for) changed with it."""
    closed = not src.path(n).exists() and src.closed_path(n).exists()
    body_path = src.closed_path(n) if closed else src.path(n)
    if target is not None:
        _copy_tree(src._chain(n), store._chain(target), n, target, renumbered)
        if src._old_log(n).is_file():
            _copy_file(src._old_log(n), store._old_log(target))
        claims = store.directory / "claims" / str(target)
        if (src.directory / "claims" / str(n)).is_dir() and not claims.exists():
            _copy_tree(src.directory / "claims" / str(n), claims)
        if body_path.is_file():  # last: the number is taken once the body is there
            data = body_path.read_bytes()
            with contextlib.suppress(UnicodeDecodeError):
                data = renumber(data.decode("utf-8"), renumbered).encode("utf-8")
            _create(store.closed_path(target) if closed else store.path(target), data)
    for piece in (src._chain(n), src.directory / "claims" / str(n)):
        shutil.rmtree(piece, ignore_errors=True)
    for piece in (src._old_log(n), body_path):
        with contextlib.suppress(OSError):
            piece.unlink()


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


def _move_pending(source: Path, target: Path) -> int:
    """The kept writes moved (their names, made unique when they were kept, stay); how many."""
    try:
        names = sorted(os.listdir(source))
    except OSError:
        return 0
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name.startswith("."):  # a lock or a temporary file of the old folder's: not a kept write
            continue
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
