"""A checkpoint through GitHub's absence: what this machine last saw of it (``ghstate.local.replica``) stands in
for a GitHub that does not answer within the command's budget, with this machine's kept writes on top, and
the reader is told so in words.

``read`` is how every command reads a checkpoint on GitHub (``App.find``): this clone's kept writes are sent
first (``ghstate.services.kept``); the checkpoint is read from GitHub and kept in the replica. A reader that
says where its state comes from (``App.reads_last_seen``: ``resume``, ``show``, the hooks, the MCP resume and
show) reads the replica's copy when GitHub did not answer (``RemoteError.unreachable``), and either way gets
the kept writes to it that are still on this machine applied on top, with ``App.reading`` saying so. A
checkpoint this machine never saw is the failure GitHub's absence is.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.chain import split
from ghstate.core.intent import Intent
from ghstate.errors import GhstateError, RemoteError
from ghstate.local.replica import Replica, Seen, repository_key
from ghstate.services.reader import checkpoint_of, locate, view
from ghstate.store import Stored

# ``app`` is an ``App`` (``ghstate.services.app``, which imports this module: named, not imported, here)
if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.model import Checkpoint
    from ghstate.services.reader import View


class Reading(NamedTuple):
    """Where a reader's state comes from, when it is not simply GitHub's: ``said`` is what the reader is told."""

    said: str
    offline: bool  # GitHub did not answer: the state is this machine's copy
    seen_at: str = ""  # when this machine last saw it (offline)
    revision: int = 0  # the revision GitHub had (before the kept writes)
    kept: int = 0  # this machine's writes to it not yet on GitHub, applied on top

    def as_dict(self) -> dict[str, object]:
        return {"said": self.said, "github_answered": not self.offline, "seen_at": self.seen_at or None,
                "revision": self.revision, "kept_writes": self.kept}


def replica(app: Any) -> Replica | None:
    """This clone's replica of the repository's checkpoints; None off GitHub (the local store is the machine's)."""
    s = app.settings
    if not app.store.remote or not s.repo:
        return None
    folder = (s.machine_dir or s.state_dir) / "replica"
    return Replica(folder, repository_key(s.api_url, s.repo))


def remember(app: Any, stored: Stored, cp: Checkpoint, body: str) -> None:
    """Keep ``cp`` (read or written just now, rendered as ``body``) as what this machine last saw of it; never an
    issue opened by someone the policy does not trust (read by number: offline, it must not become a branch's)."""
    kept = replica(app)
    if kept is None or not stored.trusted:
        return
    kept.keep(Seen(kept.repo, stored.number, stored.title or cp.title, stored.location, stored.state,
                   cp.meta.branch or "", cp.meta.revision, stored.head.oid if stored.head is not None else "",
                   split(body)[0], app.clock().strftime("%Y-%m-%dT%H:%M:%SZ"), trusted=True))


def state_body(app: Any, read: View) -> str:
    """The state ``read`` holds, as a body: the body or the head's when a person's edit needs no merge, else
    the merged state rendered."""
    if read.edits:
        from ghstate.core.render import render_body

        return render_body(read.checkpoint, app.env)
    if read.mirror.kind in ("current", "unchained") or read.link is None:
        return read.mirror.body
    return read.link.body


def read(app: Any, number: int | None, branch: str, *, closed: bool = False,
         until: float | None = None) -> tuple[Stored, Checkpoint] | None:
    """ISSUE, or ``branch``'s checkpoint, on GitHub (kept writes sent first, while ``until`` allows), kept in the
    replica; this machine's copy when GitHub does not answer. None: the branch has no checkpoint."""
    from ghstate.services import kept

    sent = kept.send_first(app, until=until)
    try:
        if sent.unanswered is not None:  # GitHub did not answer the kept writes: not asked again
            raise sent.unanswered
        stored = locate(app.store, number, branch, closed=closed)
        if stored is None:
            return None
        found = view(app.store, stored)
    except RemoteError as exc:
        if not exc.unreachable or not app.reads_last_seen:
            raise
        return _last_seen(app, number, branch, exc, closed)
    remember(app, found.stored, found.checkpoint, state_body(app, found))
    if not app.reads_last_seen:  # a command that does not say where its state comes from reads GitHub's alone
        return found.stored, found.checkpoint
    cp, count = _on_top(app, found.stored.number, found.checkpoint)
    if count:
        app.reading = Reading(f"#{found.stored.number} as GitHub has it (revision {found.checkpoint.meta.revision}), "
                              f"with {_writes(count)} of this machine not yet on GitHub (applied here; they go to "
                              "GitHub with the next ghstate command that reaches it, or 'ghstate push')",
                              False, revision=found.checkpoint.meta.revision, kept=count)
    return found.stored, cp


def _last_seen(app: Any, number: int | None, branch: str, failure: RemoteError,
               closed: bool = False) -> tuple[Stored, Checkpoint]:
    """The checkpoint as this machine last saw it, kept writes on top; ``failure`` when it never saw it."""
    copy = replica(app)
    seen = None if copy is None else copy.get(number) if number is not None else copy.by_branch(branch, closed)
    if copy is not None:
        app.store.notices.extend(copy.notices)
    if seen is None:
        raise failure
    stored = Stored(seen.number, seen.title, seen.body, seen.url, labels=(), state=seen.state, head=None)
    cp, count = _on_top(app, seen.number, checkpoint_of(stored))
    at = _when(seen.seen_at, app.clock())
    with_kept = f", with {_writes(count)} of this machine not yet on GitHub" if count else ""
    app.reading = Reading(f"GitHub did not answer: #{seen.number} as this machine last saw it at {at} (revision "
                          f"{seen.revision}){with_kept}", True, seen.seen_at, seen.revision, count)
    app.offline = failure
    return stored, cp


def _on_top(app: Any, number: int, cp: Checkpoint) -> tuple[Checkpoint, int]:
    """``cp`` with this machine's kept writes to ``number`` applied, oldest first; and how many there were."""
    from ghstate.services.kept import waiting

    count = 0
    for record in waiting(app):
        if record.write.number == number and isinstance(record.write.intent, Intent):
            try:
                cp = record.write.intent.apply(cp, lenient=True).checkpoint
            except GhstateError as exc:  # ``push`` says it when it sends it; a reader is not stopped by it
                app.store.notices.append(f"a write this machine kept for #{number} cannot be shown on it ({exc})")
                continue
            count += 1
    return cp, count


def _writes(count: int) -> str:
    return f"{count} write{'s' if count != 1 else ''}"


def _when(stamp: str, now: datetime) -> str:
    """``2026-11-22T10:42:07Z`` as a person reads it: ``10:42 UTC`` today, ``2026-11-22 10:42 UTC`` before."""
    try:
        at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return stamp or "an unknown time"
    today = at.date() == now.astimezone(timezone.utc).date()
    return f"{at:%H:%M} UTC" if today else f"{at:%Y-%m-%d %H:%M} UTC"
