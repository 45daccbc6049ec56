"""Issue 49: the sections of a checkpoint are declared once, in ``core.sections``; the rest of the core reads
that table rather than spelling the sections out again."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import store_of

from ghstate.core import edits, fit, lint, marker, model, parse, present, provenance, sections, state_json
from ghstate.local import seen
from ghstate.services import checkpoint

ROOT = Path(__file__).resolve().parents[1]


def test_every_consumer_reads_the_table():
    table = sections.SECTIONS
    assert model.SECTIONS == tuple((s.key, s.heading, s.aliases) for s in table)
    assert model.LIST_SECTIONS is sections.LISTS and parse.LINE_SECTIONS is sections.LISTS
    assert model.TEXT_SECTIONS is sections.TEXTS
    assert dict(model._MEANT) == {s.key: s.meant for s in table}
    assert provenance.ITEM_KINDS is sections.PROVENANCE and marker.PROVENANCE_KINDS is sections.PROVENANCE_ORDER
    assert edits._NOUNS == {s.key: s.noun for s in table if s.noun}
    assert [key for key, _, _ in fit.LABELS if key != "notes"] == [s.key for s in sorted(table, key=lambda s: s.fit)
                                                                    if s.fit]
    assert present.PROMPT_LISTS == tuple((s.prompt, s.key) for s in table if s.prompt)
    assert present.CHANGE_LISTS == tuple((s.new, s.key) for s in table if s.new)
    plain = [s.key for s in table if s.items == "plain"]
    own_shape = ("files", "resume", "runtime", "verification")
    assert [k for k in state_json.FIELDS if k in sections.BY_KEY and k not in own_shape] == ["goal", "phases", *plain]
    assert {s.flag.replace("-", "_"): s.key for s in table if s.flag}.items() <= state_json._SPELLED.items()
    assert [f for f in checkpoint.TEXT_FIELDS if f in {s.flag for s in table if s.items == "plain"}] \
        == [s.flag for s in table if s.items == "plain"]
    request = checkpoint.CheckpointRequest(**{s.flag: ("x",) for s in table if s.items == "plain"})
    assert all(getattr(request.edits, key) == ("x",) for key in plain)


def test_the_table_is_whole():
    """Every row is usable: keys and headings once each, a known kind, a list's nouns, provenance codes
    once each, and no word a heading is 'meant' by that starts another section's."""
    table = sections.SECTIONS
    assert len({s.key for s in table}) == len(table) == len({s.heading.lower() for s in table})
    names = [name for s in table for name in (s.heading.lower(), *s.aliases)]
    assert len(names) == len(set(names))
    assert {s.kind for s in table} <= {"text", "list", "checklist"}
    assert all(s.noun and s.shown[0] and s.fit for s in table if s.kind == "list")
    codes = [s.code for s in table if s.code]
    assert len(codes) == len(set(codes)) and not {"p", "s"} & set(codes)
    assert sorted(sections.PROVENANCE_ORDER) == sorted(["p", "s", *codes])
    for s in table:  # the heading and every alias map back to the section
        assert all(model.section_key(name) == s.key for name in (s.heading, *s.aliases))
    for s in table:  # each word a heading is meant by is one section's only, whatever the table's order
        for word in s.meant.replace("s?", "s").replace("-?", "-").split("|"):
            hits = [t.key for t in table if model.re.match(rf"(?:{t.meant})\b", word)]
            assert hits == [s.key], (word, hits)


def test_the_flags_and_mcp_arguments_of_the_plain_lists_are_the_tables():
    """``--decision``/``--question``/``--risk`` and the MCP tool's arguments of the same names come from the rows,
    in the table's order, after ``--phase`` (as they were written out before)."""
    from ghstate.agents import mcp_tools
    from ghstate.commands.checkpoint import checkpoint as command

    plain = [s for s in sections.SECTIONS if s.items == "plain"]
    names = [p.name for p in command.params]
    at = names.index("phase") + 1
    assert names[at:at + len(plain)] == [s.flag for s in plain]
    assert [p.help for p in command.params[at:at + len(plain)]] == [f"Add {s.adds}." for s in plain]
    schema = list(mcp_tools.TOOLS["checkpoint"]["schema"])
    at = schema.index("phase") + 1
    assert schema[at:at + len(plain)] == [s.flag for s in plain]


