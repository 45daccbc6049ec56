"""Changes to a checkpoint: incremental flags, a whole new body, the revision stamp, and a summary.

Every function takes a checkpoint and returns a new one; each change touches only what it names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ghstate.errors import InputError
from ghstate.model import (
    DIGESTS_KEY,
    HEADINGS,
    LIST_SECTIONS,
    SECTION_KEYS,
    Checkpoint,
    Execution,
    Extra,
    Phase,
    find_phase,
    runtime_entry,
    section_digest,
    section_digests,
)

MAX_EXECUTIONS = 20


@dataclass(frozen=True)
class Edits:
    """What the incremental flags of ``ghstate checkpoint`` ask for."""

    title: str | None = None
    goal: str | None = None
    resume: str | None = None
    done: tuple[str, ...] = ()
    undo: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in self.__dataclass_fields__)


class EditError(InputError):
    """An edit that names something that is not there (a phase)."""


def _append(items: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    out = list(items)
    for item in new:
        text = item.strip()
        if text and text not in out:
            out.append(text)
    return tuple(out)


def apply_edits(cp: Checkpoint, edits: Edits) -> Checkpoint:
    changes: dict[str, object] = {}
    if edits.title is not None and edits.title.strip():
        changes["title"] = " ".join(edits.title.split())
    if edits.goal is not None:
        changes["goal"] = edits.goal.strip()
    if edits.resume is not None:
        changes["resume"] = edits.resume.strip()
    phases = list(cp.phases)
    for name in edits.phases:
        name = " ".join(name.split())
        if name and all(" ".join(p.name.split()).lower() != name.lower() for p in phases):
            phases.append(Phase(name))
    for refs, done in ((edits.done, True), (edits.undo, False)):
        for ref in refs:
            try:
                index = find_phase(tuple(phases), ref)
            except LookupError as exc:
                raise EditError(str(exc)) from None
            phases[index] = phases[index]._replace(done=done)
    if tuple(phases) != cp.phases:
        changes["phases"] = tuple(phases)
    for key, new in (("decisions", edits.decisions), ("questions", edits.questions), ("risks", edits.risks)):
        if new:
            changes[key] = _append(getattr(cp, key), new)
    if edits.reads:
        known = set(cp.file_paths)
        fresh = tuple(f"`{p.strip()}`" for p in edits.reads if p.strip() and p.strip() not in known)
        changes["files"] = _append(cp.files, fresh)
    return cp._replace(**changes) if changes else cp


def apply_incoming(cp: Checkpoint, incoming: Checkpoint, present: frozenset[str],
                   base: dict[str, str] | None = None) -> tuple[Checkpoint, list[str]]:
    """A body or JSON state given with ``--file``: the sections it has, applied to the checkpoint.

    Sections it leaves out are kept (CI's Verification, a section a person added on GitHub), so a
    file written from a partial picture cannot erase what it did not know about. With ``base`` (the
    section digests of what the file was made from), each section it has is decided on its own: a
    section only the file changed is taken, one only the checkpoint changed since (a box ticked on
    GitHub, a decision added) is kept, and one both changed is merged without losing either side.
    Without it the file's sections replace the current ones. Unknown sections of the file replace
    those of the same heading; others stay. Machine data (revision, executions) stays.
    Returns the checkpoint and the headings of sections both sides changed."""
    from ghstate.merge import merge_unknown_base

    changes: dict[str, object] = {}
    conflicts: list[str] = []
    taken: set[str] = set()  # sections whose loose text comes from the file
    united: set[str] = set()  # sections whose loose text is both sides'
    added: list[Extra] = []
    keys = [key for key in SECTION_KEYS if key in present] + (["title"] if incoming.title else [])
    for key in keys:
        side = _side(key, cp, incoming, base)
        if side == "incoming":
            changes[key] = getattr(incoming, key)
            taken.add(key)
        elif side == "both":
            changes[key], kept = merge_unknown_base(key, incoming, cp)
            added.extend(kept)
            united.add(key)
            conflicts.append("the title" if key == "title" else HEADINGS[key])
    if "verification" in taken:
        changes["verification_data"] = incoming.verification_data or cp.verification_data
    headings = {e.heading for e in incoming.extra if e.heading is not None}
    has_preamble = any(e.heading is None and e.after is None for e in incoming.extra)
    kept_extras = [
        e for e in cp.extra
        if (e.heading is None and not (e.after in taken or (e.after is None and has_preamble)))
        or (e.heading is not None and e.heading not in headings)
    ]
    mine = [e for e in incoming.extra if e.heading is not None or e.after in taken or e.after is None
            or (e.after in united and e not in kept_extras)]
    order = {key: i for i, key in enumerate((None, *SECTION_KEYS))}
    extras = sorted([*mine, *kept_extras, *added], key=lambda e: (order[e.after], e.heading is not None))
    changes["extra"] = tuple(extras)
    return cp._replace(**changes), conflicts


def _side(key: str, cp: Checkpoint, incoming: Checkpoint, base: dict[str, str] | None) -> str:
    """Whose version of a section stands: "incoming", "current" or "both" (merged)."""
    if base is None:
        return "incoming"
    mine, theirs, was = section_digest(incoming, key), section_digest(cp, key), base.get(key, "")
    if mine == theirs or mine == was:
        return "current"  # the same, or the file did not change it and the checkpoint may have
    return "incoming" if theirs == was else "both"


def base_digests(cp: Checkpoint, incoming: Checkpoint) -> dict[str, str] | None:
    """The section digests of what a --file input was made from, as far as they can be known: its
    own marker's (a file made from this checkpoint), else those ghstate last wrote (a hand-written
    file is taken to start from the checkpoint as ghstate last wrote it), else None."""
    if incoming.meta.id and incoming.meta.id != cp.meta.id:
        return None  # made from another checkpoint: its sections are simply what to write
    candidates = [incoming.meta.other.get(DIGESTS_KEY)] if incoming.meta.id else []
    for digests in (*candidates, cp.meta.other.get(DIGESTS_KEY)):
        if isinstance(digests, dict) and all(isinstance(v, str) for v in digests.values()):
            return digests
    return None


def stamp(cp: Checkpoint, *, revision: int, now: str, branch: str, commit: str, dirty: tuple[str, ...],
          execution: Execution | None, new_id: str = "") -> Checkpoint:
    """Record a new revision: the machine facts of this write and who made it."""
    executions = cp.executions
    if execution is not None:
        executions = (*executions, execution._replace(revision=revision, at=now))[-MAX_EXECUTIONS:]
    return cp._replace(
        executions=executions,
        meta=cp.meta._replace(
            other={**cp.meta.other, DIGESTS_KEY: section_digests(cp)},
            revision=revision,
            branch=branch or cp.meta.branch,
            commit=commit or cp.meta.commit,
            dirty=dirty,
            created_at=cp.meta.created_at or now,
            updated_at=now,
            id=cp.meta.id or new_id,
        ),
    )


def content_equal(a: Checkpoint, b: Checkpoint) -> bool:
    """Equal in everything a person reads; machine stamps aside."""
    return a._replace(meta=b.meta, executions=b.executions) == b


# ------------------------------------------------------------------------------------ summary

_NOUNS = {"decisions": "decision", "questions": "question", "risks": "risk", "files": "file to re-read",
          "runtime": "runtime check"}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 or noun.endswith("s") else "s")


def describe(old: Checkpoint | None, new: Checkpoint) -> list[str]:
    """What changed, compactly: ``Phase 2 done; +1 decision; resume → Phase 3``."""
    if old is None:
        done = sum(p.done for p in new.phases)
        return [f"created with {_count(len(new.phases), 'phase')} ({done} done)"]
    out: list[str] = []
    if old.title != new.title:
        out.append(f"title → {new.title}")
    if old.goal != new.goal:
        out.append("goal changed")
    before = {p.name: p for p in old.phases}
    after_names = {p.name for p in new.phases}
    for phase in new.phases:
        prior = before.get(phase.name)
        if prior is None:
            out.append(f"+phase {phase.label}")
        elif prior.done != phase.done:
            out.append(f"{phase.label} {'done' if phase.done else 'reopened'}")
        elif prior.steps != phase.steps:
            ticked = sum(bool(s.done) for s in phase.steps) - sum(bool(s.done) for s in prior.steps)
            out.append(f"{phase.label}: {ticked:+d} step{'s' if abs(ticked) != 1 else ''} done" if ticked
                       else f"{phase.label} steps edited")
    removed = [name for name in before if name not in after_names]
    if removed:
        out.append(f"-{_count(len(removed), 'phase')}")
    for key in LIST_SECTIONS:
        a, b = getattr(old, key), getattr(new, key)
        added = len([x for x in b if x not in a])
        dropped = len([x for x in a if x not in b])
        noun = _NOUNS[key]
        if added:
            out.append(f"+{_count(added, noun)}")
        if dropped:
            out.append(f"-{_count(dropped, noun)}")
    if old.resume != new.resume:
        nxt = new.next_phase
        out.append(f"resume → {nxt.label}" if nxt and nxt.label.lower() in new.resume.lower()
                   else "resume instruction changed")
    if old.verification != new.verification or old.verification_data != new.verification_data:
        status = (new.verification_data or {}).get("status")
        out.append(f"verification: {status}" if status else "verification changed")
    if old.extra != new.extra:
        out.append("other sections edited")
    return out


def runtime_names(cp: Checkpoint) -> list[str]:
    return [runtime_entry(item)[0] for item in cp.runtime]


# ------------------------------------------------------------------------------------ intents


def edits_from_dict(data: dict) -> Edits:
    fields = Edits.__dataclass_fields__
    values = {}
    for key, value in data.items():
        if key in fields:
            values[key] = tuple(value) if isinstance(value, list) else value
    return Edits(**values)


def edits_to_dict(edits: Edits) -> dict:
    out: dict = {}
    for key in edits.__dataclass_fields__:
        value = getattr(edits, key)
        if value:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


class IntentChange:
    """The change an intent describes, callable on the checkpoint as it is now. Intents are what a
    pending write keeps, so they are plain data: ``incoming`` (a JSON state and the sections it
    names), ``edits`` (the incremental flags), ``force`` (the file's sections replace, unmerged), and
    ``verification`` / ``tick`` (a CI result). ``conflicts`` names the sections the last call merged
    because the file and the checkpoint had both changed them."""

    def __init__(self, intent: dict) -> None:
        from ghstate.state_json import from_json

        incoming = intent.get("incoming")
        self.incoming = from_json(incoming["state"]) if incoming else None
        self.present = frozenset(incoming.get("present", ())) if incoming else frozenset()
        self.edits = edits_from_dict(intent.get("edits") or {})
        self.force = bool(intent.get("force"))
        self.verification = intent.get("verification")
        self.tick = intent.get("tick")
        self.conflicts: list[str] = []

    def __call__(self, cp: Checkpoint) -> Checkpoint:
        self.conflicts = []
        if self.incoming is not None:
            base = None if self.force else base_digests(cp, self.incoming)
            cp, self.conflicts = apply_incoming(cp, self.incoming, self.present, base)
        if self.edits:
            cp = apply_edits(cp, self.edits)
        if self.verification is not None:
            cp = cp._replace(verification=self.verification.get("text", ""),
                             verification_data=self.verification.get("data"))
        if self.tick:
            try:
                index = find_phase(cp.phases, self.tick)
            except LookupError:
                index = -1  # CI names a phase the checkpoint no longer has: record the result anyway
            if index >= 0 and not cp.phases[index].done:
                phases = list(cp.phases)
                phases[index] = phases[index]._replace(done=True)
                cp = cp._replace(phases=tuple(phases))
        return cp


def make_change(intent: dict) -> IntentChange:
    return IntentChange(intent)
