"""Writing a revision: read → change → stamp → render → re-read and merge → write → history.

The same pipeline serves ``checkpoint``, ``ci``, ``push`` and the hooks, on either store. A change is
a function of the checkpoint as it is now, so it patches rather than overwrites; when the checkpoint
changed between the read and the write, the two edits are merged section by section. When GitHub
cannot take the write, the write is kept in the local store as pending, so nothing is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from ghstate import render, splice, templating
from ghstate.drift import FINGERPRINTS_KEY
from ghstate.edit import content_equal, describe, stamp
from ghstate.errors import GhstateError, InputError, NotFound, RemoteError, SecretFound
from ghstate.lookup import checkpoint_of, locate
from ghstate.merge import merge3
from ghstate.model import DIGESTS_KEY, Checkpoint, Execution, Revision, WorkTree, section_digests, with_digests
from ghstate.parse import MARKER_LINE, parse
from ghstate.secrets import new_lines, scan
from ghstate.stores import Changed, Store, Stored
from ghstate.stores.local import LocalStore

Change = Callable[[Checkpoint], Checkpoint]
MERGE_ROUNDS = 3  # merges of a concurrent change before giving up on one write


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class WriteSpec:
    number: int | None
    change: Change
    intent: dict[str, Any]  # a serialisable description of ``change``, for a write kept as pending
    tree: WorkTree = field(default_factory=WorkTree)
    fingerprints: dict[str, str] = field(default_factory=dict)
    execution: Execution | None = None
    event: str = "checkpoint"
    title: str | None = None
    create: bool = True
    lookup: bool = True  # find the branch's open checkpoint when no number is given
    record_tree: bool = True  # False (CI, hooks): keep the branch, commit and dirty files drift compares with
    reapply: bool = False  # on a concurrent change, apply ``change`` again to what is there instead of merging
    keep_pending: bool = True  # keep the write locally when GitHub cannot take it
    dry_run: bool = False
    log: bool | Callable[[Checkpoint, Checkpoint], bool] = True  # or decide from (before, after)
    allow_secrets: bool = False
    new_id: str = ""  # the marker id a new checkpoint gets (a replayed create keeps the lost one's)
    labels: Callable[[tuple[str, ...], Checkpoint], tuple[str, ...]] | None = None


@dataclass
class WriteResult:
    checkpoint: Checkpoint
    body: str
    stored: Stored | None
    created: bool = False
    changed: bool = True
    changes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    previous: Checkpoint | None = None  # the checkpoint as it was read, before this write


class Writer:
    def __init__(self, store: Store, *, env: jinja2.Environment, max_body_chars: int = 60_000,
                 pending: LocalStore | None = None, repo: str | None = None, api_url: str = "",
                 clock: Callable[[], str] = utc_now) -> None:
        self.store = store
        self.env = env
        self.max_body_chars = max_body_chars
        self.pending = pending
        self.repo = repo
        self.api_url = api_url
        self.clock = clock

    def write(self, spec: WriteSpec) -> WriteResult:
        # The marker id a new checkpoint gets, chosen once: a create kept for 'push' replays with it.
        spec = replace(spec, new_id=spec.new_id or os.urandom(6).hex())
        lock = self.store.lock() if isinstance(self.store, LocalStore) else contextlib.nullcontext()
        target: Stored | None = None
        try:
            with lock:
                target = None
                if spec.number is not None or spec.lookup:
                    target = locate(self.store, spec.number, spec.tree.branch)
                if target is None and not spec.create:
                    raise NotFound(f"no open checkpoint for {spec.tree.place}")
                return self._write(spec, target)
        except RemoteError as exc:
            if spec.dry_run or self.pending is None or self.store.kind != "github" or not spec.keep_pending:
                raise
            path = self._keep_pending(spec, target)
            when = "when GitHub is reachable" if exc.retryable else "once that is fixed"
            raise RemoteError(f"{exc}; the checkpoint was kept locally in {path}: run 'ghstate push' {when}",
                              retryable=exc.retryable, status=exc.status) from exc

    # ----------------------------------------------------------------------------------------

    def _write(self, spec: WriteSpec, target: Stored | None) -> WriteResult:
        now = self.clock()
        base = checkpoint_of(target) if target else Checkpoint()
        ours = spec.change(base)
        if target is not None and content_equal(ours, base) and spec.event != "pre-compact":
            return WriteResult(base, target.body, target, changed=False)
        if target is None and spec.title:
            ours = ours._replace(title=spec.title)
        if target is None and not ours.title:
            branch = spec.tree.branch
            ours = ours._replace(title=f"Checkpoint: {branch}" if branch else "Checkpoint")
        stamped = self._stamp(ours, base.meta.revision + 1, now, spec)
        body = self._body(stamped, target, spec)
        changes = describe(base if target else None, stamped)
        if spec.dry_run:
            return WriteResult(stamped, body, target, created=target is None, changes=changes)

        conflicts: list[str] = []
        warnings: list[str] = []
        if target is None:
            stored = self.store.create(stamped.title, body, unique=f'"id":"{stamped.meta.id}"')
            created = True
        else:
            read = base
            fresh = self.store.reread(target)
            for _ in range(MERGE_ROUNDS):
                if fresh is not None:  # it changed under us: merge (or re-apply the change), never overwrite
                    theirs = checkpoint_of(fresh)
                    if spec.reapply:
                        combined = spec.change(theirs)
                    else:
                        merged = merge3(read, ours, theirs)
                        combined, conflicts = merged.checkpoint, merged.conflicts
                    stamped = self._stamp(combined, max(read.meta.revision, theirs.meta.revision) + 1, now, spec)
                    base = theirs
                    body = self._body(stamped, fresh, spec)
                    changes = describe(theirs, stamped)
                    target = fresh
                labels = spec.labels(target.labels, stamped) if spec.labels else None
                title = stamped.title if stamped.title != (target.title or stamped.title) else None
                try:
                    stored = self.store.update(target, body, title=title, labels=labels)
                    break
                except Changed as exc:  # edited while a failed write waited to be resent
                    fresh = exc.fresh
            else:
                raise RemoteError(f"the checkpoint kept changing while it was being written ({MERGE_ROUNDS} "
                                  "merges in a row); nothing was overwritten: try again", retryable=True)
            created = False
        if spec.log(base, stamped) if callable(spec.log) else spec.log:
            revision = Revision(
                revision=stamped.meta.revision, at=now, event=spec.event, changes=tuple(changes),
                agent=spec.execution.agent if spec.execution else "",
                role=spec.execution.role if spec.execution else "",
                session=spec.execution.session if spec.execution else "",
            )
            try:
                self.store.add_revision(stored, revision, self.history_text(revision))
            except RemoteError as exc:  # the checkpoint itself is written; only its history line is missing
                warnings.append(f"the history comment could not be posted ({exc})")
        warnings.extend(self.store.notices)
        return WriteResult(stamped, body, stored, created=created, changes=changes, conflicts=conflicts,
                           warnings=warnings, previous=base if not created else None)

    def _stamp(self, cp: Checkpoint, revision: int, now: str, spec: WriteSpec) -> Checkpoint:
        if not spec.record_tree and cp.meta.revision:
            return stamp(cp, revision=revision, now=now, branch=cp.meta.branch, commit=cp.meta.commit,
                         dirty=cp.meta.dirty, execution=spec.execution, new_id=spec.new_id)
        stamped = stamp(cp, revision=revision, now=now, branch=spec.tree.branch, commit=spec.tree.commit,
                        dirty=spec.tree.dirty, execution=spec.execution, new_id=spec.new_id)
        other = dict(stamped.meta.other)
        if spec.fingerprints:
            other[FINGERPRINTS_KEY] = spec.fingerprints
        else:
            other.pop(FINGERPRINTS_KEY, None)
        return stamped.with_meta(other=other)

    def _body(self, cp: Checkpoint, target: Stored | None, spec: WriteSpec) -> str:
        # Over an existing body, only what changed is rewritten: a person's formatting stays.
        body = splice.render_update(cp, target.body, self.env) if target else render.render_body(cp, self.env)
        actual = section_digests(parse(body).checkpoint)
        if actual != cp.meta.other.get(DIGESTS_KEY):  # the digests describe what the body reads back as
            body = render.replace_marker(body, with_digests(cp, actual))
        if not templating.is_builtin(self.env, "checkpoint.md.j2"):  # a repository's own template
            template = self.env.get_template("checkpoint.md.j2").filename
            expected = parse(render.render_body(cp, templating.environment())).checkpoint
            if not splice.same_state(parse(body).checkpoint, expected):
                raise InputError(f"the template {template} writes a body that does not read back as the "
                                 "checkpoint (sections or the marker are lost); nothing was written: fix it, "
                                 "or remove it to use the built-in one")
        if self.store.kind == "github":
            if len(body) > self.max_body_chars:
                raise InputError(
                    f"the checkpoint would be {len(body):,} characters; the limit is {self.max_body_chars:,} "
                    "(GitHub accepts 65,536): compact finished phases and long items, then try again")
            if not spec.allow_secrets:
                self._refuse_secrets(target, cp, body)
        return body

    def _refuse_secrets(self, target: Stored | None, cp: Checkpoint, body: str) -> None:
        """Scan what this write adds for credentials: new lines of the body, and those fields of the
        hidden marker that changed (the marker line itself changes on every write, so scanning it
        whole would let one value allowed once block every later write)."""
        old_body = target.body if target else ""
        found = scan(new_lines(MARKER_LINE.sub("", old_body), MARKER_LINE.sub("", body)))
        if not found:
            before = checkpoint_of(target) if target else Checkpoint()
            for name, old, new in (("title", before.title, cp.title), ("branch", before.meta.branch, cp.meta.branch)):
                found = [s.located(f"the hidden marker's {name}") for s in scan(new)][:1] if new != old else []
                if found:
                    break
            else:
                known = set(before.executions)
                added = " ".join(f"{e.agent} {e.role} {e.session} {e.transcript}" for e in cp.executions
                                 if e not in known)
                found = [s.located("the hidden marker's executions") for s in scan(added)][:1]
        if found:
            raise SecretFound(f"refusing to write to GitHub: {found[0].describe()}; remove it, "
                              "or pass --allow-secrets if it is not a secret")

    def history_text(self, revision: Revision) -> str:
        data = json.dumps(revision.as_dict(), ensure_ascii=False, separators=(",", ":"))
        data = data.replace("<", "\\u003c").replace(">", "\\u003e")
        who = ", ".join(x for x in (revision.role, f"session {revision.session}" if revision.session else "") if x)
        who = f"{revision.agent or 'ghstate'}{f' ({who})' if who else ''}"
        return self.env.get_template("comment.md.j2").render(revision=revision, who=who, data=data).strip()

    def _keep_pending(self, spec: WriteSpec, target: Stored | None) -> Path:
        """Save a write GitHub could not take, as what it asked for: its intent, replayed by ``push``
        on the checkpoint as it is then. ``base_sections`` (the section digests of what the write had
        read) keep a --file input merging against what it was made from, not against later revisions;
        ``new_id`` makes a replayed create carry the marker id of the one whose answer was lost."""
        assert self.pending is not None
        intent = dict(spec.intent)
        if target is not None and "incoming" in intent:
            digests = checkpoint_of(target).meta.other.get(DIGESTS_KEY)
            if isinstance(digests, dict):
                intent["base_sections"] = digests
        record = {
            "kind": "ghstate-pending",
            "repo": self.repo,
            "api_url": self.api_url,
            "issue": target.number if target else spec.number,
            "branch": spec.tree.branch,
            "commit": spec.tree.commit,
            "title": spec.title,
            "event": spec.event,
            "intent": intent,
            "saved_at": self.clock(),
            "execution": render.execution_dict(spec.execution) if spec.execution else None,
            "log": spec.log if isinstance(spec.log, bool) else True,
            "lookup": spec.lookup,
            "create": spec.create,
            "allow_secrets": spec.allow_secrets,
            "reapply": spec.reapply,
            "new_id": spec.new_id if target is None else "",
        }
        try:
            return self.pending.save_pending(record)
        except OSError as exc:
            raise GhstateError(f"GitHub could not be reached and the local copy could not be saved "
                               f"either ({exc}); nothing was written") from exc
