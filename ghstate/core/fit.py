"""Fitting the rehydration prompt into a budget of characters by rank, never by cutting text.

What a fresh session needs most stays: the resume instruction, the next phase and its steps, the
verification, what ghstate found contradictory, the locked decisions, then open questions, risks,
comments, files to re-read (changed ones first), runtime checks, and last the names of later and
finished phases (collapsed to a count). Whole items are left out from the lowest rank up, each list
from its end; one closing line names what was left out and how to get it.
"""


import collections
from collections.abc import Callable
from typing import Any, NamedTuple

from ghstate.core.sections import SECTIONS

# Budgets under each host's own limit on what a hook may inject (characters of the context value).
# Claude Code: a SessionStart additionalContext over 10,000 characters is saved to a file and the
# model gets a 2,000-character preview; Codex cuts project instructions at 32 KiB.
HOST_BUDGETS = {"claude-code": 9_000, "codex": 30_000, "gemini-cli": 30_000}
DEFAULT_HOST = "claude-code"


def host_budget(host: str, configured: int = 0) -> int:
    """The budget a hook of ``host`` uses: the configured one when it is smaller than the host's limit."""
    limit = HOST_BUDGETS.get(host, HOST_BUDGETS[DEFAULT_HOST])
    return min(configured, limit) if configured > 0 else limit


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


def fit(render: Callable[[Selection, str, int], str], whole: Selection, budget: int, *, done: int,
        later: int) -> Fitted:
    """The largest selection in rank order whose prompt fits ``budget`` (0: no budget). ``render``
    gets the selection, the words for what is left out, and by how many characters the prompt is over
    the budget when even the least that is always kept does not fit (0 otherwise): the prompt says so."""
    text = render(whole, "", 0)
    if budget <= 0 or len(text) <= budget:
        return Fitted(text, whole, "", False)
    options = drops(whole, done > 0, later > 0)
    cache: dict[int, str] = {}

    def attempt(i: int) -> str:
        if i not in cache:
            cache[i] = render(options[i], left_out(whole, options[i], done, later), 0)
        return cache[i]

    if not options or len(attempt(len(options) - 1)) > budget:  # even the least always kept is over
        least = options[-1] if options else whole  # nothing to leave out: the whole is the least
        words = left_out(whole, least, done, later)
        text = attempt(len(options) - 1) if options else text
        for _ in range(4):  # the sentence names the prompt's length, itself included: to a fixed point
            said = render(least, words, max(1, len(text) - budget))
            if len(said) == len(text):
                break
            text = said
        return Fitted(said, least, words, True)
    lo, hi = 0, len(options) - 1
    while lo < hi:  # fewest drops that fit (the closing line may grow as a list starts losing items)
        mid = (lo + hi) // 2
        if len(attempt(mid)) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return Fitted(attempt(lo), options[lo], left_out(whole, options[lo], done, later), False)
