"""Changes to a checkpoint: incremental flags, a whole new body, the revision stamp, and a summary.

Every function takes a checkpoint and returns a new one; each change touches only what it names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ghstate.errors import Conflict, InputError
from ghstate.model import LIST_SECTIONS, SECTION_KEYS, Checkpoint, Execution, Phase, find_phase, runtime_entry

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


def apply_incoming(cp: Checkpoint, incoming: Checkpoint, present: frozenset[str]) -> Checkpoint:
    """A body or JSON state given with ``--file``: the sections it has replace the current ones.

    Sections it leaves out are kept (CI's Verification, a section a person added on GitHub), so a
    file written from a partial picture cannot erase what it did not know about. Its unknown sections
    replace those of the same heading; others stay. Machine data (revision, executions) stays.
    """
    changes: dict[str, object] = {key: getattr(incoming, key) for key in SECTION_KEYS if key in present}
    if incoming.title:
        changes["title"] = incoming.title
    if "verification" in present:
        changes["verification_data"] = incoming.verification_data or cp.verification_data
    headings = {e.heading for e in incoming.extra if e.heading is not None}
    has_preamble = any(e.heading is None and e.after is None for e in incoming.extra)
    kept = [
        e for e in cp.extra
        if (e.heading is None and not (e.after in present or (e.after is None and has_preamble)))
        or (e.heading is not None and e.heading not in headings)
    ]
    order = {key: i for i, key in enumerate((None, *SECTION_KEYS))}
    extras = sorted([*incoming.extra, *kept], key=lambda e: (order[e.after], e.heading is not None))
    changes["extra"] = tuple(extras)
    return cp._replace(**changes)


def stamp(cp: Checkpoint, *, revision: int, now: str, branch: str, commit: str, dirty: tuple[str, ...],
          execution: Execution | None, new_id: str = "") -> Checkpoint:
    """Record a new revision: the machine facts of this write and who made it."""
    executions = cp.executions
    if execution is not None:
        executions = (*executions, execution._replace(revision=revision, at=now))[-MAX_EXECUTIONS:]
    return cp._replace(
        executions=executions,
        meta=cp.meta._replace(
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


def make_change(intent: dict):
    """The change an intent describes. Intents are what a pending write keeps, so they are plain data:
    ``incoming`` (a JSON state and the sections it names), ``edits`` (the incremental flags), and
    ``verification`` / ``tick`` (a CI result)."""
    from ghstate.state_json import from_json

    incoming = intent.get("incoming")
    incoming_cp = from_json(incoming["state"]) if incoming else None
    present = frozenset(incoming.get("present", ())) if incoming else frozenset()
    edits = edits_from_dict(intent.get("edits") or {})
    verification = intent.get("verification")
    tick = intent.get("tick")
    based_on = intent.get("based_on") or {}

    def change(cp: Checkpoint) -> Checkpoint:
        if incoming_cp is not None:
            made_from = based_on.get("revision") or 0
            same_task = based_on.get("id") and based_on.get("id") == cp.meta.id
            if same_task and made_from and made_from != cp.meta.revision and not intent.get("force"):
                raise Conflict(
                    f"the checkpoint is at revision {cp.meta.revision}, but the --file input was made from "
                    f"revision {made_from}, and writing it would undo what changed since: read it again "
                    "(ghstate show N --json, or resume --format markdown), redo the edit, or pass --force")
            cp = apply_incoming(cp, incoming_cp, present)
        if edits:
            cp = apply_edits(cp, edits)
        if verification is not None:
            cp = cp._replace(verification=verification.get("text", ""),
                         verification_data=verification.get("data"))
        if tick:
            try:
                index = find_phase(cp.phases, tick)
            except LookupError:
                index = -1  # CI names a phase the checkpoint no longer has: record the result anyway
            if index >= 0 and not cp.phases[index].done:
                phases = list(cp.phases)
                phases[index] = phases[index]._replace(done=True)
                cp = cp._replace(phases=tuple(phases))
        return cp

    return change
