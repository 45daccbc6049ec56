"""Writing a revision: locate → read → change → stamp → render → write with its log entry → check.

One pipeline serves ``checkpoint``, ``ci``, ``push`` and the hooks, on every store. The change is an
``Intent`` (data), applied to the checkpoint as it is now. No write can overwrite another silently:

1. the checkpoint is read once (``reader.view``): the body, with any logged write it does not hold yet
   replayed into it;
2. the intent is applied and the new body rendered, its marker saying how far it reflects the log;
3. the body is written with the write's log entry (``Store.update``: the store logs the entry its own
   way, with the write: GitHub in the body it saves, read back from the body's edit history; the local
   store as a line of its log before the body). From then on the write is durable: every reader
   replays it even if the body is overwritten later;
4. when the answer shows that another writer logged a write this body lacks, the checkpoint is read
   again, everything replayed, and written again (a bounded number of times).

Right before the write the checkpoint is re-read (free when unchanged), so an edit made meanwhile is
built on rather than overwritten. When GitHub cannot be reached, the write is kept locally for ``push``.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import NamedTuple

from ghstate.core import checks
from ghstate.core.edits import content_equal, describe, stamp
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import LogState
from ghstate.core.merge import merge_unknown_base
from ghstate.core.model import DEFAULT_MAX_BODY, HEADINGS, Checkpoint, Revision
from ghstate.core.render import Templates, render_body
from ghstate.core.splice import written_body
from ghstate.core.writelog import DELETED, LogEntry, Replayed, ignored_notice, log_state, missing, with_log
from ghstate.errors import GhstateError, InputError, NotFound, RemoteError
from ghstate.local.store import LocalStore, PendingWrite
from ghstate.services import interrupt
from ghstate.services.reader import View, base_version, checkpoint_of, locate, view
from ghstate.store import Changed, Store, Stored

# Writes of one revision while other writers' revisions keep landing. Each round that fails means another
# writer logged a revision since this one read: with fewer concurrent writers than this, the last write
# always completes (and the body converges); beyond it, readers still replay every logged revision.
ROUNDS = 10


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


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


class NewCheckpoint(NamedTuple):
    """A checkpoint ready to be created: what ``Store.create`` takes (``unique``: text only its body holds)."""

    checkpoint: Checkpoint
    body: str
    entry: LogEntry | None
    changes: list[str]
    conflicts: tuple[str, ...]
    unique: str


@dataclass
class _Draft:
    """A revision being written: what it was built on and what it becomes."""

    view: View  # the checkpoint it is built on, as read
    checkpoint: Checkpoint
    body: str
    file_conflicts: tuple[str, ...]
    intent: Intent
    conflicts: tuple[str, ...] = ()

    @property
    def target(self) -> Stored:
        return self.view.stored

    @property
    def replayed(self) -> Replayed:
        return self.view.replayed


class Writer:
    def __init__(self, store: Store, *, env: Templates, builtin: Templates | None = None,
                 max_body_chars: int = DEFAULT_MAX_BODY, pending: LocalStore | None = None, repo: str | None = None,
                 api_url: str = "", clock: Callable[[], str] | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.store = store
        self.env = env
        self.builtin = builtin  # the shipped templates, when ``env`` holds a repository's own checkpoint.md.j2
        self.max_body_chars = max_body_chars
        self.pending = pending
        self.repo = repo
        self.api_url = api_url
        self.clock = clock or (lambda: utc_now())  # looked up when called: tests set the module's clock
        self.sleep = sleep or (lambda seconds: _sleep(seconds))  # looked up when called, as the clock

    def write(self, spec: WriteSpec, *, kept: bool = False) -> WriteResult:
        """Write ``spec``. ``kept``: a write kept while GitHub was out of reach, published now (``push``):
        when its log entry is in the history already it landed after all and is not made again; else what
        writes logged after it was made set stands (it never undoes a later write)."""
        spec = self._identified(spec)
        target: Stored | None = None
        try:
            with self.store.lock():
                if spec.number is not None or spec.lookup:
                    target = locate(self.store, spec.number, spec.tree.branch)
                if target is None and not spec.create:
                    raise NotFound(f"no open checkpoint for {spec.tree.place}")
                return self._create(spec) if target is None else self._update(spec, target, kept)
        except RemoteError as exc:
            if spec.dry_run or self.pending is None or not self.store.remote or callable(spec.intent):
                raise
            path = self._keep_pending(spec, target)
            when = "when GitHub is reachable" if exc.retryable else "once that is fixed"
            raise RemoteError(f"{exc}; the checkpoint was kept locally in {path}: run 'ghstate push' {when}",
                              retryable=exc.retryable, status=exc.status) from exc

    def _identified(self, spec: WriteSpec) -> WriteSpec:
        """``spec`` with what names it for good: the marker id a new checkpoint gets, the id its log entry
        carries, and when it was made (a kept write keeps all three)."""
        return replace(spec, new_id=spec.new_id or os.urandom(6).hex(), write_id=spec.write_id or os.urandom(6).hex(),
                       made_at=spec.made_at or self.clock())

    # ------------------------------------------------------------------------------ create

    def _create(self, spec: WriteSpec) -> WriteResult:
        new = self.prepare_create(spec)
        stamped = new.checkpoint
        if spec.dry_run:
            return WriteResult(stamped, new.body, None, created=True, changes=new.changes)
        interrupt.begin_create(self.store, new.unique)  # what Ctrl-C then left is known
        stored = self.store.create(stamped.title, new.body, unique=new.unique, entry=new.entry)
        interrupt.landed(self.store, stored.number, 1)
        return WriteResult(stamped, new.body, stored, created=True, changes=new.changes,
                           file_conflicts=list(new.conflicts), warnings=self._notices())

    def prepare_create(self, spec: WriteSpec) -> NewCheckpoint:
        """A new checkpoint as ``write`` creates it (stamped, rendered, checked, with its log entry), not
        written: for a caller that creates several in one request (``ghstate split``)."""
        spec = self._identified(spec)
        now = self.clock()
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(Checkpoint()))
        applied = spec.intent.apply(Checkpoint())
        ours = applied.checkpoint
        if spec.title:
            ours = ours._replace(title=spec.title)
        if not ours.title:
            ours = ours._replace(title=f"Checkpoint: {spec.tree.branch}" if spec.tree.branch else "Checkpoint")
        write_id = spec.write_id
        # the first entry of the log is the creation's own, logged or not
        state = LogState(0, 1, (write_id,), self.store.log_via)
        stamped = with_log(self._stamp(ours, 1, now, spec), state)
        body, stamped = self._body(stamped, None, spec)
        changes = describe(None, stamped)
        entry = self._entry(stamped, write_id, now, spec, changes) if spec.log and not spec.dry_run else None
        if not spec.dry_run:
            body, entry = self._fitted(body, stamped, entry)
        return NewCheckpoint(stamped, body, entry, changes, applied.conflicts, f'"id":"{stamped.meta.id}"')

    # ------------------------------------------------------------------------------ update

    def _update(self, spec: WriteSpec, target: Stored, kept: bool = False) -> WriteResult:
        now = self.clock()
        write_id = spec.write_id
        later: frozenset[str] = frozenset()
        if kept:
            since = [e for e in self.store.log_since(target, spec.made_at) if e.replayable]
            if any(e.write == write_id for e in since):  # it landed although its answer was lost
                current = checkpoint_of(target)
                return WriteResult(current, target.body, target, changed=False, previous=current, warnings=[
                    f"the kept write was in #{target.number}'s history already: it had landed"])
            later = frozenset().union(*(e.intent.sets(checkpoint_of(target)) for e in since
                                        if e.intent is not None and e.revision.at > spec.made_at))
        draft = self._draft(spec, view(self.store, target), now, write_id, masked=later)
        spec = replace(spec, intent=draft.intent)  # made once: what is logged is what is applied
        before = draft.view.checkpoint
        warnings = [n for n in (ignored_notice(draft.replayed.ignored),) if n]
        if not draft.replayed.replayed and content_equal(draft.checkpoint, draft.view.as_stored) and \
                spec.event != "pre-compact":
            return WriteResult(before, target.body, target, changed=False, warnings=warnings)
        changes = describe(before, draft.checkpoint)
        if spec.dry_run:
            return WriteResult(draft.checkpoint, draft.body, target, changes=changes, previous=before,
                               file_conflicts=list(draft.file_conflicts), warnings=warnings)
        entry = self._entry(draft.checkpoint, write_id, now, spec, changes) if spec.log else None
        stored, draft = self._publish(spec, draft, now, write_id, entry)
        warnings.extend(self._tell_people(stored, draft.conflicts))
        return WriteResult(draft.checkpoint, draft.body, stored, changes=changes, conflicts=list(draft.conflicts),
                           file_conflicts=list(draft.file_conflicts), warnings=[*warnings, *self._notices()],
                           previous=before)

    def _draft(self, spec: WriteSpec, read: View, now: str, write_id: str, own: LogEntry | None = None,
               first: View | None = None, also: tuple[str, ...] = (), masked: frozenset[str] = frozenset()) -> _Draft:
        """The revision built on ``read``. ``own``: this write's log entry, once logged (it is then
        replayed in its place in the log, not applied again). ``first``: what the first draft was built
        on, when ``read`` is newer: a value a person changed meanwhile that this write sets too is kept
        beside it. ``masked``: what writes logged after this one was made set (a kept write leaves it)."""
        replayed = read.replayed
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(replayed.checkpoint))
        assert isinstance(spec.intent, Intent)
        cp, file_conflicts = replayed.checkpoint, ()
        if own is None:
            applied = spec.intent.apply(replayed.checkpoint, masked=masked, lenient=bool(masked))
            cp, file_conflicts = applied.checkpoint, applied.conflicts
        conflicts: list[str] = []
        if first is not None:
            logged = frozenset().union(*(e.intent.sets(first.checkpoint) for e in read.entries
                                         if e.replayable and e.intent is not None and e.write != write_id))
            cp, conflicts = _keep_theirs(cp, first.checkpoint, read.as_stored,
                                         spec.intent.sets(first.checkpoint) - logged)
        state = self._log_state(read, (*replayed.applied, write_id, *also))
        others = [e.revision.revision for e in replayed.replayed if e.write != write_id]
        lost = sum(1 for e in replayed.ignored if e.problem == DELETED)  # each may have held a number
        revision = max([read.as_stored.meta.revision, *others]) + 1 + lost
        if own is not None:  # the number its log entry gave it, or the next for a person's version it builds on
            revision = max(revision, own.revision.revision + (1 if also else 0))
        stamped = with_log(self._stamp(cp, revision, now, spec), state)
        body, stamped = self._body(stamped, read, spec)
        return _Draft(read, stamped, body, file_conflicts, spec.intent, tuple(conflicts))

    def _log_state(self, read: View, applied: tuple[str, ...]) -> LogState:
        """What the body this write saves says of the store's log: the entries it accounts for (claiming no
        more than were checked: readers look at the rest), and its own entry after them. A body of an older
        log (an older ghstate's comments) had those replayed: every entry of the store's own is then
        accounted for."""
        before = log_state(read.as_stored)
        via = self.store.log_via
        if before.via != via:  # converted: the older log was replayed into this body
            seen = 0 if read.checked is None else self.store.log_length(read.stored, LogState(via=via))
        else:
            seen = before.seen if read.checked is None else read.checked
        return LogState(seen=seen, own=1, applied=tuple(dict.fromkeys(applied)), via=via)

    def _publish(self, spec: WriteSpec, draft: _Draft, now: str, write_id: str,
                 entry: LogEntry | None) -> tuple[Stored, _Draft]:
        """Write the draft's body with its log entry; write again, built on what is there, while the answer
        shows that someone saved a version between this write's read and its own."""
        first = draft.view
        since = self.store.log_length(first.stored, log_state(first.as_stored))
        file_conflicts = draft.file_conflicts
        fresh = self.store.reread(draft.target)  # GitHub: nothing to ask, its answer tells (``_rebuild_on``)
        own: LogEntry | None = None
        stored: Stored | None = None
        kept: LogEntry | None = None  # a person's version this round builds on, logged as its write's entry
        for round_ in range(ROUNDS):
            if round_ and self.store.remote:  # contended: the writers that collided spread out (jittered backoff)
                self.sleep(min(8.0, 0.5 * 2 ** (round_ - 1)) * random.uniform(0.5, 1.5))
            if fresh is not None:  # changed since it was read: build on what is there now
                draft = self._draft(spec, view(self.store, fresh, own, since), now, write_id, own, first,
                                    also=(kept.write,) if kept else ())
                draft.file_conflicts = file_conflicts
            logs = entry if kept is None else kept._replace(revision=kept.revision._replace(
                revision=draft.checkpoint.meta.revision))
            labels = spec.labels.apply(draft.target.labels, draft.checkpoint) if spec.labels else None
            title = draft.checkpoint.title
            draft.body, logs = self._fitted(draft.body, draft.checkpoint, logs)
            interrupt.begin_update(self.store, draft.target.number, draft.checkpoint.meta.revision, write_id)
            try:
                stored = self.store.update(draft.target, draft.body, title=title if title != (
                    draft.target.title or title) else None, labels=labels, entry=logs)
            except Changed as exc:  # edited while a failed write waited to be resent
                fresh = exc.fresh
                continue
            interrupt.landed(self.store, stored.number, draft.checkpoint.meta.revision)
            own = entry  # logged: from here on it is replayed in its place, not applied again
            fresh, kept = self._rebuild_on(stored, draft, logs.write if logs else "", write_id, now)
            if fresh is None:
                return stored, draft
        self.store.notices.append(f"other writers kept changing #{draft.target.number} while this revision was "
                                  f"written ({ROUNDS} rounds); every change is logged and 'ghstate resume' shows it, "
                                  "and the next write brings the body up to date")
        if stored is None:
            raise RemoteError(f"#{draft.target.number} kept changing while it was being written ({ROUNDS} times); "
                              "the revision is logged: 'ghstate resume' shows it", retryable=True)
        return stored, draft

    def _kept_edit(self, prior: Stored, position: int, author: str, write_id: str, now: str) -> LogEntry | None:
        """A person's version this write builds on, as a log entry of its own: the sections they changed,
        merged as a file would be. What they changed is told against what their page held: its marker's
        digests, or for a page without the marker, the version it differs from least (a person's text
        without a marker is theirs as it stands). None when they changed no section."""
        from ghstate.core.model import SECTION_KEYS, section_digest, section_digests

        cp = checkpoint_of(prior)
        base = cp.meta.digests if cp.meta.log is not None else None
        if base is None:
            found = base_version(self.store, prior, cp, position)
            base = section_digests(found[1]) if found else {}
        changed = frozenset(k for k in SECTION_KEYS if (section_digest(cp, k) or None) != base.get(k))
        if not changed:
            return None
        return LogEntry(Revision(0, at=now, event="kept", changes=(
            f"built on a version saved by {author or 'someone'} meanwhile",)), f"{write_id}-{position}",
            Intent(incoming=cp, present=changed, base=tuple(sorted(base.items()))))

    def _rebuild_on(self, stored: Stored, draft: _Draft, logged: str, write_id: str,
                    now: str) -> tuple[Stored | None, LogEntry | None]:
        """What this write must be built on again, or None: the body just written holds everything logged
        before it and overwrote no one's version. Versions saved between this write's read and its own are
        what it may have overwritten: another writer's logged writes are replayed on this one; a person's
        version, when it is the only one, is built on (this write replayed on it, theirs kept beside what
        both changed); a person's version among others is said, by whom and when (GitHub keeps it in the
        issue's edit history). What lands after this write is its writer's to check. With a person's version
        comes their change as a log entry, for the write that builds on it to log: a writer that overwrites
        that write later replays the person's change with it. ``logged``: the id of the entry this round's
        write logged (its version is found by it)."""
        state = log_state(draft.checkpoint)
        if state.complete(self.store.log_length(stored, state)):
            return None, None
        try:
            entries = self.store.log(stored, state, state.seen)
        except RemoteError as exc:  # written; whether another write went in meanwhile cannot be told now
            self.store.notices.append(f"the history of #{stored.number} could not be read after the write "
                                      f"({exc}); any revision logged meanwhile is shown by 'ghstate resume' "
                                      "and written back by the next write")
            return None, None
        mine = max((e.position for e in entries if e.write and e.write == logged), default=0)
        between = [e for e in entries if e.position < mine] if mine else entries
        people = [e for e in between if not e.replayable and not e.problem]
        if people:
            prior = self.store.version(stored, mine - 1) if mine and len(between) == 1 else None
            if prior is not None and prior.body != draft.target.body:
                return prior, self._kept_edit(prior, mine - 1, people[0].revision.author, write_id, now)
            for e in people:
                who = f"by {e.revision.author}" if e.revision.author else "by someone"
                self.store.notices.append(
                    f"a version of #{stored.number} saved {who}{f' at {e.revision.at}' if e.revision.at else ''} "
                    "while this revision was being written was written over (among other writes); GitHub keeps "
                    "it in the issue's edit history: compare it with the body and restore what you need")
        return (stored if missing(state, between) else None), None

    # ----------------------------------------------------------------------------- pieces

    def _fitted(self, body: str, cp: Checkpoint, entry: LogEntry | None) -> tuple[str, LogEntry | None]:
        """``body`` and its log entry within the bound as the store keeps them (GitHub keeps the entry in
        the body): ghstate's optional metadata is shed first; then the entry leaves out what the write
        changed (it is still named in the history, but cannot be replayed), said; a person's text over
        the bound is refused before anything is written."""
        limit = self.max_body_chars
        reserve = self.store.stored_size(body, entry) - len(body)
        try:
            fitted, shed = checks.fit_size(body, cp, limit, reserve)
        except InputError:
            if entry is None or entry.intent is None:
                raise
            lighter = entry._replace(intent=None)
            fitted, shed = checks.fit_size(body, cp, limit, self.store.stored_size(body, lighter) - len(body))
            self.store.notices.append(f"this revision's log entry leaves out what it changed (it would take the "
                                      f"checkpoint past {limit:,} characters): the history names it, but a write "
                                      "that overwrites it before the next one cannot bring its change back")
            entry = lighter
        if shed:
            self.store.notices.append(f"to stay under {limit:,} characters, this revision's hidden marker leaves "
                                      f"out {shed}")
        return fitted, entry

    def _notices(self) -> list[str]:
        """What the store noticed during this write (said as warnings), taken from it."""
        notices = list(self.store.notices)
        self.store.notices.clear()
        return notices

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

    def _body(self, cp: Checkpoint, read: View | None, spec: WriteSpec) -> tuple[str, Checkpoint]:
        """The body for ``cp`` (over an existing body only what changed is rewritten: a person's formatting
        stays), checked as every body is before it leaves: a repository's own template must read back as the
        shipped one; what goes to GitHub must fit and hold no credential."""
        body, cp = written_body(cp, self.env, read.stored.body if read else None)
        if self.builtin is not None:  # a repository's own template
            template = self.env.get_template("checkpoint.md.j2").filename or "checkpoint.md.j2"
            checks.check_template(body, render_body(cp, self.builtin), template)
        body, shed = checks.fit_size(body, cp, self.max_body_chars)  # the bound of every store, entry apart
        if shed:
            self.store.notices.append(f"to stay under {self.max_body_chars:,} characters, this revision's hidden "
                                      f"marker leaves out {shed}")
        if self.store.remote:
            if not spec.allow_secrets:
                checks.check_secrets(read.stored.body if read else "", read.as_stored if read else Checkpoint(),
                                     body, cp)
        return body, cp

    def _entry(self, cp: Checkpoint, write_id: str, now: str, spec: WriteSpec, changes: list[str]) -> LogEntry:
        """The write's log entry; its time is when the write was made (a kept write's, when it was kept:
        what was logged after it wins over it)."""
        e = spec.execution
        revision = Revision(revision=cp.meta.revision, at=spec.made_at or now, event=spec.event, changes=tuple(changes),
                            agent=e.agent if e else "", role=e.role if e else "", session=e.session if e else "")
        return LogEntry(revision, write_id, spec.intent if isinstance(spec.intent, Intent) else None)

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
