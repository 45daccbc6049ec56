"""Lint: every rule, with its code, severity and line number."""

from __future__ import annotations

import pytest

from ghstate.core.lint import RULES, lint
from ghstate.core.parse import parse


def problems(text: str, **kwargs) -> list[tuple[str, int]]:
    return [(p.code, p.line) for p in lint(parse(text), text, **kwargs)]


GOOD = ("## Goal\nShip.\n\n## Current status\n- [x] Phase 1: a\n- [ ] Phase 2: b\n\n"
        "## Resume instruction\nStart Phase 2.\n")


def test_a_good_checkpoint_has_no_problems():
    assert problems(GOOD) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("## Goal\nx\n\n## Current status\n- [ ] Phase 1\n", [("GS001", 5)]),
    ("## Goal\nx\n\n## Current status\n- [ ] Phase 1: a\n- [ ] Phase 2: b\n\n## Resume instruction\ncarry on\n",
     [("GS002", 8)]),
    ("## Goal\nx\n\n## Status\n- [x] Phase 1\n- Phase 2 no box\n\n## Resume\nPhase 2\n", [("GS003", 6)]),
    ("## Goal\nx\n\n## Resume instruction\nstart\n", [("GS004", 1)]),
    ("## Goal\nx\n\n## Status\n- [ ] Phase 1\n\n## Risks\n- " + "y" * 500 + "\n\n## Resume\nPhase 1\n",
     [("GS005", 8)]),
    ("## Goal\nx\n\n## Status\n- [ ] Phase 1\n\nloose text\n\n## Resume\nPhase 1\n", [("GS006", 7)]),
    ("## Goal\nx\n\n## Status\n- [ ] Phase 1\n\n## Files\n- see the parser\n\n## Resume\nPhase 1\n", [("GS011", 8)]),
    ("## Goal\nx\n\n## Status\n- [x] Phase 2: b\n- [ ] Phase 2: b, renamed\n\n## Resume\nPhase 2\n", [("GS012", 6)]),
    ('<!-- ghstate:v1 {"revision": 2, -->\n## Goal\nx\n\n## Status\n- [ ] Phase 1\n\n## Resume\nPhase 1\n',
     [("GS007", 1)]),
    ("## Goal\nx\n\n## Status\n- [ ] Phase 1\n\n## Risks\n- a\n\n## Risks\n- b\n\n## Resume\nPhase 1\n",
     [("GS008", 10)]),
    ("## Status\n- [ ] Phase 1\n\n## Resume\nPhase 1\n", [("GS010", 1)]),
])
def test_each_rule(text, expected):
    assert problems(text) == expected


@pytest.mark.parametrize(("status", "line"), [
    ("- [x] Phase 1: a\n  - [x] one\n  - [ ] two\n- [ ] Phase 2: b\n", 5),  # done, a step still open
    ("- [x] Phase 1: a\n- [ ] Phase 2: b\n  - [x] one\n  - [X] two\n", 6),  # every step ticked, not done
])
def test_a_phase_and_its_steps_that_disagree_are_a_warning(status, line):
    text = f"## Goal\nShip.\n\n## Current status\n{status}\n## Resume instruction\nStart Phase 2.\n"
    assert problems(text) == [("GS013", line)]
    (problem,) = lint(parse(text), text)
    assert problem.severity == "warning" and "--done" in problem.message


@pytest.mark.parametrize("status", [
    "- [x] Phase 1: a\n  - [x] one\n  - plain note\n- [ ] Phase 2: b\n",  # a plain bullet is no step to tick
    "- [x] Phase 1: a\n- [ ] Phase 2: b\n  - [x] one\n  - [ ] two\n",  # part-way: in progress
    "- [x] Phase 1: a\n- [ ] Phase 2: b\n  - plain note\n",
])
def test_phases_that_agree_with_their_steps_pass(status):
    text = f"## Goal\nShip.\n\n## Current status\n{status}\n## Resume instruction\nStart Phase 2.\n"
    assert problems(text) == []


def test_oversized_body():
    text = GOOD + "\n## Notes\n" + "z" * 66_000 + "\n"
    assert ("GS009", 1) in problems(text)


def test_all_phases_done_needs_no_phase_in_the_resume_instruction():
    assert problems("## Goal\nx\n\n## Status\n- [x] Phase 1\n\n## Resume\nopen the PR\n") == []


def test_severities_and_format():
    assert {code: severity for code, (severity, _) in RULES.items()}["GS001"] == "error"
    (problem,) = lint(parse("## Goal\nx\n\n## Status\n- [ ] P\n"), "## Goal\nx\n\n## Status\n- [ ] P\n")
    assert problem.format("c.md") == ("c.md:5: GS001 error: no resume instruction: add '## Resume instruction' "
                                      "with the exact next step")


def test_lint_an_issue_and_the_branch_checkpoint(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    assert run("lint").stdout == "" and run("lint", "1").stdout == ""


@pytest.mark.parametrize(("heading", "meant"), [("Decision", "Decisions locked"), ("Next steps", "Resume instruction"),
                                                ("Risks and mitigations", "Remaining risks")])
def test_a_section_meant_as_ghstates_is_a_warning_naming_the_heading_to_use(heading, meant):
    """Such a section is kept as written, but no prompt places its items: lint says so (issue 48), exit 0."""
    text = GOOD + f"\n## {heading}\n- an item\n"
    found = lint(parse(text), text)
    assert [(p.code, p.line, p.severity) for p in found] == [("GS014", 11, "warning")]
    assert f"'{heading}' is not ghstate's '{meant}'" in found[0].message
    assert f"rename it '## {meant}'" in found[0].message


def test_a_persons_own_section_is_no_problem():
    assert problems(GOOD + "\n## Notes from Bob\nkeep this\n\n### Open risks (Bob's words)\n- x\n") == []


@pytest.mark.parametrize(("heading", "key"), [
    ("Decision", "decisions"), ("Key decisions", "decisions"), ("Next steps", "resume"),
    ("Risks and mitigations", "risks"), ("Todo", "phases"), ("Decisions locked", None),  # ghstate's own
    ("Notes from Bob", None), ("Release plan", None), ("Why these decisions", None)])
def test_which_headings_look_meant_as_ghstates_sections(heading, key):
    from ghstate.core.model import meant_section

    assert meant_section(heading) == key


def test_a_concurrent_edit_is_shown_beside_its_value_and_lint_asks_to_settle_it(repo, run, tmp_path):
    """Found by a newcomer: a draft written back over a newer resume instruction kept the newer one in
    '## Resume instruction (concurrent edit)', which the prompt listed as a section "not shown here" and lint
    called not ghstate's (GS014). The prompt shows it with the instruction, and lint asks a person to settle it."""
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--phase", "Phase 2: b", "--resume", "Start Phase 1")
    draft = tmp_path / "draft.md"
    draft.write_text(run("resume", "--format", "markdown").stdout)
    run("checkpoint", "--done", "1", "--resume", "Start Phase 2: the db layer")
    draft.write_text(draft.read_text().replace("\nStart Phase 1\n", "\nStart Phase 1, step two\n"))
    run("checkpoint", "--file", str(draft))
    out = run("lint").stdout
    assert "GS015 warning: 'Resume instruction (concurrent edit)' holds the other value of 'Resume instruction'" in out
    assert "GS014" not in out
    prompt = run("resume").stdout
    assert ("  Start Phase 1, step two\nAlso written as the resume instruction at the same time (a concurrent edit "
            "nobody has settled; ask the user which holds before acting on either):\n  Start Phase 2: the db layer\n"
            ) in prompt
    assert "Other sections" not in prompt
