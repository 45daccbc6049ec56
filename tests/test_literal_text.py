"""Text from flags and JSON states is literal: GitHub shows what was typed; a person's markup stays theirs.

The visible text is judged by GitHub's renderer (tests/judges.py), never by ghstate's own unescape.
"""

from __future__ import annotations

import json
import os

import pytest
from bodies import render_body
from hypothesis import example, given, settings
from hypothesis import strategies as st
from judges import github_html, same_text, visible
from strategies import examples

from ghstate.core.markup import escape_literal, unescape_literal
from ghstate.core.parse import clean_text, parse
from ghstate.core.state_json import from_json, to_json

# What the issue saw lost or changed on GitHub, and the other places where markdown reads text as markup.
TRICKY = [
    "Phase 4: support <T> generics",
    "<Foo a=1> and <b>bold?</b>",
    "# not a heading",
    "## nor this",
    "1. not a numbered list",
    "2) nor this",
    "- not a nested list",
    "+ nor this",
    "* nor this",
    "> not a quote",
    "rename __init__ and _private_",
    "**not bold** and *not italic* and ~~not struck~~",
    "a | b | c",
    "[not a link](https://example.com) and ![nor an image](x.png)",
    "[ref]: https://example.com",
    "&amp; &lt; &#35; stay as typed",
    "ends with a backslash \\",
    "C:\\path\\to\\*",
    "`code stays code` and `a|b` too",
    "<!-- not a comment -->",
    "<https://example.com>",
    "see https://example.com/a_b_ and www.example.com/*x*",
    "---",
    "***",
    "===",
    "```python",
    "~~~",
    "    four spaces in front",
    "\ttab in front",
    "[x] not a checkbox",
    "[ ] nor this",
    "a\n- second line is not a list\n# nor a heading\n    nor code",
    "first\n\nsecond paragraph",
    "x\n---",
    "x\n:-",
    "a_b_c snake_case stays",
    "Notes #",
    "\\# a backslash first",
    "trailing spaces  \nnext",
]


def _sections(shown: str) -> list[str]:
    """Visible text cut at the section headings: [heading, text, heading, text, …]."""
    import re

    headings = "Goal|Current status|Decisions locked|Resume instruction"
    return [part.strip("\n") for part in re.split(rf"(?:^|\n\n)({headings})\n\n", shown) if part]


@pytest.mark.parametrize("text", TRICKY)
def test_escape_is_inverted_exactly(text):
    assert unescape_literal(escape_literal(text)) == text


@pytest.mark.parametrize("text", TRICKY)
def test_github_shows_a_flag_value_as_typed(repo, run, text):
    run("checkpoint", "--phase", "Phase 1: x", "--decision", text, "--resume", text, "--goal", text)
    body = (repo / ".git" / "ghstate" / "1.md").read_text()
    html = github_html(body)
    shown = visible(html)
    # Goal, the decision and the resume instruction each show the text (with the outer blank space a
    # section or an item drops), and nothing became markup.
    parts = _sections(shown)
    sections = dict(zip(parts[::2], parts[1::2], strict=True))
    assert sections["Goal"] == same_text(clean_text(text, block=True)), body
    assert sections["Resume instruction"] == same_text(clean_text(text, block=True)), body
    assert sections["Decisions locked"] == same_text(clean_text(text)), body
    assert [h for h in ("<h2>Goal</h2>", "<h2>Decisions locked</h2>", "<h2>Resume instruction</h2>") if h in html] \
        == ["<h2>Goal</h2>", "<h2>Decisions locked</h2>", "<h2>Resume instruction</h2>"]
    assert html.count("<h2>") == 4 and "<h1>" not in html and "<h3>" not in html
    cp = parse(body).checkpoint
    assert [unescape_literal(d) for d in cp.decisions] == [" ".join([text.strip()]) if "\n" not in text
                                                           else text.strip()]


