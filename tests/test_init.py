"""`ghstate init`: labels, issue form, hooks merged into existing settings, command files; idempotent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from github_fake import FakeGitHub

from ghstate.core.parse import parse


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
                 ".claude/commands/ghstate-resume.md"):
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



def test_a_command_file_an_earlier_ghstate_wrote_is_brought_up_to_date_and_removed_as_its_own(repo, run):
    """A file as an earlier ghstate shipped it (claude-checkpoint.md said ``--resume-at`` before the flag took
    the JSON key's name) is nobody's edit: init writes the current text over it, and init --remove takes it
    out; the same file edited by a person is kept by both."""
    from ghstate.agents.setup import SHIPPED_BEFORE
    from ghstate.templating import builtin_templates

    now = (builtin_templates() / "claude-checkpoint.md").read_text(encoding="utf-8")
    earlier = now.replace('--resume "Start at Phase 3', '--resume-at "Start at Phase 3')
    assert earlier != now and _digest(earlier) in SHIPPED_BEFORE["claude-checkpoint.md"]
    command = repo / ".claude" / "commands" / "checkpoint.md"
    command.parent.mkdir(parents=True)
    command.write_text(earlier)
    assert re.search(r"^\.claude/commands/checkpoint\.md +written$", run("init").stdout, re.M)
    assert command.read_text() == now
    command.write_text(earlier)
    run("init", "--remove")
    assert not command.exists()
    command.parent.mkdir(parents=True, exist_ok=True)
    command.write_text(earlier + "my own line\n")
    assert "exists, kept as it is" in run("init").stdout and command.read_text().endswith("my own line\n")


def _digest(text):
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_every_earlier_text_of_a_template_init_writes_is_known():
    """Each template init writes: its digests of earlier texts are not the current one's, and every earlier
    text this checkout's git history holds (its commits, and HEAD's text beside an uncommitted edit) is among
    them. Without history (a tarball, a shallow clone) the second half has nothing to look at."""
    import subprocess

    from ghstate.agents.setup import FILES, SHIPPED_BEFORE, VARIANTS
    from ghstate.templating import builtin_templates

    root = Path(__file__).resolve().parents[1]
    sources = {s for files in FILES.values() for s, _ in files} | {v for vs in VARIANTS.values() for v in vs}
    assert set(SHIPPED_BEFORE) <= sources
    for source in sorted(sources):
        now = _digest((builtin_templates() / source).read_text(encoding="utf-8"))
        assert now not in SHIPPED_BEFORE.get(source, ()), source
        log = subprocess.run(["git", "log", "--format=%H", "--", f"templates/{source}"], cwd=root,
                             capture_output=True, text=True)
        if log.returncode != 0:
            continue
        for commit in log.stdout.split():
            shown = subprocess.run(["git", "show", f"{commit}:templates/{source}"], cwd=root, capture_output=True)
            if shown.returncode != 0:
                continue
            text = shown.stdout.decode("utf-8")
            assert _digest(text) == now or _digest(text) in SHIPPED_BEFORE.get(source, ()), (source, commit[:7])

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
    from ghstate.templating import builtin_templates

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


def test_committed_files_call_the_bare_ghstate_even_when_it_runs_from_a_virtualenv(repo, run, monkeypatch):
    """init run from a virtualenv that is not on PATH: what it writes is committed and runs on every
    teammate's machine, so it calls the bare `ghstate`; init says how to install it for daily use."""
    monkeypatch.setattr("sys.argv", ["/opt/tools/venv/bin/ghstate", "init"])
    out = run("init", "--agent", "all").stdout
    commands = [h["command"] for entries in json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
                .values() for e in entries for h in e["hooks"]]
    assert commands == [f"ghstate hook {name}" for name in ("session-start", "pre-compact", "checkpoint-due")]
    assert "ghstate is not on PATH here" in out and "pipx install" in " ".join(out.split())
    assert "OWNER" not in out and "git+" not in out  # a command that works as written, not a placeholder
    target = re.search(r"pipx install (\S+)", " ".join(out.split())).group(1)
    assert target == "." or (Path(target) / "pyproject.toml").is_file()  # the clone ghstate was installed from
    resume = (repo / ".claude" / "commands" / "ghstate-resume.md").read_text()
    assert "Run `ghstate resume $ARGUMENTS`" in resume and "/opt/tools" not in resume
    written = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts and ".ghstate" not in p.parts]
    assert written and not [p for p in written if "/opt/tools" in p.read_text() or "python" in p.read_text()
                            and "-m ghstate" in p.read_text()]
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: "/usr/local/bin/ghstate" if name == "ghstate" else None)
    assert "not on PATH" not in run("init").stdout  # installed on PATH: nothing to say


