"""ghstate as each host's plugin (plugins/, .claude-plugin/marketplace.json): one version, the same hooks and
server as `init` writes, the one line when ghstate is missing, and what doctor and `init --remove` make of a
person who has both. The hosts themselves judge the plugins in test_plugins_real.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ghstate
from ghstate.agents import hosts

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugins" / "ghstate"  # Claude Code's and Codex's plugin
EXTENSION = ROOT / "plugins" / "gemini"  # Gemini CLI's extension


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_manifest_carries_ghstates_version():
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    versions = {
        "marketplace entry": next(p["version"] for p in market["plugins"] if p["name"] == "ghstate"),
        "Claude Code plugin": load(PLUGIN / ".claude-plugin" / "plugin.json")["version"],
        "Codex plugin": load(PLUGIN / ".codex-plugin" / "plugin.json")["version"],
        "Gemini CLI extension": load(EXTENSION / "gemini-extension.json")["version"],
    }
    assert versions == dict.fromkeys(versions, ghstate.__version__), "a new version of ghstate: set it in each manifest"


def test_the_marketplace_lists_the_plugin_folder_under_ghstates_names():
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["name"] == "ghstate" and [p["name"] for p in market["plugins"]] == ["ghstate"]
    assert (ROOT / market["plugins"][0]["source"]).resolve() == PLUGIN
    manifests = (PLUGIN / ".claude-plugin" / "plugin.json", PLUGIN / ".codex-plugin" / "plugin.json",
                 EXTENSION / "gemini-extension.json")
    names = {load(path)["name"] for path in manifests}
    assert names == {"ghstate"}  # so that commands are /ghstate:checkpoint and /ghstate:resume


def _hooks(path: Path) -> list[tuple[str, str | None, str, dict]]:
    """(event, matcher, command, the entry's other fields) of a hooks file."""
    table = load(path)["hooks"]
    return [(event, entry.get("matcher"), item["command"],
             {k: v for k, v in item.items() if k not in ("type", "command")})
            for event, entries in table.items() for entry in entries for item in entry["hooks"]]


@pytest.mark.parametrize(("path", "init_hooks", "host", "root"), [
    (PLUGIN / "hooks" / "hooks.json", hosts.CLAUDE_HOOKS, "claude", "${CLAUDE_PLUGIN_ROOT}/scripts/run"),
    (PLUGIN / "codex" / "hooks.json", hosts.CODEX_HOOKS, "codex", "${PLUGIN_ROOT}/scripts/run"),
    (EXTENSION / "hooks" / "hooks.json", hosts.GEMINI_HOOKS, "gemini", "${extensionPath}${/}scripts${/}run"),
])
def test_the_plugins_hooks_are_inits(path, init_hooks, host, root):
    """The same events, sources, timeouts and hook commands as `init` writes for the host, run through the
    plugin's script (which finds ghstate, or says it is missing)."""
    wanted = [(h.event, h.matcher,
               f'sh "{root}" ' + hosts.hook_command("ghstate", h.sub, host).removeprefix("ghstate "), h.extra)
              for h in init_hooks]
    assert _hooks(path) == wanted
    assert any(h.matcher == "startup|resume|clear|compact" for h in init_hooks) or host == "gemini"


@pytest.mark.parametrize(("path", "host"), [(PLUGIN / ".mcp.json", "claude"), (PLUGIN / "codex" / "mcp.json", "codex"),
                                            (EXTENSION / "gemini-extension.json", "gemini")])
def test_the_plugins_server_is_inits_command(path, host):
    """The bare `ghstate mcp --agent NAME`, as `init` registers it: where both are set up, Claude Code runs a
    plugin's server that repeats a configured one once, and Gemini CLI takes the settings' one."""
    assert load(path)["mcpServers"] == {"ghstate": hosts.mcp_entry("ghstate", host)}


def test_the_extensions_commands_and_context_are_inits():
    for name in ("checkpoint", "resume"):
        shipped = (ROOT / "templates" / f"gemini-{name}.toml").read_bytes()
        assert (EXTENSION / "commands" / "ghstate" / f"{name}.toml").read_bytes() == shipped
    assert (EXTENSION / "GEMINI.md").read_bytes() == (ROOT / "templates" / "agents-md.md").read_bytes()
    assert load(EXTENSION / "gemini-extension.json")["contextFileName"] == "GEMINI.md"
    assert (EXTENSION / "scripts" / "run").read_bytes() == (PLUGIN / "scripts" / "run").read_bytes()


def test_the_claude_commands_use_the_plugins_server():
    for name in ("checkpoint", "resume"):
        text = (PLUGIN / "commands" / f"{name}.md").read_text()
        assert text.startswith("---\ndescription: ") and f"`{name}` tool of the `ghstate` MCP server" in text


RUN = PLUGIN / "scripts" / "run"
SH = shutil.which("sh")  # looked up before the tests isolate PATH
needs_sh = pytest.mark.skipif(SH is None, reason="the plugin's script needs a POSIX shell")


@needs_sh
def test_without_ghstate_a_hook_says_so_in_one_line_and_exits_0(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path)}
    sh = str(SH)
    for sub in ("session-start", "pre-compact"):
        proc = subprocess.run([sh, str(RUN), "hook", sub], env=env, capture_output=True, text=True, input="{}")
        assert proc.returncode == 0 and proc.stderr == ""
        assert len(proc.stdout.splitlines()) == 1
        message = json.loads(proc.stdout)["systemMessage"]  # shown to the person, not given to the model
        assert "'ghstate' command is not on PATH" in message
        assert ghstate.INSTALL in message, "the daily install changed: say it in plugins/*/scripts/run"
        # Codex checks a hook's answer strictly against its schema (fixtures from its binary): this one passes
        jsonschema = pytest.importorskip("jsonschema")
        schema = ROOT / "tests" / "fixtures" / "hosts" / "codex" / f"{sub}.command.output.schema.json"
        jsonschema.validate(json.loads(proc.stdout), load(schema))
    proc = subprocess.run([sh, str(RUN), "mcp", "--agent", "claude-code"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert "'ghstate' command is not on PATH" in proc.stderr


@needs_sh
def test_with_ghstate_on_path_the_script_runs_it_with_the_hooks_input(tmp_path, repo, run):
    """The plugin's hook, as Claude Code runs it, gives the branch's pointer."""
    from conftest import SAMPLE

    run("checkpoint", "--file", "-", input=SAMPLE)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ghstate").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m ghstate "$@"\n')
    (bin_dir / "ghstate").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "GHSTATE_STORE": "local"}
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s", "cwd": str(repo)})
    proc = subprocess.run([str(SH), str(RUN), "hook", "session-start"], env=env, cwd=repo, input=event,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("This branch has a ghstate checkpoint: local #1")


def installed_everywhere(home: Path) -> None:
    """The files each host keeps once a person installed ghstate for every repository (as the hosts write them:
    see test_plugins_real.py)."""
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"ghstate@ghstate": True}}))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('[plugins."ghstate@ghstate"]\nenabled = true\n')
    extension = home / ".gemini" / "extensions" / "ghstate"
    extension.mkdir(parents=True)
    shutil.copy(EXTENSION / "gemini-extension.json", extension)


