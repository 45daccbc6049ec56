"""The hidden marker: every key ghstate keeps in a checkpoint's machine data, typed, in one place.

The marker is one HTML comment at the top of a body holding one JSON object. Every feature keeps
something in it (the revision and where it was written, section digests and their history, per-item
provenance, the dirty files' fingerprints, CI's verification and its ledger, a child's place in its
plan; on a mirror, last, the chain commit it renders: ``ghstate.core.chain``). This module is its one
owner: ``load`` validates the raw object once, into typed fields, and ``dump`` writes it back; ``parse``
and ``render`` call them and nothing else reads the raw dict. Keys a newer version wrote are kept
untouched (``Meta.unknown``), and so are the values of known keys that do not have the shape this
version writes: they are dropped from the typed field, never guessed at.

Pure: no I/O.
"""


import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.sections import PROVENANCE_ORDER

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.verification import Verification

# The keys, in the order ``dump`` writes them.
REVISION, ID, TITLE, BRANCH, COMMIT, DIRTY = "revision", "id", "title", "branch", "commit", "dirty"
CREATED, UPDATED, EXECUTIONS, VERIFICATION = "created_at", "updated_at", "executions", "verification"
DIGESTS = "sections"  # a short digest of each section as ghstate last wrote it
HISTORY = "sections_before"  # the digests of the revisions before, newest first
PROVENANCE = "prov"  # which revision set each claim (see ghstate.core.provenance)
FINGERPRINTS = "dirty_sha"  # a fingerprint of each dirty file when the checkpoint was written
# Keys never loaded: the commit of the chain a body mirrors ("chain": it describes one body, not the
# checkpoint; ``ghstate.core.chain`` reads it), and two that earlier versions wrote and that mean nothing
# now (how far a body reflected the write log before the log was a chain, "log"; the entry of the write
# that saved a body, "entry"). Dropped when a marker is loaded, so that a write never carries them along.
NOT_LOADED = ("chain", "log", "entry")
TASK = "task"  # a child checkpoint's place in its parent's plan (see ghstate.core.tasks)
PULL = "pull_request"  # the branch's pull request: {number, url, state}
KNOWN = (REVISION, ID, TITLE, BRANCH, COMMIT, DIRTY, CREATED, UPDATED, EXECUTIONS, VERIFICATION, DIGESTS,
         HISTORY, PROVENANCE, FINGERPRINTS, TASK, PULL, *NOT_LOADED)
PULL_STATES = ("open", "merged", "closed")

# A whole line holding the hidden marker, in any body (CRLF too: the \r is left to the line's ending); its
# JSON object is group 1.
MARKER_LINE = re.compile(r"^[ ]{0,3}<!--\s*ghstate:v1\s+(\{.*?\})\s*-->[ \t]*(?=\r?$)", re.MULTILINE)

HISTORY_DEPTH = 5  # revisions whose digests are kept besides the last


def integer(value: Any, default: int = 0) -> int:
    """``value`` when it is a whole number (not a bool), else ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def count(value: Any) -> int:
    """A non-negative whole number, else 0."""
    return max(0, integer(value))


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def texts(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def digests_of(value: Any) -> dict[str, str] | None:
    """Section digests as kept (``{"goal": "3f2a1c0b", …}``); None when there are none, or they are not
    that (a hand-edited marker). An entry of the history also holds its ``revision`` (a number)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, (str, int))
                                              for k, v in value.items()):
        return None
    return {k: v for k, v in value.items() if isinstance(v, str)}


class Execution(NamedTuple):
    """One attempt to move the task forward: who (agent), as what (role), in which runtime session."""

    agent: str = ""
    role: str = ""
    session: str = ""
    revision: int = 0
    at: str = ""
    event: str = ""  # e.g. "checkpoint", "ci", "pre-compact"
    transcript: str = ""

    def to_data(self) -> dict[str, Any]:
        return {key: value for key in self._fields if (value := getattr(self, key)) or key == "revision"}

    @classmethod
    def from_data(cls, data: Any) -> "Execution":
        return cls(agent=text(data.get("agent")), role=text(data.get("role")), session=text(data.get("session")),
                   revision=integer(data.get("revision")), at=text(data.get("at")), event=text(data.get("event")),
                   transcript=text(data.get("transcript")))  # callers pass only dicts