@pytest.mark.parametrize("argv0", ["/opt/my tools/venv/bin/ghstate", "C:/tools/venv/Scripts/ghstate.exe"])
def test_init_is_idempotent_whatever_the_path_to_ghstate_looks_like(repo, run, monkeypatch, argv0):
    monkeypatch.setattr("sys.argv", [argv0, "init"])
    run("init")
    second = run("init").stdout
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert "hooks already there" in second and len(settings["hooks"]["SessionStart"]) == 1


LOCAL = ["/opt/venv/bin/ghstate", "'/opt/my tools/venv/bin/ghstate'", "/usr/bin/python3.12 -m ghstate"]


@pytest.mark.parametrize("local", LOCAL)
def test_what_an_earlier_init_wrote_with_one_machines_path_calls_the_bare_ghstate_again(repo, run, local):
    """Earlier versions wrote the virtualenv's path into committed files: init puts the bare name back,
    in hooks, MCP entries (JSON and Codex's TOML) and the command files it wrote, and keeps the rest."""
    import shlex

    words = shlex.split(local)
    (repo / ".claude" / "commands").mkdir(parents=True)
    hook = {"type": "command", "command": f"{local} hook session-start", "timeout": 9}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"matcher": "clear", "hooks": [hook]}]}}))
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ghstate": {
        "type": "stdio", "command": words[0], "args": [*words[1:], "mcp", "--agent", "claude-code"]}}}))
    (repo / ".codex").mkdir()
    (repo / ".codex" / "config.toml").write_text(f'[mcp_servers.ghstate]\ncommand = "{words[0]}"\nargs = '
                                                  f'{json.dumps([*words[1:], "mcp", "--agent", "codex"])}\n')
    from ghstate.templating import builtin_templates

    shipped = (builtin_templates() / "claude-resume.md").read_text()
    (repo / ".claude" / "commands" / "resume.md").write_text(shipped.replace("`ghstate ", f"`{local} ")
                                                             .replace("(ghstate ", f"({local} "))
    out = run("init", "--agent", "claude,codex").stdout
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["SessionStart"][0]["hooks"][0] == {"type": "command", "timeout": 9,
                                                                "command": "ghstate hook session-start"}
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["ghstate"] == {
        "type": "stdio", "command": "ghstate", "args": ["mcp", "--agent", "claude-code"]}
    codex = (repo / ".codex" / "config.toml").read_text()
    assert 'command = "ghstate"' in codex and "/opt" not in codex and "python" not in codex
    assert (repo / ".claude" / "commands" / "ghstate-resume.md").read_text() == shipped
    assert not (repo / ".claude" / "commands" / "resume.md").exists()  # as shipped, at the name /resume hides
    assert re.search(r"^\.claude/commands/resume\.md +deleted: the command is \.claude/commands/ghstate-resume\.md",
                     out, re.M), out
    checkpoint = (builtin_templates() / "claude-checkpoint.md").read_text()
    (repo / ".claude" / "commands" / "checkpoint.md").write_text(checkpoint.replace("`ghstate ", f"`{local} ")
                                                                 .replace("(ghstate ", f"({local} "))
    out = run("init", "--agent", "claude").stdout
    assert (repo / ".claude" / "commands" / "checkpoint.md").read_text() == checkpoint
    assert re.search(r"^\.claude/commands/checkpoint\.md +written \(calls the bare 'ghstate' again\)$", out, re.M), out


RESUME_HIDDEN = ".claude/commands/resume.md"  # where an earlier init wrote the command Claude Code's /resume hides


