"""Which revision last set each claim of a checkpoint, and through it who, on which commit and when.

Pure: the previous record and the checkpoint about to be stamped in, the next record out. The record
(``marker.ProvenanceRecord``) lives in the hidden marker, compact and bounded. Kinds that had more
items than MAX_ENTRIES leaves room for are marked: their items without an entry are unknown, never
credited to a later revision.

Items are keyed by a short digest of their text (so a person's reordering keeps them), ticks by the
digest of the phase (and step) they tick. An item keeps the revision that first recorded it as it is;
one changed on GitHub between two writes is recorded by the next write. Revision 0 means "already
there when provenance began to be kept". ``revs`` describes only the revisions still referenced.
"""


import hashlib
from typing import Any, NamedTuple

from ghstate.core.marker import PROVENANCE_KINDS, Execution, ProvenanceRecord, RevisionFacts
from ghstate.core.markup import KEPT_COMMIT, short_commit
from ghstate.core.model import Checkpoint, file_paths_of
from ghstate.core.sections import PROVENANCE

ITEM_KINDS = PROVENANCE  # (code, section) of the table's sections whose items carry provenance
MAX_ENTRIES = 320  # entries in all (about 4 KB of marker); items beyond them have no provenance


def digest(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:6]


def _step_key(phase: str, step: str) -> str:
    return digest(phase + "\n" + step)


def record(previous: ProvenanceRecord | None, cp: Checkpoint, revision: int, *, commit: str = "", at: str = "",
           execution: Execution | None = None) -> ProvenanceRecord:
    """The record for ``cp`` stamped as ``revision``, from the record of the last write (None: none
    was kept)."""
    prev = previous or ProvenanceRecord()
    # A checkpoint written before provenance was kept: what is already there predates this write.
    fresh = revision if (previous is not None or not cp.meta.revision) else 0
    wanted: dict[str, dict[str, int]] = {}

    def keep(short: str, digests: list[str]) -> dict[str, int]:
        known = prev.entries.get(short, {})
        return {d: known.get(d, 0 if short in prev.capped else fresh) for d in digests}

    for short, key in ITEM_KINDS:
        wanted[short] = keep(short, [digest(item) for item in getattr(cp, key)])
    wanted["p"] = keep("p", [digest(p.name) for p in cp.phases if p.done])
    wanted["s"] = keep("s", [_step_key(p.name, s.text) for p in cp.phases for s in p.steps if s.done])
    entries: dict[str, dict[str, int]] = {}
    room = MAX_ENTRIES
    capped = set()
    for short in PROVENANCE_KINDS:  # what the prompt leans on most keeps its provenance first
        kept = wanted[short]
        if len(kept) > room:  # the rest is unknown from now on, never credited to a later revision
            kept = dict(list(kept.items())[:room])
            capped.add(short)
        room -= len(kept)
        if kept:
            entries[short] = kept
    resume = None
    if cp.resume:
        same = prev.resume is not None and prev.resume[0] == digest(cp.resume)
        resume = (digest(cp.resume), prev.resume[1] if same and prev.resume else fresh)
    used = {r for kept in entries.values() for r in kept.values()} | ({resume[1]} if resume else set())
    revisions = {r: facts for r, facts in prev.revisions.items() if r in used}
    if revision in used:
        revisions[revision] = RevisionFacts(commit=commit[:KEPT_COMMIT], at=at, **({
            "agent": execution.agent, "role": execution.role, "session": execution.session} if execution else {}))
    return ProvenanceRecord(entries, resume, revisions, frozenset(capped))


class Source(NamedTuple):
    """Where one claim came from. ``revision`` 0: it predates provenance (or is not recorded)."""

    revision: int = 0
    commit: str = ""
    at: str = ""
    agent: str = ""
    role: str = ""
    session: str = ""

    @property
    def known(self) -> bool:
        return self.revision > 0

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"revision": self.revision or None}
        for key in ("commit", "at", "agent", "role", "session"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data

    def words(self) -> str:
        """``revision 4, by claude-code as reviewer, at 4f2c1e9`` for a person or a prompt."""
        if not self.known:
            return "an earlier revision"
        who = f"by {self.agent}" if self.agent else ""
        if self.role and self.role != "editor":
            who = f"{who or 'by someone'} as {self.role}"
        return ", ".join(x for x in (f"revision {self.revision}", who,
                                     f"at {short_commit(self.commit)}" if self.commit else "") if x)


class Provenance:
    """The record of a checkpoint, read back: ``source_of(kind, text)`` for each claim."""

    def __init__(self, cp: Checkpoint) -> None:
        self.record = cp.meta.provenance or ProvenanceRecord()
        self.executions = {e.revision: e for e in cp.executions if e.revision}
        self.cp = cp

    def _source(self, revision: int | None) -> Source:
        if revision is None or revision <= 0:
            return Source()
        facts = self.record.revisions.get(revision, RevisionFacts())
        e = self.executions.get(revision) or Execution()
        return Source(revision, facts.commit, facts.at or e.at, facts.agent or e.agent, facts.role or e.role,
                      facts.session or e.session)

    def _entry(self, short: str, key: str) -> Source:
        return self._source(self.record.entries.get(short, {}).get(key))

    def item(self, key: str, text: str) -> Source:
        return self._entry({k: s for s, k in ITEM_KINDS}[key], digest(text))

    def tick(self, phase_name: str) -> Source:
        return self._entry("p", digest(phase_name))

    def step(self, phase_name: str, step_text: str) -> Source:
        return self._entry("s", _step_key(phase_name, step_text))

    def resume(self) -> Source:
        value = self.record.resume
        if value is not None and value[0] == digest(self.cp.resume):
            return self._source(value[1])
        return Source()

    def as_json(self) -> dict[str, Any]:
        """Per item, parallel to the state's lists (``decisions[i]`` ↔ ``provenance.decisions[i]``)."""
        cp = self.cp
        out: dict[str, Any] = {key: [self.item(key, item).as_dict() for item in getattr(cp, key)]
                               for _, key in ITEM_KINDS if key != "files"}
        out["file_items"] = [self.item("files", item).as_dict() for item in cp.files]
        out["files"] = [self.item("files", item).as_dict() for item in cp.files for _ in file_paths_of(item)]
        out["phases"] = [self.tick(p.name).as_dict() if p.done else None for p in cp.phases]
        out["steps"] = [[self.step(p.name, s.text).as_dict() if s.done else None for s in p.steps]
                        for p in cp.phases]
        out["resume"] = self.resume().as_dict() if cp.resume else None
        return out