class DigestsAt(NamedTuple):
    """The section digests of an earlier revision."""

    revision: int
    digests: dict[str, str]


class RevisionFacts(NamedTuple):
    """What provenance keeps of one revision: its commit, time and execution."""

    commit: str = ""
    at: str = ""
    agent: str = ""
    role: str = ""
    session: str = ""

    _SHORT = (("commit", "c"), ("at", "t"), ("agent", "a"), ("role", "o"), ("session", "s"))

    def to_data(self) -> dict[str, str]:
        return {short: getattr(self, name) for name, short in self._SHORT if getattr(self, name)}

    @classmethod
    def from_data(cls, data: Any) -> "RevisionFacts":
        data = data if isinstance(data, dict) else {}
        return cls(**{name: text(data.get(short)) for name, short in cls._SHORT})


PROVENANCE_KINDS = PROVENANCE_ORDER  # ticks, the lists' codes (the table's), steps: in the order they keep room


class ProvenanceRecord(NamedTuple):
    """Which revision set each claim: per kind, the digest of an item (or of a ticked phase or step) →
    the revision; the resume instruction's digest and revision; the facts of each revision still
    referenced; the kinds that had more items than there was room for (their others are unknown). As
    kept in the marker::

        "prov": {"v": 1, "d": {"3f2a1c": 4, …}, "q": {…}, "r": {…}, "f": {…}, "p": {…}, "s": {…},
                 "resume": ["9b0e11", 6], "x": ["s"], "revs": {"4": {"c": "4f2c1e9a01", "t": "…",
                 "a": "claude-code", "o": "editor", "s": "s-41"}, …}}
    """

    entries: dict[str, dict[str, int]] = {}
    resume: tuple[str, int] | None = None
    revisions: dict[int, RevisionFacts] = {}
    capped: frozenset[str] = frozenset()

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"v": 1}
        data.update({kind: dict(self.entries[kind]) for kind in PROVENANCE_KINDS if self.entries.get(kind)})
        if self.resume is not None:
            data["resume"] = list(self.resume)
        if self.capped:
            data["x"] = [kind for kind in PROVENANCE_KINDS if kind in self.capped]
        if self.revisions:
            data["revs"] = {str(r): facts.to_data() for r, facts in sorted(self.revisions.items())}
        return data

    def newest(self, keep: int) -> "ProvenanceRecord":
        """The record with only its ``keep`` most recent entries: a kind that lost some is marked capped
        (its other items' revisions are unknown, never misattributed); facts of revisions no longer
        referenced go too."""
        ranked = sorted(((revision, kind, digest) for kind, found in self.entries.items()
                         for digest, revision in found.items()), reverse=True)
        kept: dict[str, dict[str, int]] = {}
        for revision, kind, digest in ranked[:max(0, keep)]:
            kept.setdefault(kind, {})[digest] = revision
        lost = {kind for kind, found in self.entries.items() if len(kept.get(kind, {})) < len(found)}
        used = {r for found in kept.values() for r in found.values()} | ({self.resume[1]} if self.resume else set())
        return ProvenanceRecord(kept, self.resume, {r: f for r, f in self.revisions.items() if r in used},
                                self.capped | lost)

    def size(self) -> int:
        return sum(len(found) for found in self.entries.values())

    @classmethod
    def from_data(cls, data: Any) -> "ProvenanceRecord":
        if not isinstance(data, dict):
            return cls()
        entries = {}
        for kind in PROVENANCE_KINDS:
            value = data.get(kind)
            found = {k: v for k, v in value.items() if isinstance(k, str) and integer(v, -1) >= 0} \
                if isinstance(value, dict) else {}
            if found:  # an empty kind is none (dump leaves it out): what loads, dumps to what loads the same
                entries[kind] = found
        resume = data.get("resume")
        revs = data.get("revs")
        return cls(
            entries=entries,
            resume=(resume[0], resume[1]) if isinstance(resume, list) and len(resume) == 2
            and isinstance(resume[0], str) and integer(resume[1], -1) >= 0 else None,
            revisions={int(k): RevisionFacts.from_data(v) for k, v in revs.items()
                       if isinstance(k, str) and k.isdigit() and isinstance(v, dict)} if isinstance(revs, dict) else {},
            capped=frozenset(texts(data.get("x"))),
        )


