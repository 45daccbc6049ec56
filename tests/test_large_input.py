"""Large input: refused before it is parsed when far over what a checkpoint holds, merged in near-linear
time when it is not. Times are measured in benchmarks/large_input.py; here operations are counted."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import ghstate.services.checkpoint  # noqa: F401 - bound before parse_forbidden patches what it imports
from ghstate.agents import mcp_tools
from ghstate.core.edits import apply_incoming, describe, keep_markup
from ghstate.core.merge import merge_sequence, merge_unknown_base
from ghstate.core.model import GITHUB_LIMIT, Checkpoint, Phase

T = TypeVar("T")


def reference_merge(base: Sequence[T] | None, ours: Sequence[T], theirs: Sequence[T],
                    key: Callable[[T], Hashable]) -> list[T]:
    """The merge as first written (each addition found its place by searching the list): the judge."""
    if base is not None and list(theirs) == list(base):
        return list(ours)
    if base is not None and list(ours) == list(base):
        return list(theirs)

    def keyed(items):
        seen: dict = {}
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
    result = []
    for k, item in theirs_keyed:
        if k in ours_by:
            result.append((k, ours_by[k]))
        elif k in base_by and base_by[k] == item:
            continue
        else:
            result.append((k, item))
    present = {k for k, _ in result}
    for position, (k, item) in enumerate(ours_keyed):
        if k in present or (k in base_by and k not in theirs_by and base_by[k] == item):
            continue
        anchor = next((ours_keyed[j][0] for j in range(position - 1, -1, -1) if ours_keyed[j][0] in present), None)
        index = 0 if anchor is None else next(i for i, (rk, _) in enumerate(result) if rk == anchor) + 1
        result.insert(index, (k, item))
        present.add(k)
    return [item for _, item in result]


items = st.lists(st.sampled_from(["a", "b", "c", "d", "A", "e", "f", "g"]), max_size=12)


@given(st.none() | items, items, items)
@example(None, ["x", "a", "y", "b", "z"], ["b", "a"])
@example(["a", "b", "c"], ["c", "x", "b", "y"], ["a", "b", "z", "c"])
@example(["a", "a", "b"], ["a", "x", "a"], ["b", "a", "y", "a"])
def test_the_merge_places_every_item_where_the_first_merge_did(base, ours, theirs):
    key = str.lower
    assert merge_sequence(base, ours, theirs, key=key) == reference_merge(base, ours, theirs, key=key)


class Counted(str):
    """A text that counts how often it is compared: the merge's cost, without a clock."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        Counted.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def comparisons(run: Callable[[int], object], n: int) -> int:
    Counted.comparisons = 0
    run(n)
    return Counted.comparisons


def two_sides(n: int) -> tuple[Checkpoint, Checkpoint]:
    """A checkpoint of ``n`` decisions and a file that revised every other one and added a tenth more."""
    mine = tuple(Counted(f"decision {i}") for i in range(n))
    file = tuple(Counted(f"decision {i} (revised)" if i % 2 else f"decision {i}") for i in range(n))
    file += tuple(Counted(f"added {i}") for i in range(n // 10))
    phases = tuple(Phase(Counted(f"Phase {i}: p"), i % 2 == 0) for i in range(n // 10))
    return (Checkpoint(decisions=mine, phases=phases, resume="Start."),
            Checkpoint(decisions=file, phases=phases[::-1], resume="Start."))


@pytest.mark.parametrize(("name", "run"), [
    ("merge", lambda n: merge_unknown_base("decisions", *two_sides(n))),
    ("merge order", lambda n: merge_sequence(None, two_sides(n)[1].decisions, two_sides(n)[0].decisions, key=Counted)),
    ("merge phases", lambda n: merge_unknown_base("phases", *two_sides(n))),
    ("markup kept", lambda n: keep_markup(*two_sides(n))),
    ("summary", lambda n: describe(*two_sides(n))),
    ("apply", lambda n: apply_incoming(*two_sides(n), frozenset({"decisions", "phases"}), base={})),
])
def test_merging_a_file_grows_linearly_with_the_checkpoint(name, run):
    """Doubling the items at most doubles the comparisons (a search per item would quadruple them)."""
    small, large = comparisons(run, 400), comparisons(run, 1600)
    assert large <= 4.5 * max(small, 1), f"{name}: {small} comparisons for 400 items, {large} for 1,600"
    assert large <= 10 * 1600, f"{name}: {large} comparisons for 1,600 items"


# ------------------------------------------------------------------------------ far too large: refused


@pytest.fixture
def parse_forbidden(monkeypatch):
    """Parsing or merging anything fails the test: a refused body must not get that far."""
    def forbidden(*args, **kwargs):
        raise AssertionError("parsed or merged a body that should have been refused")

    for target in ("ghstate.services.inputs.parse", "ghstate.services.inputs.load_text",
                   "ghstate.services.checkpoint.load_text", "ghstate.core.edits.apply_incoming"):
        monkeypatch.setattr(target, forbidden)


@pytest.mark.parametrize(("text", "limit"), [
    ("## Goal\n" + "x" * (2 * GITHUB_LIMIT) + "\n\n## Resume instruction\nStart.\n", 2 * GITHUB_LIMIT),
    ('{"goal": "' + "x" * (8 * GITHUB_LIMIT) + '", "resume": "Start."}', 8 * GITHUB_LIMIT),
])
def test_a_file_far_over_the_limit_is_refused_before_it_is_parsed(repo, run, sample_file, parse_forbidden,
                                                                  text, limit):
    huge = repo / "huge.md"
    huge.write_text(text)
    result = run("checkpoint", "--store", "local", "--file", str(huge), code=1)
    error = result.stderr.strip()
    assert error.count("\n") == 0 and error.startswith(f"Error: {huge} is {len(text):,} characters")
    assert f"{GITHUB_LIMIT:,}" in error and f"{limit:,}" in error and "nothing was read or written" in error
    assert not (repo / ".git" / "ghstate").exists()  # nothing written, nothing kept
    result = run("checkpoint", "--store", "local", "--file", "-", input=text, code=1)
    assert result.stderr.startswith(f"Error: standard input is {len(text):,} characters")


def test_a_body_a_little_over_is_read_and_the_write_names_its_largest_sections(repo, run):
    """Under the input bound the body is read and parsed; the store's own bound then refuses it with the
    sections that make it large (a body far over would not have been read at all)."""
    body = "## Goal\n" + "word " * 20_000 + "\n\n## Current status\n- [ ] Phase 1: go\n\n## Resume instruction\nGo.\n"
    (repo / "long.md").write_text(body)
    assert GITHUB_LIMIT < len(body) < 2 * GITHUB_LIMIT
    error = run("checkpoint", "--store", "local", "--file", "long.md", code=1).stderr
    assert "far over" not in error and "Goal (" in error and "the largest sections" in error


def test_an_mcp_body_far_over_the_limit_is_refused_before_it_is_parsed(repo, parse_forbidden):
    from ghstate.services.app import build_app

    huge = "## Goal\n" + "x" * 10_000_000
    answer = mcp_tools.call("checkpoint", {"body": huge}, lambda: build_app(store="local"))
    assert answer.error and answer.text.startswith("Error: the body is 10,000,008 characters, far over")
    assert not (repo / ".git" / "ghstate").exists()
