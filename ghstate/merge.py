"""Section-wise three-way merge of two edits of one checkpoint.

``base`` is what a writer read, ``ours`` what it wants to write, ``theirs`` what is there now (a
person ticked a box in the web UI, CI updated Verification). Changes on one side are taken; changes on
both sides are combined where they can be (lists, phases) and otherwise ours wins while theirs is kept
as an extra section next to it, so that no word is lost. ``base`` None means the base is unknown
(a write saved offline before anything was read): then nothing counts as deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ghstate.model import HEADINGS, LIST_SECTIONS, Checkpoint, Execution, Extra, Phase, Step

T = TypeVar("T")
MAX_EXECUTIONS = 20


@dataclass
class Merge:
    checkpoint: Checkpoint
    conflicts: list[str] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _pick(base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """Three-way choice for a value that cannot be combined; True when both sides changed it."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    return ours, True


def merge_sequence(
    base: Sequence[T] | None,
    ours: Sequence[T],
    theirs: Sequence[T],
    key: Callable[[T], Hashable],
    merge_item: Callable[[T | None, T, T], T] | None = None,
) -> list[T]:
    """Merge lists of keyed items: theirs' order, ours' deletions, both sides' additions.

    A change on one side only is taken as it is. An item one side deleted and the other changed is
    kept (changed), never dropped. Repeated keys are told apart by their occurrence.
    """
    if base is not None and list(theirs) == list(base):
        return list(ours)
    if base is not None and list(ours) == list(base):
        return list(theirs)

    def keyed(items: Sequence[T]) -> list[tuple[tuple[Hashable, int], T]]:
        seen: dict[Hashable, int] = {}
        out = []
        for item in items:
            k = key(item)
            seen[k] = seen.get(k, 0) + 1
            out.append(((k, seen[k]), item))
        return out

    base_by = dict(keyed(base)) if base is not None else {}
    ours_keyed = keyed(ours)
    ours_by = dict(ours_keyed)
    theirs_keyed = keyed(theirs)
    theirs_by = dict(theirs_keyed)
    result: list[tuple[tuple[Hashable, int], T]] = []
    for k, item in theirs_keyed:
        if k in ours_by:
            result.append((k, merge_item(base_by.get(k), ours_by[k], item) if merge_item else ours_by[k]))
        elif k in base_by and base_by[k] == item:
            continue  # ours deleted it and theirs did not touch it
        else:
            result.append((k, item))  # theirs added it, or changed what ours deleted
    present = {k for k, _ in result}
    for position, (k, item) in enumerate(ours_keyed):
        if k in present or (k in base_by and k not in theirs_by and base_by[k] == item):
            continue  # already merged, or theirs deleted it and ours did not change it
        # insert after the nearest preceding item of ours that is in the result
        anchor = next((ours_keyed[j][0] for j in range(position - 1, -1, -1) if ours_keyed[j][0] in present), None)
        index = 0 if anchor is None else next(i for i, (rk, _) in enumerate(result) if rk == anchor) + 1
        result.insert(index, (k, item))
        present.add(k)
    return [item for _, item in result]


def _merge_step(base: Step | None, ours: Step, theirs: Step) -> Step:
    done, _ = _pick(base.done if base else None, ours.done, theirs.done)
    return ours._replace(done=done)


def _merge_phase(base: Phase | None, ours: Phase, theirs: Phase) -> Phase:
    done, _ = _pick(base.done if base else None, ours.done, theirs.done)
    steps = merge_sequence(base.steps if base else None, ours.steps, theirs.steps,
                           key=lambda s: _norm(s.text), merge_item=_merge_step)
    detail, both = _pick(base.detail if base else None, ours.detail, theirs.detail)
    if both and theirs.detail not in detail:
        detail = f"{ours.detail}\n\n{theirs.detail}".strip()
    return Phase(ours.name, done, tuple(steps), detail)


def _merge_extra(base: Extra | None, ours: Extra, theirs: Extra) -> Extra:
    body, both = _pick(base.body if base else None, ours.body, theirs.body)
    if both and theirs.body not in body:
        body = f"{ours.body}\n\n{theirs.body}".strip()
    return ours._replace(body=body)


