"""Issue 49: the sections of a checkpoint are declared once, in ``core.sections``; the rest of the core reads
that table rather than spelling the sections out again."""

from __future__ import annotations

import ast
from pathlib import Path

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
    fields = {id(node.target) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for node in cls.body
              if isinstance(node, ast.AnnAssign)}
    lines = []
    for node in ast.walk(tree):
        if id(node) in fields:  # a record's field, one per section: the documented exception (below)
            continue
        if isinstance(node, ast.Constant) and node.value == word or isinstance(node, ast.Name) and node.id == word \
                or isinstance(node, ast.Attribute) and node.attr == word \
                or isinstance(node, ast.keyword) and node.arg == word:
            lines.append(node.lineno)
    return lines


def test_moved_modules_name_no_section_of_their_own():
    """The modules moved onto the table do not spell ``questions`` (the section a new list section is most
    like) as a string or an identifier. The exception: a record's field declarations, one per section
    (``fit.Selection``, ``seen.Changes``, ``edits.Edits``,
    ``CheckpointRequest``): a NamedTuple says its fields by name."""
    moved = ["core/parse.py", "core/lint.py", "core/provenance.py", "core/marker.py", "core/fit.py",
             "core/present.py", "local/seen.py", "core/state_json.py", "core/edits.py", "core/intent.py",
             "services/checkpoint.py", "services/resume.py", "commands/checkpoint.py", "agents/mcp_tools.py"]
    named = {m: _names_in(ROOT / "ghstate" / m, "questions") for m in moved}
    assert named == {m: [] for m in moved}
