"""Bodies people write or edit: parsing keeps every word, and one render reaches a fixpoint."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from bodies import render_body
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.core.model import SECTIONS
from ghstate.core.parse import parse

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "issue-bodies"

_LIST_MARK = re.compile(r"^[ \t>]*(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)", re.MULTILINE)
_CHECK = re.compile(r"\[[ xX]\]")
_MARKER = re.compile(r"<!--\s*ghstate:v1.*?-->", re.DOTALL)
_WORD = re.compile(r"[^\W_]+")
_KNOWN_HEADINGS = {" ".join(re.sub(r"[*_`#:=\-]", " ", h).lower().split())
                   for _, heading, aliases in SECTIONS for h in (heading, *aliases)}


def words(body: str) -> Counter:
    """Words a person wrote: no list markers, checkboxes, marker data or known-section headings."""
    body = _MARKER.sub(" ", body.replace("\r\n", "\n"))
    kept = []
    lines = body.split("\n")
    for i, line in enumerate(lines):
        heading = re.sub(r"[*_`#:=\-]", " ", line).strip().lower()
        setext = i + 1 < len(lines) and re.fullmatch(r" {0,3}(=+|-+)\s*", lines[i + 1])
        if (line.lstrip().startswith("#") or setext) and " ".join(heading.split()) in _KNOWN_HEADINGS:
            continue
        kept.append(line)
    text = _CHECK.sub(" ", _LIST_MARK.sub(" ", "\n".join(kept))).replace("_No response_", " ")
    return Counter(_WORD.findall(text))


def assert_keeps_words(body: str) -> str:
    cp = parse(body).checkpoint
    out = render_body(cp)
    # A leading "# Title" of a hand-written body becomes the title (the title on GitHub).
    lost = words(body) - words(out) - Counter(_WORD.findall(cp.title))
    assert not lost, f"words lost: {dict(lost)}\n--- body ---\n{body}\n--- rendered ---\n{out}"
    again = render_body(parse(out).checkpoint)
    assert again == out, f"not a fixpoint\n--- first ---\n{out}\n--- second ---\n{again}"
    return out


# -------------------------------------------------------------------------------- strategies

_alias = st.sampled_from([name for _, heading, aliases in SECTIONS for name in (heading, *aliases)])
_word = st.sampled_from(["alpha", "beta", "gamma", "délta", "中文", "x1", "`code span`", "**bold**", "a|b",
                         "[link](src/a.py)", "*em*", "<b>", "v2.0", "#12", "foo_bar", "\\*"])
_sentence = st.lists(_word, min_size=1, max_size=6).map(" ".join)


@st.composite
def _heading(draw) -> str:
    text = draw(st.one_of(_alias, _sentence.map(lambda s: "Notes " + s)))
    text = draw(st.sampled_from([text, text.upper(), text.lower(), text + ":"]))
    level = draw(st.integers(1, 4))
    if level <= 2 and draw(st.booleans()):
        return f"{text}\n{'=' if level == 1 else '-'}{'=' * 3 if level == 1 else '-' * 3}"
    return f"{'#' * level} {text}"


@st.composite
def _list(draw, depth: int = 0) -> str:
    marker = draw(st.sampled_from(["-", "*", "+", "1.", "2)"]))
    pad = " " * (depth * draw(st.sampled_from([2, 3, 4])))
    out = []
    for _ in range(draw(st.integers(1, 4))):
        box = draw(st.sampled_from(["", "[ ] ", "[x] ", "[X] "]))
        out.append(f"{pad}{marker} {box}{draw(_sentence)}")
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            inner = draw(_list(depth + 1))
            out.append("\n".join(pad + "  " + line if line else "" for line in inner.split("\n")))
    return "\n".join(out)


_block = st.one_of(
    _sentence,
    _list(),
    st.just("_No response_"),
    _sentence.map(lambda s: f"<!-- {s} -->"),
    _sentence.map(lambda s: f"```\n{s}\n# not a heading\n```"),
    _sentence.map(lambda s: f"> {s}"),
    _sentence.map(lambda s: f"| a | b |\n|---|---|\n| {s} | x |"),
    _sentence.map(lambda s: f"<details><summary>{s}</summary>\n\n{s}\n\n</details>"),
)


@st.composite
def human_bodies(draw) -> str:
    parts = []
    if draw(st.booleans()):
        parts.append('<!-- ghstate:v1 {"revision": 2, "branch": "main"} -->')
    if draw(st.integers(0, 3)) == 0:
        parts.append(f"# {draw(_sentence)}")
    for _ in range(draw(st.integers(0, 7))):
        parts.append(draw(_heading()))
        for _ in range(draw(st.integers(0, 3))):
            parts.append(draw(_block))
    body = draw(st.sampled_from(["\n", "\n\n"])).join(parts)
    return body.replace("\n", "\r\n") if draw(st.booleans()) else body


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(human_bodies())
def test_render_of_parse_keeps_every_word(body):
    assert_keeps_words(body)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.md")) if CORPUS.is_dir() else [], ids=lambda p: p.name)
def test_corpus_bodies_keep_every_word(path):
    body = path.read_bytes().decode("utf-8")
    assert_keeps_words(body)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
def test_corpus_is_read():
    assert len(list(CORPUS.glob("*.md"))) >= 5