def test_json_state_is_literal_and_shown_as_typed(repo, run, tmp_path):
    state = {"goal": "support <T> in __init__", "phases": [{"name": "Phase 1: # one *a*", "steps": [
        {"name": "- [x] not a box", "done": None}]}], "decisions": ["1. first", "<b>x</b>"],
        "resume": "> start"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(state))
    run("checkpoint", "--file", str(path))
    body = (repo / ".git" / "ghstate" / "1.md").read_text()
    shown = visible(github_html(body))
    for text in ("support <T> in __init__", "Phase 1: # one *a*", "- [x] not a box", "1. first", "<b>x</b>",
                 "> start"):
        assert text in shown
    out = json.loads(run("show", "1", "--json").stdout)
    assert out["goal"] == state["goal"] and out["decisions"] == state["decisions"]
    assert out["phases"][0]["name"] == state["phases"][0]["name"]
    assert out["phases"][0]["steps"][0]["name"] == "- [x] not a box"
    assert out["markdown"] == {}  # nothing a person wrote with markup


def test_jq_edit_keeps_a_persons_markup_byte_for_byte(repo, run, tmp_path):
    """`show --json | jq '.goal = "x"' | checkpoint --file -` changes the goal and nothing else."""
    written = ("## Goal\nold goal\n\n## Current status\n- [ ] Phase 1: **bold** [plan](docs/plan.md)\n\n"
               "## Decisions locked\n- keep `a|b` and **this**\n- see <https://example.com>\n\n"
               "## Resume instruction\nStart with *Phase 1*.\n")
    path = tmp_path / "cp.md"
    path.write_text(written)
    run("checkpoint", "--file", str(path))
    before = (repo / ".git" / "ghstate" / "1.md").read_text()
    data = json.loads(run("show", "1", "--json").stdout)
    assert data["decisions"][0] == "keep `a|b` and **this**"  # as written: no escapes to strip
    data["goal"] = "new goal with <T> and **stars**"
    run("checkpoint", "1", "--file", "-", input=json.dumps(data))
    after = (repo / ".git" / "ghstate" / "1.md").read_text()
    assert "- [ ] Phase 1: **bold** [plan](docs/plan.md)\n" in after
    assert "- keep `a|b` and **this**\n- see <https://example.com>\n" in after
    assert "Start with *Phase 1*.\n" in after
    assert "new goal with \\<T> and \\*\\*stars\\*\\*" in after
    assert "new goal with <T> and **stars**" in visible(github_html(after))
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert changed[1:] == ["new goal with \\<T> and \\*\\*stars\\*\\*"]


def test_json_items_moved_or_removed_keep_their_markup(repo, run, tmp_path):
    path = tmp_path / "cp.md"
    path.write_text("## Current status\n- [ ] P1\n\n## Decisions locked\n- **one**\n- two\n- [three](x)\n\n"
                    "## Resume instruction\nGo.\n")
    run("checkpoint", "--file", str(path))
    data = json.loads(run("show", "1", "--json").stdout)
    data["decisions"] = [data["decisions"][2], data["decisions"][0], "*four*"]
    run("checkpoint", "1", "--file", "-", input=json.dumps(data))
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert cp.decisions == ("[three](x)", "**one**", "\\*four\\*")


def test_literal_json_state_round_trips_through_render_and_parse(run, tmp_path):
    """parse(render(x)) == x for a JSON state of literal text (the contract), through the commands."""
    state = {"goal": "a <T> goal\n\n# with a hash line", "phases": [{"name": "Phase 1: `x` | *y*", "done": True,
             "steps": [{"name": "step __a__", "done": False}]}], "decisions": ["[x] d", "& &amp;"],
             "questions": ["q?"], "risks": ["- r"], "resume": "1. go"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(state))
    body = run("render", str(path)).stdout
    back = json.loads(run("parse", "-", input=body).stdout)
    for key in ("goal", "decisions", "questions", "risks", "resume"):
        assert back[key] == state[key]
    assert back["phases"][0]["name"] == state["phases"][0]["name"]
    assert back["phases"][0]["steps"][0]["name"] == "step __a__"
    assert back["markdown"] == {}


def test_phase_flags_match_the_name_as_shown(repo, run):
    run("checkpoint", "--phase", "Phase 1: support <T>", "--phase", "Phase 2: b")
    run("checkpoint", "--done", "Phase 1: support <T>")
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert [p.done for p in cp.phases] == [True, False]
    run("checkpoint", "--phase", "Phase 1: support <T>")  # already there: not added twice
    run("checkpoint", "--decision", "use <T>", "--decision", "use <T>")
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert len(cp.phases) == 2 and cp.decisions == ("use \\<T>",)


