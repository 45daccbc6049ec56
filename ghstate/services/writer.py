"""Writing a revision: locate → read → change → stamp → render → append to the chain → mirror.

One pipeline serves ``checkpoint``, ``ci``, ``push``, the task commands and the hooks, on every store. The
change is an ``Intent`` (data), applied to the checkpoint as ``reader.view`` reads it (the head of its
chain, people's edits merged); the write is one commit on the head it read (``ghstate.core.chain``), and
a round that lost its race is built again on the new head (by chain order, never by clocks). A write
whose answer was lost is found on the chain, never applied twice; one GitHub could not take is kept for
``push``, which rebases it (``Writer.write(kept=True)``).
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
from ghstate.core.chain import Entry, Link, embed, merged_after, prior_entries, split
from ghstate.core.edits import content_equal, describe, stamp
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import MARKER_LINE
from ghstate.core.merge import merge3
from ghstate.core.model import DEFAULT_MAX_BODY, Checkpoint, Revision
from ghstate.core.render import Templates, render_body
from ghstate.core.splice import written_body
from ghstate.errors import GhstateError, InputError, NotFound, RemoteError
from ghstate.local.store import LocalStore, PendingWrite
from ghstate.services import interrupt
from ghstate.services.leases import renewed
from ghstate.services.reader import View, body_checkpoint, locate, view
from ghstate.store import BodyVersion, Store, Stored, Unprotected, WriteOutcome

# Rounds of one write while other writers keep moving the head: each lost round means another writer's
# commit landed first, and this one is built again on it, after a wait drawn at random up to a bound that
# doubles each round (BACKOFF, at most BACKOFF_MOST seconds): "full jitter", which spreads colliding
# writers the most. Twenty writers at once all land well within these.
ROUNDS = 24
BACKOFF = 0.25
BACKOFF_MOST = 8.0
BLIND_LINKS = 30  # commits a write kept without a read looks back through for the one it was made on
KEY_ROOM = 120  # characters the chain's key takes in a body's marker (the bound counts the body as stored)


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
    previous: Checkpoint | None = None  # the checkpoint as it was read (people's edits merged), before this write


class NewCheckpoint(NamedTuple):
    """A checkpoint ready to be created: what ``Store.create`` takes (``unique``: text only its body holds)."""

    checkpoint: Checkpoint
    body: str
    changes: list[str]
    conflicts: tuple[str, ...]
    unique: str


@dataclass
class _Draft:
    """One round of a write: what it was built on, the commit it makes, and what it says."""

    read: View
    checkpoint: Checkpoint
    body: str
    link: Link
    changes: list[str]
    own: bool  # this write's own change is in it (not yet on the chain)
    conflicts: tuple[str, ...] = ()
    file_conflicts: tuple[str, ...] = ()


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

    def write(self, spec: WriteSpec, *, kept: bool = False, before: tuple[Intent, ...] = ()) -> WriteResult:
        """Write ``spec``. ``kept``: a write kept while GitHub was out of reach, published now (``push``):
        when the chain holds it already it landed after all and is not made again; else it is rebased onto
        the head: what was written or edited after the state it was made on stands, its own value kept
        beside where both changed one. ``before``: the earlier kept writes of this push to the same
        checkpoint, which its maker had made on that state before it (as a local write would show them)."""
        spec = self._identified(spec)
        target: Stored | None = None
        try:
            with self.store.lock():
                if spec.number is not None or spec.lookup:
                    target = locate(self.store, spec.number, spec.tree.branch, heads=True)
                    spec = self._linked(spec)
                if target is None and not spec.create:
                    raise NotFound(f"no open checkpoint for {spec.tree.place}")
                if target is None:
                    return self._create(spec)
                return self._indexed(spec, self._update(spec, target, kept, before))
        except RemoteError as exc:
            if spec.dry_run or self.pending is None or not self.store.remote or callable(spec.intent):
                raise
            head = target.head.oid if target is not None and target.head is not None else ""
            try:  # kept whole, with the head it was made on: ``push`` rebases it onto the head then
                path = self._save_pending(replace(spec, number=target.number if target else spec.number,
                                                  base=spec.base or head, new_id=spec.new_id if target is None else ""))
            except OSError as err:
                raise GhstateError(f"GitHub could not be reached and the local copy could not be saved either "
                                   f"({err}); nothing was written") from err
            when = "when GitHub is reachable" if exc.retryable else "once that is fixed"
            raise RemoteError(f"{exc}; the checkpoint was kept locally in {path}: run 'ghstate push' {when}",
                              retryable=exc.retryable, status=exc.status) from exc

    def _linked(self, spec: WriteSpec) -> WriteSpec:
        """A write by branch links the branch's open pull request, as its lookup read it (no request)."""
        pull = self.store.pull_request(spec.tree.branch) if spec.number is None and spec.tree.branch else None
        if pull is None or not isinstance(spec.intent, Intent) or spec.intent.pull_request is not None:
            return spec
        return replace(spec, intent=replace(spec.intent, pull_request=pull))

    def _indexed(self, spec: WriteSpec, result: WriteResult) -> WriteResult:
        """After a write by branch, or one that moved a checkpoint to this branch (``--move``), the branch's
        entry in the store's index names the checkpoint (no request when it did already: a checkpoint an
        older ghstate wrote is indexed by its first write)."""
        branch, was = spec.tree.branch, result.previous.meta.branch if result.previous else ""
        moved = spec.number is not None and spec.move and spec.record_tree and was != branch
        if spec.dry_run or result.stored is None or not branch or not (spec.number is None or moved):
            return result
        self.store.index_branch(result.stored, branch, leaving=was if moved else "")
        result.warnings.extend(self._notices())
        return result

    def _identified(self, spec: WriteSpec) -> WriteSpec:
        """``spec`` with what names it for good: the marker id a new checkpoint gets, the id its chain entry
        carries, and when it was made (a kept write keeps all three)."""
        return replace(spec, new_id=spec.new_id or os.urandom(6).hex(), write_id=spec.write_id or os.urandom(6).hex(),
                       made_at=spec.made_at or self.clock())

    # ------------------------------------------------------------------------------ create

    def _create(self, spec: WriteSpec) -> WriteResult:
        new = self.prepare_create(spec)
        if spec.dry_run:
            return WriteResult(new.checkpoint, new.body, None, created=True, changes=new.changes)
        interrupt.begin_create(self.store, new.unique)  # what Ctrl-C then left is known
        stored = self.store.create(new.checkpoint.title, new.body, unique=new.unique)
        interrupt.landed(self.store, stored.number, 1)
        branch = spec.tree.branch
        owner = self.store.index_branch(stored, branch) if branch and spec.record_tree else stored.number
        if owner != stored.number:  # another writer created the branch's checkpoint at the same time: one stays
            return self._duplicate(spec, stored, owner)
        return WriteResult(new.checkpoint, new.body, stored, created=True, changes=new.changes,
                           file_conflicts=list(new.conflicts), warnings=self._notices())

    def _duplicate(self, spec: WriteSpec, stored: Stored, owner: int) -> WriteResult:
        """This write's new checkpoint lost the race for its branch to ``owner``, created at the same time: it
        is closed as a duplicate (its body stays on it), and the write goes to ``owner`` as an update."""
        said = (f"#{owner} was created for branch {spec.tree.branch} at the same time as #{stored.number}: this "
                f"write went to #{owner}, and #{stored.number} was closed as its duplicate")
        try:
            self.store.close(stored, reason="duplicate")
        except GhstateError as exc:
            said = said.replace("was closed as its duplicate", f"could not be closed ({exc}): close it by hand")
        result = self._update(spec, self.store.get(owner))
        result.warnings.insert(0, said)
        return result

    def prepare_create(self, spec: WriteSpec) -> NewCheckpoint:
        """A new checkpoint as ``write`` creates it (stamped, rendered, checked), not written: for a caller
        that creates several in one request (``ghstate split``). Its chain starts with its first update."""
        spec = self._identified(spec)
        now = self.clock()
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(Checkpoint()))
        applied = spec.intent.apply(Checkpoint())
        branch = spec.tree.branch
        ours = applied.checkpoint._replace(title=spec.title or applied.checkpoint.title
                                           or (f"Checkpoint: {branch}" if branch else "Checkpoint"))
        stamped = self._stamp(ours, 1, now, spec)
        body, stamped = self._body(stamped, None, spec)
        return NewCheckpoint(stamped, body, describe(None, stamped), applied.conflicts, f'"id":"{stamped.meta.id}"')

    # ------------------------------------------------------------------------------ update

    def _update(self, spec: WriteSpec, target: Stored, kept: bool = False,
                before: tuple[Intent, ...] = ()) -> WriteResult:
        if kept and self.store.has_write(target, write=spec.write_id):  # it landed although its answer was lost
            self.store.notices.append(f"the kept write was on #{target.number}'s chain already: it had landed")
            return self._result(target, None, view(self.store, target), [])
        read = view(self.store, target, tuple(BodyVersion(*save) for save in spec.saves), whole=True)  # a kept write's
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(read.checkpoint))
        assert isinstance(spec.intent, Intent)
        spec = self._placed(renewed(self.store, spec, read.stored, read.checkpoint, self.clock()), read)
        base = self._base(read, spec, before) if kept else None
        first = self._draft(spec, read, own=True, base=base, kept=kept)
        if spec.dry_run or (first is None and read.mirror.kind != "stale"):  # a dry run, or nothing to write
            return self._result(read.stored, first, read, list(first.conflicts) if first else [], tell=False)
        return self._rounds(spec, read, first, base, kept)

    def _rounds(self, spec: WriteSpec, read: View, draft: _Draft | None, base: Checkpoint | None,
                kept: bool) -> WriteResult:
        """Write rounds until this write's change landed and the body is the head's mirror with every
        person's save merged: a round that loses its race is built again on the new head (after a jittered
        wait); one whose mirror wrote over a person's save is followed by one that merges it; a head that
        moved on while the mirror was written is read again. Once the change landed, a failure is a warning
        (what it left undone said, and a person's save it wrote over kept for ``push``)."""
        target = read.stored
        mine: _Draft | None = None  # the round whose commit carried this write's change
        conflicts: list[str] = []  # values kept beside others by the rounds that landed
        overwritten: tuple[BodyVersion, ...] = ()
        lost = False
        for round_ in range(ROUNDS):
            if round_:
                if lost and self.store.remote:  # contended: the writers that collided spread out (jittered backoff)
                    self.sleep(random.uniform(0, min(BACKOFF_MOST, BACKOFF * 2 ** round_)))
                read = view(self.store, target, overwritten, whole=True)
                draft = self._draft(spec, read, own=mine is None, base=base, kept=kept)
            try:
                written = self._round(spec, read, draft)
            except RemoteError as exc:
                if mine is None:
                    raise
                unfinished = self._unfinished(spec, target, overwritten, str(exc))
                return self._result(target, mine, read, conflicts, unfinished)
            if written is None:  # nothing (more) to write
                break
            if draft is not None and written.landed:
                mine = draft if draft.own else mine
                conflicts.extend(draft.conflicts)
            lost = not written.landed
            # people's saves stay to be merged until a round that merged them landed
            overwritten = (*(overwritten if lost else ()), *written.overwritten)
            target = written.stored
            if lost or overwritten:
                continue  # built again on the new head; a person's save the mirror wrote over: merged
            if not written.moved:
                break
            target = self.store.get(target.number)  # the head moved on while its mirror was written: read again
        else:
            if mine is None:
                raise RemoteError(f"#{target.number} kept changing while it was being written ({ROUNDS} times); "
                                  "nothing of this write landed: run it again", retryable=True)
            busy = f"other writers kept changing #{target.number} ({ROUNDS} rounds)"  # as after a failure
            return self._result(target, mine, read, conflicts, self._unfinished(spec, target, overwritten, busy))
        return self._result(target, mine, read, conflicts)

    def _round(self, spec: WriteSpec, read: View, draft: _Draft | None) -> WriteOutcome | None:
        """One round's write: the draft's commit and its mirror; where the chain cannot be written, the body
        alone, naming the head it was built on (or the one its body named, where the chain cannot be read)
        without the chain's digest, so that a chain writer takes what it holds beyond that head as an edit
        (the store says once why); the head's mirror over a body older than it; None when nothing is left."""
        stored = read.stored
        if draft is None:  # the head's own mirror over a body older than it (with the labels kept in step)
            if read.mirror.kind != "stale" or read.link is None or stored.head is None:
                return None
            return self.store.mirror(stored, embed(read.link.body, stored.head.oid),
                                     labels=self._labels(spec, stored, read.checkpoint))
        labels, title, revision = self._labels(spec, stored, draft.checkpoint), _title(draft), draft.link.revision
        interrupt.begin_update(self.store, stored.number, revision, spec.write_id if draft.own else "")
        try:
            written = self.store.append(stored, draft.link, title=title, labels=labels)
        except Unprotected:
            head = stored.head.oid if stored.head is not None else read.mirror.base
            text = embed(draft.body, head, protected=False) if head else draft.body
            interrupt.begin_update(self.store, stored.number, revision, "", text)
            written = self.store.mirror(stored, text, title=title, labels=labels)._replace(moved=False)
        if written.landed:
            interrupt.landed(self.store, stored.number, revision)
        return written

    def _unfinished(self, spec: WriteSpec, target: Stored, overwritten: tuple[BodyVersion, ...], why: str) -> list[str]:
        """What a failure after this write's change landed leaves undone, said: the body not brought up to
        date (readers read the chain; the next write repairs it), or a person's save the mirror wrote over
        not merged yet, kept for ``push`` (with its text: GitHub keeps it in the issue's edit history too)."""
        if not overwritten:
            return [f"#{target.number}'s body could not be brought up to date ({why}); readers read its write "
                    "log, and the next write repairs the body"]
        who = ", ".join(dict.fromkeys(s.editor or "a person" for s in overwritten))
        if self.pending is None or not self.store.remote:
            return [f"a save of #{target.number} by {who}, which this write's body replaced, could not be merged "
                    f"({why}); GitHub keeps it in the issue's edit history: the next write does not know it"]
        head = target.head.oid if target.head is not None else ""
        path = self._save_pending(replace(spec, intent=Intent(), write_id=os.urandom(6).hex(), made_at=self.clock(),
                                          base=head, saves=tuple(overwritten), labels=None, number=target.number))
        return [f"a save of #{target.number} by {who}, which this write's body replaced, could not be merged yet "
                f"({why}); it is kept in {path}: run 'ghstate push' when GitHub is reachable"]

    def _placed(self, spec: WriteSpec, read: View) -> WriteSpec:
        """Nothing moves silently. A write by number to an issue that is no checkpoint (no label, no marker)
        is refused unless ``adopt``; one from another branch leaves the checkpoint's branch, commit and dirty
        files as they were unless ``move``, and says so either way."""
        if spec.number is None:
            return spec
        number, was, branch = read.stored.number, read.checkpoint.meta.branch, spec.tree.branch
        label = self.store.missing_label(read.stored)
        if label and not spec.adopt and not MARKER_LINE.search(read.stored.body):
            raise InputError(f"#{number} is not a checkpoint (no {label!r} label, no ghstate marker), so nothing "
                             f"was written: to make it one, run the same command with --adopt")
        if not (spec.record_tree and was and branch and was != branch):
            return spec
        self.store.notices.append(f"#{number} was the checkpoint of branch {was}: it is branch {branch}'s now (--move)"
                                  if spec.move else f"#{number} is the checkpoint of branch {was}: this write left its "
                                  f"branch and commit as they were (pass --move to make it branch {branch}'s)")
        return spec if spec.move else replace(spec, record_tree=False)

    def _labels(self, spec: WriteSpec, stored: Stored, cp: Checkpoint) -> tuple[str, ...] | None:
        """The labels a write sets: CI's in step with its result, and an adopted issue's checkpoint label."""
        labels = spec.labels.apply(stored.labels, cp) if spec.labels else None
        missing = self.store.missing_label(stored) if spec.adopt else ""
        return (*(labels if labels is not None else stored.labels), missing) if missing else labels

    def _draft(self, spec: WriteSpec, read: View, *, own: bool, base: Checkpoint | None = None,
               kept: bool = False) -> _Draft | None:
        """The commit of this round, built on ``read``: people's edits the read merged, each an entry of
        its own, then this write's change (``own``: not yet on the chain). None when there is nothing to
        commit (no change, no edit; a mirror older than its head is repaired by ``_round``, which writes the
        head's own mirror over it)."""
        assert isinstance(spec.intent, Intent)
        cp = read.checkpoint
        conflicts = [c for e in read.edits for c in e.conflicts]
        file_conflicts: tuple[str, ...] = ()
        if own:
            if kept:  # rebased onto the head: what came after its base stands, its own value beside
                cp, kept_beside = rebased(spec.intent, base, cp)
                conflicts.extend(kept_beside)
            else:
                applied = spec.intent.apply(cp)
                cp, file_conflicts = applied.checkpoint, applied.conflicts
        changed = own and (not content_equal(cp, read.checkpoint) or spec.event == "pre-compact")
        if not changed and not read.edits:
            return None
        now = self.clock()
        revision = max(read.link.revision if read.link else 0, read.checkpoint.meta.revision)
        entries = list(prior_entries(read.checkpoint)) if read.link is None else []  # the chain starts
        head = read.head if read.head is not None else read.checkpoint
        for edit in read.edits:
            revision += 1
            entries.append(Entry(Revision(revision, at=edit.at, event="edit", author=edit.editor,
                                          changes=tuple(describe(head, read.checkpoint)) or ("edited the body",))))
        changes = describe(read.checkpoint, cp) if changed else []
        if changed:
            revision += 1
            cp, e = self._stamp(cp, revision, now, spec), spec.execution  # who, as what, when it was made (kept)
            entries.append(Entry(Revision(revision, at=spec.made_at or now, event=spec.event, changes=tuple(changes),
                                          agent=e.agent if e else "", role=e.role if e else "",
                                          session=e.session if e else ""), spec.write_id))
        else:
            cp = cp.with_meta(revision=revision, updated_at=now)
        body, cp = self._body(cp, read, spec)
        head = read.stored.head
        link = Link(read.stored.number, body, tuple(entries), cp.title,
                    merged_after(read.link, "" if read.link else read.mirror.digest, *(e.digest for e in read.edits)),
                    adopted="" if read.link else read.mirror.body,
                    root=(read.link.root or (head.oid if head else "")) if read.link else "")
        return _Draft(read, cp, body, link, changes, changed, tuple(dict.fromkeys(conflicts)), file_conflicts)

    def _base(self, read: View, spec: WriteSpec, before: tuple[Intent, ...]) -> Checkpoint | None:
        """The state a kept write was made on, with the earlier kept writes of its push on it (its maker had
        made those first); None when it is not known. That state is the head it had read (the head now,
        when it is that one: a person may have edited the body since). A write kept without a read (GitHub
        was out of reach from the start) was made on the newest commit of the chain made before it (by the
        entries' times); on an issue without a chain, on its body, unless that was edited since."""
        target = read.stored
        head = target.head
        link: Link | None = None
        if spec.base:
            link = head.link if head is not None and head.oid == spec.base else self.store.link(target, spec.base)
        elif head is not None:
            link = _made_before(self.store.links(target, BLIND_LINKS), spec.made_at)
        base = (body_checkpoint(link.body, target.title) if link is not None
                else read.checkpoint if head is None and not spec.base and target.edited_at <= spec.made_at
                else None)
        for intent in before if base is not None else ():
            base = intent.apply(base, lenient=True).checkpoint
        return base

    def _result(self, stored: Stored, mine: _Draft | None, read: View, conflicts: list[str],
                unfinished: list[str] | None = None, tell: bool = True) -> WriteResult:
        """What a write says once its last round landed (``mine``: the round that carried its change, None when
        nothing of it was left to write; ``conflicts``: values the rounds that landed kept beside others;
        ``unfinished``: what a failure after it left undone), or a dry run's draft (``tell``: False)."""
        said = tuple(dict.fromkeys(conflicts))
        warnings = [*(self._tell_people(stored, said) if tell else ()), *(unfinished or ()), *self._notices()]
        if mine is None:  # the body a reader sees (the chain's key left out)
            return WriteResult(read.checkpoint, split(stored.body)[0], stored, changed=False,
                               previous=read.checkpoint, conflicts=list(said), warnings=warnings)
        return WriteResult(mine.checkpoint, mine.body, stored, changes=mine.changes, conflicts=list(said),
                           file_conflicts=list(mine.file_conflicts), warnings=warnings, previous=mine.read.checkpoint)

    # ----------------------------------------------------------------------------- pieces

    def _notices(self) -> list[str]:
        """What the store noticed during this write (said as warnings), taken from it."""
        notices = list(self.store.notices)
        self.store.notices.clear()
        return notices

    def _tell_people(self, stored: Stored, conflicts: tuple[str, ...]) -> list[str]:
        """A value kept beside another ("… (concurrent edit)") is for a person to settle: one comment says
        so (the only comment a routine write can cause). A comment that cannot be posted is a warning: the
        write is done, and both versions are in the body."""
        if not conflicts or not self.store.remote:
            return []
        what = ", ".join(dict.fromkeys(conflicts))
        text = (f"ghstate kept a concurrent edit of {what} beside the other in #{stored.number}: both changed "
                "it at the same time, so one version stands and the other is under a heading ending in "
                "\"(concurrent edit)\". Please keep the one you mean and delete the other.")
        try:
            self.store.notify(stored, text)
        except GhstateError as exc:
            return [f"the comment asking a person to settle the concurrent edit could not be posted ({exc})"]
        return []

    def _stamp(self, cp: Checkpoint, revision: int, now: str, spec: WriteSpec) -> Checkpoint:
        kept = not spec.record_tree and cp.meta.revision  # the branch, commit and dirty files stay as they were
        tree = cp.meta if kept else spec.tree
        stamped = stamp(cp, revision=revision, now=now, branch=tree.branch, commit=tree.commit, dirty=tree.dirty,
                        execution=spec.execution, new_id=spec.new_id)
        return stamped if kept else stamped.with_meta(fingerprints=dict(spec.fingerprints))

    def _body(self, cp: Checkpoint, read: View | None, spec: WriteSpec) -> tuple[str, Checkpoint]:
        """The body for ``cp`` (over an existing body only what changed is rewritten: a person's formatting
        stays), checked as every body is before it leaves: a repository's own template must read back as the
        shipped one; what goes to GitHub must fit, the chain's key included, and hold no credential."""
        body, cp = written_body(cp, self.env, read.over if read else None)
        if self.builtin is not None:  # a repository's own template
            template = self.env.get_template("checkpoint.md.j2").filename or "checkpoint.md.j2"
            checks.check_template(body, render_body(cp, self.builtin), template)
        body, shed = checks.fit_size(body, cp, self.max_body_chars, KEY_ROOM if read else 0)
        if shed:
            self.store.notices.append(f"to stay under {self.max_body_chars:,} characters, this revision's hidden "
                                      f"marker leaves out {shed}")
        if self.store.remote and not spec.allow_secrets:
            checks.check_secrets(read.over if read else "", read.checkpoint if read else Checkpoint(), body, cp)
        return body, cp

    def _save_pending(self, spec: WriteSpec) -> str:
        assert self.pending is not None and isinstance(spec.intent, Intent)
        return str(self.pending.save_pending(PendingWrite(spec, repo=self.repo, api_url=self.api_url,
                                                          saved_at=self.clock())))


