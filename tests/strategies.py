"""Hypothesis strategies for valid checkpoints: every shape parse can produce, and no other."""

from __future__ import annotations

import os

from hypothesis import assume
from hypothesis import strategies as st

from ghstate.core.marker import (
    PROVENANCE_KINDS,
    PULL_STATES,
    DigestsAt,
    Execution,
    Meta,
    ProvenanceRecord,
    PullRequest,
    RevisionFacts,
    TaskLink,
)
from ghstate.core.markup import blocks, escape_text
from ghstate.core.model import SECTION_KEYS, TEXT_SECTIONS, Checkpoint, Extra, Phase, Step, section_key
from ghstate.core.parse import LINE_SECTIONS, NO_RESPONSE, clean_text
from ghstate.core.verification import Verification

# Markdown's metacharacters, whitespace and newlines are over-represented on purpose.
_META = list("#*-_`~<>![]()|\\:=+.1) \t\n") + ["- ", "* ", "1. ", "```", "~~~", "<!--", "-->", "[ ] ", "[x] ",
                                                "\n\n", "    ", "# ", "## ", "---", "===", "<pre>", "</pre>",
                                                "<div>", "_No response_", "<!-- ghstate:v1 {} -->"]
_CHARS = st.one_of(
    st.sampled_from(_META),
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    st.sampled_from(list("abcxyz XYZ é中🙂")),
)
raw_text = st.lists(_CHARS, max_size=40).map("".join)
_text = lambda s: "" if (s := clean_text(s)) == NO_RESPONSE else s  # noqa: E731
_line = lambda s: " ".join(clean_text(s).split("\n")).strip()  # noqa: E731
text = raw_text.map(_text)
line = raw_text.map(_line)
# A non-empty text is drawn from at least one piece (from none, it could only be empty; filtering those out cost
# a third of the examples and most of the time of a test that draws checkpoints): the same texts, fewer draws.
_pieces = st.lists(_CHARS, min_size=1, max_size=40).map("".join)
nonempty = _pieces.map(_text).filter(bool)
nonempty_line = _pieces.map(_line).filter(bool)
words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "δ", "`code`", "**b**", "a|b", "x.y"]),
                 min_size=1, max_size=6).map(" ".join)
heading = st.lists(st.sampled_from(list("abcdefXYZ0123 .,:()!?&'/é")), min_size=1, max_size=20).map(
    lambda s: " ".join("".join(s).split())).filter(lambda h: bool(h) and section_key(h) is None)


def _no_top_list(body: str) -> bool:
    return not any(b.type in ("bullet_list", "ordered_list") for b in blocks(escape_text(body)))


steps = st.lists(st.builds(Step, nonempty, st.sampled_from([True, False, None])), max_size=4).map(tuple)
detail = st.one_of(st.just(""), words, text.filter(_no_top_list))
phases = st.lists(st.builds(Phase, nonempty_line, st.booleans(), steps, detail), max_size=6).map(tuple)
items = st.lists(nonempty, max_size=6).map(tuple)
executions = st.lists(
    st.builds(Execution, line, line, line, st.integers(0, 99), line, line, line), max_size=3
).map(tuple)
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), line)
hexes = st.text("0123456789abcdef", min_size=6, max_size=8)
digests = st.dictionaries(st.sampled_from(["title", "goal", "phases", "resume", "x:1a2b3c"]), hexes, max_size=3)
provenance = st.builds(
    ProvenanceRecord,
    entries=st.dictionaries(st.sampled_from(PROVENANCE_KINDS), st.dictionaries(hexes, st.integers(0, 99), min_size=1,
                                                                                max_size=2), max_size=2),
    resume=st.one_of(st.none(), st.tuples(hexes, st.integers(0, 99))),
    revisions=st.dictionaries(st.integers(1, 99), st.builds(RevisionFacts, line, line, line, line, line), max_size=2),
    capped=st.frozensets(st.sampled_from(PROVENANCE_KINDS), max_size=2),
)
meta = st.builds(
    Meta,
    revision=st.integers(0, 10_000),
    branch=line,
    commit=st.text("0123456789abcdef", max_size=40),
    dirty=st.lists(nonempty_line, max_size=3).map(tuple),
    created_at=line,
    updated_at=line,
    id=line,
    fingerprints=st.dictionaries(nonempty_line, hexes, max_size=2),
    digests=st.one_of(st.none(), digests),
    digest_history=st.lists(st.builds(DigestsAt, st.integers(0, 99), digests), max_size=2).map(tuple),
    provenance=st.one_of(st.none(), provenance),
    # a child task's link as a split writes it: left to itself, builds() gives parents below 1 and unsorted
    # waits, which no marker holds (the round trips failed, and shrank for minutes)
    task=st.one_of(st.none(), st.builds(TaskLink, st.integers(1, 999), line,
                                        st.lists(st.integers(1, 999), max_size=3, unique=True).map(
                                            lambda found: tuple(sorted(found))), st.one_of(st.just(""), line))),
    pull_request=st.one_of(st.none(), st.builds(PullRequest, st.integers(1, 99_999), line,
                                                st.sampled_from(PULL_STATES))),
    unknown=st.dictionaries(st.sampled_from(["future", "x_key"]), json_scalar, max_size=2),
)


