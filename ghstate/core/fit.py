"""Fitting the rehydration prompt into a budget (a host's limit, or characters) by rank, never by cutting text.

What a fresh session needs most stays: the resume instruction, the next phase and its steps, the
verification, what ghstate found contradictory, the locked decisions, then open questions, risks,
comments, files to re-read (changed ones first), runtime checks, and last the names of later and
finished phases (collapsed to a count). Whole items are left out from the lowest rank up, each list
from its end; one closing line names what was left out and how to get it.
"""


import collections
from collections.abc import Callable
from typing import Any, NamedTuple

from ghstate.core import limits
from ghstate.core.sections import SECTIONS


class Budget(NamedTuple):
    """What a prompt must fit: ``size`` in ``unit``, as ``count`` measures a text (0: no budget). The hooks' are
    their host's limits (``limits.HOSTS``); ``resume``'s, the configured characters."""

    size: int
    unit: str = "characters"
    count: Callable[[str], int] = len


NO_BUDGET = Budget(0)
DEFAULT_HOST = limits.DEFAULT_HOST


def budget_of(budget: "int | Budget") -> Budget:
    return budget if isinstance(budget, Budget) else Budget(budget)


def within(limit: limits.Limit, configured: int = 0) -> Budget:
    """A host's ``limit``, and the configured ``prompt_budget`` (characters; 0: none) when that is tighter, as one
    budget in characters: a text fits when it is under both (the host's count is scaled to the characters)."""
    if configured <= 0 or configured >= limit.size * (4 if limit.unit == "tokens" else 1):
        return Budget(limit.size, limit.unit, limit.count)
    if limit.unit == "characters":  # a UTF-16 unit is at most a character: its count holds both
        return Budget(configured, "characters", limit.count)
    size, count = limit.size, limit.count
    return Budget(configured, "characters", lambda text: max(len(text), -(-count(text) * configured // size)))


def host_budget(host: str, configured: int = 0) -> Budget:
    """What a hook of ``host`` fits its prompt into: the host's limit, and the configured one when tighter."""
    known = limits.of(host) or limits.HOSTS[DEFAULT_HOST]
    return within(known.hook, configured)


def mcp_budget(agent: str, configured: int = 0) -> Budget:
    """What the MCP server's answer to ``agent``'s host fits into (the configured characters alone for a host
    whose limit ghstate does not know)."""
    known = limits.of(agent)
    return within(known.mcp, configured) if known is not None else Budget(configured)


# What the closing line counts, in the table's ``fit`` order; the comments (``notes``) are no section of
# the checkpoint, and are counted after the risks.
_NOTES = (4, "notes", ("comment", "comments"))
LABELS = tuple((key, *shown) for _, key, shown in sorted([*((s.fit, s.key, s.shown) for s in SECTIONS if s.fit),
                                                           _NOTES]))


# What of the checkpoint the prompt shows: whether phase names are listed, and the count kept of each list in
# LABELS (a prefix of it); with the files, how many of the kept ones are changed ones (they come first: the
# files are a prefix in display order, changed first). A namedtuple built from LABELS, so a new list is a field.
_COUNTED = tuple(name for key, _, _ in LABELS for name in ((key, "files_changed") if key == "files" else (key,)))
_SelectionFields = collections.namedtuple("_SelectionFields", ["done_names", "later_names", *_COUNTED],
                                          defaults=[True, True, *(0 for _ in _COUNTED)])


class Selection(_SelectionFields):
    __slots__ = ()
    done_names: bool
    later_names: bool
    files: int
    files_changed: int
    runtime: int
    notes: int


def full(counts: dict[str, int], changed_files: int) -> Selection:
    return Selection(True, True, files_changed=changed_files, **{key: counts[key] for key, _, _ in LABELS})


def drops(sel: Selection, has_done: bool, has_later: bool) -> list[Selection]:
    """Every smaller selection in the order they are tried: one whole item (or one collapse) each."""
    out = []
    current = sel

    def step(**changes: Any) -> None:
        nonlocal current
        current = current._replace(**changes)
        out.append(current)

    if has_done and current.done_names:
        step(done_names=False)
    if has_later and current.later_names:
        step(later_names=False)
    while current.runtime:
        step(runtime=current.runtime - 1)
    while current.files > current.files_changed:  # unchanged files first, from the end
        step(files=current.files - 1)
    while current.files:
        step(files=current.files - 1, files_changed=current.files - 1)
    # The other counts lose one item at a time from the end, the last counted first (files and runtime have
    # their own order above: the runtime's checks first, then unchanged files before changed ones).
    for key in [key for key, _, _ in reversed(LABELS) if key not in ("files", "runtime")]:
        while getattr(current, key):
            step(**{key: getattr(current, key) - 1})
    return out


def left_out(whole: Selection, kept: Selection, done: int, later: int) -> str:
    """``3 of 40 locked decisions, all 25 risks, the names of 12 finished phases`` ("" when nothing)."""
    parts = []
    for key, one, many in LABELS:
        total, shown = getattr(whole, key), getattr(kept, key)
        if shown < total:
            missing = total - shown
            noun = one if missing == 1 else many
            parts.append(f"all {total} {many}" if shown == 0 and total > 1 else
                         f"{missing} of {total} {many if total != 1 else one}" if shown else f"the {noun}")
    if later and not kept.later_names:
        parts.append(f"the names of {later} later phase{'s' if later != 1 else ''}")
    if done and not kept.done_names:
        parts.append(f"the names of {done} finished phase{'s' if done != 1 else ''}")
    return ", ".join(parts)


class Fitted(NamedTuple):
    text: str
    selection: Selection
    left_out: str
    over: bool  # even the least that is always kept is over the budget


def fit(render: Callable[[Selection, str, int], str], whole: Selection, budget: "int | Budget", *, done: int,
        later: int) -> Fitted:
    """The largest selection in rank order whose prompt fits ``budget`` (0: no budget), as its count measures.
    ``render`` gets the selection, the words for what is left out, and by how much (in the budget's unit) the prompt
    is over the budget when even the least that is always kept does not fit (0 otherwise): the prompt says so."""
    budget = budget_of(budget)
    size, count = budget.size, budget.count
    text = render(whole, "", 0)
    if size <= 0 or count(text) <= size:
        return Fitted(text, whole, "", False)
    options = drops(whole, done > 0, later > 0)
    cache: dict[int, str] = {}

    def attempt(i: int) -> str:
        if i not in cache:
            cache[i] = render(options[i], left_out(whole, options[i], done, later), 0)
        return cache[i]

    if not options or count(attempt(len(options) - 1)) > size:  # even the least always kept is over
        least = options[-1] if options else whole  # nothing to leave out: the whole is the least
        words = left_out(whole, least, done, later)
        text = attempt(len(options) - 1) if options else text
        for _ in range(4):  # the sentence names the prompt's length, itself included: to a fixed point
            said = render(least, words, max(1, count(text) - size))
            if count(said) == count(text):
                break
            text = said
        return Fitted(said, least, words, True)
    lo, hi = 0, len(options) - 1
    while lo < hi:  # fewest drops that fit (the closing line may grow as a list starts losing items)
        mid = (lo + hi) // 2
        if count(attempt(mid)) <= size:
            hi = mid
        else:
            lo = mid + 1
    return Fitted(attempt(lo), options[lo], left_out(whole, options[lo], done, later), False)