def test_seen_keeps_each_coded_section_under_its_code():
    cp = model.Checkpoint(title="t", decisions=("d1",), questions=("q1", "q2"), risks=("r1",),
                          files=("`a.py` why",))
    snap = seen.snapshot(cp, full=True, at=0)
    assert {code: len(snap[code]) for code, _ in sections.PROVENANCE} == {"d": 1, "q": 2, "r": 1, "f": 1}
    changes = seen.changes({**snap, "q": []}, cp)
    assert changes.questions == ("q1", "q2") and not changes.decisions and not changes.removed


def test_lint_measures_every_list_section():
    body = "## Goal\n\ng\n\n## Runtime\n\n- " + "x" * 150 + "\n"
    assert any(p.code == "GS005" and p.message.startswith("runtime item 1")
               for p in lint.lint(parse.parse(body), body, max_item_chars=100))


def _names_in(path: Path, word: str) -> list[int]:
    """Lines of ``path`` where ``word`` is a string constant or an identifier (a name, an attribute, an argument,
    a keyword): comments and docstrings aside."""
    tree = ast.parse(path.read_text())
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == word or isinstance(node, ast.Name) and node.id == word \
                or isinstance(node, ast.Attribute) and node.attr == word \
                or isinstance(node, (ast.keyword, ast.arg)) and node.arg == word:
            lines.append(node.lineno)
    return lines


def test_no_module_but_the_table_names_a_section_of_its_own():
    """No module under ghstate/ but the table spells ``questions`` (or its flag, ``question``: the section a new
    list section is most like) as a string or an identifier; the records whose fields are sections
    (Checkpoint, fit.Selection, seen.Changes, edits.Edits, CheckpointRequest) are built from the table."""
    named = {str(p.relative_to(ROOT / "ghstate")): lines for p in sorted((ROOT / "ghstate").rglob("*.py"))
             if p.name != "sections.py" or p.parent.name != "core"
             for lines in [_names_in(p, "questions") + _names_in(p, "question")] if lines}
    assert named == {}
    assert _names_in(ROOT / "ghstate" / "core" / "sections.py", "questions")  # the check finds what it looks for


# A test-only list section, added through the table alone (issue 49's measure): the row below, put into a copy
# of the package's table, and nothing else changed.
BLOCKERS_ROW = '''    Section("blockers", "Blockers", ("blocked by",), "list", r"blockers?|blocked",
            noun="blocker", shown=("blocker", "blockers"), fit=7, code="b", kept=5, prompt="Blockers",
            new="New blockers", items="plain", flag="blocker", adds="a blocker", argument="Blockers to add."),
'''

BLOCKERS_DRIVER = r'''
import json, sys
from click.testing import CliRunner
from ghstate.cli import cli
from ghstate.core import fit, lint, marker, parse, provenance, render, sections
from ghstate.templating import environment
from ghstate.agents import mcp_tools
from ghstate.services.app import build_app

assert "ghstate" in sys.modules and sections.__file__.startswith(sys.argv[1]), sections.__file__
body = ("## Goal\n\ng\n\n## Current status\n\n- [ ] Phase 1: one\n\n## Blockers\n\n- waiting on infra\n\n"
        "## Resume instruction\n\nStart Phase 1.\n")
cp = parse.parse(body).checkpoint
out = {"parsed": list(cp.blockers)}
rendered = render.render_body(cp, environment())
out["rendered"] = "\n## Blockers\n- waiting on infra\n" in rendered
again = parse.parse(rendered).checkpoint
out["round_trip"] = again._replace(meta=cp.meta) == cp and render.render_body(again, environment()) == rendered
long = body.replace("waiting on infra", "x" * 150)
out["lint"] = [p.message.split(" has")[0] for p in lint.lint(parse.parse(long), long, max_item_chars=100)
               if p.code == "GS005"]
run = CliRunner().invoke(cli, ["checkpoint", "--goal", "g", "--phase", "Phase 1: one", "--resume", "Phase 1",
                               "--blocker", "waiting on infra", "--json"], catch_exceptions=False)
assert run.exit_code == 0, run.output
state = json.loads(run.stdout)
out["flag_json"] = state["blockers"]
answer = mcp_tools.call("checkpoint", {"blocker": ["the CI runner"]}, lambda: build_app(store="local"))
assert not answer.error, answer
shown = CliRunner().invoke(cli, ["show", "--json"], catch_exceptions=False)
out["mcp_json"] = json.loads(shown.stdout)["blockers"]
out["provenance"] = sorted(json.loads(shown.stdout).get("provenance", {}).get("blockers", [{}])[0])
prompt = CliRunner().invoke(cli, ["resume"], catch_exceptions=False).stdout
out["prompt"] = "Blockers" in prompt and "the CI runner" in prompt
tight = CliRunner().invoke(cli, ["resume", "--budget", "1"], catch_exceptions=False).stdout
out["fit"] = "2 blockers" in tight or "all 2 blockers" in tight
out["fit_labels"] = [k for k, _, _ in fit.LABELS]
out["codes"] = [provenance.ITEM_KINDS, marker.PROVENANCE_KINDS]
print(json.dumps(out))
'''


