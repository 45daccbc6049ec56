"""Writing a revision: locate → replay → change → stamp → render → log → write → verify.

One pipeline serves ``checkpoint``, ``ci``, ``push`` and the hooks, on either store. The change is an
``Intent`` (data), applied to the checkpoint as it is now. No write can overwrite another silently:

1. the body is read, and any logged write it does not hold yet is replayed into it (``writelog``);
2. the intent is applied and the new body rendered, its marker saying how far it reflects the log;
3. the intent is logged (a revision comment; a line of ``log/N.jsonl`` locally): from here it is durable,
   and every reader sees it even if the body is overwritten later;
4. the body is re-read (a conditional GET, free when unchanged), so an edit made meanwhile on GitHub is
   built on rather than overwritten, and written;
5. the answer says how many comments the issue has: when another writer logged one meanwhile that this
   body lacks, the body is read again, everything replayed, and written again (a bounded number of times).

When GitHub cannot be reached before the intent is logged, the write is kept locally for ``push``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import NamedTuple

from ghstate.core import checks, render, splice
from ghstate.core.edits import content_equal, describe, stamp
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import LogState
from ghstate.core.merge import merge_unknown_base
from ghstate.core.model import (
    DEFAULT_MAX_BODY,
    HEADINGS,
    Checkpoint,
    Revision,
    section_digests,
    with_digests,
)
from ghstate.core.parse import parse
from ghstate.core.render import Templates
from ghstate.core.writelog import LogEntry, Replayed, ignored_notice, length, log_state, missing, replay, with_log
from ghstate.errors import GhstateError, NotFound, RemoteError
from ghstate.local.store import LocalStore, PendingWrite
from ghstate.services.reader import checkpoint_of, locate, recent_edits
from ghstate.store import Changed, Store, Stored

# Writes of one revision while other writers' revisions keep landing. Each round that fails means another
# writer logged a revision since this one read: with fewer concurrent writers than this, the last write
# always completes (and the body converges); beyond it, readers still replay every logged revision.
ROUNDS = 10


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class WriteResult:
    checkpoint: Checkpoint
    body: str
    stored: Stored | None
    created: bool = False
    changed: bool = True
    changes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # changed by someone else meanwhile too: theirs kept beside
    file_conflicts: list[str] = field(default_factory=list)  # sections both a --file and the checkpoint changed
    warnings: list[str] = field(default_factory=list)
    previous: Checkpoint | None = None  # the checkpoint as it was read (logged writes replayed), before this write


class _View(NamedTuple):
    replayed: Replayed  # the checkpoint as read, with the log replayed
    entries: tuple[LogEntry, ...]  # the log entries read (and this write's, once logged)
    checked: int | None  # how many comments are accounted for; None: not known


@dataclass
class _Draft:
    """A revision being written: what it was built on and what it becomes."""

    target: Stored
    view: Replayed  # the checkpoint as read, with the log replayed
    checkpoint: Checkpoint
    body: str
    file_conflicts: tuple[str, ...]
    intent: Intent
    conflicts: tuple[str, ...] = ()


class Writer:
    def __init__(self, store: Store, *, env: Templates, builtin: Templates | None = None,
                 max_body_chars: int = DEFAULT_MAX_BODY, pending: LocalStore | None = None, repo: str | None = None,
                 api_url: str = "", clock: Callable[[], str] = utc_now) -> None:
        self.store = store
        self.env = env
        self.builtin = builtin  # the shipped templates, when ``env`` holds a repository's own checkpoint.md.j2
        self.max_body_chars = max_body_chars
        self.pending = pending
        self.repo = repo
        self.api_url = api_url
        self.clock = clock

    def write(self, spec: WriteSpec) -> WriteResult:
        spec = replace(spec, new_id=spec.new_id or os.urandom(6).hex())
        target: Stored | None = None
        try:
            with self.store.lock():
                if spec.number is not None or spec.lookup:
                    target = locate(self.store, spec.number, spec.tree.branch)
                if target is None and not spec.create:
                    raise NotFound(f"no open checkpoint for {spec.tree.place}")
                return self._create(spec) if target is None else self._update(spec, target)
        except RemoteError as exc:
            if spec.dry_run or self.pending is None or not self.store.remote or callable(spec.intent):
                raise
            path = self._keep_pending(spec, target)
            when = "when GitHub is reachable" if exc.retryable else "once that is fixed"
            raise RemoteError(f"{exc}; the checkpoint was kept locally in {path}: run 'ghstate push' {when}",
                              retryable=exc.retryable, status=exc.status) from exc

    # ------------------------------------------------------------------------------ create

    def _create(self, spec: WriteSpec) -> WriteResult:
        now = self.clock()
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(Checkpoint()))
        applied = spec.intent.apply(Checkpoint())
        ours = applied.checkpoint
        if spec.title:
            ours = ours._replace(title=spec.title)
        if not ours.title:
            ours = ours._replace(title=f"Checkpoint: {spec.tree.branch}" if spec.tree.branch else "Checkpoint")
        write_id = os.urandom(6).hex()
        inline = self.store.log_in_body
        # in the body's edit log, the first version is the body's own entry, logged or not
        state = LogState(0, 1, (write_id,), "edits") if inline else LogState(0, int(spec.log), (write_id,))
        stamped = with_log(self._stamp(ours, 1, now, spec), state)
        body = self._body(stamped, None, spec)
        changes = describe(None, stamped)
        if spec.dry_run:
            return WriteResult(stamped, body, None, created=True, changes=changes)
        entry = self._entry(stamped, write_id, now, spec, changes) if inline and spec.log else None
        stored = self.store.create(stamped.title, body, unique=f'"id":"{stamped.meta.id}"', entry=entry)
        warnings = []
        if spec.log and not inline:
            try:
                self.store.add_revision(stored, self._entry(stamped, write_id, now, spec, changes), self._summary(
                    stamped.meta.revision, now, spec, changes))
            except RemoteError as exc:  # the checkpoint itself is there; only its history line is missing
                warnings.append(f"the history comment could not be posted ({exc})")
        warnings.extend(self.store.notices)
        self.store.notices.clear()
        return WriteResult(stamped, body, stored, created=True, changes=changes,
                           file_conflicts=list(applied.conflicts), warnings=warnings)

    # ------------------------------------------------------------------------------ update

    def _view(self, stored: Stored, own: LogEntry | None = None, since: int = 0) -> _View:
        """The checkpoint in ``stored`` with every logged write it lacks replayed, in log order.

        Before this write is logged (``own`` None) nothing is read when the body's marker accounts for
        every comment. Once it is logged, the log is always read: which of the new comments is this
        write's, and what came before and after it, decides the order. ``checked`` is how many comments
        were accounted for; None when that is not known (the log could not be read whole, or comments
        were deleted), and then the new body claims no more than its predecessor did. ``since``: the
        comment count this write first read; its own comment comes after it, so the log is read from
        there (or from the marker's count, if lower)."""
        cp = checkpoint_of(stored)
        state = log_state(cp)
        count = length(stored, state)
        extra = recent_edits(self.store, stored, state)  # a body of the comment log in a store of the edit log
        if own is None and state.complete(count) and not any(e.replayable for e in extra):
            return _View(replay(cp, []), (), count)
        checked: int | None = count
        entries: list[LogEntry] = []
        start = min(state.seen, since) if own is not None else state.seen
        if count < state.seen + state.own:  # comments were deleted: positions moved under the marker
            checked = None
        elif count > start:
            try:
                entries = self.store.log(stored, start, via=state.via)
            except RemoteError as exc:
                self.store.notices.append(f"the history of #{stored.number} could not be read ({exc}); this "
                                          "revision was written over the body as it was")
                checked = None
            if checked is not None and [e.position for e in entries] != list(range(start + 1, count + 1)):
                checked = None  # not every comment since the marker's count was read
        entries.extend(extra)
        if own is not None and all(e.write != own.write for e in entries):
            # not among the comments read (not shown yet, or moved by a deletion): replayed last, and
            # nothing more is claimed than before
            entries.append(own._replace(position=max(count, state.seen) + 1))
            checked = None
        return _View(replay(cp, entries), tuple(entries), checked)

    def _draft(self, spec: WriteSpec, target: Stored, now: str, write_id: str, own: LogEntry | None = None,
               read: tuple[Checkpoint, int] | None = None) -> _Draft:
        """The revision built on ``target``. ``own``: this write's log entry, once posted (it is then
        replayed in its place in the log, not applied again). ``read``: what the first draft was built on,
        when ``target`` is newer (with the comment count it had): a value a person changed meanwhile that
        this write sets too is kept beside it."""
        view = self._view(target, own, since=read[1] if read else 0)
        replayed = view.replayed
        as_stored = checkpoint_of(target)
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(replayed.checkpoint))
        assert isinstance(spec.intent, Intent)
        if own is None:
            applied = spec.intent.apply(replayed.checkpoint)
            cp, file_conflicts = applied.checkpoint, applied.conflicts
        else:
            cp, file_conflicts = replayed.checkpoint, ()
        conflicts: list[str] = []
        if read is not None:
            logged = frozenset().union(*(e.intent.sets(read[0]) for e in view.entries
                                         if e.replayable and e.intent is not None and e.write != write_id))
            cp, conflicts = _keep_theirs(cp, read[0], as_stored, spec.intent.sets(read[0]) - logged)
        applied_ids = tuple(dict.fromkeys((*replayed.applied, write_id)))
        before = log_state(as_stored)
        if self.store.log_in_body:  # the log is the body's edit history; this body is one more version of it
            if view.checked is None:  # claim no more than was checked: readers look at the rest
                seen = before.seen if before.via == "edits" else 0
            else:  # a body of the comment log: its comments were replayed; every version so far is accounted for
                seen = view.checked if before.via == "edits" else target.edits
            state = LogState(seen=seen, own=1, applied=applied_ids, via="edits")
        elif view.checked is None:  # claim no more than was checked: readers look at the rest
            state = LogState(seen=log_state(as_stored).seen, own=0, applied=applied_ids)
        elif own is None:  # the next comment will be this write's
            state = LogState(seen=view.checked, own=1 if spec.log else 0, applied=applied_ids)
        else:  # this write's comment is among those accounted for
            state = LogState(seen=view.checked, own=0, applied=applied_ids)
        others = [e.revision.revision for e in replayed.replayed if e.write != write_id]
        revision = max([as_stored.meta.revision, *others]) + 1
        if own is not None:
            revision = max(revision, own.revision.revision)  # the number its history comment gave it
        stamped = with_log(self._stamp(cp, revision, now, spec), state)
        return _Draft(target, replayed, stamped, self._body(stamped, target, spec), file_conflicts, spec.intent,
                      tuple(conflicts))

    def _update(self, spec: WriteSpec, target: Stored) -> WriteResult:
        now = self.clock()
        write_id = os.urandom(6).hex()
        draft = self._draft(spec, target, now, write_id)
        spec = replace(spec, intent=draft.intent)  # made once: what is logged is what is applied
        read = checkpoint_of(target)
        before = draft.view.checkpoint
        warnings = [n for n in (ignored_notice(draft.view.ignored),) if n]
        if not draft.view.replayed and content_equal(draft.checkpoint, read) and spec.event != "pre-compact":
            return WriteResult(before, target.body, target, changed=False, warnings=warnings)
        changes = describe(before, draft.checkpoint)
        if spec.dry_run:
            return WriteResult(draft.checkpoint, draft.body, target, changes=changes, previous=before,
                               file_conflicts=list(draft.file_conflicts), warnings=warnings)

        own = None
        if self.store.log_in_body:  # the write and its log entry are one request: durable once it lands
            entry = self._entry(draft.checkpoint, write_id, now, spec, changes) if spec.log else None
            stored, draft = self._publish(spec, draft, now, write_id, None, entry)
            warnings.extend(self._tell_people(stored, draft.conflicts))
            warnings.extend(self.store.notices)
            self.store.notices.clear()
            return WriteResult(draft.checkpoint, draft.body, stored, changes=changes,
                               conflicts=list(draft.conflicts), file_conflicts=list(draft.file_conflicts),
                               warnings=warnings, previous=before)
        if spec.log:  # from here on the write is durable: whatever happens to the body, readers replay it
            entry = self._entry(draft.checkpoint, write_id, now, spec, changes)
            try:
                self.store.add_revision(target, entry, self._summary(draft.checkpoint.meta.revision, now, spec,
                                                                     changes))
                own = entry
            except RemoteError as exc:  # not logged (or not known to be): the body alone must take it
                warnings.append(f"the history comment could not be posted ({exc}); the revision is in the body "
                                "only, so a writer that read before it may overwrite it")
                spec = replace(spec, log=False)  # the body must not count on a comment that may not be there
                draft = self._draft(spec, target, now, write_id)
        try:
            stored, draft = self._publish(spec, draft, now, write_id, own)
        except RemoteError as exc:
            if own is None:
                raise
            stored = None  # logged: every reader has it; the next write brings the body up to date
            warnings.append(f"the revision is logged, but the body could not be written ({exc}); "
                            "'ghstate resume' shows it, and the next write brings the body up to date")
        if stored is not None:
            warnings.extend(self._tell_people(stored, draft.conflicts))
        warnings.extend(self.store.notices)
        self.store.notices.clear()
        return WriteResult(draft.checkpoint, draft.body, stored or target, changes=changes,
                           conflicts=list(draft.conflicts), file_conflicts=list(draft.file_conflicts),
                           warnings=warnings, previous=before)

    def _publish(self, spec: WriteSpec, draft: _Draft, now: str, write_id: str,
                 own: LogEntry | None, entry: LogEntry | None = None) -> tuple[Stored, _Draft]:
        """Write the draft's body; write again while other writers' logged changes are missing from it.
        ``entry``: this write's log entry, when it travels in the body (the store's ``log_in_body``)."""
        inline = self.store.log_in_body
        read = (draft.view.checkpoint, draft.target.edits if inline else draft.target.comments)
        file_conflicts = draft.file_conflicts
        fresh = self.store.reread(draft.target)
        stored: Stored | None = None
        for _ in range(ROUNDS):
            if fresh is not None:  # changed since it was read: build on what is there now
                draft = self._draft(spec, fresh, now, write_id, own, read)
                draft.file_conflicts = file_conflicts
            labels = spec.labels.apply(draft.target.labels, draft.checkpoint) if spec.labels else None
            title = draft.checkpoint.title
            title_change = title if title != (draft.target.title or title) else None
            try:
                stored = self.store.update(draft.target, draft.body, title=title_change, labels=labels,
                                           entry=entry if inline else None)
            except Changed as exc:  # edited while a failed write waited to be resent
                fresh = exc.fresh
                continue
            if inline and entry is not None:
                own = entry  # logged: from here on it is replayed in its place, not applied again
            state = log_state(draft.checkpoint)
            if state.complete(length(stored, state)):
                return stored, draft
            try:
                lacking = missing(state, self.store.log(stored, state.seen, via=state.via))
            except RemoteError as exc:  # written; whether another write went in meanwhile cannot be told now
                self.store.notices.append(f"the history of #{stored.number} could not be read after the write "
                                          f"({exc}); any revision logged meanwhile is shown by 'ghstate resume' "
                                          "and written back by the next write")
                return stored, draft
            if not lacking:
                return stored, draft  # only comments that are not writes (a person's) came meanwhile
            fresh = self.store.get(stored.number)
        self.store.notices.append(f"other writers kept changing #{draft.target.number} while this revision was "
                                  f"written ({ROUNDS} rounds); every change is logged and 'ghstate resume' shows it, "
                                  "and the next write brings the body up to date")
        if stored is None:
            raise RemoteError(f"#{draft.target.number} kept changing while it was being written ({ROUNDS} times); "
                              "the revision is logged: 'ghstate resume' shows it", retryable=True)
        return stored, draft

    # ----------------------------------------------------------------------------- pieces

    def _tell_people(self, stored: Stored, conflicts: tuple[str, ...]) -> list[str]:
        """A person's edit that this write kept beside its own ("… (concurrent edit)") is for a person to
        settle: one comment says so (the only comment a routine write can cause). A comment that cannot be
        posted is a warning: the write is done, and both versions are in the body."""
        if not conflicts or not self.store.remote:
            return []
        what = ", ".join(dict.fromkeys(conflicts))
        text = (f"ghstate kept a concurrent edit of {what} beside this write's own in #{stored.number}: both "
                "changed it at the same time, so this write's version stands and the other is under a heading "
                "ending in \"(concurrent edit)\". Please keep the one you mean and delete the other.")
        try:
            self.store.notify(stored, text)
        except GhstateError as exc:
            return [f"the comment asking a person to settle the concurrent edit could not be posted ({exc})"]
        return []

    def _stamp(self, cp: Checkpoint, revision: int, now: str, spec: WriteSpec) -> Checkpoint:
        if not spec.record_tree and cp.meta.revision:
            return stamp(cp, revision=revision, now=now, branch=cp.meta.branch, commit=cp.meta.commit,
                         dirty=cp.meta.dirty, execution=spec.execution, new_id=spec.new_id)
        stamped = stamp(cp, revision=revision, now=now, branch=spec.tree.branch, commit=spec.tree.commit,
                        dirty=spec.tree.dirty, execution=spec.execution, new_id=spec.new_id)
        return stamped.with_meta(fingerprints=dict(spec.fingerprints))

    def _body(self, cp: Checkpoint, target: Stored | None, spec: WriteSpec) -> str:
        # Over an existing body, only what changed is rewritten: a person's formatting stays.
        body = splice.render_update(cp, target.body, self.env) if target else render.render_body(cp, self.env)
        actual = section_digests(parse(body).checkpoint)
        if actual != cp.meta.digests:  # the digests describe what the body reads back as
            body = render.replace_marker(body, with_digests(cp, actual))
        if self.builtin is not None:  # a repository's own template
            template = self.env.get_template("checkpoint.md.j2").filename or "checkpoint.md.j2"
            checks.check_template(body, render.render_body(cp, self.builtin), template)
        if self.store.remote:
            body, shed = checks.fit_size(body, with_digests(cp, actual), self.max_body_chars)
            if shed:
                self.store.notices.append(f"to stay under {self.max_body_chars:,} characters, this revision's hidden "
                                          f"marker leaves out {shed}")
            if not spec.allow_secrets:
                before = checkpoint_of(target) if target else Checkpoint()
                checks.check_secrets(target.body if target else "", before, body, cp)
        return body

    def _entry(self, cp: Checkpoint, write_id: str, now: str, spec: WriteSpec, changes: list[str]) -> LogEntry:
        e = spec.execution
        revision = Revision(revision=cp.meta.revision, at=now, event=spec.event, changes=tuple(changes),
                            agent=e.agent if e else "", role=e.role if e else "", session=e.session if e else "")
        return LogEntry(revision, write_id, spec.intent)

    def _summary(self, number: int, now: str, spec: WriteSpec, changes: list[str]) -> str:
        e = spec.execution
        who = ", ".join(x for x in ((e.role if e else ""), f"session {e.session}" if e and e.session else "") if x)
        who = f"{(e.agent if e else '') or 'ghstate'}{f' ({who})' if who else ''}"
        revision = Revision(revision=number, at=now, event=spec.event, changes=tuple(changes))
        return self.env.get_template("comment.md.j2").render(revision=revision, who=who, data="").strip()

    def _keep_pending(self, spec: WriteSpec, target: Stored | None) -> str:
        """Keep a write GitHub could not take, whole; ``push`` replays it as it was made, on the checkpoint
        it had found. A --file input keeps the section digests of what it had read, so that it merges
        against what it was made from, not against later revisions."""
        assert self.pending is not None and isinstance(spec.intent, Intent)
        intent = spec.intent
        if target is not None and intent.incoming is not None and intent.base is None:
            digests = checkpoint_of(target).meta.digests
            if digests is not None:
                intent = replace(intent, base=tuple(sorted((k, v) for k, v in digests.items() if isinstance(v, str))))
        record = PendingWrite(
            replace(spec, intent=intent, number=target.number if target else spec.number,
                    new_id=spec.new_id if target is None else ""),
            repo=self.repo, api_url=self.api_url, saved_at=self.clock())
        try:
            return str(self.pending.save_pending(record))
        except OSError as exc:
            raise GhstateError(f"GitHub could not be reached and the local copy could not be saved "
                               f"either ({exc}); nothing was written") from exc


def _keep_theirs(cp: Checkpoint, read: Checkpoint, now: Checkpoint,
                 sets: frozenset[str]) -> tuple[Checkpoint, list[str]]:
    """A text this write sets that someone else changed since it was read (a person's web edit): this
    write's stands, theirs is kept beside it as "… (concurrent edit)"."""
    conflicts = []
    for key in ("title", "goal", "resume", "verification"):
        theirs, mine = getattr(now, key), getattr(cp, key)
        if key in sets and theirs and theirs != getattr(read, key) and theirs != mine:
            _, kept = merge_unknown_base(key, cp, now)
            cp = cp._replace(extra=(*cp.extra, *kept))
            conflicts.append("the title" if key == "title" else HEADINGS[key])
    return cp, conflicts

