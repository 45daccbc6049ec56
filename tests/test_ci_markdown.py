"""What GitHub shows of CI's text: judged by GitHub's own renderer (cmark-gfm with its extensions),
never by ghstate's code. Test names and messages are machine text and must show exactly."""

from __future__ import annotations

import re
from html import unescape

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.ci.ledger import CaseResult
from ghstate.ci.verdict import Run, next_verification
from ghstate.core.markup import code_span
from ghstate.core.verification import code_list, escape_inline
from ghstate.templating import environment

cmarkgfm = pytest.importorskip("cmarkgfm")


def html_of(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


def visible(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html)).strip()


machine_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=60)


@settings(max_examples=examples(300), deadline=None)
@given(machine_text)
@example("assert <Foo a=1> == *bar*")
@example("``` ` ``")
@example(" ` ")
@example("   ")
@example("rename __init__ | <b>x</b> &amp; ~~y~~ [z](http://e.com) \\*")
def test_a_code_span_shows_exactly_the_text(text):
    assert visible(html_of(f"Name: {code_span(text)}")) == f"Name: {text}".strip()


@settings(max_examples=examples(300), deadline=None)
@given(machine_text)
@example("assert <Foo a=1> == *bar*")
@example("Fix tests/x.py::test_<T> first; its failure says: `a` != __b__ & [c]: <!-- d -->")
def test_escaped_text_shows_as_written(text):
    assert visible(html_of(f"Focus: {escape_inline(text)}")) == f"Focus: {' '.join(text.split())}".strip()


def section(*runs: tuple[str, str, dict[str, str]]) -> str:
    v = None
    for result, commit, tests in runs:
        cases = tuple(CaseResult(n, o, f"assert <{n}> == *bar*") for n, o in tests.items())
        v = next_verification(v, Run(result, commit=commit, branch="feature/<x>", run_id="9",
                                     run_url="https://github.com/o/r/actions/runs/9", at="t", tests=cases))
    assert v is not None
    return environment().get_template("verification.md.j2").render(
        v=v.to_dict(), code=code_span, codes=code_list, text=escape_inline)


def paragraphs(html: str) -> list[str]:
    return [visible(p) for p in re.findall(r"<p>(.*?)</p>", html, re.DOTALL)]


def test_every_line_after_the_list_is_its_own_paragraph():
    green, red = "a" * 40, "b" * 40
    html = html_of(section(("success", green, {"x": "passed", "y": "passed"}),
                           ("failure", red, {"x": "failed", "y": "passed", "z": "flaky"})))
    items = [visible(li) for li in re.findall(r"<li>(.*?)</li>", html, re.DOTALL)]
    # z failed in this failing run, and passed when re-run: it is listed, as flaky, not beside the list
    assert items == ["new: x: assert <x> == *bar*", "flaky: z: assert <z> == *bar*"]
    assert not [p for p in paragraphs(html) if p.startswith("Flaky")]
    assert paragraphs(html)[-1] == "Attempts: 2; failures in a row: 1 (blocked at 3)"
    html = html_of(section(("success", green, {"x": "passed"}), ("failure", red, {"x": "failed"}),
                           ("success", "c" * 40, {"x": "passed"})))
    assert paragraphs(html)[-2:] == ["Fixed: x", "Attempts: 3; failures in a row: 0 (blocked at 3)"]
    assert paragraphs(html)[0].startswith("passing on feature/<x> at ccccccc (run 9)")
    html = html_of(section(("success", green, {"x": "passed", "z": "flaky"})))  # a green run lists no failure
    assert "Flaky (failed, then passed on a re-run): z" in paragraphs(html) and "<li>" not in html