def test_a_section_added_through_the_table_alone(repo, tmp_path):
    """The measure of issue 49: a copy of the package whose table has one row more ("Blockers", a plain list,
    test-only) parses it, renders it, round-trips it, lints it, takes it from a flag and an MCP argument, shows
    it in --json and in the prompt, fits it and keeps its provenance. Only core/sections.py differs."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "ghstate", copy / "ghstate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", copy / "templates")  # the shipped templates, unchanged
    table = copy / "ghstate" / "core" / "sections.py"
    text = table.read_text()
    anchor = '    Section("resume", "Resume instruction"'
    assert text.count(anchor) == 1
    table.write_text(text.replace(anchor, BLOCKERS_ROW + anchor))
    changed = [p.relative_to(copy / "ghstate") for p in (copy / "ghstate").rglob("*.py")
               if p.read_bytes() != (ROOT / "ghstate" / p.relative_to(copy / "ghstate")).read_bytes()]
    assert [str(p) for p in changed] == ["core/sections.py"]
    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-c", BLOCKERS_DRIVER, str(copy)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["parsed"] == ["waiting on infra"]
    assert out["rendered"] and out["round_trip"]
    assert out["lint"] == ["blockers item 1"]
    assert out["flag_json"] == ["waiting on infra"]
    assert out["mcp_json"] == ["waiting on infra", "the CI runner"]
    assert out["provenance"]
    assert out["prompt"] and out["fit"]
    assert out["fit_labels"][-1] == "blockers"
    assert ["b", "blockers"] in out["codes"][0] and "b" in out["codes"][1]


def test_lint_requires_what_the_table_says(monkeypatch):
    """Which sections lint requires, and what it asks for, is the table's ``required``: a row that asks for one
    more (here the risks) gets the rule, worded from its row, at its heading's line."""
    body = ("## Goal\nShip.\n\n## Current status\n- [ ] Phase 1: a\n\n## Remaining risks\n\n"
            "## Resume instruction\nPhase 1.\n")
    codes = {s.key: s.required[0] for s in sections.REQUIRED}
    assert codes == {"goal": "GS010", "phases": "GS004", "resume": "GS001"}
    assert [p.code for p in lint.problems_of(body, "x.md", 400)] == []
    risks = sections.BY_KEY["risks"]._replace(required=("GS010", "risks", "what could still go wrong"))
    monkeypatch.setattr(lint, "REQUIRED", (*sections.REQUIRED, risks))
    (problem,) = lint.problems_of(body, "x.md", 400)
    assert (problem.code, problem.line) == ("GS010", 7)
    assert problem.message == "no risks: add '## Remaining risks' with what could still go wrong"


def test_one_name_per_field():
    """Issue 49, item 3: a section's flag, its MCP argument and its JSON key say the same word (a list's flag
    the one item: ``--decision`` for ``decisions``); where they did not (``--read``, ``--resume-at``), the
    name is now the JSON key's, and the earlier name is still taken (help names only the name)."""
    from ghstate.agents import mcp_tools
    from ghstate.commands.checkpoint import checkpoint as command

    options = {p.name: p for p in command.params}
    schema = mcp_tools.TOOLS["checkpoint"]["schema"]
    for s in sections.SECTIONS:
        if not s.flag:
            continue
        assert s.key in (s.flag, s.flag + "s"), s
        assert options[s.flag].opts[0] == f"--{s.flag}" and s.flag in schema and s.key in state_json.FIELDS
        assert options[s.flag].opts[1:] == ([f"--{s.was}"] if s.was else [])
    assert sections.RENAMED == {"read": "files", "resume_at": "resume"}
    helped = " ".join(command.get_help(click_context(command)).split())
    assert "--files PATH" in helped and "(also --read, its old name)" in helped and "--read PATH" not in helped
    assert "--resume TEXT" in helped and "--resume-at TEXT" not in helped


