"""Reading a checkpoint: finding it in a store, and the body with the logged writes it lacks replayed.

The read side of the pipeline (``writer`` is the write side): it reads through the store it is given,
so it is not part of the pure core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ghstate.core.marker import LogState
from ghstate.core.model import Checkpoint
from ghstate.core.parse import branch_of
from ghstate.errors import NotFound, RemoteError
from ghstate.local import parsecache
from ghstate.store import Partial, Store, Stored

if TYPE_CHECKING:  # pragma: no cover  (a body that holds its whole log never loads the replay)
    from ghstate.core.writelog import LogEntry


def checkpoint_of(stored: Stored) -> Checkpoint:
    """The parsed body, as it is (from the parse cache when this body was read before); on GitHub the
    issue title is the title."""
    cp = parsecache.checkpoint(stored.body)
    return cp._replace(title=stored.title) if stored.title else cp


def current(store: Store, stored: Stored) -> Checkpoint:
    """The checkpoint as every reader must see it: the body, with the logged writes it does not hold
    yet (overwritten by a concurrent writer, or by a web edit made from an older page) replayed.
    Reads the log only when the body's marker says it may lack something; history comments that
    are not trusted intents are reported as notices."""
    cp = checkpoint_of(stored)
    state = cp.meta.log or LogState()
    count = stored.edits if state.via == "edits" else stored.comments  # the log the marker speaks of
    try:
        extra = recent_edits(store, stored, state)
    except RemoteError:
        extra = []
    if (state.complete(count) or count <= state.seen) and not extra:
        return cp
    from ghstate.core.writelog import ignored_notice, replay  # only a body behind its log pays for the replay
    try:
        # the newest page, and the one before when the body's count ends there: one request each
        entries = store.log(stored, state.seen, pages=2 if state.seen else 1, via=state.via) + extra
    except RemoteError as exc:
        store.notices.append(f"the history of #{stored.number} could not be read ({exc}); shown as its body "
                             "is, which may lack a revision logged since")
        return cp
    view = replay(cp, entries)
    notice = ignored_notice(view.ignored)
    if notice:
        store.notices.append(notice)
    return view.checkpoint


RECENT_EDITS = 20  # versions of a body read for writes an older page's save dropped
EDITS_AFTER_COMMENTS = 1_000_000  # edit-log positions come after every comment-log position


def recent_edits(store: Store, stored: Stored, state: LogState) -> list[LogEntry]:
    """The newest writes of the body's edit history, when the body's marker speaks of the comment log
    (or of none) in a store that logs in the body: a person saved a page opened before those writes,
    or the checkpoint was written by an older ghstate. Ordered after every comment."""
    if not store.log_in_body or state.via == "edits" or stored.edits <= 1:
        return []
    entries = store.log(stored, max(0, stored.edits - RECENT_EDITS), via="edits")
    return [e._replace(position=e.position + EDITS_AFTER_COMMENTS) for e in entries]


def locate(store: Store, number: int | None, branch: str) -> Stored | None:
    """ISSUE when given, else the most recent open checkpoint whose marker names ``branch``. With no
    branch (outside git, a detached HEAD) that is the most recent one written without a branch."""
    if number is not None:
        return store.get(number)
    try:
        for stored in store.iter_open():
            if branch_of(stored.body) == branch:
                return stored
    except Partial as exc:  # it may be among those not read: neither "none" nor a second one for the branch
        where = f"branch {branch}" if branch else "this folder"
        raise NotFound(f"no open checkpoint for {where} among the ones read ({exc}); give its ISSUE number, "
                       "or close finished checkpoints") from None
    return None
