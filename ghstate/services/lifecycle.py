"""A checkpoint's life beside its branch: the open ones read newest first up to a limit, the ones gone stale
(their branch gone or merged, their pull request closed, no write for days), closing them, and what a closed
one says of why it closed. Over either store: branches are asked of GitHub (``ghstate.github.lifecycle``,
one request per 100) or of this clone's git (``ghstate.git.gitinfo.branch_states``). No click here."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, NamedTuple

from ghstate.core import present
from ghstate.core.model import Checkpoint
from ghstate.git import gitinfo
from ghstate.services.reader import checkpoint_of, current
from ghstate.store import Partial, Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.services.app import App


class Page(NamedTuple):
    """Open checkpoints, newest first, at most the limit asked; ``more``: others are left (how many is not read)."""

    rows: list[tuple[Stored, Checkpoint]]
    more: bool = False


def read_open(app: App, limit: int | None = None, bodies: bool = True) -> Page:
    """The open checkpoints, newest first; with ``limit``, the store's listing stops at one past it (so that
    ``more`` is known without reading the rest). Each as every reader sees it on the local store; on GitHub as
    its body says (a listing reads no chain: a person's edit shows as they saved it, merged by the next write),
    and with ``bodies`` False as its issue alone (its title; nothing of the body is read)."""
    rows: list[tuple[Stored, Checkpoint]] = []
    for stored in listed(app, bodies, limit + 1 if limit else 0):
        if limit is not None and len(rows) >= limit:
            return Page(rows, True)
        cp = checkpoint_of(stored) if app.store.remote else current(app.store, stored)
        rows.append((stored, cp))
    return Page(rows)


def listed(app: App, bodies: bool = True, page: int = 0) -> Iterator[Stored]:
    """The store's open checkpoints, newest first, read as they are needed; a listing cut short by the store is
    a warning (as ``Store.list_open`` says it), what was read is given."""
    try:
        yield from app.store.iter_open(bodies=bodies, page=page)
    except Partial as exc:  # as ``list_open`` says it: a warning, what was read is listed
        app.store.notices.append(f"there are more open checkpoints than were read ({exc}); close finished ones "
                                 "('ghstate close --stale')")


def more_line(shown: int, what: str = "open checkpoints") -> str:
    """What a listing cut at its limit says on stderr."""
    these = "this one" if shown == 1 else f"these {shown}"
    return f"More {what} than {these}: --limit {max(shown * 2, shown + 10)} shows more."


# ------------------------------------------------------------------------------------------- stale


class Stale(NamedTuple):
    """An open checkpoint gone stale, and why (each reason in words)."""

    stored: Stored
    checkpoint: Checkpoint
    reasons: tuple[str, ...]


def stale(app: App, days: int | None = None, now: datetime | None = None) -> list[Stale]:
    """The open checkpoints whose branch is gone (from GitHub; on the local store from this clone, or merged into
    its default branch), whose pull request closed or merged, or that no one wrote to for ``days`` (default: the
    configured ``stale_days``), in the listing's order. A split's child tasks are left to their parent: a child
    closed reads as its phase done (``ghstate.services.family``), so none is ever closed for being idle."""
    days = app.settings.stale_days if days is None else days
    now = now or app.clock()
    rows = [(stored, cp) for stored, cp in read_open(app).rows if cp.meta.task is None]
    branches = branch_states(app, [cp.meta.branch for _, cp in rows if cp.meta.branch])
    out = []
    for stored, cp in rows:
        reasons = []
        branch = cp.meta.branch
        state = branches.get(branch, "") if branch else ""
        if state:
            reasons.append(f"branch {present.oneline(branch)} is {state}")
        pr = cp.meta.pull_request
        if pr is not None and pr.state != "open":
            reasons.append(f"its pull request #{pr.number} {'merged' if pr.state == 'merged' else 'closed unmerged'}")
        idle = idle_days(cp.meta.updated_at or stored.version, now)
        if idle is not None and idle >= days:
            reasons.append(f"no write for {idle} days")
        if reasons:
            out.append(Stale(stored, cp, tuple(reasons)))
    return out


def branch_states(app: App, branches: list[str]) -> dict[str, str]:
    """Each branch's state, in words: "" while it is there; ``gone from OWNER/NAME`` (GitHub), ``gone`` or
    ``merged into main`` (this clone's git, for the local store)."""
    names = list(dict.fromkeys(branches))
    if not names:
        return {}
    if app.store.remote:
        from ghstate.github.lifecycle import branches_exist

        found = branches_exist(app.github(), names)
        return {b: "" if found.get(b, True) else f"gone from {app.settings.repo}" for b in names}
    return gitinfo.branch_states(app.settings.root if app.settings.in_git else None, names)


def idle_days(stamp: str, now: datetime) -> int | None:
    """Whole days since ``stamp`` (an ISO 8601 time), None when it is not one."""
    try:
        then = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=timezone.utc)
    return max(0, (now - then).days)


def why_closed(app: App, stored: Stored, cp: Checkpoint) -> str:
    """Why a closed checkpoint closed (``closed when PR #31 merged``, ``closed as not planned``, ``closed``); ""
    while it is open."""
    if stored.state != "closed":
        return ""
    reason = ""
    if app.store.remote and app.offline is None:  # this machine's copy keeps no reason
        from ghstate.github.lifecycle import state_reason

        reason = state_reason(app.github(), stored.number)
    return present.closed_words(cp, reason)