def click_context(command):
    import click

    return click.Context(command, info_name="checkpoint")


def test_the_earlier_names_write_what_the_names_write(repo, run):
    """``--read``/``--resume-at`` and the MCP tool's ``read``/``resume_at`` are the same fields as ``--files``/
    ``--resume``; an MCP call that gives a name and its earlier name is refused, naming both."""
    from ghstate.agents import mcp_tools
    from ghstate.services.app import build_app

    base = ("checkpoint", "--goal", "g", "--phase", "Phase 1: one", "--dry-run")
    def text(*args):  # the body a person reads (the marker holds a new id each time)
        return run(*base, *args).stdout.split(" -->\n", 1)[1]

    new, old = text("--files", "a.py", "--resume", "Start."), text("--read", "a.py", "--resume-at", "Start.")
    mixed = text("--read", "a.py", "--files", "b.py", "--resume", "Start.")
    assert new == old and "`a.py`" in new and "Start." in new
    assert mixed.index("`a.py`") < mixed.index("`b.py`")  # one option: given in the order given
    said = {name: mcp_tools.call("checkpoint", {"goal": "g", **args, "dry_run": True},
                                 lambda: build_app(store="local"))
            for name, args in (("new", {"files": ["a.py"], "resume": "Start."}),
                               ("old", {"read": ["a.py"], "resume_at": "Start."}))}
    assert not said["new"].error and said["new"].text.split(" -->\n", 1)[1] == said["old"].text.split(" -->\n", 1)[1]
    both = mcp_tools.call("checkpoint", {"resume": "a", "resume_at": "b"}, lambda: build_app(store="local"))
    assert both.error and both.text == "Error: checkpoint: give resume or resume_at (its old name), not both"
    listed = mcp_tools.input_schema("checkpoint")["properties"]
    assert listed["resume_at"]["description"] == "The old name of resume: give resume."


def test_a_file_with_no_checkpoint_section_is_refused_pointing_at_files(repo, run):
    """``--file`` and ``--files`` differ by a letter: a source file given to ``--file`` (none of a checkpoint's
    sections, no marker; its ``# comment`` lines read as headings) is refused, writing nothing, and the error
    names ``--files``; a body with one of the sections, or with a marker, is a body."""
    (repo / "a.py").write_text("# -*- coding: utf-8 -*-\nprint('not a checkpoint')\n## a comment\n")
    run("checkpoint", "--goal", "g", "--resume", "Start.")
    before = (store_of(repo) / "1.md").read_bytes()
    result = run("checkpoint", "--file", "a.py", code=1)
    assert result.stderr == ("Error: a.py holds none of a checkpoint's sections (## Goal, ## Current status, ## "
                             "Decisions locked, …) and no ghstate marker: give a checkpoint body or a JSON state (to "
                             "add a.py to the files to re-read: --files a.py)\n")
    assert (store_of(repo) / "1.md").read_bytes() == before
    piped = run("checkpoint", "--file", "-", input="just a line\n", code=1).stderr
    assert piped.startswith("Error: standard input holds none of a checkpoint's sections") and "--files" not in piped
    (repo / "notes.md").write_text("## Notes from Bob\n\nask about the cache\n\n## Open questions\n\n- which?\n")
    assert "Updated checkpoint" in run("checkpoint", "--file", "notes.md").stdout
    assert "ask about the cache" in (store_of(repo) / "1.md").read_text()
    marked = (store_of(repo) / "1.md").read_text().split("\n", 1)[0] + "\nA person's preamble.\n"
    (repo / "marked.md").write_text(marked)
    assert run("checkpoint", "--file", "marked.md").exit_code == 0


