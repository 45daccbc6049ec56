"""`ghstate init`: labels, issue form, hooks merged into existing settings, command files; idempotent."""

from __future__ import annotations

import json

import pytest
from github_fake import FakeGitHub

from ghstate.parse import parse


@pytest.fixture(autouse=True)
def argv(monkeypatch):
    """Hooks call plain `ghstate` unless a test says otherwise (under `python -m pytest`, argv[0] would be
    pytest's __main__.py, which init takes for `python -m ghstate`)."""
    monkeypatch.setattr("sys.argv", ["pytest"])


def test_init_twice_over_existing_settings(repo, run):
    claude = repo / ".claude"
    claude.mkdir()
    existing = {
        "permissions": {"allow": ["Bash(npm test:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier"}]}],
                  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]},
        "model": "opus",
    }
    (claude / "settings.json").write_text(json.dumps(existing, indent=4))
    first = run("init").stdout
    assert "hooks added" in first and "skipped: the local store has none" in first
    settings = json.loads((claude / "settings.json").read_text())
    assert settings["permissions"] == existing["permissions"] and settings["model"] == "opus"
    assert settings["hooks"]["PostToolUse"] == existing["hooks"]["PostToolUse"]
    assert settings["hooks"]["SessionStart"][0] == existing["hooks"]["SessionStart"][0]
    commands = [h["command"] for e in settings["hooks"]["SessionStart"] for h in e["hooks"]]
    assert commands == ["echo hi", "ghstate hook session-start"]
    assert settings["hooks"]["PreCompact"][0]["hooks"][0]["command"] == "ghstate hook pre-compact"
    for path in (".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml", ".claude/commands/checkpoint.md",
                 ".claude/commands/resume.md"):
        assert (repo / path).is_file(), path
    snapshot = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in str(p)}
    second = run("init").stdout
    assert "hooks already there" in second and "written" not in second
    assert snapshot == {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in str(p)}


def test_init_keeps_edited_files_unless_forced(repo, run):
    run("init")
    command = repo / ".claude" / "commands" / "checkpoint.md"
    command.write_text("my own version\n")
    assert "exists, kept as it is" in run("init").stdout and command.read_text() == "my own version\n"
    run("init", "--force")
    assert command.read_text() != "my own version\n"


def test_init_refuses_broken_settings_and_changes_nothing(repo, run):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{ not json")
    result = run("init", code=1)
    assert result.stderr.startswith("Error: ") and "is not valid JSON" in result.stderr
    assert (repo / ".claude" / "settings.json").read_text() == "{ not json"


def test_init_creates_labels_on_github(repo, run, isolated, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    fake = FakeGitHub(isolated)
    fake.labels.add("ghstate")
    out = run("init").stdout
    assert "label ghstate  " in out and "exists" in out.splitlines()[0]
    assert {"ghstate:ci-failing", "ghstate:blocked"} <= fake.labels
    assert "label ghstate:blocked" in out and fake.problems() == []
    assert run("init").stdout.count("exists") == 3


def test_issue_form_output_parses(repo):
    """What GitHub makes of the shipped form (### Label, blank line, value, _No response_) is a checkpoint."""
    body = ("### Goal\n\nShip the matcher\n\n### Current status\n\n- [x] Phase 1: parser\n- [ ] Phase 2: matcher\n\n"
            "### Decisions locked\n\n_No response_\n\n### Open questions\n\n_No response_\n\n### Remaining risks\n\n"
            "slow on big inputs\n\n### Files to re-read\n\nsrc/a.py\nsrc/b.py\n\n### Resume instruction\n\n"
            "Start at Phase 2\n")
    cp = parse(body).checkpoint
    assert cp.goal == "Ship the matcher" and cp.next_phase.name == "Phase 2: matcher"
    assert cp.decisions == () and cp.file_paths == ["src/a.py", "src/b.py"] and cp.resume == "Start at Phase 2"


def test_repository_issue_form_is_the_shipped_one():
    from pathlib import Path

    from ghstate.render import builtin_templates

    ours = Path(__file__).resolve().parents[1] / ".github" / "ISSUE_TEMPLATE" / "ghstate-checkpoint.yml"
    if not ours.is_file():
        pytest.skip("not a source checkout")
    assert ours.read_text() == (builtin_templates() / "issue-form.yml").read_text()


def test_init_with_odd_hook_entries_adds_its_own_and_keeps_them(repo, run):
    (repo / ".claude").mkdir()
    odd = {"hooks": {"SessionStart": [{"hooks": 5}, "not an entry"]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(odd))
    run("init")
    entries = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    assert entries[:2] == [{"hooks": 5}, "not an entry"] and entries[2]["hooks"][0]["command"].endswith("session-start")


def test_broken_settings_stop_init_before_it_writes_anything(repo, run):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{not json")
    run("init", code=1)
    assert not (repo / ".github").exists() and not (repo / ".claude" / "commands").exists()


def test_hooks_call_ghstate_where_it_is_when_it_is_not_on_path(repo, run, monkeypatch):
    monkeypatch.setattr("sys.argv", ["/opt/tools/venv/bin/ghstate", "init"])
    out = run("init").stdout
    commands = [h["command"] for entries in json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
                .values() for e in entries for h in e["hooks"]]
    assert commands == [f"/opt/tools/venv/bin/ghstate hook {name}" for name in ("session-start", "pre-compact")]
    assert "ghstate is not on PATH here" in out
    monkeypatch.setattr("sys.argv", ["ghstate", "init"])
    run("init")  # later, installed on PATH: the hooks already there are recognised, not doubled
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert len(settings["hooks"]["SessionStart"]) == 1 and len(settings["hooks"]["PreCompact"]) == 1


@pytest.mark.parametrize("argv0", ["/opt/my tools/venv/bin/ghstate", "C:/tools/venv/Scripts/ghstate.exe"])
def test_init_is_idempotent_whatever_the_path_to_ghstate_looks_like(repo, run, monkeypatch, argv0):
    monkeypatch.setattr("sys.argv", [argv0, "init"])
    run("init")
    second = run("init").stdout
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert "hooks already there" in second and len(settings["hooks"]["SessionStart"]) == 1


def test_bare_hooks_that_cannot_run_here_are_pointed_at_ghstate(repo, run, monkeypatch):
    (repo / ".claude").mkdir()
    bare = {"hooks": {"SessionStart": [{"matcher": "clear", "hooks": [
        {"type": "command", "command": "ghstate hook session-start"}]}]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(bare))
    monkeypatch.setattr("sys.argv", ["/opt/venv/bin/ghstate", "init"])
    run("init")
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "/opt/venv/bin/ghstate hook session-start"


def test_init_run_as_a_module_writes_hooks_that_run(repo, run, monkeypatch):
    import sys

    monkeypatch.setattr("sys.argv", ["/x/ghstate/__main__.py", "init"])
    run("init")
    command = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]["PreCompact"][0]["hooks"][0]
    assert command["command"] == f"{sys.executable} -m ghstate hook pre-compact"