def test_read_paths_with_backticks_stay_one_code_span(repo, run):
    run("checkpoint", "--phase", "P", "--files", "src/a`b`.py", "--files", "src/plain.py")
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert cp.files == ("``src/a`b`.py``", "`src/plain.py`")
    html = github_html((repo / ".git" / "ghstate" / "1.md").read_text())
    assert "<code>src/a`b`.py</code>" in html and "<code>src/plain.py</code>" in html


# ---------------------------------------------------------------------------- control characters


@pytest.mark.parametrize("flag", ["--decision", "--question", "--risk", "--phase", "--resume", "--goal",
                                  "--title", "--files"])
@pytest.mark.parametrize("char", ["\x1b", "\x07", "\x9b", "\x0c", "\r"])
def test_control_characters_in_flags_are_refused(repo, run, flag, char):
    result = run("checkpoint", flag, f"ok{char}[2J", code=2)
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: ") and flag in lines[-1]
    assert f"U+{ord(char):04X} at line 1, column 3" in lines[-1]
    assert not (repo / ".git" / "ghstate" / "1.md").exists()


def test_bytes_that_are_not_utf8_in_a_flag_a_file_or_json_are_refused_naming_them(repo, run, tmp_path):
    """Found by a newcomer: a Latin-1 terminal's "été" (Python reads the bytes as U+DCE9), or a JSON state's
    lone \\ud800, crashed as an internal error when the section's digest encoded it; now each is refused
    where it is given, naming the byte or the surrogate, and nothing is written. Then a real process's argv."""
    import subprocess
    import sys

    result = run("checkpoint", "--goal", "\udce9t\udce9", code=2)
    assert result.stderr.splitlines()[-1] == ("Error: Invalid value for --goal: holds a byte that is not UTF-8 (0xE9 "
                                              "at line 1, column 1): give the text in UTF-8")
    (tmp_path / "sur.json").write_text('{"goal": "x\\ud800y", "resume": "r"}')
    for args in (("checkpoint", "--file", str(tmp_path / "sur.json")), ("render", str(tmp_path / "sur.json"))):
        said = run(*args, code=1).stderr
        assert said.endswith("invalid state: goal: holds a lone surrogate (U+D800 at line 1, column 2), which is no "
                             "character: remove it\n"), said
    assert not (repo / ".git" / "ghstate" / "1.md").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    real = subprocess.run([sys.executable, "-m", "ghstate", "checkpoint", "--store", "local", "--decision",
                           b"bad \xff byte"], cwd=repo, env=env, capture_output=True)
    assert real.returncode == 2 and real.stderr.decode().splitlines()[-1].endswith(
        "holds a byte that is not UTF-8 (0xFF at line 1, column 5): give the text in UTF-8")
    assert not (repo / ".git" / "ghstate" / "1.md").exists()


def test_crlf_in_a_flag_is_a_newline(repo, run):
    run("checkpoint", "--phase", "P", "--goal", "one\r\ntwo")
    assert parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint.goal == "one\ntwo"