class TaskLink(NamedTuple):
    """A child checkpoint's place in its parent's plan (``ghstate split``): the parent's number, the phase
    of the parent it is, and, on the local store, the children it waits for (``after``) and when it was
    closed (``closed``). On GitHub the parent and the blocked-by links are GitHub's own (sub-issues, issue
    dependencies), and the issue's state says whether it is closed; this record says what the split made."""

    parent: int = 0
    phase: str = ""
    after: tuple[int, ...] = ()
    closed: str = ""

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"parent": self.parent, "phase": self.phase}
        if self.after:
            data["after"] = list(self.after)
        if self.closed:
            data["closed"] = self.closed
        return data

    @classmethod
    def from_data(cls, data: Any) -> "TaskLink | None":
        if not isinstance(data, dict) or count(data.get("parent")) < 1:
            return None
        after = data.get("after")
        return cls(count(data.get("parent")), text(data.get("phase")),
                   tuple(sorted({n for n in after if count(n) > 0})) if isinstance(after, list) else (),
                   text(data.get("closed")))


class PullRequest(NamedTuple):
    """The pull request of a checkpoint's branch: its number, URL and state (``open``, ``merged`` or
    ``closed``: closed without merging)."""

    number: int
    url: str = ""
    state: str = "open"

    def to_data(self) -> dict[str, Any]:
        return {"number": self.number, "url": self.url, "state": self.state}

    @classmethod
    def from_data(cls, data: Any) -> "PullRequest | None":
        if not isinstance(data, dict) or count(data.get("number")) < 1 or data.get("state") not in PULL_STATES:
            return None
        return cls(count(data.get("number")), text(data.get("url")), data["state"])


class Meta(NamedTuple):
    """The marker's data that belongs to no section. Each field is one key; ``unknown`` holds the keys
    a newer version wrote, untouched."""

    revision: int = 0
    branch: str = ""
    commit: str = ""
    dirty: tuple[str, ...] = ()
    created_at: str = ""
    updated_at: str = ""
    id: str = ""
    fingerprints: dict[str, str] = {}  # dirty path → a short digest of its content
    digests: dict[str, str] | None = None  # None: not recorded (a body ghstate did not write)
    digest_history: tuple[DigestsAt, ...] = ()
    provenance: ProvenanceRecord | None = None  # None: not kept yet
    task: TaskLink | None = None  # a child checkpoint's parent and phase (None: not a child)
    pull_request: PullRequest | None = None  # the branch's pull request, once known
    unknown: dict[str, Any] = {}


class Marker(NamedTuple):
    """A marker, loaded: the machine data, and the three fields a checkpoint shows (title, executions,
    CI's verification)."""

    meta: Meta = Meta()
    title: str = ""
    executions: tuple[Execution, ...] = ()
    verification: "Verification | None" = None


