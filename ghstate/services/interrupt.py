"""What a command had written when Ctrl-C stopped it, said in one line (``cli`` exits 130 with it).

The writer tells this journal right before each store call that writes (``begin_create``,
``begin_update``) and right after it returned (``landed``). Stopped before any call began, nothing
was written; after one returned, that write is in the store, with its revision; stopped during a
call, the store is asked whether the write is there: a new checkpoint by the unique id in its marker,
an update by its write id (on the checkpoint's chain). Commands that write something else say what an
interruption leaves (``note``). Process-wide state, as the signal it answers is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.store import Store


class _Attempt(NamedTuple):
    label: str  # "#3", "local #3", "a new checkpoint"
    revision: int
    landed: Callable[[], str | None]  # the label of what landed, None when nothing did


_state: dict[str, object] = {"attempt": None, "landed": None, "note": ""}


def reset() -> None:
    _state.update(attempt=None, landed=None, note="")


def note(text: str) -> None:
    """What an interruption leaves, for a command that writes something other than a checkpoint."""
    _state["note"] = text


def _label(store: Store, number: int) -> str:
    return f"#{number}" if store.remote else f"local #{number}"


def begin_create(store: Store, unique: str) -> None:
    def landed() -> str | None:
        for stored in store.iter_open():
            if unique in stored.body:
                return _label(store, stored.number)
        return None

    _state["attempt"] = _Attempt("a new checkpoint", 1, landed)


def begin_update(store: Store, number: int, revision: int, write_id: str, text: str = "") -> None:
    """A write to ``number`` under way: it landed when the chain holds the write ``write_id`` (or, for a body
    written alone, when the body is ``text``)."""
    def landed() -> str | None:
        stored = store.get(number)
        if (write_id and store.has_write(stored, write=write_id)) or (text and stored.body == text):
            return _label(store, number)
        return None

    _state["attempt"] = _Attempt(_label(store, number), revision, landed)


def landed(store: Store, number: int, revision: int) -> None:
    _state.update(attempt=None, landed=(_label(store, number), revision))


def line() -> str:
    """The one line for an interruption now: whether the write landed (and its revision) or was not made,
    then what the command's own note says (a task command stopped between its steps, which may have
    written before: then the journal's "nothing was written" is not said)."""
    said, nothing = _journal_says()
    note = _state["note"]
    if said is None:
        return f"interrupted; {note or 'nothing was written'}"
    if note:
        return f"{said}; {note}"
    return f"{said}: nothing was written" if nothing else said


def _journal_says() -> tuple[str | None, bool]:
    """What the writer's journal says (the write under way or the last one landed; None when neither), and
    whether it knows that nothing was written."""
    attempt = _state["attempt"]
    before = _state["landed"]
    assert attempt is None or isinstance(attempt, _Attempt)
    assert before is None or isinstance(before, tuple)
    if attempt is not None:
        try:
            where = attempt.landed()
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - asked once, never a traceback
            why = "interrupted again" if isinstance(exc, KeyboardInterrupt) else " ".join(str(exc).split())
            return (f"interrupted while writing {attempt.label} (revision {attempt.revision}); whether it landed "
                    f"could not be checked ({why}): 'ghstate list' and 'ghstate resume' show what is there"), False
        if where is not None:
            return f"interrupted; the write landed: {where} is at revision {attempt.revision}", False
        if before is None:
            return f"interrupted; the write to {attempt.label} was not made", True
        return (f"interrupted; {before[0]} revision {before[1]} landed, and the write to {attempt.label} after "
                "it was not made"), False
    if before is not None:
        return f"interrupted after the write landed: {before[0]} is at revision {before[1]}", False
    return None, False
