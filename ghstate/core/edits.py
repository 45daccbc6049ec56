"""Changes to a checkpoint: incremental flags, a whole new body, the revision stamp, and a summary.

Every function takes a checkpoint and returns a new one; each change touches only what it names.
"""

from __future__ import annotations

from dataclasses import make_dataclass

from ghstate.core import provenance
from ghstate.core.marker import HISTORY_DEPTH, DigestsAt, Execution
from ghstate.core.markup import code_span, unescape_literal
from ghstate.core.model import (
    HEADINGS,
    LIST_SECTIONS,
    SECTION_KEYS,
    TEXT_SECTIONS,
    Checkpoint,
    Extra,
    Phase,
    concurrent,
    digest_keys,
    extra_key,
    find_phase,
    is_standalone,
    rendering_order,
    section_digest,
    section_digests,
    standalone_extras,
)
from ghstate.core.sections import PLAIN, SECTIONS
from ghstate.core.state_json import literal_markdown
from ghstate.core.tasks import bare, linked_child
from ghstate.errors import InputError

MAX_EXECUTIONS = 20


class _Edits:
    """What the incremental flags of ``ghstate checkpoint`` ask for: what to set (title, goal, resume), the
    phases to tick, untick and add, what to add to each plain list of the table (under the section's key), the
    files to re-read. The intent keeps them by field name, in this order."""

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in self.__dataclass_fields__)


_TEXTS = "tuple[str, ...]"
Edits = make_dataclass("Edits", [
    ("title", "str | None", None), ("goal", "str | None", None), ("resume", "str | None", None),
    ("done", _TEXTS, ()), ("undo", _TEXTS, ()), ("phases", _TEXTS, ()), *((key, _TEXTS, ()) for key in PLAIN),
    ("reads", _TEXTS, ()),
], bases=(_Edits,), frozen=True, namespace={"__doc__": _Edits.__doc__, "__module__": __name__})


class EditError(InputError):
    """An edit that names something that is not there (a phase)."""