@pytest.fixture
def person(monkeypatch, repo) -> Path:
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = Path(os.environ["HOME"])
    installed_everywhere(home)
    return home


def test_doctor_names_the_plugin_and_inits_set_up_both(person, repo, run):
    run("init", "--agent", "claude,codex")
    rows = {r["check"]: r for r in json.loads(run("doctor", "--json", code=None).stdout)}
    hook = rows["Claude Code hook"]["detail"]
    assert hook == "registered in .claude/settings.json (this repository, by 'ghstate init')"
    claude = rows["Claude Code plugin"]
    assert claude["ok"] is True
    assert claude["detail"].startswith("ghstate@ghstate, installed for you in every repository")
    assert "set up by 'ghstate init' too: both hooks fire, each prompt is given once" in claude["detail"]
    assert "claude plugin uninstall ghstate@ghstate" in claude["detail"]
    assert "set up by 'ghstate init' too" in rows["Codex CLI plugin"]["detail"]
    gemini = rows["Gemini CLI plugin"]  # this repository has no Gemini CLI set-up
    assert "init" not in gemini["detail"] and "gemini extensions uninstall ghstate" in gemini["detail"]


def test_doctor_without_plugins_has_no_plugin_row(repo, run):
    assert not [r for r in json.loads(run("doctor", "--json", code=None).stdout) if r["check"].endswith(" plugin")]


def test_a_disabled_plugin_is_said_and_a_broken_settings_file_is_no_plugin(person, repo, run):
    (person / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"ghstate@ghstate": False}}))
    (person / ".codex" / "config.toml").write_text("[plugins\n")
    rows = {r["check"]: r for r in json.loads(run("doctor", "--json", code=None).stdout)}
    assert rows["Claude Code plugin"]["ok"] is None and "(disabled)" in rows["Claude Code plugin"]["detail"]
    assert "Codex CLI plugin" not in rows


def test_init_remove_leaves_the_plugins_alone(person, repo, run):
    run("init", "--agent", "all")
    before = {p: p.read_bytes() for p in person.rglob("*") if p.is_file()}
    run("init", "--remove")
    assert {p: p.read_bytes() for p in person.rglob("*") if p.is_file()} == before
    assert not (repo / ".claude" / "settings.json").exists()
    rows = [r["check"] for r in json.loads(run("doctor", "--json", code=None).stdout)]
    assert {"Claude Code plugin", "Codex CLI plugin", "Gemini CLI plugin"} <= set(rows)