@pytest.mark.parametrize(("state", "field"), [
    ({"decisions": ["a", "b", "c\u001b]0;title\u0007"]}, "decisions[2]"),
    ({"goal": "ok\n\u009b2J"}, "goal"),
    ({"phases": [{"name": "P", "steps": [{"name": "x\u0008"}]}]}, "phases[0].steps[0].name"),
    ({"extra": [{"heading": "H", "body": "\u007f"}]}, "extra[0].body"),
    ({"meta": {"branch": "a\rb"}}, "meta.branch"),
])
@pytest.mark.parametrize("via", ["file", "stdin", "render"])
def test_control_characters_in_json_name_the_field(repo, run, tmp_path, state, field, via):
    text = json.dumps(state)
    path = tmp_path / "s.json"
    path.write_text(text)
    if via == "file":
        result = run("checkpoint", "--file", str(path), code=1)
    elif via == "stdin":
        result = run("checkpoint", "--file", "-", input=text, code=1)
    else:
        result = run("render", str(path), code=1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert f"{field}: holds a control character (U+" in lines[0]
    assert "Traceback" not in result.stderr


def test_raw_c1_control_in_a_json_file_names_the_field(run, tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"risks": ["fine", "bad \u0085 here"]}', encoding="utf-8")
    result = run("render", str(path), code=1)
    assert "risks[1]: holds a control character (U+0085 at line 1, column 5)" in result.stderr


@pytest.mark.parametrize("char", ["\x1b", "\x9b", "\x0b", "\r"])
@pytest.mark.parametrize("command", [("checkpoint", "--file"), ("parse",), ("lint",)])
def test_control_characters_in_markdown_files_are_refused(repo, run, tmp_path, char, command):
    path = tmp_path / "cp.md"
    path.write_text(f"## Goal\ngoal\n\n## Resume instruction\nGo{char} now\n", newline="")
    result = run(*command, str(path), code=1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path} holds a control character")
    assert f"U+{ord(char):04X} at line 5, column 3" in lines[0]


def test_crlf_bodies_are_still_accepted(repo, run, tmp_path):
    path = tmp_path / "cp.md"
    path.write_bytes(b"## Goal\r\ngoal\r\n\r\n## Current status\r\n- [X] P1\r\n\r\n## Resume instruction\r\nGo\r\n")
    run("checkpoint", "--file", str(path))
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert cp.goal == "goal" and cp.phases[0].done and cp.resume == "Go"


# ---------------------------------------------------------------------------------- properties

_ALPHABET = st.one_of(
    st.sampled_from(list("#*-_`~<>![]()|\\:=+.1&;/ \t\n") + ["<T>", "<b>", "</b>", "<!--", "-->", "&amp;", "&#35;",
                                                             "__init__", "**", "- ", "1. ", "> ", "```", "~~~",
                                                             "[x] ", "http://a.b/", "www.a.b", "    ", "a@b.co"]),
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
)
literal = st.lists(_ALPHABET, max_size=30).map("".join)


@settings(max_examples=examples(100), deadline=None)
@given(literal)
@example("a\n\\")
@example("`")
@example("\\`a`")
@example("#\\ ")  # found by Hypothesis: a backslash before a trailing blank, which becomes &#32;
def test_unescape_inverts_escape_for_every_text(text):
    assert unescape_literal(escape_literal(text)) == text


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(literal, min_size=1, max_size=4))
def test_json_state_of_any_literal_text_round_trips(items):
    name = items[-1] if items[-1].split() else "P"
    state = {"decisions": items, "goal": items[0], "phases": [{"name": name, "steps": items[:2]}]}
    cp = from_json(state)
    again = to_json(parse(render_body(cp)).checkpoint)
    assert from_json(again) == cp
    assert again["markdown"] == {}


def test_a_state_rebuilt_without_its_markdown_key_keeps_a_persons_markup(repo, run, tmp_path):
    """A script that keeps only some keys: items that still show the same keep their markup."""
    path = tmp_path / "cp.md"
    path.write_text("## Goal\nSee **the plan**.\n\n## Current status\n- [ ] Phase 1: [link](x)\n  - [ ] *step*\n\n"
                    "## Decisions locked\n- **one**\n- two\n\n## Resume instruction\nGo.\n")
    run("checkpoint", "--file", str(path))
    data = json.loads(run("show", "1", "--json").stdout)
    rebuilt = {"goal": data["goal"], "phases": data["phases"], "decisions": [*data["decisions"], "**three**"],
               "resume": "Go on."}
    run("checkpoint", "1", "--file", "-", input=json.dumps(rebuilt))
    body = (repo / ".git" / "ghstate" / "1.md").read_text()
    assert "See **the plan**.\n" in body and "- [ ] Phase 1: [link](x)\n  - [ ] *step*\n" in body
    assert "- **one**\n- two\n- \\*\\*three\\*\\*\n" in body and "Go on." in body


