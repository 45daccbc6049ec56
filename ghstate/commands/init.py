"""``ghstate init``: set a repository up for ghstate and its agent hosts. Safe to run again: it only adds
what is missing, and what it cannot read stops it before anything is written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import click

from ghstate.agents import hosts
from ghstate.commands.common import make_app, store_options
from ghstate.local.store import atomic_write
from ghstate.templating import builtin_templates

# (template, target) of the files each host gets as they are; edited ones are kept unless --force
FILES = {
    None: (("issue-form.yml", ".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml"),),
    "claude": (("claude-checkpoint.md", ".claude/commands/checkpoint.md"),
               ("claude-resume.md", ".claude/commands/resume.md")),
    "gemini": (("gemini-checkpoint.toml", ".gemini/commands/ghstate/checkpoint.toml"),
               ("gemini-resume.toml", ".gemini/commands/ghstate/resume.toml")),
    "cursor": (("cursor-rule.mdc", ".cursor/rules/ghstate.mdc"),),
}


# A file init writes in one of two forms: the one it wrote before may be replaced by the other (the
# MCP server added since, say); a file a person edited is kept.
VARIANTS = {"cursor-rule.mdc": ("cursor-rule.mdc", "cursor-rule-cli.mdc")}


class Change(NamedTuple):
    """One file init would write: its new text (None: it stays as it is) and what to report."""

    target: str
    text: str | None
    outcome: str


def ghstate_command() -> str:
    """How a hook should call ghstate: ``ghstate`` when that is on PATH, else this program's own path
    (installed in a virtualenv that is not activated, the bare name would fail), or ``python -m``."""
    import shlex
    import shutil
    import sys

    argv0 = sys.argv[0] if sys.argv else ""
    found = shutil.which("ghstate")
    if argv0.endswith("__main__.py"):  # python -m ghstate
        return "ghstate" if found else f"{shlex.quote(sys.executable)} -m ghstate"
    if not argv0 or Path(argv0).stem != "ghstate":
        return "ghstate"
    me = Path(argv0).resolve()
    return "ghstate" if found and Path(found).resolve() == me else shlex.quote(str(me))


_COMMAND = re.compile(r"(?<=[`(])ghstate (?=(?:checkpoint|resume|show|lint|list|log)\b)")


def with_program(text: str, program: str) -> str:
    """A command or rule file's text calling ``program`` wherever it runs ghstate (a bare ``ghstate``
    would fail where it is not on PATH, as the hooks would)."""
    return text if program == "ghstate" else _COMMAND.sub(lambda _: f"{program} ", text)


def merge_hooks(settings: dict[str, Any], origin: str, program: str = "ghstate") -> bool:
    """Add ghstate's hooks to Claude Code settings, touching nothing else (see hosts.add_hooks)."""
    return hosts.add_hooks(settings, origin, hosts.CLAUDE_HOOKS, program, "claude")


