"""Writing a revision: locate → read → plan (commit, repair, done) → send, round after round until the body
is the head's mirror.

One pipeline serves ``checkpoint``, ``ci``, ``push``, the task commands and the hooks, on every store. The
change is an ``Intent`` (data), applied to the checkpoint as ``reader.view`` reads it (the head of its
chain, people's edits merged); each round's commit is drafted by ``draft`` on the head it read, and a round
that lost its race is built again on the new head (by chain order, never by clocks). A write whose answer
was lost is found on the chain, never applied twice; one GitHub could not take is kept for ``push``, which
rebases it (``Writer.write(kept=True)``).
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from ghstate.core.chain import embed, split
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import MARKER_LINE
from ghstate.core.model import DEFAULT_MAX_BODY, Checkpoint
from ghstate.core.render import Templates
from ghstate.errors import GhstateError, InputError, NotFound, RemoteError
from ghstate.local.replica import Replica, Seen
from ghstate.local.store import LocalStore, PendingWrite
from ghstate.services import interrupt
from ghstate.services.draft import Draft, Drafter, NewCheckpoint
from ghstate.services.leases import renewed
from ghstate.services.reader import View, body_checkpoint, checkpoint_of, locate, view
from ghstate.store import BodyVersion, Store, Stored, Unprotected, WriteOutcome

# Rounds of one write while other writers keep moving the head: each lost round means another writer's
# commit landed first, and this one is built again on it, after a wait drawn at random up to a bound that
# doubles each round (BACKOFF, at most BACKOFF_MOST seconds): "full jitter", which spreads colliding
# writers the most. Twenty writers at once all land well within these.
ROUNDS = 24
BACKOFF = 0.25
BACKOFF_MOST = 8.0


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


@dataclass
class _Rounds:
    """What the rounds of one write know between them: the checkpoint as last seen and the round read from it,
    with the draft built on that read, and what the rounds that landed left."""

    target: Stored  # the checkpoint as the last round's answer left it
    read: View
    draft: Draft | None  # this round's commit (None: nothing to commit; a stale mirror is repaired)
    base: Checkpoint | None  # the state a kept write was made on
    kept: bool  # a kept write, rebased from ``base``
    mine: Draft | None = None  # the round whose commit carried this write's change
    conflicts: list[str] = field(default_factory=list)  # values kept beside others by the rounds that landed
    overwritten: tuple[BodyVersion, ...] = ()  # people's saves a mirror wrote over, to merge
    lost_race: bool = False  # the last round's move was refused: another writer's commit landed first
    reread: bool = False  # the head moved on while the last mirror was written: read the checkpoint again

    def took(self, written: WriteOutcome) -> bool:
        """What a round's answer leaves; True when the body is the head's mirror and nothing is left to merge."""
        if self.draft is not None and written.landed:
            self.mine = self.draft if self.draft.own else self.mine
            self.conflicts.extend(self.draft.conflicts)
        self.lost_race = not written.landed
        # people's saves stay to be merged until a round that merged them landed
        self.overwritten = (*(self.overwritten if self.lost_race else ()), *written.overwritten)
        self.target = written.stored
        self.reread = written.moved and not (self.lost_race or self.overwritten)
        return not (self.lost_race or self.overwritten or written.moved)


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
        self.drafter = Drafter(store, env, builtin, max_body_chars, lambda: self.clock())
        # On GitHub (``App.writer``): this machine's copy of what it reads and writes (``services.outage``),
        # kept as each write ends; and this clone's kept writes sent before a write, answering those still
        # waiting (``services.kept``): a write never lands over a kept write to its checkpoint
        self.replica: Replica | None = None
        self.remember: Callable[[Stored, Checkpoint, str], None] | None = None
        self.send_kept: Callable[[], tuple[list[str], RemoteError | None]] | None = None
        # For a branch with no checkpoint: the one of its former name, when ``git branch -m`` renamed it
        # (``App.renamed_from``); a write by branch then does not start a second checkpoint without a word
        self.renamed: Callable[[str], str] | None = None
        # Where a look for people's saves a mirror may have replaced is kept when GitHub's history did not show
        # the mirror in time (``store.Unchecked``): the clone's store, even for push (App.writer sets it)
        self.looks: LocalStore | None = pending
        self.drafted = False  # this write's round was drafted (and checked: size, credentials) before it failed

    def write(self, spec: WriteSpec, *, kept: bool = False, before: tuple[Intent, ...] = ()) -> WriteResult:
        """Write ``spec``. ``kept``: a write kept while GitHub was out of reach, published now (``push``):
        when the chain holds it already it landed after all and is not made again; else it is rebased onto
        the head: what was written or edited after the state it was made on stands, its own value kept
        beside where both changed one. ``before``: the earlier kept writes of this push to the same
        checkpoint, which its maker had made on that state before it (as a local write would show them)."""
        spec = self._identified(spec)
        target: Stored | None = None
        answered = False  # the store answered the lookup: a write it found nothing for is a create
        self.drafted = False  # a round was drafted, and so checked (size, credentials) before it was sent
        try:
            waiting = self._sent_first(spec)
            with contextlib.nullcontext() if spec.dry_run else self.store.lock():  # a dry run takes no lock: no file
                if spec.number is not None or spec.lookup:
                    target = locate(self.store, spec.number, spec.tree.branch, heads=True)
                    spec = self._linked(spec)
                answered = True
                if target is None and spec.number is None and spec.lookup:
                    self._not_renamed(spec)
                if target is None and not spec.create:
                    raise NotFound(f"no open checkpoint for {spec.tree.place}")
                _behind(waiting, target, spec)
                result = self._create(spec) if target is None else self._indexed(
                    spec, self._closed_after(spec, self._update(spec, target, kept, before)))
        except RemoteError as exc:
            if spec.dry_run or self.pending is None or not self.store.remote or callable(spec.intent):
                raise
            raise self._kept_for_push(spec, target, exc, answered) from exc
        result.warnings.extend(self._look_later())
        return self._seen_here(spec, result)

    def _look_later(self) -> list[str]:
        """Bodies this write wrote whose edit history never showed them in time (a person's save just before one
        may have been written over, unseen): each a look kept for the next command that reaches GitHub, which
        merges what it finds once the history shows it (``push`` too); where it was kept, said."""
        said = []
        for look in self.store.unchecked:
            if self.looks is None:
                continue
            spec = WriteSpec(Intent(), number=look.number, lookup=False, create=False, record_tree=False,
                             event="look", write_id=os.urandom(6).hex(), made_at=self.clock(),
                             look_back=(look.read, look.read_at, look.written))
            path = self.looks.save_pending(PendingWrite(spec, repo=self.repo, api_url=self.api_url,
                                                        saved_at=self.clock()))
            said.append(f"the look for a person's save #{look.number}'s body may have replaced is kept in {path}")
        self.store.unchecked.clear()
        return said

    def _closed_after(self, spec: WriteSpec, result: WriteResult) -> WriteResult:
        """A write that changed a closed checkpoint (by number; a kept write pushed after it closed) is said,
        and its chain folded into the archive again (GitHub: the write made its ref again), so that the
        closed checkpoint's refs stay folded and its body names the head its chain ends at."""
        stored = result.stored
        if stored is None or stored.state != "closed" or not result.changed or spec.dry_run or not spec.intent:
            return result
        result.warnings.append(f"{'#' if self.store.remote else 'local #'}{stored.number} is closed: this write is "
                               "on its log, and it stays closed (reopen it to go on with it)")
        result.stored = self.store.close(stored)
        result.warnings.extend(self._notices())
        return result

    def _kept_first(self, spec: WriteSpec, target: Stored) -> tuple[WriteSpec, WriteResult | None]:
        """Before a kept write is rebased: a look kept for later resolved to the saves it finds (merged as any
        kept ones), or given up; a write the chain holds already (it landed although its answer was lost) is
        done."""
        if spec.look_back:
            spec, gave_up = self._looked(spec, target)
            if gave_up:
                return spec, self._result(target, None, view(self.store, target), [], [gave_up])
        if self.store.has_write(target, write=spec.write_id):
            self.store.notices.append(f"the kept write was on #{target.number}'s chain already: it had landed")
            return spec, self._result(target, None, view(self.store, target), [])
        return spec, None

    def _looked(self, spec: WriteSpec, target: Stored) -> tuple[WriteSpec, str]:
        """A kept look for people's saves a body written earlier replaced (``WriteSpec.look_back``): the saves it
        finds, to merge; while the history does not show that body yet, a failure (it is looked for again) for
        LOOK_MINUTES, then given up, said (what GitHub keeps under "edited" is where to look)."""
        from ghstate.store import Unchecked

        found = self.store.look_back(target, Unchecked(target.number, *spec.look_back))
        if found is not None:
            saves = (*spec.saves, *((s.body, s.editor, s.at) for s in found))
            return replace(spec, look_back=(), saves=saves), ""
        if _minutes_between(spec.made_at, self.clock()) < LOOK_MINUTES:
            raise RemoteError(f"GitHub's edit history of #{target.number} does not show a body this machine wrote "
                              "yet, so a person's save just before it cannot be looked for yet", retryable=True)
        return spec, (f"GitHub's edit history of #{target.number} still does not show a body this machine wrote at "
                      f"{spec.made_at}: whether it wrote over a person's save just before it cannot be told; look "
                      "under \"edited\" on the issue")

    def _not_renamed(self, spec: WriteSpec) -> None:
        """A write by branch to a branch renamed since its checkpoint was made is refused, naming that checkpoint
        and how to take it over (a new one would hide it from every later resume of this branch)."""
        hint = self.renamed(spec.tree.branch) if self.renamed is not None and spec.tree.branch else ""
        if hint:
            raise NotFound(f"no open checkpoint for {spec.tree.place}; {hint}; or start another with --new")

    def _sent_first(self, spec: WriteSpec) -> list[str]:
        """This clone's kept writes sent before this one (``send_kept``); the checkpoints some still wait for.
        When GitHub did not answer them, neither is it asked this write: it is kept at once, behind them."""
        if self.send_kept is None or spec.dry_run:
            return []
        waiting, unanswered = self.send_kept()
        if unanswered is not None:
            raise unanswered
        return waiting

    def _seen_here(self, spec: WriteSpec, result: WriteResult) -> WriteResult:
        """What a write left on GitHub kept as what this machine last saw of it (``remember``)."""
        if self.remember is not None and result.stored is not None and not spec.dry_run:
            self.remember(result.stored, result.checkpoint, result.body)
        return result

    def _kept_for_push(self, spec: WriteSpec, target: Stored | None, exc: RemoteError,
                       answered: bool = False) -> RemoteError:
        """A write GitHub could not take, kept whole with what it was made on (``push`` rebases it onto the
        head then): the failure, saying where it is kept."""
        try:
            path = self._save_pending(self._as_kept(spec, target, answered))
        except OSError as err:
            raise GhstateError(f"GitHub could not be reached and the local copy could not be saved either "
                               f"({err}); nothing was written") from err
        when = "when GitHub is reachable" if exc.retryable else "once that is fixed"
        return RemoteError(f"{exc}; the checkpoint was kept locally in {path}: it is safe on this machine, and the "
                           f"next ghstate command that reaches GitHub sends it (or run 'ghstate push' {when})",
                           retryable=exc.retryable, status=exc.status, unreachable=exc.unreachable)

    def _as_kept(self, spec: WriteSpec, target: Stored | None, answered: bool) -> WriteSpec:
        """``spec`` as it is kept, checked first as online (a credential or a body over the bound: refused,
        nothing kept): for the checkpoint it read (``target``), else, out of reach before it could look
        (``answered`` False), the one this machine last saw; made on that one's head, or, where no commit
        names it (a checkpoint without a chain yet), on its state itself, so that ``push`` decides by the chain
        what landed since, never by the writers' clocks. What it read is what this machine last saw: the
        writes kept after it are built on it too."""
        seen = self._last_seen(spec) if target is None and not spec.base and not answered else None
        number, head, made_on, state = spec.number, "", None, ""
        if target is not None:
            number, made_on, state = target.number, checkpoint_of(target), split(target.body)[0]
            head = target.head.oid if target.head is not None else ""
            if self.remember is not None:
                self.remember(target, made_on, target.body)
        elif seen is not None:
            number, head, made_on, state = seen.number, seen.head, body_checkpoint(seen.body, seen.title), seen.body
        if not self.drafted:
            self.drafter.check_kept(spec, made_on)
        return replace(spec, number=number, base=spec.base or head, new_id=spec.new_id if number is None else "",
                       base_body=spec.base_body or ("" if head or spec.base else state))

    def _last_seen(self, spec: WriteSpec) -> Seen | None:
        """The checkpoint a write made without reaching GitHub is for, as this machine last saw it: by number,
        else its branch's open one (None: never seen here)."""
        if self.replica is None:
            return None
        if spec.number is not None:
            return self.replica.get(spec.number)
        seen = self.replica.by_branch(spec.tree.branch) if spec.lookup and spec.tree.branch else None
        return seen if seen is not None and seen.state == "open" else None

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
        """A new checkpoint as ``write`` creates it (marked as revision 1, rendered, checked), not written: for a
        caller that creates several in one request (``ghstate split``). Its chain starts with its first update."""
        return self.drafter.new(self._identified(spec))

    # ------------------------------------------------------------------------------ update

    def _update(self, spec: WriteSpec, target: Stored, kept: bool = False,
                before: tuple[Intent, ...] = ()) -> WriteResult:
        if kept:
            spec, done = self._kept_first(spec, target)
            if done is not None:
                return done
        read = view(self.store, target, tuple(BodyVersion(*save) for save in spec.saves), whole=True)  # a kept write's
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(read.checkpoint))
        assert isinstance(spec.intent, Intent)
        spec = self._placed(renewed(self.store, spec, read.stored, read.checkpoint, self.clock()), read)
        base = self.drafter.base(read, spec, before) if kept else None
        first = self.drafter.draft(spec, read, own=True, base=base, kept=kept)
        self.drafted = True
        if spec.dry_run or (first is None and read.mirror.kind != "stale"):  # a dry run, or nothing to write
            result = self._result(read.stored, first, read, list(first.conflicts) if first else [], tell=False)
        else:
            result = self._write_until_current(spec, _Rounds(read.stored, read, first, base, kept))
        if first is None and not kept and not result.changed:  # changed nothing: where a --file met a change, said
            result.file_conflicts = list(self.drafter.file_conflicts(spec, read))
        return result

    def _write_until_current(self, spec: WriteSpec, rounds: _Rounds) -> WriteResult:
        """Rounds of read → plan → send until this write's change landed and the body is the head's mirror with
        every person's save merged. Each round sends what its plan is: its draft's commit, or the head's own
        mirror over an older one (a repair), or nothing (done). A round that lost its race is built again on
        the new head (after a jittered wait); one whose mirror wrote over a person's save is followed by one
        that merges it; after a head that moved on while the mirror was written, the next round reads the
        checkpoint again. Once the change landed, a failure is a warning (what it left undone said, and a
        person's save it wrote over kept for ``push``)."""
        for round_ in range(ROUNDS):
            if round_:
                self._read_again(spec, rounds, round_)
            try:
                written = self._send(spec, rounds.read, rounds.draft)
            except RemoteError as exc:
                if rounds.mine is None:
                    raise
                unfinished = self._unfinished(spec, rounds.target, rounds.overwritten, str(exc))
                return self._result(rounds.target, rounds.mine, rounds.read, rounds.conflicts, unfinished)
            if written is None or rounds.took(written):  # nothing (more) to write
                return self._result(rounds.target, rounds.mine, rounds.read, rounds.conflicts)
        if rounds.mine is None:
            raise RemoteError(f"#{rounds.target.number} kept changing while it was being written ({ROUNDS} times); "
                              "nothing of this write landed: run it again", retryable=True)
        busy = f"other writers kept changing #{rounds.target.number} ({ROUNDS} rounds)"  # as after a failure
        unfinished = self._unfinished(spec, rounds.target, rounds.overwritten, busy)
        return self._result(rounds.target, rounds.mine, rounds.read, rounds.conflicts, unfinished)

    def _read_again(self, spec: WriteSpec, rounds: _Rounds, round_: int) -> None:
        """A round after the first reads once: the checkpoint as the last answer left it (read again after a
        head that moved on while its mirror was written), with the saves a mirror wrote over; then drafts on
        it. A round after a lost race waits first: the writers that collided spread out (jittered backoff)."""
        if rounds.lost_race and self.store.remote:
            self.sleep(random.uniform(0, min(BACKOFF_MOST, BACKOFF * 2 ** round_)))
        if rounds.reread:
            rounds.target = self.store.get(rounds.target.number)
        rounds.read = view(self.store, rounds.target, rounds.overwritten, whole=True)
        rounds.draft = self.drafter.draft(spec, rounds.read, own=rounds.mine is None, base=rounds.base,
                                          kept=rounds.kept)

    def _send(self, spec: WriteSpec, read: View, draft: Draft | None) -> WriteOutcome | None:
        """One round sent: the draft's commit and its mirror; where the chain cannot be written, the body
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
        except Unprotected as refused:
            head = stored.head.oid if stored.head is not None else read.mirror.base
            text = embed(draft.body, head, protected=False) if head else draft.body
            interrupt.begin_update(self.store, stored.number, revision, "", text)
            alone = self.store.mirror(stored, text, title=title, labels=labels)
            # saves the refused request's body write wrote over, then what the body alone wrote over
            written = alone._replace(moved=False, overwritten=(*refused.overwritten, *alone.overwritten))
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
        saves = tuple((s.body, s.editor, s.at) for s in overwritten)  # as kept: body, editor, when
        path = self._save_pending(replace(spec, intent=Intent(), write_id=os.urandom(6).hex(), made_at=self.clock(),
                                          base=head, saves=saves, labels=None, number=target.number))
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
        named = f"#{number}" if self.store.remote else f"local #{number}"  # as App.label says it
        self.store.notices.append(f"{named} was the checkpoint of branch {was}: it is branch {branch}'s now (--move)"
                                  if spec.move else f"{named} is the checkpoint of branch {was}: this write left its "
                                  f"branch and commit as they were (pass --move to make it branch {branch}'s)")
        return spec if spec.move else replace(spec, record_tree=False)

    def _labels(self, spec: WriteSpec, stored: Stored, cp: Checkpoint) -> tuple[str, ...] | None:
        """The labels a write sets: CI's in step with its result, and an adopted issue's checkpoint label."""
        labels = spec.labels.apply(stored.labels, cp) if spec.labels else None
        missing = self.store.missing_label(stored) if spec.adopt else ""
        return (*(labels if labels is not None else stored.labels), missing) if missing else labels

    def _result(self, stored: Stored, mine: Draft | None, read: View, conflicts: list[str],
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

    def _save_pending(self, spec: WriteSpec) -> str:
        assert self.pending is not None and isinstance(spec.intent, Intent)
        return str(self.pending.save_pending(PendingWrite(spec, repo=self.repo, api_url=self.api_url,
                                                          saved_at=self.clock())))


def _behind(waiting: list[str], target: Stored | None, spec: WriteSpec) -> None:
    """A write to a checkpoint one of this machine's kept writes is still waiting for is kept behind it (in
    order), never landed over it."""
    where = f"#{target.number}" if target is not None else f"a new checkpoint for {spec.tree.branch or 'no branch'}"
    if where in waiting:
        raise RemoteError(f"a write this machine kept for {where} earlier is still waiting to go to GitHub, so this "
                          "one waits behind it", retryable=True)


LOOK_MINUTES = 30  # a kept look whose body the edit history still does not show after this long is given up, said


def _minutes_between(earlier: str, later: str) -> float:
    """Minutes from one of ghstate's times to another (a time that cannot be read: none)."""
    try:
        start, end = (datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ") for t in (earlier, later))
    except ValueError:
        return 0.0
    return (end - start).total_seconds() / 60


def _title(draft: Draft) -> str | None:
    """The title to write with the body: the checkpoint's, when it is not the issue's already."""
    title = draft.checkpoint.title
    return title if title != (draft.read.stored.title or title) else None