def _append(items: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    """Literal texts added to a list of markdown items, each once: one that reads as an item already
    there (the same visible text) is that item."""
    out = list(items)
    seen = {unescape_literal(item) for item in items}
    for item in new:
        text = literal_markdown("item", item)
        literal = unescape_literal(text)
        if text and literal not in seen:
            out.append(text)
            seen.add(literal)
    return tuple(out)


def _find_phase(phases: tuple[Phase, ...], ref: str) -> int:
    """PHASE as typed: a name as it shows (literal), or as the body writes it (markdown)."""
    try:
        return find_phase(phases, ref)
    except LookupError as exc:
        shown = tuple(p._replace(name=unescape_literal(p.name)) for p in phases)
        try:
            return find_phase(shown, ref)
        except LookupError:
            raise EditError(str(exc)) from None


def apply_edits(cp: Checkpoint, edits: Edits) -> Checkpoint:
    """The incremental flags, applied. Their text is literal: escaped here so that GitHub shows it as typed."""
    changes: dict[str, object] = {}
    if edits.title is not None and edits.title.strip():
        changes["title"] = " ".join(edits.title.split())
    if edits.goal is not None:
        changes["goal"] = literal_markdown("block", edits.goal)
    if edits.resume is not None:
        changes["resume"] = literal_markdown("block", edits.resume)
    phases = list(cp.phases)
    for name in edits.phases:
        name = " ".join(name.split())
        if name and all(" ".join(unescape_literal(p.name).split()).lower() != name.lower()
                        and " ".join(p.name.split()).lower() != name.lower() for p in phases):
            phases.append(Phase(literal_markdown("line", name)))
    for refs, done in ((edits.done, True), (edits.undo, False)):
        for ref in refs:
            index = _find_phase(tuple(phases), ref)
            phases[index] = with_steps(phases[index], done)
    if tuple(phases) != cp.phases:
        changes["phases"] = tuple(phases)
    for key in PLAIN:  # Edits holds what the flags add to each plain list under the section's key
        new = getattr(edits, key)
        if new:
            changes[key] = _append(getattr(cp, key), new)
    if edits.reads:
        known = set(cp.file_paths)
        fresh = tuple(dict.fromkeys(code_span(p.strip()) for p in edits.reads if p.strip() and p.strip() not in known))
        changes["files"] = (*cp.files, *fresh)
    return cp._replace(**changes) if changes else cp


def with_steps(phase: Phase, done: bool) -> Phase:
    """The phase ticked (or reopened) with its checkbox steps: a phase done is all of it done. A plain
    bullet among the steps (``done`` None) is a note, and stays one."""
    steps = tuple(s if s.done is None else s._replace(done=done) for s in phase.steps)
    return phase._replace(done=done, steps=steps)


def apply_incoming(cp: Checkpoint, incoming: Checkpoint, present: frozenset[str],
                   base: dict[str, str] | None = None, force: bool = False) -> tuple[Checkpoint, list[str]]:
    """A body or JSON state given with ``--file``: the sections it has, applied to the checkpoint.

    Sections it leaves out are kept (CI's Verification, a section a person added on GitHub), so a
    file written from a partial picture cannot erase what it did not know about. With ``base`` (the
    section digests of what the file was made from), each section it has (unknown ones and the
    preamble too) is decided on its own: one only the file changed is taken, one only the checkpoint
    changed since (a box ticked on GitHub, a decision added) is kept, and one both changed is merged
    without losing either side. Without ``base``, the file's sections replace the current ones;
    ``force`` also lets its unknown sections and preamble replace the current ones of their names (all of
    them when ``present`` holds "extra": a JSON state's ``extra`` gives every one). Machine
    data (revision, executions) stays. Returns the checkpoint and the sections both sides changed."""
    from ghstate.core.merge import merge_unknown_base

    changes: dict[str, object] = {}
    conflicts: list[str] = []
    taken: set[str] = set()  # sections whose loose text comes from the file
    united: set[str] = set()  # sections whose loose text is both sides'
    added: list[Extra] = []
    incoming = keep_markup(cp, incoming)
    keys = [key for key in SECTION_KEYS if key in present] + (["title"] if incoming.title else [])
    for key in keys:
        side = _side(key, cp, incoming, base)
        if side == "incoming":
            changes[key] = getattr(incoming, key)
            taken.add(key)
        elif side == "both" and key == "verification":  # CI's record stands; the file's is kept beside it
            _, kept = merge_unknown_base(key, cp, incoming)
            added.extend(kept)
            conflicts.append(HEADINGS[key])
        elif side == "both":
            changes[key], kept = merge_unknown_base(key, incoming, cp)
            added.extend(kept)
            united.add(key)
            conflicts.append("the title" if key == "title" else HEADINGS[key])
    if "verification" in taken:
        same_text = incoming.verification == cp.verification
        changes["verification_data"] = (incoming.verification_data if incoming.verification_data is not None
                                        else cp.verification_data if same_text else None)
    extras, extra_conflicts = _extras(cp, incoming, base, force, taken, united, "extra" in present)
    changes["extra"] = tuple(sorted([*extras, *added], key=rendering_order))
    return cp._replace(**changes), conflicts + extra_conflicts


def keep_markup(cp: Checkpoint, incoming: Checkpoint) -> Checkpoint:
    """Text of ``incoming`` that is the escape of literal text equal to what an item of ``cp`` shows,
    where that item is a person's markup (a link, ``**bold**``), is that item: a JSON state made
    without its ``"markdown"`` key (a script that rebuilt it) does not turn a person's markup into
    literal text in items it did not change."""
    def keep(old: tuple[str, ...], new: tuple[str, ...], kind: str) -> tuple[str, ...]:
        in_old, in_new = set(old), set(new)  # sets: a long list is not searched once per item
        theirs: dict[str, list[str]] = {}
        for item in old:
            if item not in in_new:
                shown = unescape_literal(item)
                if literal_markdown(kind, shown) != item:
                    theirs.setdefault(shown, []).append(item)
        out = []
        for item in new:
            if item not in in_old and theirs:
                shown = unescape_literal(item)
                if theirs.get(shown) and literal_markdown(kind, shown) == item:
                    item = theirs[shown].pop(0)
            out.append(item)
        return tuple(out)

    changes: dict[str, object] = {key: keep(getattr(cp, key), getattr(incoming, key), "item")
                                  for key in LIST_SECTIONS if key != "files"}  # files are paths, not markup
    for key in TEXT_SECTIONS:
        if getattr(incoming, key):
            changes[key] = keep((getattr(cp, key),), (getattr(incoming, key),), "block")[0]
    names = keep(tuple(p.name for p in cp.phases), tuple(p.name for p in incoming.phases), "line")
    by_name = {p.name: p for p in cp.phases}
    phases = []
    for phase, name in zip(incoming.phases, names, strict=True):
        before = by_name.get(name)
        if before is not None:
            texts = keep(tuple(s.text for s in before.steps), tuple(s.text for s in phase.steps), "item")
            phase = phase._replace(steps=tuple(s._replace(text=t) for s, t in zip(phase.steps, texts, strict=True)))
        phases.append(phase._replace(name=name))
    changes["phases"] = tuple(phases)
    return incoming._replace(**changes)


def _extras(cp: Checkpoint, incoming: Checkpoint, base: dict[str, str] | None, force: bool, taken: set[str],
            united: set[str], whole: bool = False) -> tuple[list[Extra], list[str]]:
    """The unknown sections, the preamble and the loose text inside sections, after a --file write (``whole``:
    the file gives all of them, a JSON state's ``extra``)."""
    def loose(cp_: Checkpoint, keys: set[str]) -> list[Extra]:
        return [e for e in cp_.extra if not is_standalone(e) and e.after in keys]

    def keys_of(cp_: Checkpoint) -> dict[str, None]:
        return dict.fromkeys(extra_key(e.heading) for e in cp_.extra if is_standalone(e))

    current_sections = {e.after for e in cp.extra if e.heading is None and e.after is not None}
    out = loose(cp, current_sections - taken) + loose(incoming, taken)
    already = set(out)
    out += [e for e in loose(incoming, united) if e not in already]
    file_keys = keys_of(incoming)
    if force:  # the file's sections replace those it holds; a section it does not hold (a person's) stays
        return out + [e for e in cp.extra if is_standalone(e) and not whole and extra_key(e.heading) not in file_keys
                      ] + [e for e in incoming.extra if is_standalone(e)], []
    conflicts: list[str] = []
    for key in {**file_keys, **keys_of(cp)}:
        theirs, mine = standalone_extras(cp, key), standalone_extras(incoming, key)
        side = _side(key, cp, incoming, base) if key in file_keys else "current"
        if side == "incoming":
            out += mine
        elif side == "current":
            out += theirs
        else:  # both changed it: the file's version, and the current one beside it
            out += mine + [e._replace(heading=concurrent(e.heading or 'Preamble')) for e in theirs]
            conflicts.append(f"the section {mine[0].heading!r}" if mine[0].heading else "the preamble")
    return out, conflicts


def _side(key: str, cp: Checkpoint, incoming: Checkpoint, base: dict[str, str] | None) -> str:
    """Whose version of a section stands: "incoming", "current" or "both" (merged)."""
    if base is None:
        return "incoming"
    mine, theirs, was = section_digest(incoming, key), section_digest(cp, key), base.get(key, "")
    if mine == theirs or mine == was:
        return "current"  # the same, or the file did not change it and the checkpoint may have
    return "incoming" if theirs == was else "both"


def base_digests(cp: Checkpoint, incoming: Checkpoint, read: dict[str, str] | None = None) -> dict[str, str] | None:
    """The section digests of what a --file input was made from, as far as they can be known: its
    own marker's (a file made from this checkpoint); ``read`` (a write kept while GitHub was
    unreachable: what it had read); else, for a file with no digests of its own, those of the
    revision it matches best among the last ones ghstate wrote (the checkpoint's and its history's;
    the oldest of equals).
    None when nothing is known: the file's sections are simply what to write."""
    if incoming.meta.id and incoming.meta.id != cp.meta.id:
        return None  # made from another checkpoint
    own = incoming.meta.digests if incoming.meta.id else None
    if own is not None:
        return own
    if read is not None:
        return read
    candidates = [d for d in (cp.meta.digests, *(h.digests for h in cp.meta.digest_history)) if d is not None]
    if not candidates:
        return None
    mine = {key: section_digest(incoming, key) for key in digest_keys(incoming)}
    mine = {key: d for key, d in mine.items() if d}
    # Ties go to the oldest: then what the file and the checkpoint disagree on is merged (nothing lost),
    # where the newest would let a stale file look like the author of every difference.
    best = max(range(len(candidates)), key=lambda i: (sum(candidates[i].get(k, "") == d for k, d in mine.items()), i))
    return candidates[best]


def stamp(cp: Checkpoint, *, revision: int, now: str, branch: str, commit: str, dirty: tuple[str, ...],
          execution: Execution | None, new_id: str = "") -> Checkpoint:
    """Record a new revision: the machine facts of this write and who made it."""
    executions = cp.executions
    if execution is not None:
        executions = (*executions, execution._replace(revision=revision, at=now))[-MAX_EXECUTIONS:]
    digests = section_digests(cp)
    previous = cp.meta.digests
    history = cp.meta.digest_history
    if previous is not None and previous != digests:
        history = (DigestsAt(cp.meta.revision, previous), *history)
    return cp._replace(
        executions=executions,
        meta=cp.meta._replace(
            digests=digests,
            digest_history=history[:HISTORY_DEPTH],
            provenance=provenance.record(cp.meta.provenance, cp, revision, commit=commit or cp.meta.commit, at=now,
                                         execution=execution),
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
    """Equal in everything a person reads, its place in a plan (``meta.task``) and its branch's pull request;
    machine stamps aside."""
    return a._replace(meta=b.meta, executions=b.executions) == b and a.meta.task == b.meta.task \
        and a.meta.pull_request == b.meta.pull_request


# ------------------------------------------------------------------------------------ summary

_NOUNS = {s.key: s.noun for s in SECTIONS if s.noun}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 or noun.endswith("s") else "s")


def _label(phase: Phase) -> str:
    """A phase's label as a person typed it (its markdown escapes undone), for a summary of what changed."""
    return unescape_literal(phase.label)


def describe(old: Checkpoint | None, new: Checkpoint) -> list[str]:
    """What changed, compactly: ``Phase 2 done; +1 decision; resume → Phase 3``."""
    if old is None:
        done = sum(p.done for p in new.phases)
        return [f"created with {_count(len(new.phases), 'phase')} ({done} done)"]
    out: list[str] = []
    if old.title != new.title:
        out.append(f"title → {unescape_literal(new.title)}")
    if old.goal != new.goal:
        out.append("goal changed")
    before = {p.name: p for p in old.phases}
    after_names = {p.name for p in new.phases}
    gone = {bare(p.name): p.name for p in old.phases if p.name not in after_names}
    linked: dict[str, str] = {}  # a phase whose line now links its child task (a split): the same phase
    for phase in new.phases:
        prior = before.get(phase.name)
        was = gone.get(bare(phase.name), "") if prior is None else ""
        if was and linked_child(phase.name) and linked_child(phase.name) != linked_child(was):
            linked[was] = f"{_label(phase)} → #{linked_child(phase.name)}"
            prior = before[was]._replace(name=phase.name)
        if prior is None:
            out.append(f"+phase {_label(phase)}")
        elif prior.done != phase.done:
            out.append(f"{_label(phase)} {'done' if phase.done else 'reopened'}")
        elif prior.steps != phase.steps:
            ticked = sum(bool(s.done) for s in phase.steps) - sum(bool(s.done) for s in prior.steps)
            out.append(f"{_label(phase)}: {ticked:+d} step{'s' if abs(ticked) != 1 else ''} done" if ticked
                       else f"{_label(phase)} steps edited")
    removed = [name for name in before if name not in after_names and name not in linked]
    if removed:
        out.append(f"-{_count(len(removed), 'phase')}")
    if linked:
        out.append(f"phases linked to their child tasks: {', '.join(linked.values())}")
    for key in LIST_SECTIONS:
        a, b = getattr(old, key), getattr(new, key)
        in_a, in_b = set(a), set(b)
        added = sum(x not in in_a for x in b)
        dropped = sum(x not in in_b for x in a)
        noun = _NOUNS[key]
        if added:
            out.append(f"+{_count(added, noun)}")
        if dropped:
            out.append(f"-{_count(dropped, noun)}")
    pr = new.meta.pull_request
    if pr is not None and old.meta.pull_request != pr:
        out.append(f"pull request #{pr.number} {'linked' if pr.state == 'open' else pr.state}")
    if old.resume != new.resume:
        nxt = new.next_phase
        out.append(f"resume → {nxt.label}" if nxt and nxt.label.lower() in new.resume.lower()
                   else "resume instruction changed")
    if old.verification != new.verification or old.verification_data != new.verification_data:
        status = new.verification_data.status if new.verification_data else None
        out.append(f"verification: {status}" if status else "verification changed")
    if old.extra != new.extra:
        out += _sections_changed(old, new) or ["other sections edited"]
    return out


def removed(old: Checkpoint, new: Checkpoint) -> list[str]:
    """What of ``old`` is gone from ``new``, item by item, named (cut short): what a ``--force`` removed."""
    def cut(text: str) -> str:
        text = " ".join(unescape_literal(text).split())
        return repr(text if len(text) <= 60 else text[:59] + "…")

    names = {p.name for p in new.phases}
    out = [f"phase {cut(p.name)}" for p in old.phases if p.name not in names]
    for key in LIST_SECTIONS:
        kept = set(getattr(new, key))
        out += [f"{_NOUNS[key]} {cut(item)}" for item in getattr(old, key) if item not in kept]
    out += [change[1:] for change in _sections_changed(old, new) if change.startswith("-")]
    return out


def lacking(incoming: Checkpoint, cp: Checkpoint, present: frozenset[str]) -> list[str]:
    """What ``cp`` holds in the phases and lists a --file gives (``present``) that the file's lack, item by item,
    named: what a --file write kept of the checkpoint (written after the revision the file was made from)."""
    keys = [key for key in ("phases", *LIST_SECTIONS) if key in present]
    return removed(cp, cp._replace(**{key: getattr(incoming, key) for key in keys})) if keys else []


def _sections_changed(old: Checkpoint, new: Checkpoint) -> list[str]:
    """The unknown sections and the preamble a write added, removed or edited, by name."""
    def sections(cp: Checkpoint) -> dict[str, tuple[str | None, list[Extra]]]:
        return {extra_key(e.heading): (e.heading, standalone_extras(cp, extra_key(e.heading)))
                for e in cp.extra if is_standalone(e)}

    before, after = sections(old), sections(new)
    out = []
    for key in dict.fromkeys([*before, *after]):
        heading = (after.get(key) or before[key])[0]
        name = f"section {heading!r}" if heading is not None else "the preamble"
        if key not in before:
            out.append(f"+{name}")
        elif key not in after:
            out.append(f"-{name}")
        elif before[key][1] != after[key][1]:
            out.append(f"{name} edited")
    return out
