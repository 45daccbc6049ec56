"""The agent hosts themselves as judges of ghstate's plugins (plugins/, .claude-plugin/marketplace.json): each
validates them, installs them into a scratch HOME, lists what they hold, and gives the model the checkpoint
through the installed hook, alone and beside what `ghstate init` wrote (then each prompt once).

Skipped unless the host binaries are found, as in test_hosts_real.py: GHSTATE_HOSTS_BIN (a folder such as
DIR/node_modules/.bin after `npm install --prefix DIR @anthropic-ai/claude-code @openai/codex
@google/gemini-cli`) or PATH. Offline: HOME is a temporary folder, the model a loopback stub.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE
from model_stub import ModelStub
from test_hosts_real import ResponsesStub, codex_provider, find_host, gemini_first_request

import ghstate

ROOT = Path(__file__).resolve().parents[1]
POINTER = "This branch has a ghstate checkpoint: local #1"

pytestmark = [pytest.mark.thorough,  # the real agent hosts: the thorough tier (tests/conftest.py)
              pytest.mark.skipif(not any(find_host(n) for n in ("claude", "codex", "gemini")),
                                 reason="no agent host is installed (set GHSTATE_HOSTS_BIN to their folder)"),
              pytest.mark.xdist_group("agent-hosts")]  # one host at a time, as in test_hosts_real.py


def host(name: str) -> str:
    found = find_host(name)
    if found is None:
        pytest.skip(f"{name} is not installed (set GHSTATE_HOSTS_BIN to the folder of the host binaries)")
    return found


class Person:
    """A person's machine: a HOME of their own that trusts ``repo``, this checkout's ghstate on PATH as
    `ghstate`, and the marketplace as a clone of ghstate holds it (a copy of this checkout's)."""

    def __init__(self, repo: Path, tmp_path: Path) -> None:
        self.repo = repo.resolve()
        self.home = tmp_path / "home"
        (self.home / ".gemini").mkdir(parents=True)
        (self.home / ".codex").mkdir()
        self.market = tmp_path / "clone"
        shutil.copytree(ROOT / ".claude-plugin", self.market / ".claude-plugin")
        shutil.copytree(ROOT / "plugins", self.market / "plugins")
        real = str(self.repo)
        (self.home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {real: {
            "hasTrustDialogAccepted": True, "enableAllProjectMcpServers": True}}}))
        (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(
            {real: "TRUST_FOLDER", str(self.market / "plugins" / "gemini"): "TRUST_FOLDER"}))
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(
            {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        self.codex_trust = f'[projects."{real}"]\ntrust_level = "trusted"\n'
        (self.home / ".codex" / "config.toml").write_text(self.codex_trust)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        wrapper = bin_dir / "ghstate"
        wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m ghstate "$@"\n')
        wrapper.chmod(0o755)
        self.ghstate = str(wrapper)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GH_", "GITHUB_", "GHSTATE_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_",
                                    "CLAUDE_", "CODEX_"))}
        env.update(HOME=str(self.home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", DISABLE_TELEMETRY="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", GIT_CONFIG_GLOBAL=os.devnull)
        self.env = env
        self.run_ghstate("checkpoint", "--file", "-", input=SAMPLE)

    def run(self, *args: str, env: dict | None = None, input: str | None = None, code: int | None = 0,
            timeout: int = 180) -> subprocess.CompletedProcess:
        proc = subprocess.run(list(args), cwd=self.repo, env={**self.env, **(env or {})}, input=input,
                              capture_output=True, text=True, timeout=timeout)
        if code is not None:
            assert proc.returncode == code, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def run_ghstate(self, *args: str, input: str | None = None) -> str:
        return self.run(self.ghstate, *args, input=input, timeout=60).stdout


@pytest.fixture
def person(repo, tmp_path) -> Person:
    return Person(repo, tmp_path)


# ------------------------------------------------------------------------------------ Claude Code


def test_claude_code_validates_the_marketplace_and_the_plugin_without_a_warning(person):
    claude = host("claude")
    for target, kind in ((ROOT, "marketplace"), (ROOT / "plugins" / "ghstate", "plugin")):
        report = json.loads(person.run(claude, "plugin", "validate", "--strict", "--json", str(target)).stdout)
        assert report["success"] is True and report["manifest"]["type"] == kind
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
        findings = (report.get("directory") or {}).get("findings") or []
        # The plugin directory's own catalogue checks (not the validation): no icon, as docs/agents.md explains.
        assert [f["code"] for f in findings] in ([], ["ICON_MISSING"])


def _contexts(body: dict) -> str:
    return json.dumps(body).count(POINTER)


def test_claude_code_installs_the_plugin_and_its_hook_gives_the_prompt_once_beside_inits(person):
    claude = host("claude")
    person.run(claude, "plugin", "marketplace", "add", str(person.market))
    person.run(claude, "plugin", "install", "ghstate@ghstate")
    details = person.run(claude, "plugin", "details", "ghstate@ghstate").stdout
    assert f"ghstate {ghstate.__version__}" in details
    assert "Hooks (3)  SessionStart, PreCompact, Stop" in details and "MCP servers (1)  ghstate" in details
    assert "checkpoint, resume" in details  # /ghstate:checkpoint and /ghstate:resume
    assert "Claude Code plugin" in person.run_ghstate("doctor")  # doctor reads what Claude Code wrote
    with ModelStub() as model:
        env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}", "ANTHROPIC_API_KEY": "sk-test"}

        def ask(*args: str) -> str:
            proc = person.run(claude, "-p", *args, "--output-format", "json", env=env)
            return json.loads(proc.stdout.strip().splitlines()[-1])["session_id"]

        def session(label: str) -> None:
            model.requests.clear()
            first = ask("say OK")
            assert _contexts(model.requests[0]) == 1, f"{label}: the startup line, once"
            model.requests.clear()
            ask("--resume", first, "/compact")
            ask("--resume", first, "say OK again")
            after = json.dumps(model.requests[-1])
            assert after.count("<checkpoint>") == 1 and "Next phase: Phase 2: matcher abstraction" in after, label

        session("the plugin alone")
        person.run_ghstate("init", "--agent", "claude")
        session("the plugin and init's set-up")
    servers = person.run(claude, "mcp", "list").stdout
    assert servers.count("ghstate mcp --agent claude-code") == 1 and "✔ Connected" in servers  # one server
    person.run_ghstate("init", "--remove")
    assert "ghstate@ghstate" in person.run(claude, "plugin", "list").stdout  # init --remove leaves it alone
    person.run(claude, "plugin", "uninstall", "ghstate@ghstate")  # as docs/agents.md says to remove it
    assert "ghstate@ghstate" not in person.run(claude, "plugin", "list").stdout


def test_claude_code_shows_the_plugins_one_line_where_ghstate_is_missing(person):
    claude = host("claude")
    person.run(claude, "plugin", "marketplace", "add", str(person.market))
    person.run(claude, "plugin", "install", "ghstate@ghstate")
    without = os.pathsep.join(p for p in ("/usr/bin", "/bin") if not (Path(p) / "ghstate").exists())
    with ModelStub() as model:
        proc = person.run(claude, "-p", "say OK", "--output-format", "stream-json", "--verbose",
                          "--include-hook-events", env={"PATH": without, "ANTHROPIC_API_KEY": "sk-test",
                                                        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}"})
    answers = [e for e in map(json.loads, proc.stdout.splitlines())
               if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]
    assert len(answers) == 1 and answers[0]["exit_code"] == 0 and answers[0]["stderr"] == ""
    assert len(answers[0]["stdout"].splitlines()) == 1
    assert "'ghstate' command is not on PATH" in json.loads(answers[0]["stdout"])["systemMessage"]


# ------------------------------------------------------------------------------------ Gemini CLI


def _gemini_first_request(person: Person, gemini: str) -> str:
    """What the model is sent first (it carries the session's context)."""
    return gemini_first_request(gemini, person.repo, person.env)


def test_gemini_cli_validates_installs_and_runs_the_extension(person):
    gemini = host("gemini")
    source = str(person.market / "plugins" / "gemini")
    person.run(gemini, "extensions", "validate", source)
    person.run(gemini, "extensions", "install", source, "--consent", "--skip-settings", input="")
    listed = person.run(gemini, "extensions", "list").stdout + person.run(gemini, "extensions", "list").stderr
    assert f"ghstate ({ghstate.__version__})" in listed and "GEMINI.md" in listed
    assert "MCP servers:\n  ghstate" in listed
    assert "Gemini CLI plugin" in person.run_ghstate("doctor")
    seen = _gemini_first_request(person, gemini)
    assert seen.count(POINTER) == 1 and "<hook_context>" in seen  # the extension's hook
    assert "Working state: ghstate checkpoints" in seen  # its GEMINI.md
    assert "call resume first" in seen  # its MCP server's instructions
    person.run_ghstate("init", "--agent", "gemini")
    assert _gemini_first_request(person, gemini).count(POINTER) == 1  # beside init's hook: once
    person.run_ghstate("init", "--remove")
    person.run(gemini, "extensions", "uninstall", "ghstate")
    assert not (person.home / ".gemini" / "extensions" / "ghstate").exists()


# ------------------------------------------------------------------------------------ Codex CLI


def _codex_first_request(person: Person, codex: str) -> str:
    stub = ResponsesStub.start()
    config = person.home / ".codex" / "config.toml"
    kept = codex_provider(config, stub.server_address[1])
    try:  # a plugin's hooks, like a project's, run once trusted: the flag trusts them for this run
        person.run(codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "say OK",
                   env={"OPENAI_API_KEY": "sk-test"})
    finally:
        stub.close()
        config.write_text(kept)
    assert stub.bodies, "Codex sent nothing to the model"
    return json.dumps(stub.bodies[0])


def test_codex_installs_the_plugin_from_the_same_marketplace_and_runs_its_hook_and_server(person):
    codex = host("codex")
    person.run(codex, "plugin", "marketplace", "add", str(person.market))
    person.run(codex, "plugin", "add", "ghstate@ghstate")
    listed = person.run(codex, "plugin", "list").stdout
    assert "ghstate@ghstate" in listed and ghstate.__version__ in listed
    servers = person.run(codex, "mcp", "list").stdout
    line = next(line for line in servers.splitlines() if line.startswith("ghstate "))
    assert "mcp --agent codex" in line and "enabled" in line
    assert "Codex CLI plugin" in person.run_ghstate("doctor")
    seen = _codex_first_request(person, codex)
    assert seen.count(POINTER) == 1 and "call the `resume` tool of the ghstate MCP server" in seen
    person.run_ghstate("init", "--agent", "codex")
    assert _codex_first_request(person, codex).count(POINTER) == 1  # beside init's hook: once
    person.run_ghstate("init", "--remove")
    assert "ghstate@ghstate" in person.run(codex, "plugin", "list").stdout
    person.run(codex, "plugin", "remove", "ghstate@ghstate")