def _read(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        return path.read_bytes().decode("utf-8")  # line endings as they are: CRLF stays CRLF
    except UnicodeDecodeError:
        from ghstate.errors import InputError

        raise InputError(f"{path} is not UTF-8 text; fix it, then run 'ghstate init' again "
                         "(nothing was changed)") from None


def choose_hosts(given: tuple[str, ...], root: Path) -> list[str]:
    """--agent values (repeated or comma-separated, 'all'), else the hosts the repository uses, else claude."""
    chosen: list[str] = []
    for value in given:
        for name in filter(None, (v.strip().lower() for v in value.split(","))):
            if name == "all":
                chosen.extend(hosts.HOSTS)
            elif name in hosts.HOSTS:
                chosen.append(name)
            else:
                raise click.BadParameter(f"{name!r} is not one of {', '.join(hosts.HOSTS)}, all", param_hint="--agent")
    chosen = chosen or hosts.detect(root) or ["claude"]
    return [h for h in hosts.HOSTS if h in chosen]


NO_SERVER = "MCP server not added: the MCP SDK is not installed (see the note below)"


def plan(root: Path, chosen: list[str], program: str, force: bool, servers: bool = True) -> list[Change]:
    """Every file init writes and its new text, worked out before anything is written. Without
    ``servers`` (the ghstate the hosts would run cannot import the MCP SDK, so a server could not
    start) no MCP server is registered; the hooks are."""
    changes: list[Change] = []

    def json_file(target: str, edit: Any, done: str, kept: str) -> None:
        path = root / target
        new = hosts.edit_json(_read(path), str(path), edit)
        changes.append(Change(target, new, done if new is not None else kept))

    def shipped(source: str) -> str:
        return with_program((builtin_templates() / source).read_text(encoding="utf-8"), program)

    def template(source: str, target: str) -> None:
        variants = VARIANTS.get(source, (source,))  # what init may have written there before
        if source == "cursor-rule.mdc" and not servers:  # no server to call: the rule says the command line
            source = "cursor-rule-cli.mdc"
        text = shipped(source)
        path = root / target
        current = _read(path) if path.exists() else None
        if current == text:
            changes.append(Change(target, None, "unchanged"))
        elif current is not None and not force and current not in {shipped(v) for v in variants}:
            changes.append(Change(target, None, "exists, kept as it is (--force replaces it)"))
        else:
            changes.append(Change(target, text, "written"))

    for source, target in FILES[None]:
        template(source, target)
    if "claude" in chosen:
        json_file(".claude/settings.json", lambda d: merge_hooks(d, str(root / ".claude/settings.json"), program),
                  "hooks added", "hooks already there")
        if servers:
            json_file(".mcp.json", lambda d: hosts.add_mcp_server(d, str(root / ".mcp.json"),
                                                                  hosts.mcp_entry(program, "claude", typed=True)),
                      "MCP server added", "MCP server already there")
        else:
            changes.append(Change(".mcp.json", None, NO_SERVER))
    if "codex" in chosen:
        path = root / ".codex/config.toml"
        if servers:
            new = hosts.with_codex_server(_read(path), str(path), program, force)
            changes.append(Change(".codex/config.toml", new, "MCP server added" if new is not None
                                  else "MCP server already there"))
        else:
            changes.append(Change(".codex/config.toml", None, NO_SERVER))
        json_file(".codex/hooks.json", lambda d: hosts.add_hooks(d, str(root / ".codex/hooks.json"),
                                                                 hosts.CODEX_HOOKS, program, "codex"),
                  "hooks added", "hooks already there")
    if "gemini" in chosen:
        origin = str(root / ".gemini/settings.json")

        def gemini(data: dict[str, Any]) -> bool:
            server = servers and hosts.add_mcp_server(data, origin, hosts.mcp_entry(program, "gemini"))
            return hosts.add_hooks(data, origin, hosts.GEMINI_HOOKS, program, "gemini") | server

        if servers:
            json_file(".gemini/settings.json", gemini, "MCP server and hooks added",
                      "MCP server and hooks already there")
        else:
            json_file(".gemini/settings.json", gemini, "hooks added; " + NO_SERVER, "hooks already there; " + NO_SERVER)
    if "cursor" in chosen:
        if servers:
            json_file(".cursor/mcp.json", lambda d: hosts.add_mcp_server(d, str(root / ".cursor/mcp.json"),
                                                                         hosts.mcp_entry(program, "cursor")),
                      "MCP server added", "MCP server already there")
        else:
            changes.append(Change(".cursor/mcp.json", None, NO_SERVER))
    for host in chosen:
        for source, target in FILES.get(host, ()):
            template(source, target)
    if set(chosen) - {"claude"} or (root / "AGENTS.md").exists():
        body = (builtin_templates() / "agents-md.md").read_text(encoding="utf-8")
        new = hosts.with_agents_block(_read(root / "AGENTS.md"), body)
        changes.append(Change("AGENTS.md", new, "ghstate block written" if new is not None
                              else "ghstate block up to date"))
    return changes


@click.command()
@store_options
@click.option("--agent", "agents", multiple=True, metavar="HOST",
              help="claude, codex, gemini, cursor or all; repeat it or give a comma list (default: the hosts the "
              "repository already uses, else claude).")
@click.option("--force", is_flag=True, help="Replace the issue form, command and rule files even if they were edited.")
def init(agents: tuple[str, ...], force: bool) -> None:
    """Set a repository up: labels, issue form, and each agent host's MCP server, hooks and commands.

    Creates the ghstate labels (GitHub store) and .github/ISSUE_TEMPLATE/ghstate-checkpoint.yml. For
    each host it registers the 'ghstate mcp' server and the session-start hook in the host's own
    files, merged into what is there (your entries are kept), and writes its command or rule files;
    for Codex, Gemini CLI and Cursor it also keeps a marked ghstate block in AGENTS.md. Running it
    again changes nothing.

    \b
    Examples:
      ghstate init                      # the hosts this repository uses (else Claude Code)
      ghstate init --agent codex
      ghstate init --agent all
    """
    app = make_app()
    root = app.settings.root
    policy = app.settings.policy
    chosen = choose_hosts(agents, root)
    program = ghstate_command()
    servers = sdk_available(program)
    changes = plan(root, chosen, program, force, servers)  # a file init cannot read stops it here, before any write
    changes.append(keep_out_of_git(app.settings.state_dir, root))
    report: list[tuple[str, str]] = []
    if app.store.remote:
        labels = [(policy.label, "1d76db", "Working state kept by ghstate"),
                  (policy.ci_failing_label, "d93f0b", "ghstate: CI is failing on this task"),
                  (policy.blocked_label, "b60205", "ghstate: CI failed too often in a row; needs a person")]
        created = set(app.github().ensure_labels(labels))
        for name, _, _ in labels:
            report.append((f"label {name}", "created" if name in created else "exists"))
    else:
        report.append(("labels", "skipped: the local store has none (run with a GitHub token to create them)"))
    for change in changes:
        if change.text is not None:
            atomic_write(root / change.target, change.text)
        report.append((change.target, change.outcome))
    if program != "ghstate":
        report.append(("note", f"ghstate is not on PATH here: the hooks call {program}"))
    if not servers:
        report.append(("note", "no MCP server was registered: the MCP servers need the MCP Python SDK, which "
                       f"{program} cannot import. Install it with pip install 'ghstate[mcp]' (where ghstate "
                       "is installed), then run 'ghstate init' again to add them; the hooks work meanwhile"))
    if any(c.target == ".codex/hooks.json" and c.text is not None for c in changes):
        report.append(("note", CODEX_TRUST.format(root=root)))
    width = max(len(name) for name, _ in report)
    for name, outcome in report:
        click.echo(f"{name:<{width}}  {outcome}")


# Codex CLI 0.169 runs a project's hooks only in a trusted project, and then only hooks the user has
# reviewed (their hash is kept in ~/.codex/config.toml); `codex exec` skips the others silently.
CODEX_TRUST = (
    "Codex runs the hooks in .codex/hooks.json only after you trust them, and skips them without a word "
    "until then. 1) Trust this project: answer 'Trust and continue' when codex asks about this folder, or "
    "run 'codex exec --trust' here once, or put [projects.\"{root}\"] with trust_level = \"trusted\" in "
    "~/.codex/config.toml. 2) Trust the hooks: start codex here and choose 'Trust all and continue' when it "
    "says hooks need review (or trust them in /hooks). Codex asks again when a hook changes")


def keep_out_of_git(state_dir: Path, root: Path) -> Change:
    """``.ghstate/.gitignore``: the machine-local files stay out of commits, the checkpoints do not."""
    from ghstate.local.store import GITIGNORE, IGNORED

    path = state_dir / GITIGNORE
    try:
        target = str(path.relative_to(root))
    except ValueError:
        target = str(path)
    current = _read(path)
    if current is None:
        return Change(target, IGNORED, "written (seen.json, locks and pending/ stay out of git)")
    missing = [line for line in IGNORED.splitlines() if line.strip() and not line.startswith("#")
               and line not in current.splitlines()]
    if not missing:
        return Change(target, None, "unchanged")
    sep = "" if current.endswith("\n") or not current else "\n"
    return Change(target, current + sep + "\n".join(missing) + "\n", "machine-local entries added")


def _interpreter(program: str) -> str | None:
    """The Python that runs ``program`` (``ghstate``, a path to it, or ``python -m ghstate``), when known."""
    import shlex
    import shutil

    words = shlex.split(program)
    if len(words) >= 3 and words[-2:] == ["-m", "ghstate"]:
        return words[0]
    found = shutil.which(words[0]) if words else None
    if not found:
        return None
    try:
        with open(found, "rb") as fh:
            first = fh.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    shebang = first[2:].decode("utf-8", "replace").split()
    if shebang and Path(shebang[0]).name == "env" and len(shebang) > 1:
        shebang = [shutil.which(shebang[1]) or shebang[1]]
    return shebang[0] if shebang and Path(shebang[0]).name.startswith("python") else None


def sdk_available(program: str) -> bool:
    """Can the ghstate that the hosts would run (``program``) import the MCP SDK? Asked without importing
    it (importlib.util.find_spec): in this process when that is the Python running now, else in the
    other Python (a ghstate on PATH from another environment)."""
    import importlib.util
    import os
    import sys

    from ghstate.config import python_finds

    python = _interpreter(program)
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        found = python_finds(python, "mcp")
        if found is not None:
            return found
    return importlib.util.find_spec("mcp") is not None
