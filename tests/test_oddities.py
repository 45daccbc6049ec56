"""No silent oddities: what a new user met, said or refused in so many words."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE

from ghstate.agents import mcp_tools

FLAGS = ("give --goal, --phase or --resume (or a --file that has them), or --allow-empty to make it without")


def test_a_new_checkpoint_that_says_nothing_of_the_task_is_refused_with_the_flags_to_give(repo, run):
    result = run("checkpoint", "--store", "local", "--decision", "x", code=2)
    assert result.stderr.strip().endswith(
        f"Error: no open checkpoint for branch feature/x, and a new checkpoint needs a goal, phases or a resume "
        f"instruction: {FLAGS}")
    assert not (repo / ".git" / "ghstate" / "1.md").exists()
    result = run("checkpoint", "--new", "--store", "local", "--risk", "r", code=2)
    assert "a new checkpoint needs a goal, phases or a resume instruction" in result.stderr
    (repo / "notes.md").write_text("## Decisions locked\n- keep it\n")
    assert FLAGS in run("checkpoint", "--store", "local", "--file", "notes.md", code=2).stderr
    for given in (("--goal", "g"), ("--phase", "Phase 1: p"), ("--resume", "Start.")):
        run("checkpoint", "--new", "--store", "local", "--decision", "x", *given)
    run("checkpoint", "--new", "--store", "local", "--decision", "x", "--allow-empty")
    assert sorted(p.name for p in (repo / ".git" / "ghstate").glob("*.md")) == ["1.md", "2.md", "3.md", "4.md"]


def test_adding_to_an_existing_checkpoint_needs_no_goal(repo, run):
    run("checkpoint", "--store", "local", "--decision", "x", "--allow-empty")
    run("checkpoint", "--store", "local", "--decision", "y")  # the branch's, with neither: fine
    assert run("checkpoint", "1", "--store", "local", "--risk", "r").exit_code == 0


def test_the_mcp_tool_names_its_own_arguments(repo):
    from ghstate.services.app import build_app

    answer = mcp_tools.call("checkpoint", {"decision": ["x"]}, lambda: build_app(store="local"))
    assert answer.error and answer.text.endswith(
        "give goal, phase or resume (or a body that has them), or allow_empty to make it without")
    answer = mcp_tools.call("checkpoint", {"decision": ["x"], "allow_empty": True}, lambda: build_app(store="local"))
    assert not answer.error and answer.text.startswith("Created checkpoint local #1")


def test_list_says_no_phases_rather_than_all_done(repo, run):
    run("checkpoint", "--store", "local", "--goal", "g")
    (repo / "cp.md").write_text(SAMPLE.replace("- [ ] Phase", "- [x] Phase"))
    run("checkpoint", "--new", "--store", "local", "--file", "cp.md")
    lines = run("list", "--store", "local").stdout.splitlines()  # newest first, as on GitHub
    assert "| no phases |" in lines[1] and "all phases done" not in lines[1]
    assert "| all phases done |" in lines[0]
    rows = json.loads(run("list", "--store", "local", "--json").stdout)
    assert [(r["phases_total"], r["status"]) for r in rows] == [(3, "done"), (0, "open")]


@pytest.mark.parametrize("args", [("resume", "--json"), ("resume", "--format", "json")])
def test_resume_takes_json_as_every_other_command_does(repo, run, sample_file, args):
    run("checkpoint", "--store", "local", "--file", str(sample_file))
    state = json.loads(run(*args, "--store", "local").stdout)
    assert state["next_phase"] == "Phase 2: matcher abstraction"


def test_resume_json_and_another_format_is_a_usage_error(repo, run, sample_file):
    run("checkpoint", "--store", "local", "--file", str(sample_file))
    result = run("resume", "--json", "--format", "short", "--store", "local", code=2)
    assert "--json and --jq print the state (--format json), not --format short" in result.stderr
    assert run("resume", "--jq", ".goal", "--format", "markdown", "--store", "local", code=2).exit_code == 2


def test_lint_json_gives_every_problem_and_fails_on_errors(repo, run):
    (repo / "bad.md").write_text("## Decisions locked\n- x\n")
    result = run("lint", "bad.md", "--json", code=1)
    report = json.loads(result.stdout)
    assert report["source"] == "bad.md" and report["errors"] == 2 and report["warnings"] == 1
    assert [(p["code"], p["severity"]) for p in report["problems"]] == [
        ("GS004", "error"), ("GS010", "warning"), ("GS001", "error")]
    assert result.stderr.strip() == "Error: bad.md: 2 errors and 1 warning; fix the errors listed"
    (repo / "good.md").write_text(SAMPLE)
    assert json.loads(run("lint", "good.md", "--json").stdout) == {"source": "good.md", "errors": 0,
                                                                   "warnings": 0, "problems": []}


def test_close_a_local_checkpoint(repo, run, sample_file):
    run("checkpoint", "--store", "local", "--file", str(sample_file))
    run("checkpoint", "--new", "--store", "local", "--file", str(sample_file), "--title", "Second")
    assert run("close", "1", "--store", "local").stdout == "Closed local #1: .git/ghstate/closed/1.md\n"
    store = repo / ".git" / "ghstate"
    assert not (store / "1.md").exists() and (store / "closed" / "1.md").exists()
    assert [r["issue"] for r in json.loads(run("list", "--store", "local", "--json").stdout)] == [2]
    assert "Phase 2" in run("show", "1", "--store", "local").stdout  # readable by number
    assert run("close", "1", "--store", "local").stdout.startswith("local #1 was closed already")
    run("close", "2", "--store", "local")
    assert run("list", "--store", "local").stderr.startswith("No open checkpoints")
    # the branch's next write passes the closed ones by and starts a new one, under a number never given
    out = run("checkpoint", "--store", "local", "--goal", "next task").stdout
    assert out.startswith("Created checkpoint local #3")
    run("checkpoint", "1", "--store", "local", "--risk", "late note")  # a closed one is written where it is
    assert "late note" in (repo / ".git" / "ghstate" / "closed" / "1.md").read_text()
    assert not (repo / ".git" / "ghstate" / "1.md").exists()
    assert json.loads(run("close", "3", "--store", "local", "--json").stdout) == {  # the url whole, as list's
        "number": 3, "issue": 3, "url": str(repo / ".git" / "ghstate" / "closed" / "3.md"), "state": "closed"}


@pytest.mark.parametrize("name", ["checkpoint", "resume", "show", "list", "log", "lint", "push", "close", "board",
                                  "ready"])
def test_every_command_that_prints_data_takes_json(name):
    import click

    from ghstate.cli import cli

    command = cli.get_command(click.Context(cli), name)
    assert any("--json" in p.opts for p in command.params), f"ghstate {name} has no --json"