@st.composite
def checkpoints(draw) -> Checkpoint:
    values = {
        "title": draw(line),
        "goal": draw(text),
        "phases": draw(phases),
        "decisions": draw(items),
        "questions": draw(items),
        "risks": draw(items),
        "files": draw(items),
        "runtime": draw(items),
        "resume": draw(text),
        "verification": draw(text),
    }
    extras: list[Extra] = []
    headless = {}
    for anchor in (None, "decisions", "questions", "risks", "phases"):
        if draw(st.integers(0, 4)) == 0:
            if anchor in LINE_SECTIONS:  # a paragraph there is read one item per line: only other blocks stay loose
                body = draw(st.sampled_from(["<!-- a note -->", "> quoted\n> twice", "```\nx = 1\n```"]))
            else:
                body = draw(nonempty)
                assume(_no_top_list(body))
            headless[anchor] = Extra(None, body, 2, anchor)
    rendered = [None] + [k for k in SECTION_KEYS if values[k] or k in headless]
    for anchor in rendered:
        if anchor in headless:
            extras.append(headless[anchor])
        for _ in range(draw(st.integers(0, 2))):
            extras.append(Extra(draw(st.one_of(heading, st.just(""))), draw(text), draw(st.integers(1, 4)), anchor))
    assert all(k not in TEXT_SECTIONS for k in headless if k)
    return Checkpoint(
        **values,
        verification_data=draw(st.one_of(st.none(), st.builds(lambda s, n: Verification(status=s, attempt_count=n),
                                                     st.sampled_from(["passing", "failing", "blocked"]),
                                                     st.integers(0, 9)))),
        extra=tuple(extras),
        executions=draw(executions),
        meta=draw(meta),
    )


# The tier of the suite this run is (tests/conftest.py, CONTRIBUTING.md): quick, thorough or all.
TIER = os.environ.get("GHSTATE_TIER", "quick").strip().lower() or "quick"
if TIER not in ("quick", "thorough", "all"):
    raise SystemExit(f"GHSTATE_TIER={TIER!r}: give quick (the default), thorough or all")
QUICK_SHARE = 4  # the quick tier draws a quarter of a Hypothesis test's examples (its @examples all), thorough all


def examples(n: int) -> int:
    """A test's number of examples: ``n`` in the thorough tier, a share of it in the quick one (at least 10), ``n``
    times GHSTATE_SOAK in a soak run by hand."""
    soak = max(1, int(os.environ.get("GHSTATE_SOAK", "1") or 1))
    if TIER == "quick" and soak == 1:
        return max(10, n // QUICK_SHARE)
    return n * soak


# A JSON settings file as a person may have it (what `init` edits and `init --remove` restores): any keys but the
# two ghstate writes, any values.
_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                   max_size=3), max_leaves=8)
json_settings = st.dictionaries(st.text(max_size=6).filter(lambda k: k not in ("mcpServers", "hooks")), _values,
                                max_size=4)