@settings(max_examples=examples(100), deadline=None)
@given(literal)
def test_escaped_text_is_left_alone_by_the_structural_escapes(text):
    """What escape_literal writes never starts a line the section and item escapes guard, so they never
    add a backslash that GitHub would show."""
    from ghstate.core.markup import escape_item, escape_text

    markdown = escape_literal(text)
    assert escape_text(markdown) == markdown
    assert escape_item(markdown) == markdown and escape_item(markdown, plain_step=True) == markdown


@pytest.mark.parametrize("text", ["dev server: http://127.0.0.1:3000/health", "see www.example.com",
                                  "https://example.com/a_b?c=d#e"])
def test_links_that_need_no_escape_stay_links(text):
    assert escape_literal(text) == text
    assert "<a href=" in github_html(text)


@pytest.mark.parametrize("flag", ["--goal", "--resume", "--title"])
def test_an_empty_goal_resume_or_title_is_refused_not_written(repo, run, flag):
    """Found by a newcomer: ``--goal ""`` beside another change emptied the goal (``--decision ""`` was refused,
    ``--goal ""`` alone said nothing to write). An empty value is refused, whatever else is given."""
    run("checkpoint", "--goal", "the goal", "--phase", "P", "--resume", "Start.", "--title", "T")
    before = (repo / ".git" / "ghstate" / "1.md").read_bytes()
    result = run("checkpoint", flag, " ", "--decision", "d", code=2)
    assert result.stderr.endswith(f"Error: Invalid value for {flag}: is empty\n")
    assert (repo / ".git" / "ghstate" / "1.md").read_bytes() == before


def test_an_empty_lease_is_refused_as_any_lease_that_is_no_duration(repo, run):
    result = run("claim", "1", "--agent", "a", "--lease", "", code=2)
    assert result.stderr.endswith("Error: Invalid value for --lease: '' is not a duration such as 90s, 30m, 2h or 1d\n")


def test_the_write_summary_and_log_say_what_was_typed_not_its_escapes(repo, run):
    """Found by a newcomer: `--phase '- [x] Phase 4: sneaky'` was summed up as `+phase &#45; \\[x] Phase 4`, in the
    command's line and in log, while show printed what was typed."""
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start.")
    out = run("checkpoint", "--phase", "- [x] Phase 4: sneaky").stdout
    assert out.startswith("Updated checkpoint local #1 (revision 2): +phase - [x] Phase 4\n")
    assert run("checkpoint", "--phase", "*Phase 5*: <b>").stdout.split(": ", 1)[1].startswith("+phase *Phase 5*\n")
    assert run("log").stdout.splitlines()[-2:][0].endswith("+phase - [x] Phase 4")


def test_a_flag_that_replaces_the_files_text_says_so(repo, run, tmp_path):
    """Found by a newcomer: `--file b.md --goal X` wrote X and dropped the file's goal without a word."""
    (tmp_path / "b.md").write_text("## Goal\nfrom the file\n\n## Resume instruction\nStart.\n")
    result = run("checkpoint", "--file", str(tmp_path / "b.md"), "--goal", "from the flag")
    assert "Warning: --goal replaced the file's goal\n" in result.stderr
    assert json.loads(run("show", "--json").stdout)["goal"] == "from the flag"
    same = run("checkpoint", "--file", str(tmp_path / "b.md"), "--resume", "Start.").stderr
    assert "replaced" not in same


def test_a_file_whose_marker_is_another_checkpoints_says_so(repo, run, tmp_path):
    """Found by a newcomer: `resume 1 --format markdown > one.md; checkpoint 2 --file one.md` replaced #2's goal
    and phases with #1's without a word; a draft from the wrong worktree or a mistyped number is said."""
    run("checkpoint", "--goal", "one", "--phase", "Phase 1: a", "--resume", "r")
    run("checkpoint", "--new", "--goal", "two", "--phase", "Phase 1: b", "--resume", "r2")
    (tmp_path / "one.md").write_text(run("resume", "1", "--format", "markdown").stdout)
    said = run("checkpoint", "2", "--file", str(tmp_path / "one.md")).stderr
    assert "Warning: the file's hidden marker is another checkpoint's (id " in said
    (tmp_path / "two.md").write_text(run("resume", "2", "--format", "markdown").stdout)
    assert "another checkpoint's" not in run("checkpoint", "2", "--file", str(tmp_path / "two.md")).stderr