def _title(draft: _Draft) -> str | None:
    """The title to write with the body: the checkpoint's, when it is not the issue's already."""
    title = draft.checkpoint.title
    return title if title != (draft.read.stored.title or title) else None


def _made_before(links: list[tuple[str, Link]], made_at: str) -> Link | None:
    """The newest of ``links`` (newest first) whose writes were all made before ``made_at`` (one made in the
    same second is taken as made after it: what it changed stands); the first link's starting body when
    the chain began after it; None when the links read do not reach back that far."""
    for _, link in links:
        if all(e.revision.at < made_at for e in link.entries):
            return link
    if links and not links[-1][1].root:  # the first commit was read: the chain began after the write
        return Link(links[-1][1].number, links[-1][1].adopted) if links[-1][1].adopted else None
    return None


def rebased(intent: Intent, base: Checkpoint | None, now: Checkpoint) -> tuple[Checkpoint, list[str]]:
    """A kept write on the checkpoint as it is ``now``: made on ``base``, what came after it stands, and where
    both changed one value, the kept write's is kept beside (``merge3``). With no base (GitHub was out of
    reach before the checkpoint could be read), every text it sets that ``now`` holds otherwise is such a
    value: kept beside, never written over."""
    if base is None:
        ours = intent.apply(now, lenient=True).checkpoint
        base = now._replace(goal="", resume="", verification="", verification_data=None)
    else:
        ours = intent.apply(base, lenient=True).checkpoint
    merged, beside = merge3(base, ours, now)
    return merged._replace(executions=now.executions, meta=now.meta), beside
