"""Reading a checkpoint: finding it in a store, and the body with the logged writes it lacks replayed.

The read side of the pipeline (``writer`` is the write side, and reads through ``view``): it reads
through the store it is given, so it is not part of the pure core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ghstate.core.marker import LogState
from ghstate.core.model import Checkpoint
from ghstate.core.parse import branch_of, is_child
from ghstate.errors import NotFound, RemoteError
from ghstate.local import parsecache
from ghstate.store import Partial, Store, Stored

if TYPE_CHECKING:  # pragma: no cover  (a reader whose body holds its whole log never loads the replay)
    from ghstate.core.writelog import LogEntry, Replayed


def checkpoint_of(stored: Stored) -> Checkpoint:
    """The parsed body, as it is (from the parse cache when this body was read before); on GitHub the
    issue title is the title."""
    cp = parsecache.checkpoint(stored.body)
    return cp._replace(title=stored.title) if stored.title else cp


def current(store: Store, stored: Stored) -> Checkpoint:
    """The checkpoint as every reader must see it: the body, with the logged writes it does not hold
    yet (overwritten by a concurrent writer, or by a web edit made from an older page) replayed.
    Reads the log only when the store says the body may lack something; log entries that are not
    trusted intents are reported as notices."""
    cp = checkpoint_of(stored)
    state = log_state_of(store, stored, cp)
    if not store.lacking(stored, state):
        return cp
    from ghstate.core.writelog import ignored_notice, replay  # only a body behind its log pays for the replay
    try:
        # the newest page, and the one before when the body's count ends there: one request each
        entries = store.log(stored, state, state.seen, pages=2 if state.seen else 1)
    except RemoteError as exc:
        store.notices.append(f"the history of #{stored.number} could not be read ({exc}); shown as its body "
                             "is, which may lack a revision logged since")
        return cp
    view = replay(cp, entries)
    notice = ignored_notice(view.ignored)
    if notice:
        store.notices.append(notice)
    return view.checkpoint


BASE_SEARCH = 10  # versions looked through for the one a body without a marker was edited from


def log_state_of(store: Store, stored: Stored, cp: Checkpoint) -> LogState:
    """What a body holds of the write log: what its marker says. A body without that word (a person took
    the marker line out, or saved a page that never had one) is a person's text: it holds what the version
    it was edited from held, so that what they deleted stays deleted, and the writes saved after that
    version, which their page did not show, are replayed. That version is the one before it that it
    differs from least (``base_version``); where the store keeps no versions, the body holds the whole
    log."""
    if cp.meta.log is not None:
        return cp.meta.log
    count = store.log_length(stored, LogState(via=store.log_via))
    found = base_version(store, stored, cp, count)
    if found is None:
        return LogState(seen=count, via=store.log_via)
    position, base = found
    return base.meta.log if base.meta.log is not None else LogState(seen=position, via=store.log_via)


def base_version(store: Store, stored: Stored, cp: Checkpoint, position: int) -> tuple[int, Checkpoint] | None:
    """The version before ``position`` that ``cp`` differs from in the fewest sections (the newest of
    equals), among the last BASE_SEARCH: what a person's save without a marker was edited from."""
    from ghstate.core.model import section_digests

    mine = section_digests(cp)
    best: tuple[int, int, Checkpoint] | None = None
    for at in range(position - 1, max(0, position - 1 - BASE_SEARCH), -1):
        try:
            version = store.version(stored, at)
        except RemoteError:
            version = None
        if version is None:
            continue
        theirs = section_digests(checkpoint_of(version))
        differ = sum(mine.get(k) != theirs.get(k) for k in {*mine, *theirs})
        if best is None or differ < best[0]:
            best = (differ, at, checkpoint_of(version))
    return None if best is None else (best[1], best[2])


def locate(store: Store, number: int | None, branch: str) -> Stored | None:
    """ISSUE when given, else the most recent open checkpoint whose marker names ``branch``, child tasks
    aside. With no branch (outside git, a detached HEAD) that is the most recent one written without a branch."""
    if number is not None:
        return store.get(number)
    try:
        for stored in store.iter_open():
            if branch_of(stored.body) == branch and not is_child(stored.body):
                return stored
    except Partial as exc:  # it may be among those not read: neither "none" nor a second one for the branch
        where = f"branch {branch}" if branch else "this folder"
        raise NotFound(f"no open checkpoint for {where} among the ones read ({exc}); give its ISSUE number, "
                       "or close finished checkpoints") from None
    return None


class View(NamedTuple):
    """A checkpoint as a writer reads it: as stored, and with every logged write it lacks replayed."""

    stored: Stored
    as_stored: Checkpoint  # the body as it is (on GitHub, the issue title as its title)
    replayed: Replayed  # the checkpoint with the logged writes it lacks applied, in log order
    entries: tuple[LogEntry, ...]  # the log entries read (this write's own among them, once logged)
    checked: int | None  # how many entries of the log are accounted for; None: not known

    @property
    def checkpoint(self) -> Checkpoint:
        return self.replayed.checkpoint


def view(store: Store, stored: Stored, own: LogEntry | None = None, since: int = 0) -> View:
    """The checkpoint in ``stored`` with every logged write it lacks replayed, in log order: what a write
    builds on, read once per round.

    Before this write is logged (``own`` None) nothing is read when the body's marker accounts for every
    entry. Once it is logged, the log is always read: which of the new entries is this write's, and what
    came before and after it, decides the order. ``checked`` is how many entries were accounted for; None
    when that is not known (the log could not be read whole, or entries were deleted), and then the new
    body claims no more than its predecessor did. ``since``: the log's length when this write first read
    it; its own entry comes after it, so the log is read from there (or from the marker's count, if
    lower)."""
    from ghstate.core.writelog import replay

    cp = checkpoint_of(stored)
    state = log_state_of(store, stored, cp)
    count = store.log_length(stored, state)
    if own is None and state.complete(count) and not store.lacking(stored, state):
        return View(stored, cp, replay(cp, []), (), count)
    checked: int | None = count
    entries: list[LogEntry] = []
    start = min(state.seen, since) if own is not None else state.seen
    if count < state.seen + state.own:  # fewer than the body counts (deleted, or merged into one): unsure
        checked, start = None, count  # nothing after it to read, but what the store adds (a write it lost)
    if count > start or store.lacking(stored, state):
        try:
            entries = store.log(stored, state, start)
        except RemoteError as exc:
            store.notices.append(f"the history of #{stored.number} could not be read ({exc}); this "
                                 "revision was written over the body as it was")
            checked = None
        if checked is not None and [e.position for e in entries if e.position <= count] != \
                list(range(start + 1, count + 1)):
            checked = None  # not every entry since the marker's count was read
    if own is not None and all(e.write != own.write for e in entries):
        # not among the entries read (not shown yet, or moved by a deletion): replayed last, and nothing
        # more is claimed than before
        entries.append(own._replace(position=max(count, state.seen) + 1))
        checked = None
    return View(stored, cp, replay(cp, entries), tuple(entries), checked)
