"""Tasks that split: a checkpoint's phases as child checkpoints, what each waits for, and the checks made
before anything is written (phases that exist, no cycle, GitHub's limits).

A phase line may say what it waits for, ``- [ ] Phase 3: wire config (after Phase 1, Phase 2)``, naming
phases as the CLI does (full name, leading label, 1-based index); once split, it links its child,
``… (#31)``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ghstate.core.claims import Child, MirrorEdit
from ghstate.core.marker import TaskLink
from ghstate.core.markup import unescape_literal
from ghstate.core.model import Checkpoint, Phase, find_phase
from ghstate.errors import InputError

MAX_CHILDREN = 100  # sub-issues of one parent on GitHub, closed ones included
MAX_LINKS = 50  # issues one issue may be blocked by (and may block) on GitHub
_AFTER = re.compile(r"\(\s*after\s+([^()]*?)\s*\)", re.IGNORECASE)
_LINK = re.compile(r"\(#([1-9][0-9]{0,9})\)")


class TaskError(InputError):
    """A split that cannot be made as asked (a phase that is not there, a cycle, a limit)."""


def after_refs(name: str) -> tuple[str, ...]:
    """The phases a phase line waits for: ``(after Phase 2, Phase 4)``."""
    return tuple(ref.strip() for match in _AFTER.finditer(unescape_literal(name))
                 for ref in match.group(1).split(",") if ref.strip())


def linked_child(name: str) -> int | None:
    """The child a phase line links, ``(#31)``; None before it is split."""
    found = _LINK.findall(unescape_literal(name))
    return int(found[-1]) if found else None


def bare(name: str) -> str:
    """A phase line's markdown without what ghstate reads from it (``(after …)``, ``(#31)``)."""
    return " ".join(_LINK.sub("", _AFTER.sub("", name)).split())


def title_of(phase: Phase) -> str:
    """A child's title: its phase as GitHub shows it, without the annotations."""
    return " ".join(unescape_literal(bare(phase.name)).split())


def label_of(phase: Phase) -> str:
    """A phase's leading label (``Phase 2``), its annotations aside: what messages name it by."""
    return Phase(bare(phase.name)).label


def phase_of(phases: tuple[Phase, ...], child: int) -> int | None:
    """The index of the phase whose line links ``child``."""
    return next((i for i, p in enumerate(phases) if linked_child(p.name) == child), None)


def phase_named(phases: tuple[Phase, ...], name: str) -> int | None:
    """The index of the phase a child's marker names (``TaskLink.phase``: the phase's line as it was split,
    without its annotations): that line, or else the one phase with its leading label (a person reworded
    the rest); None when neither is there."""
    if not name.strip():
        return None
    wanted = " ".join(name.split())
    same = [i for i, p in enumerate(phases) if " ".join(bare(p.name).split()) == wanted]
    if len(same) == 1:
        return same[0]
    label = Phase(wanted).label.lower()
    labelled = [i for i, p in enumerate(phases) if label_of(p).lower() == label]
    return labelled[0] if len(labelled) == 1 else None


def child_phase(phases: tuple[Phase, ...], child: Child) -> int | None:
    """The phase ``child`` is: the line that links it, else the one its marker names."""
    linked = phase_of(phases, child.number)
    return linked if linked is not None else phase_named(phases, child.phase)


def followed(phases: tuple[Phase, ...], children: tuple[Child, ...]) -> tuple[Phase, ...]:
    """The phases as their children say they are: a phase whose child is closed (by ``done``, or by a person
    on github.com) is done, whether or not its box was ticked. What a reading shows; the body is unchanged."""
    out = list(phases)
    for child in children:
        index = child_phase(phases, child) if not child.open else None
        if index is not None and not out[index].done:
            out[index] = out[index]._replace(done=True)
    return tuple(out)


class SplitPlan(NamedTuple):
    """What ``split`` does: the phases that become children now (indices), the children there already
    (phase index → number), and the blocked-by links still to make, as (waiting phase, awaited phase)."""

    new: tuple[int, ...]
    children: dict[int, int]
    links: tuple[tuple[int, int], ...]


class Existing(NamedTuple):
    """What the parent has already: its children (phase index → number), the links between them as
    (blocked number, blocking number), how many sub-issues it has (closed ones too), and how many links
    each child has already (number → (blocked by, blocking)), and which are closed."""

    children: dict[int, int] = {}
    links: frozenset[tuple[int, int]] = frozenset()
    count: int = 0
    degrees: dict[int, tuple[int, int]] = {}
    closed: frozenset[int] = frozenset()  # children that are closed: waiting for one is waiting for nothing


def unlisted(phases: tuple[Phase, ...], children: tuple[Child, ...]) -> tuple[int, ...]:
    """The children that phases not done yet link and that are not among ``children`` (a person moved them
    away on github.com): to be looked for elsewhere."""
    here = {c.number for c in children}
    return tuple(n for p in phases if not p.done and (n := linked_child(p.name)) is not None and n not in here)


def existing_children(phases: tuple[Phase, ...], children: tuple[Child, ...]) -> dict[int, int]:
    """Which phase each child made already is (phase index → number): the phase whose line links it, wherever
    the child is now; else the phase its marker names (``TaskLink.phase``: a child knows its phase, however its
    parent's lines or its own title were edited); else, for a child without one, the phase titled as it is."""
    numbers = {c.number for c in children}
    out = {i: n for i, p in enumerate(phases) if (n := linked_child(p.name)) in numbers}
    for child in children:
        index = phase_named(phases, child.phase) if child.number not in out.values() else None
        if index is not None and index not in out:
            out[index] = child.number
    for i, phase in enumerate(phases):
        found = next((c.number for c in children if not c.phase and c.title == title_of(phase)
                      and c.number not in out.values()), None)
        if i not in out and found is not None:
            out[i] = found
    return out


def plan_split(phases: tuple[Phase, ...], existing: Existing, *, chosen: tuple[str, ...] = (),
               in_order: bool = False) -> SplitPlan:
    """The split of ``phases``: every phase not done (or the ``chosen`` ones) that has no child yet
    becomes one; links from ``(after …)`` (or, ``in_order``, each after the one before). Refuses, before
    anything is written, a phase that is not there, a wait for a phase that is neither done nor split, a
    cycle, and GitHub's limits."""
    targets = _targets(phases, chosen)
    new = tuple(i for i in targets if i not in existing.children)
    split = sorted(set(existing.children) | set(new))
    waits = _waits(phases, split, in_order)
    _refuse_cycles(phases, waits)
    numbers = dict(existing.children)
    links = tuple((i, j) for i in split for j in sorted(waits.get(i, ()))
                  if not (i in numbers and j in numbers and (numbers[i], numbers[j]) in existing.links)
                  and numbers.get(j) not in existing.closed)
    _refuse_over_limits(phases, existing, new, links)
    return SplitPlan(new, dict(existing.children), links)


def _targets(phases: tuple[Phase, ...], chosen: tuple[str, ...]) -> list[int]:
    if not chosen:
        return [i for i, p in enumerate(phases) if not p.done]
    out = []
    for ref in chosen:
        try:
            index = find_phase(phases, ref)
        except LookupError as exc:
            raise TaskError(str(exc)) from None
        if phases[index].done:
            raise TaskError(f"{label_of(phases[index])} is done: there is nothing left of it to split")
        out.append(index)
    return sorted(set(out))


def _waits(phases: tuple[Phase, ...], split: list[int], in_order: bool) -> dict[int, set[int]]:
    """What each phase with a child waits for, among the phases with a child (done ones wait for nothing,
    and a wait for a done phase is met)."""
    open_ = [i for i in split if not phases[i].done]
    if in_order:
        return {i: {j} for j, i in zip(open_[:-1], open_[1:], strict=True)}
    waits: dict[int, set[int]] = {}
    for i in open_:
        for ref in after_refs(phases[i].name):
            try:
                j = find_phase(phases, ref)
            except LookupError as exc:
                raise TaskError(f"{label_of(phases[i])} waits for {ref!r}, which names no single phase "
                                f"({exc})") from None
            if phases[j].done:
                continue
            if j not in split:
                raise TaskError(f"{label_of(phases[i])} waits for {label_of(phases[j])}, which is neither done nor "
                                f"split: split it too (--phase {label_of(phases[j])!r}) or tick it")
            waits.setdefault(i, set()).add(j)
    return waits


def _refuse_cycles(phases: tuple[Phase, ...], waits: dict[int, set[int]]) -> None:
    """A phase that waits, through others, for itself can never start: name the circle."""
    state: dict[int, int] = {}  # 1: being looked at, 2: done

    def visit(i: int, path: list[int]) -> None:
        state[i] = 1
        for j in sorted(waits.get(i, ())):
            if state.get(j) == 1:
                circle = path[path.index(j):] + [j] if j in path else [i, j]
                names = " → ".join(label_of(phases[k]) for k in circle)
                raise TaskError(f"the phases wait for each other in a circle ({names}); none of them could start")
            if state.get(j) is None:
                visit(j, [*path, j])
        state[i] = 2

    for start in sorted(waits):
        if state.get(start) is None:
            visit(start, [start])


def _refuse_over_limits(phases: tuple[Phase, ...], existing: Existing, new: tuple[int, ...],
                        links: tuple[tuple[int, int], ...]) -> None:
    if existing.count + len(new) > MAX_CHILDREN:
        raise TaskError(f"the split would give the parent {existing.count + len(new)} sub-issues; GitHub keeps at "
                        f"most {MAX_CHILDREN} per parent (closed ones count): split fewer phases (--phase)")
    for side, word in ((0, "waits for"), (1, "is waited for by")):
        counts: dict[int, int] = {}
        for link in links:
            counts[link[side]] = counts.get(link[side], 0) + 1
        for phase, added in counts.items():
            number = existing.children.get(phase)
            before = existing.degrees.get(number, (0, 0))[side] if number else 0
            if before + added > MAX_LINKS:
                raise TaskError(f"{label_of(phases[phase])} {word} {before + added} issues; GitHub links an issue "
                                f"to at most {MAX_LINKS}")


def creation_order(plan: SplitPlan) -> list[int]:
    """The new children in an order where each comes after the new ones it waits for (there is no cycle)."""
    waits = {i: {j for a, j in plan.links if a == i and j in plan.new} for i in plan.new}
    out: list[int] = []
    while len(out) < len(plan.new):
        out.extend(i for i in plan.new if i not in out and waits[i] <= set(out))
    return out


def in_plan_order(phases: tuple[Phase, ...], children: tuple[Child, ...]) -> tuple[Child, ...]:
    """Children in their parent's order (of their phases, as ``existing_children`` finds them; the others
    after, as they came), each named by its phase."""
    where = {n: i for i, n in existing_children(phases, children).items()}
    named = tuple(c._replace(phase=title_of(phases[where[c.number]]) if c.number in where else c.phase)
                  for c in children)
    return tuple(sorted(named, key=lambda c: where.get(c.number, len(phases))))


# ------------------------------------------------------------------------------ the children


def child_checkpoint(parent: Checkpoint, phase: Phase, parent_label: str) -> Checkpoint:
    """A phase of ``parent`` as a checkpoint of its own: its goal is the phase, its phases the phase's
    steps (or the phase itself), the parent's locked decisions and files to re-read carried along."""
    name = bare(phase.name)
    goal = name + (f"\n\n{phase.detail}" if phase.detail.strip() else "")
    from ghstate.core.state_json import literal_markdown  # only a split needs it: a reading of a family does not

    steps = tuple(Phase(s.text, s.done is True) for s in phase.steps)
    first = next((s for s in steps if not s.done), None)
    start = unescape_literal(first.name) if first else title_of(phase)
    parent_title = parent.title or "the parent task"
    resume = (f"Start with {start}. This is {title_of(phase)}, a part of {parent_label} ({parent_title}); the "
              "parent's locked decisions hold here. When it is finished, run ghstate done with this checkpoint's "
              "number.")
    return Checkpoint(title=title_of(phase), goal=goal, phases=steps or (Phase(name),), decisions=parent.decisions,
                      files=parent.files, resume=literal_markdown("block", resume))


class TaskEdit(NamedTuple):
    """What a write changes of a task's place in a plan: ``link`` sets a child's (its parent and phase);
    ``links`` makes phase lines of a parent link their children; ``after`` adds children this one waits
    for and ``closed`` closes it (the local store, where these live in the child's marker); ``mirror``
    shows or takes away a claim in the child's body."""

    link: TaskLink | None = None
    links: tuple[tuple[str, int], ...] = ()
    after: tuple[int, ...] = ()
    closed: str = ""
    mirror: MirrorEdit | None = None

    def apply(self, cp: Checkpoint, masked: frozenset[str] = frozenset()) -> Checkpoint:
        if self.link is not None:
            cp = cp.with_meta(task=self.link)
        task = cp.meta.task
        if task is not None and (self.after or self.closed):
            task = task._replace(after=tuple(sorted({*task.after, *self.after})), closed=self.closed or task.closed)
            cp = cp.with_meta(task=task)
        if self.links:
            cp = cp._replace(phases=_linked(cp.phases, self.links))
        if self.mirror is not None and "claim" not in masked:
            cp = self.mirror.apply(cp)
        return cp

    def sets(self) -> frozenset[str]:
        return frozenset({"claim"} if self.mirror is not None else ())

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.link is not None:
            data["link"] = self.link.to_data()
        if self.links:
            data["links"] = [[name, number] for name, number in self.links]
        if self.after:
            data["after"] = list(self.after)
        if self.closed:
            data["closed"] = self.closed
        if self.mirror is not None:
            data["mirror"] = self.mirror.to_data()
        return data

    @classmethod
    def from_data(cls, data: Any) -> TaskEdit | None:
        if not isinstance(data, dict):
            return None
        links = data.get("links") if isinstance(data.get("links"), list) else []
        after = data.get("after") if isinstance(data.get("after"), list) else []
        return cls(link=TaskLink.from_data(data.get("link")),
                   links=tuple((str(x[0]), x[1]) for x in links if isinstance(x, list) and len(x) == 2
                               and isinstance(x[1], int) and not isinstance(x[1], bool) and x[1] > 0),
                   after=tuple(n for n in after if isinstance(n, int) and not isinstance(n, bool) and n > 0),
                   closed=str(data.get("closed") or ""), mirror=MirrorEdit.from_data(data.get("mirror")))


def _linked(phases: tuple[Phase, ...], links: tuple[tuple[str, int], ...]) -> tuple[Phase, ...]:
    out = list(phases)
    for name, number in links:
        try:
            index = find_phase(tuple(out), name)
        except LookupError:
            continue  # the phase is gone (a replay after a person removed it): nothing to link
        if linked_child(out[index].name) != number:
            out[index] = out[index]._replace(name=f"{out[index].name} (#{number})")
    return tuple(out)
