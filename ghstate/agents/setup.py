"""What ``ghstate init`` writes for each agent host, worked out before anything is written: the issue
form, each host's MCP server, hooks and command or rule files merged into the user's own files (through
``hosts``' text transforms), the AGENTS.md block, and the store folder's ``.gitignore``. The command
(``ghstate.commands.init``) asks and reports; this module decides."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.agents import hosts
from ghstate.errors import InputError
from ghstate.templating import builtin_templates

# (template, target) of the files each host gets as they are; edited ones are kept unless --force
FILES = {
    None: (("issue-form.yml", ".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml"),),
    "claude": (("claude-checkpoint.md", ".claude/commands/checkpoint.md"),
               ("claude-resume.md", ".claude/commands/ghstate-resume.md")),
    "gemini": (("gemini-checkpoint.toml", ".gemini/commands/ghstate/checkpoint.toml"),
               ("gemini-resume.toml", ".gemini/commands/ghstate/resume.toml")),
    "cursor": (("cursor-rule.mdc", ".cursor/rules/ghstate.mdc"),),
}


# Files an earlier init wrote under a name ghstate no longer uses: (old target, its template, the new target).
# Claude Code's own /resume (its conversation picker) takes the name of `.claude/commands/resume.md` first,
# so ghstate's command there was never reachable; it is /ghstate-resume now. init replaces such a file (moving
# a person's edits to the new name), and init --remove takes it out as one of its own.
RETIRED = {"claude": ((".claude/commands/resume.md", "claude-resume.md", ".claude/commands/ghstate-resume.md"),)}
RETIRED_WHY = "Claude Code's own /resume hides a project's /resume"


# A file init writes in one of two forms: the one it wrote before may be replaced by the other (the
# MCP server added since, say); a file a person edited is kept.
VARIANTS = {"cursor-rule.mdc": ("cursor-rule.mdc", "cursor-rule-cli.mdc")}

# Each template's earlier texts, as an earlier ghstate shipped them (sha256, its first 16 hex digits, of the text
# init wrote with the bare command): such a file is one nobody edited, brought up to date by init and taken
# out by init --remove, as the current text is. A template's text changes: add the digest of the one it had.
SHIPPED_BEFORE = {
    "issue-form.yml": ("361423ffc7081a8d",),
    "claude-checkpoint.md": ("aa804bc42f95d22f", "4d24c351c1533dae"),
    "claude-resume.md": ("e28bd35b4464824a",),
    "gemini-checkpoint.toml": ("36fa1a503e8fe0b4",),
    "gemini-resume.toml": ("3c2805cefbf17b6f",),
    "cursor-rule.mdc": ("40bcce98ac41c4c9", "0e8ab1f9d5a42250", "7b0bd27391079630"),
    "cursor-rule-cli.mdc": ("f8b444214dffd38b", "5cc656ab65783f13", "f87bc91ba24ecaa1"),
}


class Change(NamedTuple):
    """One file init would write: its new text (None: it stays as it is; ``""``: it is deleted) and what to
    report."""

    target: str
    text: str | None
    outcome: str


PROGRAM = "ghstate"  # how every file init writes calls ghstate: they are committed, for everyone's PATH
STATUS_LINE_FILE = ".claude/settings.local.json"  # Claude Code's settings of one person in one project


def on_path() -> bool:
    """Whether ``ghstate`` runs by its bare name here, as the files init writes will call it."""
    import shutil

    return shutil.which(PROGRAM) is not None


def not_on_path_note() -> str:
    """What init says when the files it wrote call a ``ghstate`` this machine does not have on PATH."""
    import shlex

    clone = installed_from()
    how = (f"pipx install {shlex.quote(clone)} (or: uv tool install {shlex.quote(clone)})" if clone else
           "pipx install ghstate (or: uv tool install ghstate)")
    return (f"ghstate is not on PATH here. The hooks, MCP servers and commands init wrote call the bare "
            f"'ghstate', as they are committed and run on every teammate's machine; install it for daily use "
            f"with: {how}")


def installed_from() -> str | None:
    """The folder (a clone) this ghstate was installed from, as pip recorded it (PEP 610's direct_url.json),
    while it is still there; None for an install from an index or a wheel."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlsplit

    try:
        record = json.loads(metadata.distribution("ghstate").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = urlsplit(record.get("url", "") if isinstance(record, dict) else "")
    if url.scheme != "file" or "dir_info" not in record:
        return None
    folder = Path(unquote(url.path))
    return str(folder) if (folder / "pyproject.toml").is_file() else None


_SUBCOMMANDS = r"(?=(?:checkpoint|resume|show|lint|list|log|ready|claim|release|done)\b)"
_COMMAND = re.compile(r"(?<=[`(])ghstate " + _SUBCOMMANDS)
# A ghstate named by where it is on one machine, as an earlier init wrote into committed files: a path
# to its script (quoted or not) or its Python with -m, before one of its commands.
_LOCAL = re.compile(r"(?<=[`(])(?:'[^'`()]*/ghstate(?:\.exe)?'|[^\s`'()]*/ghstate(?:\.exe)?|"
                    r"\S*python[\w.]*(?:\.exe)? -m ghstate) " + _SUBCOMMANDS)


def with_program(text: str, program: str) -> str:
    """A command or rule file's text calling ``program`` wherever it runs ghstate."""
    return text if program == "ghstate" else _COMMAND.sub(lambda _: f"{program} ", text)


def bare(text: str) -> str:
    """``text`` with every machine-local ghstate an earlier init wrote called by its bare name."""
    return _LOCAL.sub("ghstate ", text)


def merge_hooks(settings: dict[str, Any], origin: str, program: str = "ghstate") -> bool:
    """Add ghstate's hooks to Claude Code settings, touching nothing else (see hosts.add_hooks)."""
    return hosts.add_hooks(settings, origin, hosts.CLAUDE_HOOKS, program, "claude")


def _read(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        return path.read_bytes().decode("utf-8")  # line endings as they are: CRLF stays CRLF
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; fix it, then run 'ghstate init' again "
                         "(nothing was changed)") from None


NO_SERVER = "MCP server not added: the MCP SDK is not installed (see the note below)"


def plan(root: Path, chosen: list[str], program: str, force: bool, servers: bool = True) -> list[Change]:
    """Every file init writes and its new text, worked out before anything is written. Without
    ``servers`` (the ghstate the hosts would run cannot import the MCP SDK, so a server could not
    start) no MCP server is registered; the hooks are."""
    planner = _Planner(root, program, force, servers)
    for source, target in FILES[None]:
        planner.template(source, target)
    for host in chosen:
        getattr(planner, host)()
    moved = {new for host in chosen for old, source, new in RETIRED.get(host, ()) if planner.retire(old, source, new)}
    for host in chosen:
        for source, target in FILES.get(host, ()):
            if target not in moved:
                planner.template(source, target)
    if set(chosen) - {"claude"} or (root / "AGENTS.md").exists():
        body = (builtin_templates() / "agents-md.md").read_text(encoding="utf-8")
        new = hosts.with_agents_block(_read(root / "AGENTS.md"), body)
        planner.changes.append(Change("AGENTS.md", new, "ghstate block written" if new is not None
                                      else "ghstate block up to date"))
    return planner.changes


def as_shipped(text: str, source: str, program: str) -> bool:
    """Whether ``text`` is one of the shipped template ``source``'s variants as init writes it (for ``program``;
    the bare command or a machine's path to it alike), or one of its earlier texts: a file nobody edited since
    init wrote it."""
    variants = VARIANTS.get(source, (source,))
    if bare(text) in {with_program((builtin_templates() / v).read_text(encoding="utf-8"), program) for v in variants}:
        return True
    digest = hashlib.sha256(bare(text).encode("utf-8")).hexdigest()[:16]
    return any(digest in SHIPPED_BEFORE.get(v, ()) for v in variants)


class _Planner:
    """The changes of one ``init``, host by host (a method each, named as ``hosts.HOSTS`` names them)."""

    def __init__(self, root: Path, program: str, force: bool, servers: bool) -> None:
        self.root, self.program, self.force, self.servers = root, program, force, servers
        self.changes: list[Change] = []

    def json_file(self, target: str, edit: Any, done: str, kept: str) -> None:
        path = self.root / target
        new = hosts.edit_json(_read(path), str(path), edit)
        self.changes.append(Change(target, new, done if new is not None else kept))

    def server(self, target: str, host: str, typed: bool = False) -> None:
        """The MCP server in a host's JSON file, or why there is none."""
        if not self.servers:
            self.changes.append(Change(target, None, NO_SERVER))
            return
        entry = hosts.mcp_entry(self.program, host, typed=typed)
        self.json_file(target, lambda d: hosts.add_mcp_server(d, str(self.root / target), entry),
                       "MCP server added", "MCP server already there")

    def shipped(self, source: str) -> str:
        return with_program((builtin_templates() / source).read_text(encoding="utf-8"), self.program)

    def template(self, source: str, target: str) -> None:
        source_asked = source  # what init may have written there before: its variants
        if source == "cursor-rule.mdc" and not self.servers:  # no server to call: the rule says the command line
            source = "cursor-rule-cli.mdc"
        text = self.shipped(source)
        path = self.root / target
        current = _read(path) if path.exists() else None
        if current == text:
            self.changes.append(Change(target, None, "unchanged"))
        elif current is not None and not self.force and not as_shipped(current, source_asked, self.program):
            self.changes.append(Change(target, None, "exists, kept as it is (--force replaces it)"))
        elif current is not None and bare(current) != current and bare(current) == text:
            self.changes.append(Change(target, text, "written (calls the bare 'ghstate' again)"))
        else:
            self.changes.append(Change(target, text, "written"))

    def retire(self, old: str, source: str, new: str) -> bool:
        """An earlier init's file at a name ghstate no longer uses: deleted when nobody edited it (or with
        --force; ``new`` gets the template), else moved to ``new`` with its edits, unless a file is there
        already (then kept, and said). True when the move took care of ``new``."""
        current = _read(self.root / old)
        if current is None:
            return False
        if self.force or as_shipped(current, source, self.program):
            self.changes.append(Change(old, "", f"deleted: the command is {new} now ({RETIRED_WHY})"))
            return False
        if (self.root / new).exists():
            self.changes.append(Change(old, None, f"edited, kept: {new} is the command now ({RETIRED_WHY}); "
                                       "delete this one"))
            return False
        self.changes.append(Change(old, "", f"moved to {new}, your edits with it ({RETIRED_WHY})"))
        self.changes.append(Change(new, current, f"moved here from {old}, as you edited it"))
        return True

    def claude(self) -> None:
        origin = str(self.root / ".claude/settings.json")
        self.json_file(".claude/settings.json", lambda d: merge_hooks(d, origin, self.program),
                       "hooks added", "hooks already there")
        self.server(".mcp.json", "claude", typed=True)
        self.status_line()

    def status_line(self) -> None:
        """Claude Code's status line, where none is set (the user's settings, the project's, the project's local
        ones): in the local settings, each person's own and never committed, since Claude Code takes a project's
        status line over the one a teammate set for themselves."""
        from ghstate.config import host_homes

        target = STATUS_LINE_FILE
        files = (self.root / ".claude/settings.json", self.root / target, host_homes()["claude"] / "settings.json")
        for path in files:
            try:
                current = hosts.load_json(_read(path), str(path)).get("statusLine")
            except InputError:
                current = None  # the user's file, broken: not init's to judge (a project file stops init elsewhere)
            if current is not None:
                said = ("status line already there" if isinstance(current, dict)
                        and hosts.our_status_line(current.get("command")) else
                        f"status line: yours ({path.name} of {path.parent}) is kept; docs/agents.md shows how to "
                        "add ghstate's beside it")
                self.changes.append(Change(target, None, said))
                return
        self.json_file(target, lambda d: hosts.add_status_line(d, self.program),
                       "status line added (yours alone: this file is not for committing)", "status line already there")

    def codex(self) -> None:
        path = self.root / ".codex/config.toml"
        if self.servers:
            new = hosts.with_codex_server(_read(path), str(path), self.program, self.force)
            self.changes.append(Change(".codex/config.toml", new, "MCP server added" if new is not None
                                       else "MCP server already there"))
        else:
            self.changes.append(Change(".codex/config.toml", None, NO_SERVER))
        origin = str(self.root / ".codex/hooks.json")
        self.json_file(".codex/hooks.json", lambda d: hosts.add_hooks(d, origin, hosts.CODEX_HOOKS, self.program,
                                                                      "codex"), "hooks added", "hooks already there")

    def gemini(self) -> None:
        origin = str(self.root / ".gemini/settings.json")

        def edit(data: dict[str, Any]) -> bool:
            server = self.servers and hosts.add_mcp_server(data, origin, hosts.mcp_entry(self.program, "gemini"))
            return hosts.add_hooks(data, origin, hosts.GEMINI_HOOKS, self.program, "gemini") | server

        if self.servers:
            self.json_file(".gemini/settings.json", edit, "MCP server and hooks added",
                           "MCP server and hooks already there")
        else:
            self.json_file(".gemini/settings.json", edit, "hooks added; " + NO_SERVER,
                           "hooks already there; " + NO_SERVER)

    def cursor(self) -> None:
        self.server(".cursor/mcp.json", "cursor")


# Codex CLI 0.169 runs a project's hooks only in a trusted project, and then only hooks the user has
# reviewed (their hash is kept in ~/.codex/config.toml); `codex exec` skips the others silently.
CODEX_TRUST = (
    "Codex runs the hooks in .codex/hooks.json only after you trust them, and skips them without a word "
    "until then. 1) Trust this project: answer 'Trust and continue' when codex asks about this folder, or "
    "run 'codex exec --trust' here once, or put [projects.\"{root}\"] with trust_level = \"trusted\" in "
    "~/.codex/config.toml. 2) Trust the hooks: start codex here and choose 'Trust all and continue' when it "
    "says hooks need review (or trust them in /hooks). Codex asks again when a hook changes")


def ignored() -> str:
    """What ``.ghstate/.gitignore`` holds as ``init`` writes it: the one list the local store writes too
    (``local.store.KEPT_OUT``, the /checkpoint command's draft included)."""
    from ghstate.local.store import IGNORED

    return IGNORED


def keep_out_of_git(state_dir: Path, root: Path) -> Change:
    """``.ghstate/.gitignore``: the machine-local files (a local store put there included) stay out of commits;
    config.toml and templates/ go in."""
    from ghstate.local.store import GITIGNORE

    path = state_dir / GITIGNORE
    try:
        target = str(path.relative_to(root))
    except ValueError:
        target = str(path)
    current = _read(path)
    if current is None:
        return Change(target, ignored(), "written (of .ghstate/, only config.toml and templates/ go in git)")
    missing = [line for line in ignored().splitlines() if line.strip() and not line.startswith("#")
               and line not in current.splitlines()]
    if not missing:
        return Change(target, None, "unchanged")
    sep = "" if current.endswith("\n") or not current else "\n"
    return Change(target, current + sep + "\n".join(missing) + "\n", "machine-local entries added")


GITHUB_SET_UP = ("# ghstate init set this repository up for GitHub: a command that cannot reach its checkpoints there\n"
                 "# (no token, another GitHub host) fails, saying what to set, rather than use the local store.\n"
                 "github = true\n")


def github_recorded(settings: Any) -> Change:
    """The repository's config file saying that init set it up for GitHub (``github = true``), so that no
    command later answers from the local store for want of a token: where the policy is read from
    (``.ghstate/config.toml``, else ``[tool.ghstate]`` of ``pyproject.toml``), else a new config.toml."""
    config_file = settings.state_dir / "config.toml"
    path, current = config_file, _read(config_file)
    if current is None:
        pyproject = settings.root / "pyproject.toml"
        text = _read(pyproject)
        if text is not None and "ghstate" in text:
            path, current = pyproject, text
    try:
        target = str(path.relative_to(settings.root))
    except ValueError:
        target = str(path)
    if settings.policy.github:
        return Change(target, None, "github = true: set up for GitHub already")
    said = "github = true: commands fail rather than fall back to the local store"
    if current is None:
        return Change(target, GITHUB_SET_UP, said)
    if path == config_file:
        sep = "" if current.endswith("\n") or not current else "\n"
        return Change(target, f"{current}{sep}\n{GITHUB_SET_UP}", said)
    header = re.search(r"^\[tool\.ghstate\][ \t]*\r?\n", current, re.M)
    if header is None:
        return Change(target, None, "add github = true to [tool.ghstate] yourself (init writes only a plain table)")
    return Change(target, current[: header.end()] + GITHUB_SET_UP + current[header.end():], said)


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