def load(data: dict[str, Any]) -> Marker:
    """The marker's raw JSON object, validated once: what does not have the right shape is left out."""
    history = data.get(HISTORY)
    fingerprints = data.get(FINGERPRINTS)
    executions = data.get(EXECUTIONS)
    meta = Meta(
        revision=integer(data.get(REVISION)),
        branch=text(data.get(BRANCH)),
        commit=text(data.get(COMMIT)),
        dirty=texts(data.get(DIRTY)),
        created_at=text(data.get(CREATED)),
        updated_at=text(data.get(UPDATED)),
        id=text(data.get(ID)),
        fingerprints={k: v for k, v in fingerprints.items() if isinstance(v, str)}
        if isinstance(fingerprints, dict) else {},
        digests=digests_of(data.get(DIGESTS)),
        digest_history=tuple(DigestsAt(integer(h.get(REVISION)), d) for h in history if isinstance(h, dict)
                             and (d := digests_of(h)) is not None) if isinstance(history, list) else (),
        provenance=ProvenanceRecord.from_data(data[PROVENANCE]) if PROVENANCE in data else None,
        task=TaskLink.from_data(data.get(TASK)),
        pull_request=PullRequest.from_data(data.get(PULL)),
        unknown={k: v for k, v in data.items() if k not in KNOWN},
    )
    return Marker(meta, text(data.get(TITLE)), tuple(Execution.from_data(e) for e in executions
                                                      if isinstance(e, dict)) if isinstance(executions, list) else (),
                  verification_of(data.get(VERIFICATION)))


def lighter(meta: Meta) -> Iterator[tuple[Meta, str]]:
    """Ever smaller versions of ``meta``, each with what it left out, shedding ghstate's own optional
    metadata, the least needed first: the digests of earlier revisions (a file made from an older
    revision is then merged against the last one), the oldest half of the provenance, then a quarter,
    then all of it (their items' revisions become unknown), the fingerprints of dirty files (drift then
    counts those files as changed). What a reader needs to read correctly (revision, branch, commit, the
    section digests) is never shed."""
    shed: list[str] = []
    if meta.digest_history:
        meta = meta._replace(digest_history=())
        shed.append("the section digests of earlier revisions")
        yield meta, ", ".join(shed)
    prov = meta.provenance
    if prov is not None and prov.size():
        total = prov.size()
        for keep, words in ((total // 2, "the oldest half of the provenance"), (total // 4, "the oldest three "
                            "quarters of the provenance"), (0, "the provenance")):
            meta = meta._replace(provenance=prov.newest(keep))
            yield meta, ", ".join([*shed, words])
        shed.append("the provenance")
    if meta.fingerprints:
        meta = meta._replace(fingerprints={})
        shed.append("the fingerprints of dirty files")
        yield meta, ", ".join(shed)


def verification_of(data: Any) -> "Verification | None":
    """CI's verification from its marker data (None when there is none)."""
    if not isinstance(data, dict) or not data:
        return None
    from ghstate.core.verification import Verification

    return Verification.from_dict(data)


def dump(marker: Marker) -> dict[str, Any]:
    """The marker's JSON object: known keys in a fixed order, empty ones left out, unknown ones last."""
    meta = marker.meta
    data: dict[str, Any] = {REVISION: meta.revision}
    for key, value in ((ID, meta.id), (TITLE, marker.title), (BRANCH, meta.branch), (COMMIT, meta.commit),
                       (DIRTY, list(meta.dirty)), (CREATED, meta.created_at), (UPDATED, meta.updated_at)):
        if value:
            data[key] = value
    if marker.executions:
        data[EXECUTIONS] = [e.to_data() for e in marker.executions]
    if marker.verification is not None:
        data[VERIFICATION] = marker.verification.to_dict()
    if meta.digests is not None:
        data[DIGESTS] = dict(meta.digests)
    if meta.digest_history:
        data[HISTORY] = [{**h.digests, REVISION: h.revision} for h in meta.digest_history[:HISTORY_DEPTH]]
    if meta.provenance is not None:
        data[PROVENANCE] = meta.provenance.to_data()
    if meta.fingerprints:
        data[FINGERPRINTS] = dict(meta.fingerprints)
    if meta.task is not None:
        data[TASK] = meta.task.to_data()
    if meta.pull_request is not None:
        data[PULL] = meta.pull_request.to_data()
    for key, value in meta.unknown.items():
        data.setdefault(key, value)
    return data
