"""``ghstate doctor``: the set-up checked, one row a check. Without ``github``: this machine and repository
(git, the configuration, the token and where it comes from, the store folder, each agent host's hook and
MCP server, the MCP SDK, ``ghstate`` on PATH), and where the store is GitHub one request: whether the repository
is public and whose the token is. With it: what the write log (a chain of commits on a ref
per checkpoint) and claims rely on in GitHub, probed on the configured repository (``ghstate.github.probes``).
A row is (name, ok, detail): ok False is a failure, None a check that does not apply or could not be made."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

from ghstate import config
from ghstate.errors import GhstateError
from ghstate.git import gitinfo


class Row(NamedTuple):
    name: str
    ok: bool | None
    detail: str


# A host's file that registers ghstate's hook and its MCP server, as ``ghstate init`` writes them.
HOST_FILES = (("Claude Code", ".claude/settings.json", ".mcp.json"), ("Codex CLI", ".codex/hooks.json",
              ".codex/config.toml"), ("Gemini CLI", ".gemini/settings.json", ".gemini/settings.json"),
              ("Cursor", "", ".cursor/mcp.json"))


def local_rows(repo: str | None = None, store: str | None = None) -> list[Row]:
    """This machine and repository."""
    root = gitinfo.find_root(Path.cwd())
    git = gitinfo.version()
    where = f"repository at {root}" if root else ("not in a git repository: checkpoints live in this folder's "
                                                 ".ghstate/, found by folder rather than branch")
    rows = [Row("git", bool(git) if root else None, f"git {git}, {where}" if git else "git cannot be run: install it")]
    try:
        settings = config.build(repo=repo, store=store)
    except GhstateError as exc:
        return [*rows, Row("configuration", False, str(exc))]
    rows.append(Row("configuration", True, f"store {settings.store}, repository {settings.repo or 'none'}"))
    host = config.api_hosts(settings.api_url)[0]
    source = config.token_source(host=host)
    names = ", ".join(config.token_names(host))
    rows.append(Row("GitHub token", bool(source) or None,
                    f"from {source} (never shown)" if source else f"none: {names} or 'gh auth login' "
                    "for the GitHub store; the local store needs none"))
    if settings.store == "github":
        rows.extend(_visibility(settings))
    rows.append(_writable(settings.store_dir))
    rows.extend(_hosts(settings.root, settings.policy.checkpoint_at))
    rows.extend(plugin_rows(config.host_homes(), settings.root))
    return rows


def _visibility(settings: config.Settings) -> list[Row]:
    """Whether the repository is public, where its checkpoints are then public issues, and whose the token is (a
    person's own, shared with their agents, makes their saves one editor's): one request."""
    from ghstate.github.repository import OWN_TOKEN, PUBLIC_NOTE, visibility_and_viewer
    from ghstate.github.store import GitHubStore  # GitHub as every service has it (services.app.build_app)

    name, owner = "repository visibility", "the token's account"
    try:
        seen, login = visibility_and_viewer(GitHubStore.connect(settings).api)
    except GhstateError as exc:
        return [Row(name, None, "not read: " + " ".join(str(exc).split()))]
    said = (PUBLIC_NOTE.format(repo=settings.repo) if seen == "PUBLIC" else
            f"{seen.lower() or 'not public'}: its checkpoints are seen by who can see {settings.repo}")
    if not login:
        return [Row(name, True, said), Row(owner, None, "not read")]
    if login.endswith("[bot]"):
        return [Row(name, True, said), Row(owner, True, f"{login}, a GitHub App's: agents write as an editor of "
                                           "their own, apart from every person")]
    return [Row(name, True, said), Row(owner, None, OWN_TOKEN.format(login=login))]


def _writable(folder: Path) -> Row:
    """Whether the store can write there, tried rather than inferred from permission bits (which say yes to
    root everywhere, /proc included): a file made and removed in the folder, or, when the folder is not
    there yet, a folder made and removed where the first write will make it (with its parents)."""
    import tempfile

    name = "store folder"
    there = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if there is not None and not there.is_dir():
        where = "is a file" if there == folder else f"cannot be made: {there} is a file"
        return Row(name, False, f"{folder} {where}, not a folder: set GHSTATE_DIR to a folder")
    try:
        if there == folder:
            handle, probe = tempfile.mkstemp(prefix=".doctor-", dir=folder)
            os.close(handle)
            os.unlink(probe)
            return Row(name, True, f"{folder} can be written")
        os.rmdir(tempfile.mkdtemp(prefix=".doctor-", dir=there))
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        verb = "written" if there == folder else "made"
        return Row(name, False, f"{folder} cannot be {verb} ({why}): check its permissions")
    return Row(name, True, f"{folder} is made on the first write (its parent {there} can be written)")


def _hosts(root: Path, checkpoint_at: int = 60) -> list[Row]:
    """Each host set up in the repository: its hooks and MCP server registered, and what they need here."""
    rows: list[Row] = []
    sdk = importlib.util.find_spec("mcp") is not None
    on_path = shutil.which("ghstate")
    for host, hooks, servers in HOST_FILES:
        hook_text = _text(root / hooks) if hooks else None
        server_text = _text(root / servers)
        if hook_text is None and server_text is None:
            continue
        hooked = bool(hook_text) and "hook session-start" in hook_text
        served = bool(server_text) and "ghstate" in server_text and "mcp" in server_text
        if hooks:
            rows.append(Row(f"{host} hook", hooked or None,
                            f"registered in {hooks} (this repository, by 'ghstate init')" if hooked else
                            f"not registered: run 'ghstate init --agent {_agent(host)}'"))
            rows.append(_due_row(host, hooks, bool(hook_text) and "hook checkpoint-due" in hook_text, checkpoint_at))
        if served:
            rows.append(Row(f"{host} MCP server", sdk, f"registered in {servers}" + ("" if sdk else
                            ", but the MCP SDK is not installed here: pip install 'ghstate[mcp]'")))
        bare = any(t and ("\"ghstate " in t or "'ghstate " in t or "= \"ghstate\"" in t)
                   for t in (hook_text, server_text))
        if bare and not on_path:
            rows.append(Row(f"{host}: ghstate on PATH", False, "its files call 'ghstate', which is not on PATH: "
                            "install it for daily use (see the README's first screen)"))
    rows.append(Row("MCP SDK", sdk or None, "installed" if sdk else "not installed (the 'mcp' extra): the hooks work "
                    "without it; agent hosts' MCP servers need it"))
    return rows


def _due_row(host: str, hooks: str, registered: bool, checkpoint_at: int) -> Row:
    """The hook that asks for a checkpoint when the context fills: whether it is set up, and at what fill."""
    name = f"{host} checkpoint reminder"
    if not registered:
        return Row(name, None, f"not registered: run 'ghstate init --agent {_agent(host)}' so that the agent is asked "
                               "for a checkpoint when its context fills")
    if checkpoint_at <= 0:
        return Row(name, None, f"registered in {hooks}, and off: checkpoint_at = 0 in the config")
    return Row(name, True, f"registered in {hooks}: asks for a checkpoint at {checkpoint_at}% of the context "
                           "(checkpoint_at in the config)")


def _agent(host: str) -> str:
    return host.split()[0].lower()


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# What removes ghstate's plugin or extension from each host (the person's, not the repository's: init --remove
# leaves it alone).
UNINSTALL = {"Claude Code": "claude plugin uninstall {id}", "Codex CLI": "codex plugin remove {id}",
             "Gemini CLI": "gemini extensions uninstall ghstate"}


def installed_plugins(homes: dict[str, Path]) -> list[tuple[str, str, bool]]:
    """ghstate as each host installed it for the person, in every repository: (host, id, enabled), from the
    hosts' own files (Claude Code's settings ``enabledPlugins``, Codex's config ``[plugins."ghstate@…"]``,
    Gemini CLI's ``extensions/ghstate``)."""
    import json

    found: list[tuple[str, str, bool]] = []
    try:
        settings = json.loads(_text(homes["claude"] / "settings.json") or "{}")
    except ValueError:
        settings = {}
    enabled = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    for key, value in (enabled.items() if isinstance(enabled, dict) else ()):
        if key.split("@")[0] == "ghstate":
            found.append(("Claude Code", key, value is True))
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        codex = tomllib.loads(_text(homes["codex"] / "config.toml") or "")
    except ValueError:
        codex = {}
    plugins = codex.get("plugins")
    for key, value in (plugins.items() if isinstance(plugins, dict) else ()):
        if key.split("@")[0] == "ghstate" and isinstance(value, dict):
            found.append(("Codex CLI", key, value.get("enabled", True) is not False))
    if (homes["gemini"] / "extensions" / "ghstate" / "gemini-extension.json").is_file():
        found.append(("Gemini CLI", "ghstate", True))
    return found


def plugin_rows(homes: dict[str, Path], root: Path) -> list[Row]:
    """A row for each host where the person installed ghstate for every repository; where this repository is
    set up by ``init`` for that host too, the row says so (both hooks fire, and the session gets each prompt
    once)."""
    rows = []
    for host, plugin, enabled in installed_plugins(homes):
        hooks = next(h for name, h, _ in HOST_FILES if name == host)
        also = "hook session-start" in (_text(root / hooks) or "")  # init's hook in this repository
        detail = (f"{plugin}, installed for you in every repository" + ("" if enabled else " (disabled)") +
                  ("; this repository is set up by 'ghstate init' too: both hooks fire, each prompt is given once"
                   if also else "") + f"; remove it with: {UNINSTALL[host].format(id=plugin)}")
        rows.append(Row(f"{host} plugin", True if enabled else None, detail))
    return rows