def test_suggestions_and_errors_name_a_field_by_its_name(repo, run):
    """Found by a newcomer: click's "did you mean" offered --read and --resume-at, the MCP tool's list of what it
    takes named read and resume_at, and a JSON key given as an argument (decisions) got no hint."""
    from ghstate.agents import mcp_tools
    from ghstate.services.app import build_app

    assert run("checkpoint", "--resum", "x", code=2).stderr.endswith(
        "Error: No such option '--resum'. (Did you mean one of: '--resume', '--role'?)\n")
    assert "'--read'" not in run("checkpoint", "--red", "x", code=2).stderr
    answer = mcp_tools.call("checkpoint", {"decisions": ["x"]}, lambda: build_app(store="local"))
    assert answer.error and answer.text.startswith("Error: checkpoint takes no argument 'decisions' (the argument "
                                                   "for that is 'decision'); it takes issue, body, ")
    assert ", files, resume, " in answer.text and "resume_at" not in answer.text and "read" not in answer.text


def test_a_title_is_one_line(repo, run):
    """Found by a newcomer: a title with a line break was taken, and broke list's one line a checkpoint (a GitHub
    issue title has none)."""
    result = run("checkpoint", "--goal", "g", "--title", "two\nlines", code=2)
    assert result.stderr.endswith("Error: Invalid value for --title: must be one line\n")
    assert not (store_of(repo) / "1.md").exists()


def test_the_cli_refuses_a_text_given_by_its_name_and_its_old_name_as_the_mcp_tool_does(repo, run):
    """Found by a newcomer: `--resume y --resume-at x` kept x without a word, while the MCP tool refuses both
    names; a list (--files, --read) takes both, in the order given."""
    result = run("checkpoint", "--goal", "g", "--resume", "y", "--resume-at", "x", code=2)
    assert result.stderr.endswith("Error: give --resume or --resume-at (its old name), not both\n")
    assert run("checkpoint", "--goal", "g", "--resume-at=x", "--dry-run").exit_code == 0


# A test-only text section, added through the table alone (finding 12 of issue 58): parse reads it as text, a
# person's edit of it is merged three-way, a --file that replaces it sets it (a later write wins on it).
CONTEXT_ROW = '''    Section("context", "Context", ("background",), "text", r"context|background"),
'''

CONTEXT_DRIVER = r'''
import json, sys
from ghstate.core import parse, sections
from ghstate.core.edits import apply_incoming
from ghstate.core.intent import Intent
from ghstate.core.merge import merge3

assert sections.__file__.startswith(sys.argv[1]), sections.__file__
body = ("## Goal\n\ng\n\n## Current status\n\n- [ ] Phase 1: one\n\n## Context\n\nThe base context.\n\n"
        "## Resume instruction\n\nStart Phase 1.\n")
base = parse.parse(body).checkpoint
out = {"parsed": base.context}
head = base._replace(goal="the head's goal")
person = base._replace(context="The person's context.")
merged, conflicts = merge3(base, head, person)
out["theirs_stands"] = [merged.context, merged.goal, conflicts]
both, conflicts = merge3(base, base._replace(context="The head's context."), person)
out["both"] = [both.context, [e.body for e in both.extra], conflicts]
incoming = base._replace(context="The file's context.")
out["sets"] = sorted(Intent(incoming=incoming, present=frozenset({"context"})).sets(base))
print(json.dumps(out))
'''


def test_a_text_section_added_through_the_table_alone_is_parsed_merged_and_set(repo, tmp_path):
    """Finding 12 of issue 58: merge, parse, intents and edits spelled the text sections out, so that a new text
    row was parsed as a list and never merged three-way (a person's edit of it lost). They read ``TEXTS``."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "ghstate", copy / "ghstate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "templates", copy / "templates")
    table = copy / "ghstate" / "core" / "sections.py"
    anchor = '    Section("resume", "Resume instruction"'
    table.write_text(table.read_text().replace(anchor, CONTEXT_ROW + anchor))
    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-c", CONTEXT_DRIVER, str(copy)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["parsed"] == "The base context."
    assert out["theirs_stands"] == ["The person's context.", "the head's goal", []]
    assert out["both"] == ["The person's context.", ["The head's context."], ["Context"]]
    assert out["sets"] == ["context"]