def merge3(base: Checkpoint | None, ours: Checkpoint, theirs: Checkpoint) -> Merge:
    conflicts: list[str] = []
    changes: dict[str, Any] = {}
    kept: list[Extra] = []
    b = base

    for key in ("title", "goal", "resume", "verification"):
        value, both = _pick(getattr(b, key) if b else None, getattr(ours, key), getattr(theirs, key))
        if both and b is None and not getattr(theirs, key):
            both = False
        changes[key] = value
        if both and getattr(theirs, key):
            conflicts.append(HEADINGS.get(key, key))
            if key != "title":
                kept.append(Extra(f"{HEADINGS[key]} (concurrent edit)", getattr(theirs, key), 2, key))
    changes["verification_data"], _ = _pick(b.verification_data if b else None, ours.verification_data,
                                            theirs.verification_data)
    changes["phases"] = tuple(merge_sequence(b.phases if b else None, ours.phases, theirs.phases,
                                             key=lambda p: _norm(p.name), merge_item=_merge_phase))
    for key in LIST_SECTIONS:
        changes[key] = tuple(merge_sequence(getattr(b, key) if b else None, getattr(ours, key),
                                            getattr(theirs, key), key=_norm))
    extras = merge_sequence(b.extra if b else None, ours.extra, theirs.extra,
                            key=lambda e: (e.after, e.heading), merge_item=_merge_extra)
    changes["extra"] = _ordered_extras([*extras, *kept])
    seen: set[tuple[str, str, int, str]] = set()
    executions: list[Execution] = []
    for e in (*theirs.executions, *ours.executions):
        k = (e.agent, e.session, e.revision, e.at)
        if k not in seen:
            seen.add(k)
            executions.append(e)
    changes["executions"] = tuple(sorted(executions, key=lambda e: (e.revision, e.at)))[-MAX_EXECUTIONS:]
    changes["meta"] = theirs.meta._replace(revision=max(ours.meta.revision, theirs.meta.revision))
    return Merge(ours._replace(**changes), conflicts)


def _ordered_extras(extras: list[Extra]) -> tuple[Extra, ...]:
    order = {key: i for i, key in enumerate((None, *HEADINGS))}
    headless: dict[str | None, Extra] = {}
    headed: list[Extra] = []
    for extra in extras:
        if extra.heading is None:
            if extra.after in headless:  # both sides wrote loose text in one section: keep both
                prev = headless[extra.after]
                headless[extra.after] = prev._replace(body=f"{prev.body}\n\n{extra.body}")
            else:
                headless[extra.after] = extra
        else:
            headed.append(extra)
    combined = [*headless.values(), *headed]
    return tuple(sorted(combined, key=lambda e: (order[e.after], e.heading is not None)))


def merge_unknown_base(key: str, ours: Checkpoint, theirs: Checkpoint) -> tuple[Any, list[Extra]]:
    """One section both sides changed since a base that is known only by its digest: lists and phases
    are united (a tick on either side stays), and a text ours replaces is kept beside it as
    "… (concurrent edit)". Returns the value and the extras that keep theirs."""
    a, b = getattr(ours, key), getattr(theirs, key)
    if key in LIST_SECTIONS:
        return tuple(merge_sequence(None, a, b, key=_norm)), []
    if key == "phases":
        def phase(_: Phase | None, o: Phase, t: Phase) -> Phase:
            steps = merge_sequence(None, o.steps, t.steps, key=lambda s: _norm(s.text),
                                   merge_item=lambda _, x, y: x._replace(done=x.done or y.done))
            detail = o.detail if t.detail in o.detail else f"{o.detail}\n\n{t.detail}".strip()
            return Phase(o.name, o.done or t.done, tuple(steps), detail)

        return tuple(merge_sequence(None, a, b, key=lambda p: _norm(p.name), merge_item=phase)), []
    heading = "Title" if key == "title" else HEADINGS[key]
    return a, ([Extra(f"{heading} (concurrent edit)", b, 2, None if key == "title" else key)] if b else [])
