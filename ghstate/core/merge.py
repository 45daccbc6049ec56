"""Merging a section two sides changed: a --file input and the checkpoint it is written over.

Lists and phases are united (an item or a tick on either side stays); a text one side replaces is kept
beside it as "… (concurrent edit)", so that no word is lost. (Concurrent *writers* need no merge: each
write is an intent, applied to the checkpoint at the head of its chain; see ``writer`` and ``chain``.)
A person's edit of the body is merged onto the chain's head three-way (``merge3``), against the commit
whose page they edited.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from ghstate.core.model import HEADINGS, LIST_SECTIONS, TEXT_SECTIONS, Checkpoint, Extra, Phase, Step, concurrent

T = TypeVar("T")


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


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
    base_by = dict(_keyed(base, key)) if base is not None else {}
    ours_keyed, theirs_keyed = _keyed(ours, key), _keyed(theirs, key)
    ours_by, theirs_by = dict(ours_keyed), dict(theirs_keyed)
    result: list[tuple[tuple[Hashable, int], T]] = []
    for k, item in theirs_keyed:
        if k in ours_by:
            result.append((k, merge_item(base_by.get(k), ours_by[k], item) if merge_item else ours_by[k]))
        elif k in base_by and base_by[k] == item:
            continue  # ours deleted it and theirs did not touch it
        else:
            result.append((k, item))  # theirs added it, or changed what ours deleted
    return _with_additions(result, ours_keyed, base_by, theirs_by)


def _keyed(items: Sequence[T], key: Callable[[T], Hashable]) -> list[tuple[tuple[Hashable, int], T]]:
    """Each item with its key and which occurrence of that key it is."""
    seen: dict[Hashable, int] = {}
    out = []
    for item in items:
        k = key(item)
        seen[k] = seen.get(k, 0) + 1
        out.append(((k, seen[k]), item))
    return out


def _with_additions(result: list[tuple[tuple[Hashable, int], T]], ours_keyed: list[tuple[tuple[Hashable, int], T]],
                    base_by: dict[tuple[Hashable, int], T], theirs_by: dict[tuple[Hashable, int], T]) -> list[T]:
    """``result`` with ours' additions after the nearest preceding item of ours that is in it (the item itself,
    or one added just before it): one pass, each run of additions hung on its anchor."""
    present = {k for k, _ in result}
    after: dict[tuple[Hashable, int] | None, list[T]] = {}
    anchor: tuple[Hashable, int] | None = None  # the result item the current run of additions follows
    for k, item in ours_keyed:
        if k in present:
            anchor = k
        elif not (k in base_by and k not in theirs_by and base_by[k] == item):
            after.setdefault(anchor, []).append(item)  # theirs deleted it only if ours did not change it
    merged = after.get(None, [])
    for k, item in result:
        merged.append(item)
        merged.extend(after.get(k, ()))
    return merged


def merge_unknown_base(key: str, ours: Checkpoint, theirs: Checkpoint) -> tuple[Any, list[Extra]]:
    """One section both sides changed since a base that is known only by its digest: lists and phases
    are united (a tick on either side stays), and a text ours replaces is kept beside it as
    "… (concurrent edit)". Returns the value and the extras that keep theirs."""
    a, b = getattr(ours, key), getattr(theirs, key)
    if key in LIST_SECTIONS:
        return tuple(merge_sequence(None, a, b, key=_norm)), []
    if key == "phases":
        return tuple(merge_sequence(None, a, b, key=lambda p: _norm(p.name), merge_item=_phase)), []
    heading = "Title" if key == "title" else HEADINGS[key]
    return a, ([Extra(concurrent(heading), b, 2, None if key == "title" else key)] if b else [])


def _done(b: Phase | Step | None, o: Phase | Step, t: Phase | Step) -> bool | None:
    """A tick both sides may have changed: the side that changed it since ``b``; with no base, ticked on
    either side is ticked."""
    if b is None:
        return o.done or t.done
    return t.done if t.done != b.done else o.done


def _phase(b: Phase | None, o: Phase, t: Phase, text: Callable[[str, str, str, str], str] | None = None) -> Phase:
    """A phase both sides have: ticks as ``_done``, steps item by item; its detail three-way through ``text``
    (``merge3``'s) when there is a base, else both sides' details kept."""
    steps = merge_sequence(b.steps if b else None, o.steps, t.steps, key=lambda s: _norm(s.text),
                           merge_item=lambda sb, so, st: so._replace(done=_done(sb, so, st)))
    if b is not None and text is not None:
        detail = text("phases", b.detail, o.detail, t.detail)
    else:
        detail = o.detail if t.detail in o.detail else f"{o.detail}\n\n{t.detail}".strip()
    return Phase(o.name, _done(b, o, t), tuple(steps), detail)


def merge3(base: Checkpoint, ours: Checkpoint, theirs: Checkpoint) -> tuple[Checkpoint, list[str]]:
    """A person's edit (``theirs``, made from the page of ``base``) merged onto ``ours`` (the head): what
    only one side changed since ``base`` is that side's; lists, phases, steps and unknown sections are
    merged item by item (either side's additions stay, an item one side deleted and the other left as it
    was goes); a text both changed to different values is theirs (a person's edit stands) with ours kept
    beside it as "… (concurrent edit)". Machine data (the marker, executions) and the title are ours.
    Returns the checkpoint and the sections both sides changed."""
    conflicts: list[str] = []
    beside: list[Extra] = []

    def text(key: str, b: str, o: str, t: str, after: str | None = None) -> str:
        """A text both may have changed; ``key`` a section's, or the heading of one outside the fixed set
        (``after``: where that is), beside which ours is kept."""
        if t == b or o == t:
            return o
        if o == b:
            return t
        conflicts.append(HEADINGS.get(key, key))
        if o:
            beside.append(Extra(concurrent(HEADINGS.get(key, key)), o, 2, key if key in HEADINGS else after))
        return t

    def extra(b: Extra | None, o: Extra, t: Extra) -> Extra:
        if b is None:
            return o if o.body == t.body else o._replace(body=f"{o.body}\n\n{t.body}".strip())
        return o._replace(body=text(o.heading or "Text", b.body, o.body, t.body, o.after), level=t.level)

    changes: dict[str, Any] = {}
    for key in TEXT_SECTIONS:
        changes[key] = text(key, getattr(base, key), getattr(ours, key), getattr(theirs, key))
    changes["verification_data"] = ours.verification_data if changes["verification"] == ours.verification \
        else theirs.verification_data
    for key in LIST_SECTIONS:
        changes[key] = tuple(merge_sequence(getattr(base, key), getattr(ours, key), getattr(theirs, key), key=_norm))
    changes["phases"] = tuple(merge_sequence(base.phases, ours.phases, theirs.phases, key=lambda p: _norm(p.name),
                                             merge_item=lambda b, o, t: _phase(b, o, t, text)))
    extras = merge_sequence(base.extra, ours.extra, theirs.extra, key=lambda e: (e.heading, e.after),
                            merge_item=extra)
    changes["extra"] = (*extras, *beside)
    return ours._replace(**changes), list(dict.fromkeys(conflicts))
