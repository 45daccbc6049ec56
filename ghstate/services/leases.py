"""Leases that live as long as the work: a holder's writes to its child renew its claim.

The writer calls ``renewed`` with the checkpoint it has just read, before it writes, for a write made by
an agent (``WriteSpec.execution.agent``) that is not itself a task operation (claim, release, done, split:
those keep the claim their own way). It decides from what that read carried (the claim refs the
GitHub read lists, the claim the body shows; the local store's claim files) and does nothing, at no
request, unless that agent holds the child and less than half of its lease is left. Then the lease is
renewed for as long again, as ``ghstate claim`` renews it (a compare-and-swap on the claim as read: of
two writers one renews, and a claim another agent took over meanwhile is left to it), and the line that
shows the claim in the body comes back as a ``MirrorEdit`` for the writer to fold into the write it is
making (no write of its own). It never fails the write: what went wrong is its ``warning``.

Not ``ghstate.services.claims``: the writer may not import what imports it (``App`` makes writers).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.claims import DEFAULT_LEASE, MAX_LEASE, Claim, MirrorEdit, claimed, lease_of, mirror_of
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.model import Checkpoint, github_time
from ghstate.core.tasks import TaskEdit
from ghstate.errors import GhstateError
from ghstate.store import Store, Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.tasks import GitHubTasks
    from ghstate.local.tasks import LocalTasks

RENEW_AFTER = 0.5  # a write renews the lease once less than this share of it is left
TASK_EVENTS = frozenset({"claim", "release", "done", "split", "task"})  # writes that keep a claim their own way


class Renewal(NamedTuple):
    """What ``renew_if_held`` did: ``claim``, the lease as renewed (None: not renewed, ``warning`` says why);
    ``mirror``, the body's claim line for the writer to fold into its write (``Intent(task=TaskEdit(
    mirror=…))``; None on the local store, whose bodies show no claim)."""

    claim: Claim | None
    mirror: MirrorEdit | None = None
    warning: str = ""


def tasks_of(store: Store) -> GitHubTasks | LocalTasks:
    """The store's child tasks and claims, for a writer that has the store and not the ``App``."""
    if store.remote:
        from ghstate.github.store import GitHubStore
        from ghstate.github.tasks import GitHubTasks

        assert isinstance(store, GitHubStore)
        return GitHubTasks(store)
    from ghstate.local.store import LocalStore
    from ghstate.local.tasks import LocalTasks

    assert isinstance(store, LocalStore)
    return LocalTasks(store)


def renewed(store: Store, spec: WriteSpec, stored: Stored, cp: Checkpoint, clock: str) -> WriteSpec:
    """``spec``, an agent's write to the child it holds (``cp``: as the writer read it), with its lease renewed
    when due (``renew_if_held``) and the claim's line in the body folded into the write; what went wrong is a
    notice of the store's, never a failure."""
    e, now = spec.execution, _now(store, clock)
    if e is None or not e.agent or spec.event in TASK_EVENTS or spec.dry_run or now is None:
        return spec
    renewal = renew_if_held(store, stored, cp, e.agent, session=e.session, now=now)
    if renewal is not None and renewal.warning:
        store.notices.append(renewal.warning)
    if renewal is None or renewal.mirror is None or not isinstance(spec.intent, Intent) \
            or spec.intent.task is not None:
        return spec
    return replace(spec, intent=replace(spec.intent, task=TaskEdit(mirror=renewal.mirror)))


def _now(store: Store, clock: str) -> datetime | None:
    """What a lease is measured by: GitHub's clock on GitHub (the writer has just read: its answer's Date),
    this machine's (``clock``) on the local store."""
    api = getattr(store, "api", None) if store.remote else None
    found = api.server_now() if api is not None else None
    return found if found is not None else github_time(clock)


def renew_if_held(store: Store, stored: Stored, cp: Checkpoint, agent: str, *, now: datetime, session: str = "",
                  tasks: Any = None) -> Renewal | None:
    """Renew the lease of ``agent`` in ``session`` on the child ``stored`` (``cp``: it, as the writer read it)
    when that holder holds it and less than half of the lease is left; None when there is nothing to do (another
    session of the same agent name holds another holder's claim). Requests on GitHub:
    none unless it renews; then three (a tree, a commit, ``updateRefs``), and one more to read the ref when
    the read did not list it. The local store: a claim file, created exclusively."""
    link = cp.meta.task
    if not agent or link is None or link.closed or stored.state != "open":
        return None
    tasks = tasks if tasks is not None else tasks_of(store)
    held = tasks.held_as_read(stored.number)  # None: the read did not list its ref (GitHub)
    seen = held.claim if held is not None else (mirror_of(cp) if store.remote else None)
    if seen is None or not seen.held_by(agent, session) or not due(seen, now):
        return None
    try:
        renewed = claimed(agent, session, now, length(seen), stored.number)
        if held is None:
            held = tasks.held(stored.number)
            if held.claim is not None and not held.claim.held_by(agent, session):
                return _taken(stored.number, held.claim, renewed)
        if store.remote and not held.version:  # no ref: the body is the claim (no contents: write)
            return Renewal(renewed, MirrorEdit(renewed, agent, session=session))
        return _swapped(store, tasks, stored.number, held, renewed)
    except GhstateError as exc:
        options = f"--agent {agent}" + (f" --session {session}" if session else "")
        return Renewal(None, None, f"the lease of {renewed_words(agent, session)} on #{stored.number} could not be "
                                   f"renewed ({exc}); 'ghstate claim {stored.number} {options}' renews it")


def _swapped(store: Store, tasks: Any, number: int, held: Any, renewed: Claim) -> Renewal | None:
    from ghstate.github.tasks import RefsUnavailable

    try:
        found = tasks.swap(number, held, renewed)
    except RefsUnavailable:  # the ref is there, but this token cannot move it: the body, best effort
        return Renewal(renewed, MirrorEdit(renewed, renewed.agent, session=renewed.session))
    if found is None:
        return Renewal(renewed, MirrorEdit(renewed, renewed.agent, force=True, session=renewed.session)
                       if store.remote else None)
    if found.claim is not None and not found.claim.held_by(renewed.agent, renewed.session):
        return _taken(number, found.claim, renewed)
    return None  # the same holder renewed it meanwhile (another of its processes)


def renewed_words(agent: str, session: str) -> str:
    return f"{agent}{f' (session {session})' if session else ''}"


def _taken(number: int, holder: Claim, renewed: Claim) -> Renewal:
    return Renewal(None, None, f"#{number} is claimed by {holder.words()} now (the lease of {renewed.holder_words()} "
                               "ran out): this write goes on, the task is theirs")


def length(claim: Claim) -> timedelta:
    """How long ``claim``'s lease was taken for (renewed for as long again); the default when it cannot say."""
    start, end = github_time(claim.at), github_time(claim.until)
    if start is None or end is None or end <= start:
        return lease_of(DEFAULT_LEASE)
    return min(end - start, MAX_LEASE)


def due(claim: Claim, now: datetime) -> bool:
    """Whether a write at ``now`` renews ``claim``: less than ``RENEW_AFTER`` of its lease is left (or none), as
    its lease is measured (``Claim.span``: from when GitHub dated it)."""
    span = claim.span()
    return span is None or span[1] - now < length(claim) * RENEW_AFTER