def test_init_over_an_earlier_setup_retires_the_resume_command_that_claude_codes_own_hides(repo, run):
    """Claude Code's /resume (its conversation picker) takes the name first: an earlier init's resume.md
    was never reachable. init deletes it as shipped and writes /ghstate-resume; a second init changes nothing."""
    from ghstate.templating import builtin_templates

    shipped = (builtin_templates() / "claude-resume.md").read_text()
    run("init", "--agent", "claude")
    (repo / ".claude/commands/ghstate-resume.md").rename(repo / RESUME_HIDDEN)  # as an earlier init left it
    out = run("init").stdout  # plain init finds the Claude set-up and mends it
    assert not (repo / RESUME_HIDDEN).exists() and (repo / ".claude/commands/ghstate-resume.md").read_text() == shipped
    assert "Claude Code's own /resume hides a project's /resume" in out
    before = snapshot(repo)
    assert "deleted" not in run("init").stdout and snapshot(repo) == before


def test_an_edited_resume_command_moves_to_the_new_name_with_its_edits(repo, run):
    (repo / ".claude/commands").mkdir(parents=True)
    (repo / RESUME_HIDDEN).write_text("my own resume steps\n")
    out = run("init", "--agent", "claude").stdout
    assert not (repo / RESUME_HIDDEN).exists()
    assert (repo / ".claude/commands/ghstate-resume.md").read_text() == "my own resume steps\n"
    assert "moved to .claude/commands/ghstate-resume.md, your edits with it" in out
    (repo / RESUME_HIDDEN).write_text("edited again, beside the new one\n")
    out = run("init", "--agent", "claude").stdout
    assert (repo / RESUME_HIDDEN).read_text() == "edited again, beside the new one\n" and "delete this one" in out
    run("init", "--agent", "claude", "--force")
    assert not (repo / RESUME_HIDDEN).exists()


def test_init_for_another_host_leaves_claudes_files_alone(repo, run):
    (repo / ".claude/commands").mkdir(parents=True)
    (repo / RESUME_HIDDEN).write_text("mine\n")
    run("init", "--agent", "codex")
    assert (repo / RESUME_HIDDEN).read_text() == "mine\n"


# ------------------------------------------------------------------------------------ every host

USER_TOML = """\
# my Codex settings
model = "o3"   # keep this comment
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.docs.env]
DOCS_TOKEN_ENV = "DOCS"

[profiles.fast]
model = "o4-mini"
"""

USER_AGENTS = "# Agents\n\nRun `make test` before committing.\n"


