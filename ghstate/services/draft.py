"""The draft of a write: what one round commits on the head it read, and the body it writes, built and checked,
never sent (``writer`` sends it).

A round's draft is people's edits the read merged, each an entry of its own, then this write's change, the
checkpoint marked as the new revision and its body rendered over the one people read, checked as every body is
before it leaves (a repository's template, the size bound, credentials). A new checkpoint's first body is built
the same way; for ``push``, a kept write is rebased onto the head from the state it was made on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from ghstate.core import checks, provenance
from ghstate.core.chain import Entry, Link, merged_after, prior_entries
from ghstate.core.edits import content_equal, describe, stamp
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import Execution
from ghstate.core.merge import merge3
from ghstate.core.model import Checkpoint, Revision
from ghstate.core.render import Templates, render_body
from ghstate.core.splice import written_body
from ghstate.services.reader import View, body_checkpoint
from ghstate.store import Store

KEY_ROOM = 120  # characters the chain's key takes in a body's marker (the bound counts the body as stored)
MIXED = ("may hold others' changes too: the body's edit history could not tell its saves apart (history off, or "
         "versions deleted), so it is credited to the last editor")


class NewCheckpoint(NamedTuple):
    """A checkpoint ready to be created: what ``Store.create`` takes (``unique``: text only its body holds)."""

    checkpoint: Checkpoint
    body: str
    changes: list[str]
    conflicts: tuple[str, ...]
    unique: str


@dataclass
class Draft:
    """One round of a write: what it was built on, the commit it makes, and what it says."""

    read: View
    checkpoint: Checkpoint
    body: str
    link: Link
    changes: list[str]
    own: bool  # this write's own change is in it (not yet on the chain)
    conflicts: tuple[str, ...] = ()
    file_conflicts: tuple[str, ...] = ()


class _Change(NamedTuple):
    """This write's change applied to what a round read (the read's own state when it carries none)."""

    checkpoint: Checkpoint
    changed: bool  # a revision of its own: its content differs (or a pre-compact write records a new session)
    kept_beside: tuple[str, ...] = ()  # a kept write's values kept beside the head's (rebased)
    file_conflicts: tuple[str, ...] = ()  # sections both a --file and the checkpoint changed


@dataclass(frozen=True)
class Drafter:
    """Builds drafts for one store and one set of templates (``builtin``: the shipped templates, when ``env``
    holds a repository's own checkpoint.md.j2)."""

    store: Store
    env: Templates
    builtin: Templates | None
    max_body_chars: int
    clock: Callable[[], str]

    def new(self, spec: WriteSpec) -> NewCheckpoint:
        """A new checkpoint (marked as revision 1, rendered, checked); its chain starts with its first update."""
        now = self.clock()
        if callable(spec.intent):
            spec = replace(spec, intent=spec.intent(Checkpoint()))
        applied = spec.intent.apply(Checkpoint())
        branch = spec.tree.branch
        ours = applied.checkpoint._replace(title=spec.title or applied.checkpoint.title
                                           or (f"Checkpoint: {branch}" if branch else "Checkpoint"))
        marked = self.as_revision(ours, 1, now, spec)
        body, marked = self.body(marked, None, spec)
        return NewCheckpoint(marked, body, describe(None, marked), applied.conflicts, f'"id":"{marked.meta.id}"')

    def draft(self, spec: WriteSpec, read: View, *, own: bool, base: Checkpoint | None = None,
              kept: bool = False) -> Draft | None:
        """The commit of one round, built on ``read``: people's edits the read merged, each an entry of its
        own, then this write's change (``own``: not yet on the chain; ``kept``: rebased from ``base``). None
        when there is nothing to commit (no change, no edit); a body older than its head is then the
        writer's to repair, with the head's own mirror."""
        change = _change(spec, read, base, kept) if own else _Change(read.checkpoint, False)
        if not change.changed and not read.edits:
            return None
        now = self.clock()
        revision = max(read.link.revision if read.link else 0, read.checkpoint.meta.revision)
        entries = list(prior_entries(read.checkpoint)) if read.link is None else []  # the chain starts
        entries += _edit_entries(read, revision)
        credited = _credited(read, revision, change.checkpoint)
        revision += len(read.edits)
        changes = describe(read.checkpoint, change.checkpoint) if change.changed else []
        if change.changed:
            revision += 1
            cp = self.as_revision(credited, revision, now, spec)
            entries.append(_own_entry(spec, revision, spec.made_at or now, changes))
        else:
            cp = credited.with_meta(revision=revision, updated_at=now)
        body, cp = self.body(cp, read, spec)
        conflicts = [*(c for e in read.edits for c in e.conflicts), *change.kept_beside]
        return Draft(read, cp, body, _link(read, body, entries, cp.title), changes, change.changed,
                     tuple(dict.fromkeys(conflicts)), change.file_conflicts)

    def check_kept(self, spec: WriteSpec, seen: Checkpoint | None) -> None:
        """A write about to be kept without a round drafted (GitHub did not answer before it could be read),
        checked as every body is before it leaves, on the state this machine last saw of its checkpoint
        (``seen``; None: never seen, its text alone): a credential or a body over the bound is refused now,
        and nothing is kept, exactly as online."""
        if not isinstance(spec.intent, Intent):
            return
        now = seen or Checkpoint()
        cp = self.as_revision(spec.intent.apply(now, lenient=True).checkpoint, now.meta.revision + 1, self.clock(),
                              spec)
        body = render_body(cp, self.env)
        checks.fit_size(body, cp, self.max_body_chars, KEY_ROOM)
        if not spec.allow_secrets:
            checks.check_secrets(render_body(now, self.env) if seen is not None else "", now, body, cp,
                                 "to GitHub" if self.store.remote else "the checkpoint")

    def file_conflicts(self, spec: WriteSpec, read: View) -> tuple[str, ...]:
        """The sections a --file and the checkpoint both changed, for a write whose draft was None (nothing to
        commit: both sides kept came to what the checkpoint holds), so that it is said all the same."""
        if not isinstance(spec.intent, Intent) or spec.intent.incoming is None:
            return ()
        return spec.intent.apply(read.checkpoint).conflicts

    def as_revision(self, cp: Checkpoint, revision: int, now: str, spec: WriteSpec) -> Checkpoint:
        """``cp`` marked as this write's revision: its number, when, who wrote it (the execution), and the
        branch, commit, dirty files and fingerprints it was written from (unless ``record_tree`` is off on a
        checkpoint that has them: they stay as they were)."""
        kept = not spec.record_tree and cp.meta.revision
        tree = cp.meta if kept else spec.tree
        marked = stamp(cp, revision=revision, now=now, branch=tree.branch, commit=tree.commit, dirty=tree.dirty,
                       execution=spec.execution, new_id=spec.new_id)
        return marked if kept else marked.with_meta(fingerprints=dict(spec.fingerprints))

    def body(self, cp: Checkpoint, read: View | None, spec: WriteSpec) -> tuple[str, Checkpoint]:
        """The body for ``cp`` (over an existing body only what changed is rewritten: a person's formatting
        stays), checked as every body is before it leaves: a repository's own template must read back as the
        shipped one; what goes to GitHub must fit, the chain's key included; no store's body holds a credential."""
        body, cp = written_body(cp, self.env, read.over if read else None)
        if self.builtin is not None:  # a repository's own template
            template = self.env.get_template("checkpoint.md.j2").filename or "checkpoint.md.j2"
            checks.check_template(body, render_body(cp, self.builtin), template)
        body, shed = checks.fit_size(body, cp, self.max_body_chars, KEY_ROOM if read else 0)
        if shed:
            self.store.notices.append(f"to stay under {self.max_body_chars:,} characters, this revision's hidden "
                                      f"marker leaves out {shed}")
        if not spec.allow_secrets:  # every store: a local checkpoint is committed, pushed, pasted
            checks.check_secrets(read.over if read else "", read.checkpoint if read else Checkpoint(), body, cp,
                                 "to GitHub" if self.store.remote else "the checkpoint")
        return body, cp

    def base(self, read: View, spec: WriteSpec, before: tuple[Intent, ...]) -> Checkpoint | None:
        """The state a kept write was made on, with the earlier kept writes of its push on it (its maker had
        made those first); None when it is not known. That state is the head it had read, or the one this
        machine last saw (the head now, when it is that one: a person may have edited the body since), or,
        where no commit named it (a checkpoint without a chain yet), the state kept with it. Never a guess by
        the writers' clocks: a write kept where nothing was known was made on nothing (None), and every value
        it sets that differs is kept beside, never written over."""
        target = read.stored
        head = target.head
        link: Link | None = None
        if spec.base:
            link = head.link if head is not None and head.oid == spec.base else self.store.link(target, spec.base)
        base = (body_checkpoint(link.body, target.title) if link is not None
                else body_checkpoint(spec.base_body, target.title) if spec.base_body and not spec.base else None)
        for intent in before if base is not None else ():
            base = intent.apply(base, lenient=True).checkpoint
        return base


def _change(spec: WriteSpec, read: View, base: Checkpoint | None, kept: bool) -> _Change:
    """This write's change on what ``read`` holds: applied, or for a kept write rebased from ``base``."""
    assert isinstance(spec.intent, Intent)
    if kept:  # rebased onto the head: what came after its base stands, its own value beside
        cp, beside = rebased(spec.intent, base, read.checkpoint)
        files: tuple[str, ...] = ()
    else:
        applied = spec.intent.apply(read.checkpoint)
        cp, beside, files = applied.checkpoint, [], applied.conflicts
    changed = not content_equal(cp, read.checkpoint) or (spec.event == "pre-compact" and _new_session(spec, cp))
    return _Change(cp, changed, tuple(beside), files)


def _new_session(spec: WriteSpec, cp: Checkpoint) -> bool:
    """A pre-compact write records its session: a revision of its own only when the checkpoint does not have that
    session yet (the same session compacting again changes nothing a person or a session reads)."""
    e = spec.execution
    return e is not None and not any((x.agent, x.session, x.transcript) == (e.agent, e.session, e.transcript)
                                     for x in cp.executions)


def _edit_entries(read: View, revision: int) -> list[Entry]:
    """Each person's edit merged by a round, an entry of its own after ``revision``: who saved it, when, and
    what their save alone changed (the state before it against the state after it, in the order merged)."""
    return [Entry(Revision(revision + n, at=edit.at, event="edit", author=edit.editor,
                           changes=(*(describe(edit.before, edit.after) or ("edited the body",)),
                                    *((MIXED,) if edit.mixed else ()))))
            for n, edit in enumerate(read.edits, start=1)]


def _credited(read: View, revision: int, cp: Checkpoint) -> Checkpoint:
    """``cp`` with what each person's edit merged by a round brought credited in its provenance to that edit's
    entry (its revision after ``revision``, their login, when they saved), not to the write that merges it."""
    if not read.edits:
        return cp
    record = (read.head or read.checkpoint).meta.provenance
    for n, edit in enumerate(read.edits, start=1):
        record = provenance.record(record, edit.after, revision + n, at=edit.at,
                                   execution=Execution(agent=edit.editor or "a person"))
    return cp.with_meta(provenance=record)


def _own_entry(spec: WriteSpec, revision: int, at: str, changes: list[str]) -> Entry:
    """This write's entry: who, as what, under which session, when it was made (a kept write's own time)."""
    e = spec.execution
    return Entry(Revision(revision, at=at, event=spec.event, changes=tuple(changes), agent=e.agent if e else "",
                          role=e.role if e else "", session=e.session if e else ""), spec.write_id)


def _link(read: View, body: str, entries: list[Entry], title: str) -> Link:
    """The commit a round makes on the head it read: its body and entries, and the people's bodies it merged
    (never merged again); the chain's first commit keeps the body it began from."""
    head = read.stored.head
    merged = merged_after(read.link, "" if read.link else read.mirror.digest, *(e.digest for e in read.edits))
    return Link(read.stored.number, body, tuple(entries), title, merged,
                adopted="" if read.link else read.mirror.body,
                root=(read.link.root or (head.oid if head else "")) if read.link else "")


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