def user_files(repo) -> dict[str, str]:
    """Each host's files as a user already has them, with entries of their own."""
    files = {
        ".mcp.json": json.dumps({"mcpServers": {"docs": {"type": "stdio", "command": "npx", "args": ["docs-mcp"]}}},
                                indent=2) + "\n",
        ".claude/settings.json": json.dumps({"model": "opus", "hooks": {"SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}}, indent=2) + "\n",
        ".codex/config.toml": USER_TOML,
        ".codex/hooks.json": json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "./scripts/banner.sh", "timeout": 5}]}]}}, indent=2) + "\n",
        ".gemini/settings.json": json.dumps({"ui": {"theme": "GitHub"}, "mcpServers": {"docs": {
            "command": "npx", "args": ["docs-mcp"], "timeout": 30000}}, "hooks": {"BeforeTool": [
                {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh"}]}]}},
                                            indent=4) + "\n",
        ".gemini/commands/deploy.toml": 'prompt = "Deploy it"\n',
        ".cursor/mcp.json": json.dumps({"mcpServers": {"docs": {"url": "https://docs.example/mcp"}}}, indent=2),
        ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nUse tabs.\n",
        "AGENTS.md": USER_AGENTS,
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(text.encode())
    return files


def snapshot(repo) -> dict:
    return {str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in str(p)}


def without(data: dict, path: tuple[str, ...]) -> dict:
    """``data`` with the entry at ``path`` taken out (ghstate's own), and emptied parents removed."""
    import copy

    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return data


def test_init_all_twice_keeps_every_users_entries_and_duplicates_nothing(repo, run):
    from ghstate.agents.hosts import tomllib

    before = user_files(repo)
    first = run("init", "--agent", "all").stdout
    for target in (".mcp.json", ".codex/config.toml", ".cursor/mcp.json"):
        assert f"{target}" in first
    assert "MCP server and hooks added" in first and "ghstate block written" in first

    # JSON: the user's entries are all there, and with ghstate's taken out again the file is the user's, byte for byte
    mcp = json.loads((repo / ".mcp.json").read_text())
    assert mcp["mcpServers"]["ghstate"] == {"type": "stdio", "command": "ghstate",
                                            "args": ["mcp", "--agent", "claude-code"]}
    assert json.dumps(without(mcp, ("mcpServers", "ghstate")), indent=2) + "\n" == before[".mcp.json"]
    gemini = json.loads((repo / ".gemini/settings.json").read_text())
    assert gemini["mcpServers"]["ghstate"] == {"command": "ghstate", "args": ["mcp", "--agent", "gemini-cli"]}
    session = gemini["hooks"]["SessionStart"][0]
    assert session["matcher"] == "*" and session["hooks"][0]["timeout"] == 15000  # milliseconds
    assert session["hooks"][0]["command"] == "ghstate hook session-start --host gemini"
    assert gemini["hooks"]["PreCompress"][0]["hooks"][0]["command"] == "ghstate hook pre-compact --host gemini"
    assert gemini["hooks"]["AfterAgent"][0]["hooks"][0]["command"] == "ghstate hook checkpoint-due --host gemini"
    user_gemini = without(without(without(without(gemini, ("mcpServers", "ghstate")), ("hooks", "SessionStart")),
                                  ("hooks", "PreCompress")), ("hooks", "AfterAgent"))
    assert json.dumps(user_gemini, indent=4) + "\n" == before[".gemini/settings.json"]
    codex_hooks = json.loads((repo / ".codex/hooks.json").read_text())["hooks"]["SessionStart"]
    assert codex_hooks[0]["hooks"][0]["command"] == "./scripts/banner.sh"
    assert codex_hooks[1] == {"matcher": "startup|resume|clear|compact", "hooks": [{
        "type": "command", "command": "ghstate hook session-start --host codex", "timeout": 15,
        "statusMessage": "Loading the ghstate checkpoint", "additionalContextLimit": 8000}]}
    cursor = json.loads((repo / ".cursor/mcp.json").read_text())
    assert cursor["mcpServers"]["docs"] == {"url": "https://docs.example/mcp"}
    assert cursor["mcpServers"]["ghstate"]["args"] == ["mcp", "--agent", "cursor"]

    # TOML is never re-serialised: the user's bytes come first, unchanged, then ghstate's table
    codex = (repo / ".codex/config.toml").read_text()
    assert codex.startswith(USER_TOML)
    config = tomllib.loads(codex)
    assert config["model"] == "o3" and config["profiles"]["fast"]["model"] == "o4-mini"
    assert config["mcp_servers"]["docs"]["env"] == {"DOCS_TOKEN_ENV": "DOCS"}
    assert config["mcp_servers"]["ghstate"] == {"command": "ghstate", "args": ["mcp", "--agent", "codex"]}

    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith(USER_AGENTS) and agents.count("<!-- ghstate:begin") == 1
    assert (repo / ".gemini/commands/ghstate/resume.toml").is_file()
    assert tomllib.loads((repo / ".gemini/commands/ghstate/checkpoint.toml").read_text())["prompt"]
    assert (repo / ".gemini/commands/deploy.toml").read_text() == before[".gemini/commands/deploy.toml"]
    assert (repo / ".cursor/rules/style.mdc").read_text() == before[".cursor/rules/style.mdc"]
    rule = (repo / ".cursor/rules/ghstate.mdc").read_text()
    assert rule.startswith("---\ndescription: ") and "\nalwaysApply: true\n---\n" in rule

    claude = json.loads((repo / ".claude/settings.json").read_text())
    assert json.dumps(without(without(without(claude, ("hooks", "PreCompact")), ("hooks", "Stop")),
                              ("hooks", "SessionStart", 1)), indent=2) + "\n" == before[".claude/settings.json"]
    codex_all = json.loads((repo / ".codex/hooks.json").read_text())
    assert json.dumps(without(without(without(codex_all, ("hooks", "PreCompact")), ("hooks", "Stop")),
                              ("hooks", "SessionStart", 1)),
                      indent=2) + "\n" == before[".codex/hooks.json"]
    assert_valid(repo)

    taken = snapshot(repo)
    second = run("init", "--agent", "all").stdout
    assert snapshot(repo) == taken  # nothing duplicated, nothing rewritten
    assert "added" not in second and "written" not in second


def assert_valid(repo) -> None:
    """Every file init writes parses as its host reads it: JSON, TOML, and the rule's YAML front matter."""
    import yaml

    from ghstate.agents.hosts import tomllib

    for path in repo.rglob("*"):
        if not path.is_file() or ".git/" in str(path) or ".ghstate/" in str(path):
            continue
        text = path.read_text()
        if path.suffix == ".json":
            assert isinstance(json.loads(text), dict), path
        elif path.suffix == ".toml":
            tomllib.loads(text)
        elif path.suffix == ".mdc":
            front = yaml.safe_load(text.split("---\n")[1])
            assert isinstance(front.get("alwaysApply"), bool) and isinstance(front.get("description", ""), str)
        elif path.suffix == ".yml":
            yaml.safe_load(text)
    for name in ("resume", "checkpoint"):
        command = tomllib.loads((repo / f".gemini/commands/ghstate/{name}.toml").read_text())
        assert set(command) == {"description", "prompt"} and "{{args}}" in command["prompt"]


def test_init_writes_only_the_hosts_the_repository_uses(repo, run):
    (repo / ".codex").mkdir()
    out = run("init").stdout
    assert ".codex/config.toml" in out and ".codex/hooks.json" in out and "AGENTS.md" in out
    assert not (repo / ".claude").exists() and not (repo / ".gemini").exists() and not (repo / ".mcp.json").exists()


def test_agent_lists_and_bad_names(repo, run):
    run("init", "--agent", "gemini,cursor", "--agent", "claude")
    assert (repo / ".gemini/settings.json").is_file() and (repo / ".cursor/mcp.json").is_file()
    assert (repo / ".mcp.json").is_file() and not (repo / ".codex").exists()
    result = run("init", "--agent", "vscode", code=2)
    assert "'vscode' is not one of claude, codex, gemini, cursor, all" in result.stderr


def test_agents_block_is_rewritten_where_it_stands(repo, run):
    stale = ("# Agents\r\n\r\n<!-- ghstate:begin old -->\r\nold advice\r\n<!-- ghstate:end -->\r\n\r\n"
             "## Testing\r\nRun `make test`.\r\n<!-- ghstate:begin copy -->\r\ncopy\r\n<!-- ghstate:end -->\r\n")
    (repo / "AGENTS.md").write_bytes(stale.encode())
    run("init", "--agent", "codex")
    text = (repo / "AGENTS.md").read_bytes().decode()
    assert text.startswith("# Agents\r\n\r\n<!-- ghstate:begin: written by 'ghstate init'")
    assert text.count("<!-- ghstate:begin") == 1 and "old advice" not in text and "copy" not in text
    assert "\r\n\r\n## Testing\r\nRun `make test`.\r\n" in text and "\n" not in text.replace("\r\n", "")
    assert "call the `resume` tool" in text


@pytest.mark.parametrize(("target", "text", "message"), [
    ("AGENTS.md", "intro\n<!-- ghstate:begin -->\nhalf a block\n", "without '<!-- ghstate:end -->'"),
    (".codex/config.toml", 'mcp_servers = { docs = { command = "npx" } }\n', "is not valid TOML"),
    (".codex/config.toml", "model = \n", "is not valid TOML"),
    (".gemini/settings.json", "{\"mcpServers\": []}", "'mcpServers' in"),
    (".codex/hooks.json", "[]", "is not a JSON object"),
])
def test_a_file_init_cannot_merge_into_stops_it_before_any_write(repo, run, target, text, message):
    (repo / target).parent.mkdir(parents=True, exist_ok=True)
    (repo / target).write_text(text)
    taken = snapshot(repo)
    result = run("init", "--agent", "all", code=1)
    assert result.stderr.startswith("Error: ") and message in result.stderr and len(result.stderr.splitlines()) == 1
    assert snapshot(repo) == taken


def test_codex_table_of_the_user_is_kept_unless_forced(repo, run):
    (repo / ".codex").mkdir()
    mine = ('model = "o3"\n\n[mcp_servers.ghstate]\ncommand = "/opt/ghstate/bin/ghstate"\nargs = ["mcp"]\n\n'
            '[mcp_servers.ghstate.env]\nGHSTATE_STORE = "local"\n\n[profiles.fast]\nmodel = "o4-mini"\n')
    (repo / ".codex/config.toml").write_text(mine)
    assert "MCP server already there" in run("init", "--agent", "codex").stdout
    assert (repo / ".codex/config.toml").read_text() == mine
    run("init", "--agent", "codex", "--force")
    forced = (repo / ".codex/config.toml").read_text()
    assert forced.startswith('model = "o3"\n\n[mcp_servers.ghstate]\n')
    assert forced.endswith('[profiles.fast]\nmodel = "o4-mini"\n')
    assert "/opt/ghstate" not in forced and "GHSTATE_STORE" not in forced and forced.count("[mcp_servers.ghstate]") == 1


def test_host_files_call_the_bare_ghstate_whatever_the_path_init_ran_from(repo, run, monkeypatch):
    monkeypatch.setattr("sys.argv", ["/opt/my tools/venv/bin/ghstate", "init"])
    run("init", "--agent", "all")
    from ghstate.agents.hosts import tomllib

    codex = tomllib.loads((repo / ".codex/config.toml").read_text())["mcp_servers"]["ghstate"]
    assert codex["command"] == "ghstate"
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["ghstate"]["command"] == codex["command"]
    hook = json.loads((repo / ".codex/hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert hook == "ghstate hook session-start --host codex"
    taken = snapshot(repo)
    run("init", "--agent", "all")
    assert snapshot(repo) == taken


# ------------------------------------------------------------------------------------ the text transforms


@pytest.mark.parametrize("user", ["", 'model = "o3"', 'model = "o3"\n',
                                  'model = "o3"\r\n\r\n[profiles.x]\r\nmodel = "a"\r\n'])
def test_codex_table_is_appended_after_the_users_bytes(user):
    from ghstate.agents.hosts import tomllib, with_codex_server

    new = with_codex_server(user, "config.toml", "ghstate")
    assert new.startswith(user)
    assert tomllib.loads(new)["mcp_servers"]["ghstate"]["args"] == ["mcp", "--agent", "codex"]
    if "\r\n" in user:  # the user's line endings
        assert "\n" not in new.replace("\r\n", "")
    else:
        assert "\r\n" not in new
    assert with_codex_server(new, "config.toml", "ghstate") is None  # and it is there only once


def test_hooks_with_one_machines_path_call_the_bare_ghstate_again_for_every_host():
    from ghstate.agents.hosts import CODEX_HOOKS, GEMINI_HOOKS, add_hooks

    for table, host in ((CODEX_HOOKS, "codex"), (GEMINI_HOOKS, "gemini")):
        settings: dict = {}
        assert add_hooks(settings, "x", table, "/opt/venv/bin/ghstate", host)  # as an earlier init wrote them
        assert add_hooks(settings, "x", table, "ghstate", host)
        commands = [h["command"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]]
        assert commands == [f"ghstate hook {h.sub} --host {host}" for h in table]
        assert not add_hooks(settings, "x", table, "ghstate", host)


def test_json_keeps_the_users_indentation_and_line_endings():
    from ghstate.agents.hosts import add_mcp_server, edit_json, mcp_entry

    user = '{\r\n\t"mcpServers": {\r\n\t\t"docs": {\r\n\t\t\t"command": "npx"\r\n\t\t}\r\n\t}\r\n}\r\n'
    new = edit_json(user, "mcp.json", lambda d: add_mcp_server(d, "mcp.json", mcp_entry("ghstate", "cursor")))
    assert new.startswith('{\r\n\t"mcpServers": {\r\n\t\t"docs": {\r\n\t\t\t"command": "npx"\r\n\t\t},\r\n')
    assert "\n" not in new.replace("\r\n", "")


# ------------------------------------------------------------------ issue 18: set-up that works as written

SERVER_FILES = (".mcp.json", ".gemini/settings.json", ".cursor/mcp.json", ".codex/config.toml")


def registered(repo) -> dict[str, bool]:
    from ghstate.agents.hosts import tomllib

    found = {}
    for target in SERVER_FILES:
        path = repo / target
        data = (tomllib.loads if target.endswith(".toml") else json.loads)(path.read_text()) if path.exists() else {}
        found[target] = "ghstate" in (data.get("mcpServers") or data.get("mcp_servers") or {})
    return found


def test_without_the_sdk_init_registers_no_server_says_how_and_a_rerun_adds_them(repo, run, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    out = run("init", "--agent", "all").stdout
    assert registered(repo) == dict.fromkeys(SERVER_FILES, False)
    assert "no MCP server was registered" in out and "pip install 'ghstate[mcp]'" in out
    assert "then run 'ghstate init' again" in out and "the hooks work meanwhile" in out
    for target in (".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json"):  # the hooks are there
        assert "ghstate hook session-start" in (repo / target).read_text(), target
    rule = (repo / ".cursor/rules/ghstate.mdc").read_text()  # Cursor has no hook: its rule says the command line
    assert "run `ghstate resume` first" in rule and "call the `resume` tool" not in rule

    monkeypatch.setattr(importlib.util, "find_spec", real)  # the extra installed: init again adds the servers
    out = run("init", "--agent", "all").stdout
    assert registered(repo) == dict.fromkeys(SERVER_FILES, True)
    assert "no MCP server was registered" not in out
    assert "call the `resume` tool" in (repo / ".cursor/rules/ghstate.mdc").read_text()  # the rule init wrote, replaced
    assert_valid(repo)


def test_the_sdk_is_looked_for_in_the_python_that_runs_ghstate(repo, run, monkeypatch, tmp_path):
    """A ghstate on PATH from another environment: its Python is asked (find_spec, no import), not ours."""
    import subprocess
    import sys

    bare = tmp_path / "bare"  # a Python without the SDK (no site-packages of ours)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    for python, expected in ((bare / "bin" / "python"), False), (sys.executable, True):
        script = tmp_path / "bin" / "ghstate"
        script.parent.mkdir(exist_ok=True)
        script.write_text(f"#!{python}\nfrom ghstate.cli import main\nmain()\n")
        script.chmod(0o755)
        monkeypatch.setattr("shutil.which", lambda name, *a, s=str(script), **k: s if name == "ghstate" else None)
        from ghstate.agents.setup import sdk_available

        assert sdk_available("ghstate") is expected, python
        assert sdk_available(f"{python} -m ghstate") is expected


def test_codex_hooks_come_with_the_exact_trust_step(repo, run):
    out = run("init", "--agent", "codex").stdout
    note = " ".join(out.split())
    assert "Codex runs the hooks in .codex/hooks.json only after you trust them" in note
    assert f'[projects."{repo}"] with trust_level = "trusted" in ~/.codex/config.toml' in note
    assert "codex exec --trust" in note and "'Trust all and continue'" in note and "/hooks" in note
    assert "Codex runs the hooks" not in run("init", "--agent", "codex").stdout  # nothing written: nothing to say
    assert "Codex runs the hooks" not in run("init", "--agent", "claude").stdout


ONE_LINE_ENTRY = '"other": {"command": "x", "args": []}'
LAYOUTS = {
    "compact": '{"mcpServers":{"other":{"command":"x","args":[]}}}',
    "one-line": '{"mcpServers": {' + ONE_LINE_ENTRY + '}}\n',
    "2 spaces": '{\n  "mcpServers": {\n    ' + ONE_LINE_ENTRY + '\n  },\n  "x": [1, 2]\n}\n',
    "4 spaces": '{\n    "mcpServers": {\n        ' + ONE_LINE_ENTRY + ',\n        "b": {\n            "command": "y"\n'
                '        }\n    }\n}',
    "tabs": '{\n\t"mcpServers": {\n\t\t' + ONE_LINE_ENTRY + '\n\t}\n}\n',
    "trailing": '{\n  "mcpServers": {\n    ' + ONE_LINE_ENTRY + '\n  }\n}\n\n\n',
    "crlf": '{\r\n  "mcpServers": {\r\n    ' + ONE_LINE_ENTRY + '\r\n  }\r\n}\r\n',
    "empty servers": '{\n  "mcpServers": {},\n  "other": {"command": "x", "args": []}\n}\n',
    "no servers": '{ "keep": {"a": 1, "b": [true, null]} }',
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_persons_json_keeps_its_layout(repo, run, layout):
    user = LAYOUTS[layout]
    (repo / ".mcp.json").write_text(user, newline="")
    run("init", "--agent", "claude")
    new = (repo / ".mcp.json").read_bytes().decode()
    expected = json.loads(user)
    expected.setdefault("mcpServers", {})["ghstate"] = {"type": "stdio", "command": "ghstate",
                                                        "args": ["mcp", "--agent", "claude-code"]}
    assert json.loads(new) == expected
    # the person's text is all there, in order, as it was: ghstate's entry is inserted, nothing re-serialised
    kept = iter(new)
    assert all(ch in kept for ch in user), new
    if ONE_LINE_ENTRY.replace(" ", "") in user.replace(" ", ""):
        assert any(line.strip().startswith(ONE_LINE_ENTRY.split(":")[0]) and line.rstrip().rstrip(",").endswith("}")
                   for line in new.splitlines()) or "\n" not in user.strip(), new
    if "\n" not in user.strip():
        assert "\n" not in new.strip()  # a one-line file stays one line
    if "\r\n" in user:
        assert "\n" not in new.replace("\r\n", "")
    assert run("init", "--agent", "claude").stdout.count("MCP server already there") == 1


def test_json_insertion_against_hypothesis_layouts():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from strategies import examples
    from strategies import json_settings as docs

    from ghstate.agents.hosts import CLAUDE_HOOKS, add_hooks, add_mcp_server, edit_json, mcp_entry

    @settings(max_examples=examples(150), deadline=None)
    @given(docs, st.sampled_from([None, 1, 2, 4, "\t"]), st.sampled_from([(",", ":"), (", ", ": ")]),
           st.booleans(), st.sampled_from(["", "\n", "\n\n  "]))
    def check(doc, indent, separators, servers, tail):
        if servers:
            doc = {**doc, "mcpServers": {"other": {"command": "x", "args": []}}}
        user = json.dumps(doc, indent=indent, separators=separators if indent is None else (",", separators[1]),
                          ensure_ascii=False) + tail

        def change(d):
            return add_mcp_server(d, "f", mcp_entry("ghstate", "claude")) | add_hooks(d, "f", CLAUDE_HOOKS,
                                                                                       "ghstate", "claude")
        merged = json.loads(user)
        change(merged)
        new = edit_json(user, "f", change)
        assert json.loads(new) == merged
        kept = iter(new)
        assert all(ch in kept for ch in user)  # every character of the person's file, in order

    check()


def test_only_the_policy_of_ghstate_belongs_in_git(repo, run, sample_file, tmp_path):
    """What of ``.ghstate/`` belongs in git is config.toml, templates/ and the .gitignore: the checkpoints are the
    clone's, in the git folder (out of the work tree), and where GHSTATE_DIR puts a store in ``.ghstate/``
    (or a worktree kept its own, from before) its .gitignore keeps it out too: in git, a checkout or stash rolls
    its checkpoints back (issue 48)."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout

    run("init")
    ignore = (repo / ".ghstate" / ".gitignore").read_text()
    (repo / ".ghstate" / "config.toml").write_text("stale_days = 40\n")
    (repo / ".ghstate" / "templates").mkdir()
    (repo / ".ghstate" / "templates" / "prompt.md.j2").write_text("{{ prompt }}\n")
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--risk", "the chain starts")
    run("hook", "session-start", input=json.dumps({"source": "compact", "session_id": "s", "cwd": str(repo)}))
    store = {"GHSTATE_DIR": str(repo / ".ghstate")}
    run("checkpoint", "--file", str(sample_file), env=store)
    run("checkpoint", "--risk", "the chain starts", env=store)
    run("close", "1", env=store)
    pending = repo / ".ghstate" / "pending"  # a write kept for GitHub, as push would find it
    pending.mkdir()
    (pending / "1-new.json").write_text("{}\n")
    for name in ("seen.json", ".seen.lock"):  # what the hooks of an older ghstate remembered there
        (repo / ".ghstate" / name).write_text("{}\n")
    local = {".ghstate/seen.json", ".ghstate/.seen.lock", ".ghstate/.lock", ".ghstate/pending/1-new.json",
             ".ghstate/closed/1.md", ".ghstate/chain/1/1.json"}
    assert all((repo / name).exists() for name in local) and (repo / ".git" / "ghstate" / "1.md").is_file()
    git("add", "-A")
    staged = set(git("diff", "--cached", "--name-only").split())
    assert {name for name in staged if name.startswith(".ghstate/")} == {
        ".ghstate/.gitignore", ".ghstate/config.toml", ".ghstate/templates/prompt.md.j2"}, staged
    assert "/seen.json" in ignore and "/pending/" in ignore and "/chain/" in ignore and "/[1-9]*.md" in ignore
    assert "In git: config.toml, templates/ and this file." in ignore


def test_the_local_store_keeps_out_of_the_work_tree_without_init(repo, run, sample_file):
    import subprocess

    run("checkpoint", "--file", str(sample_file))  # the first write, no init
    assert (repo / ".git" / "ghstate" / "1.md").is_file() and not (repo / ".ghstate").exists()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout
    assert status == ""
