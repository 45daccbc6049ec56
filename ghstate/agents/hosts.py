"""What ``ghstate init --agent`` writes into each agent host's own files, as pure text transforms.

Each function takes a file's current text (None when it does not exist) and returns its new text, or
None when nothing needs to change. The user's content is kept: JSON keeps its own text, with only
ghstate's entries inserted in the layout around them; TOML is never re-serialised (ghstate's table is
appended, or replaced in place, as text); AGENTS.md gets one marked block, rewritten where
it stands. Formats followed (November 2026): Claude Code 2.1 (.mcp.json, settings.json hooks),
Codex CLI 0.169 (config.toml [mcp_servers], .codex/hooks.json), Gemini CLI 0.61 (settings.json
mcpServers and hooks, timeouts in ms, commands/*.toml), Cursor (.cursor/mcp.json, rules/*.mdc).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.core import limits
from ghstate.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HOSTS = ("claude", "codex", "gemini", "cursor")
AGENT_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli", "cursor": "cursor"}
SERVER = "ghstate"


class Hook(NamedTuple):
    """One hook ghstate adds to a host: the event, its matcher (None: all), the hook subcommand and the
    fields of the hook entry besides type and command (each host's own: timeout units, names). ``kept``: the
    fields of ``extra`` ghstate keeps as it says in an entry already there (a limit the prompt is fitted to);
    the others are set when the entry is added, and a person's change to them stays."""

    event: str
    matcher: str | None
    sub: str
    extra: dict[str, Any]
    kept: tuple[str, ...] = ()


# The hook that asks for a checkpoint when the context fills runs after every turn (Claude Code's and Codex's Stop,
# Gemini CLI's AfterAgent): it reads files only, so its timeout is short.
CHECKPOINT_DUE = "checkpoint-due"
CLAUDE_HOOKS = (
    Hook("SessionStart", "startup|resume|clear|compact", "session-start", {"timeout": 15}),
    Hook("PreCompact", "manual|auto", "pre-compact", {"timeout": 15}),
    Hook("Stop", None, CHECKPOINT_DUE, {"timeout": 10}),
)
# Codex: the same sources as Claude Code (compact included), timeouts in seconds; its SessionStart context is
# spilled to a file past additionalContextLimit tokens (2,500 unless set): set to what the prompt is fitted to.
CODEX_HOOKS = (
    Hook("SessionStart", "startup|resume|clear|compact", "session-start",
         {"timeout": 15, "statusMessage": "Loading the ghstate checkpoint",
          "additionalContextLimit": limits.HOSTS["codex"].hook.size}, kept=("additionalContextLimit",)),
    Hook("PreCompact", "manual|auto", "pre-compact", {"timeout": 15}),
    Hook("Stop", None, CHECKPOINT_DUE, {"timeout": 10}),
)
# Gemini CLI: lifecycle matchers are exact strings ("*" matches every source: startup, resume, clear;
# there is no compact source), timeouts in milliseconds; PreCompress is its pre-compaction event, AfterAgent
# the end of a turn (it takes the same decision and reason as a Stop hook's, and sends stop_hook_active).
GEMINI_HOOKS = (
    Hook("SessionStart", "*", "session-start",
         {"name": "ghstate-session-start", "timeout": 15000, "description": "The branch's ghstate checkpoint"}),
    Hook("PreCompress", "*", "pre-compact", {"name": "ghstate-pre-compact", "timeout": 15000}),
    Hook("AfterAgent", "*", CHECKPOINT_DUE, {"name": "ghstate-checkpoint-due", "timeout": 10000,
                                             "description": "Asks for a checkpoint when the context fills"}),
)

BLOCK_BEGIN = "<!-- ghstate:begin: written by 'ghstate init'; what is between these markers is replaced -->"
BLOCK_END = "<!-- ghstate:end -->"
_BEGIN = re.compile(r"^<!-- ghstate:begin\b.*?-->[ \t]*\r?$", re.M)
_END = re.compile(r"^<!-- ghstate:end\b.*?-->[ \t]*(?:\r?\n|$)", re.M)


def detect(root: Path) -> list[str]:
    """The hosts a repository already uses, from their files."""
    signs = {"claude": (".claude", "CLAUDE.md", ".mcp.json"), "codex": (".codex",),
             "gemini": (".gemini", "GEMINI.md"), "cursor": (".cursor", ".cursorrules")}
    return [host for host in HOSTS if any((root / name).exists() for name in signs[host])]


def command_words(program: str) -> list[str]:
    """``ghstate``, a quoted path, or ``python -m ghstate`` as an argument vector."""
    return shlex.split(program)


def hook_command(program: str, sub: str, host: str) -> str:
    return f"{program} hook {sub}" + ("" if host == "claude" else f" --host {host}")


# ------------------------------------------------------------------------------------ JSON


def load_json(text: str | None, origin: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{origin} is not valid JSON ({exc}); fix it, then run 'ghstate init' again "
                         "(nothing was changed)") from None
    if not isinstance(data, dict):
        raise InputError(f"{origin} is not a JSON object; fix it, then run 'ghstate init' again (nothing was changed)")
    return data


def dump_json(data: dict[str, Any], like: str | None) -> str:
    """JSON in the indentation of the file it replaces (two spaces for a new one), key order kept."""
    indent: int | str = 2
    if like:
        m = re.search(r"\n([ \t]+)\S", like)
        if m:
            indent = len(m.group(1)) if set(m.group(1)) == {" "} else m.group(1)
    newline = "\r\n" if like and "\r\n" in like else "\n"
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    return text.replace("\n", newline)


def edit_json(text: str | None, origin: str, change: Callable[[dict[str, Any]], bool]) -> str | None:
    """Apply ``change`` (True when it changed something) to a JSON file's object; its new text or None.
    The file's own text is kept: what was added is inserted as text in the layout around it (an object
    written on one line stays on one line); only a file that is empty is written afresh."""
    import copy

    data = load_json(text, origin)
    before = copy.deepcopy(data)
    if not change(data):
        return None
    if text is None or not text.strip():
        return dump_json(data, text)
    try:
        new = _patch(text, _scan(text), before, data)
        if json.loads(new) == data:
            return new
    except (_Unpatchable, ValueError, IndexError):
        pass
    return dump_json(data, text)  # a change insertion cannot express: the whole file, in its indentation


# A JSON value's place in a file's text, for editing it as text: where the value starts and ends, where
# its first member (its key) or item starts, and its members (key -> node, the last of a repeated key, as
# json.loads takes it) or items.
class _Node(NamedTuple):
    start: int
    end: int
    first: int = -1
    members: dict[str, _Node] | None = None
    items: list[_Node] | None = None
    keys: dict[str, int] | None = None  # where each member's key starts (the last of a repeated key)


class _Unpatchable(Exception):
    pass


_WS = re.compile(r"[ \t\r\n]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _skip(text: str, pos: int) -> int:
    return len(text) - len(text[pos:].lstrip(" \t\r\n"))


def _scan(text: str) -> _Node:
    """The layout of a JSON text that json.loads accepted."""
    from json.decoder import scanstring

    def value(pos: int) -> _Node:
        pos = _skip(text, pos)
        start, ch = pos, text[pos]
        if ch in "{[":
            close = "}" if ch == "{" else "]"
            members: dict[str, _Node] = {}
            keys: dict[str, int] = {}
            items: list[_Node] = []
            pos = first = _skip(text, pos + 1)
            while text[pos] != close:
                if ch == "{":
                    at = pos
                    key, pos = scanstring(text, pos + 1)
                    node = value(_skip(text, pos) + 1)  # after the colon
                    members.pop(key, None)
                    members[key] = node
                    keys[key] = at
                else:
                    node = value(pos)
                    items.append(node)
                pos = _skip(text, node.end)
                if text[pos] == ",":
                    pos = _skip(text, pos + 1)
            return _Node(start, pos + 1, first, members if ch == "{" else None, items if ch == "[" else None,
                         keys if ch == "{" else None)
        if ch == '"':
            return _Node(start, scanstring(text, pos + 1)[1])
        m = _SCALAR.match(text, pos)
        if m is None:
            raise ValueError(f"not JSON at {pos}")
        return _Node(start, m.end())

    return value(0)


def _line_indent(text: str, pos: int) -> str:
    """The whitespace that begins the line ``pos`` is on."""
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _patch(text: str, root: _Node, old: Any, new: Any) -> str:
    """``text`` (whose value is ``old``, laid out as ``root``) edited into ``new`` by inserting members and
    items and replacing changed values, each in the layout around it; other bytes stay as they are."""
    newline = "\r\n" if "\r\n" in text else "\n"
    steps = re.findall(r"\n([ \t]+)\S", text)
    unit = "  "
    if steps:
        unit = steps[0] if "\t" in steps[0] else " " * min(len(s) for s in steps if "\t" not in s)
    edits: list[tuple[int, int, str]] = []  # (start, end, text) on the original, not overlapping

    spaced = re.search(r'"[ \t]*:[ \t]', text) is not None or ":" not in text  # "key": value, not "key":value
    colon = ": " if spaced else ":"

    def render(value: Any, indent: str, inline: bool) -> str:
        if inline:
            return json.dumps(value, ensure_ascii=False, separators=(", " if spaced else ",", colon))
        dumped = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
        return dumped.replace("\n", newline + indent)

    def append(node: _Node, entries: list[Callable[[str, bool], str]], last: _Node | None) -> None:
        close = node.end - 1
        if last is not None:
            if "\n" not in text[node.start:close]:  # one line stays one line, spaced as it is
                sep = ", " if spaced else ","
                edits.append((last.end, last.end, "".join(sep + e("", True) for e in entries)))
                return
            on_own_line = text.rfind("\n", 0, node.first) > node.start
            indent = _line_indent(text, node.first) if on_own_line else _line_indent(text, node.start) + unit
            edits.append((last.end, last.end, "".join("," + newline + indent + e(indent, False) for e in entries)))
            return
        outer = _line_indent(text, node.start)
        if "\n" in text.strip():  # an empty object or array in a file laid out on lines
            indent = outer + unit
            body = ("," + newline + indent).join(e(indent, False) for e in entries)
            edits.append((node.start + 1, close, newline + indent + body + newline + outer))
        else:
            edits.append((node.start + 1, close, ", ".join(e("", True) for e in entries)))

    def walk(node: _Node, a: Any, b: Any) -> None:
        if a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict) and node.members is not None:
            if any(k not in b for k in a) or list(b)[:len(a)] != list(a):
                raise _Unpatchable()
            for k in a:
                walk(node.members[k], a[k], b[k])
            added = [(k, b[k]) for k in b if k not in a]
            if added:
                last = next(reversed(node.members.values()), None)
                append(node, [lambda ind, inl, k=k, v=v: json.dumps(k, ensure_ascii=False) + colon + render(v, ind, inl)
                              for k, v in added], last)
            return
        if isinstance(a, list) and isinstance(b, list) and node.items is not None:
            if len(b) < len(a):
                raise _Unpatchable()
            for i, item in enumerate(a):
                walk(node.items[i], item, b[i])
            if len(b) > len(a):
                append(node, [lambda ind, inl, v=v: render(v, ind, inl) for v in b[len(a):]],
                       node.items[-1] if node.items else None)
            return
        inline = "\n" not in text[node.start:node.end]
        edits.append((node.start, node.end, render(b, _line_indent(text, node.start), inline)))

    walk(root, old, new)
    out, pos = [], 0
    for start, end, piece in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            raise _Unpatchable()
        out.append(text[pos:start])
        out.append(piece)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _object(parent: dict[str, Any], key: str, origin: str) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise InputError(f"'{key}' in {origin} is not an object; fix it, then run 'ghstate init' again")
    return value


def machine_local(words: list[str]) -> int:
    """How many leading words name ghstate as it is found on one machine only (a path to its script, or
    a Python with ``-m ghstate``: what an earlier init wrote into committed files), else 0."""
    if words and words[0] != "ghstate" and Path(words[0].replace("\\", "/")).stem == "ghstate":
        return 1
    if len(words) >= 3 and Path(words[0]).name.startswith("python") and words[1:3] == ["-m", "ghstate"]:
        return 3
    return 0


def local_server(current: object) -> bool:
    """A server entry as an earlier init wrote it (command, args ``… mcp --agent NAME``, nothing else),
    calling a ghstate found on one machine only; an entry a person configured otherwise is theirs."""
    if not isinstance(current, dict) or not set(current) <= {"type", "command", "args"}:
        return False
    command, args = current.get("command"), current.get("args") or []
    return (isinstance(command, str) and isinstance(args, list) and all(isinstance(a, str) for a in args)
            and args[-3:-1] == ["mcp", "--agent"] and bool(machine_local([command, *args])))


def add_mcp_server(data: dict[str, Any], origin: str, entry: dict[str, Any]) -> bool:
    """``mcpServers.ghstate`` (Claude Code, Gemini CLI, Cursor): added when missing; one the user
    configured is kept as it is, unless an earlier init wrote it with one machine's path (then ``entry``)."""
    servers = _object(data, "mcpServers", origin)
    current = servers.get(SERVER)
    if current is None:
        servers[SERVER] = entry
        return True
    if local_server(current):
        assert isinstance(current, dict)
        current["command"] = entry["command"]
        current["args"] = entry["args"]
        return True
    return False


def _words(command: object) -> list[str] | None:
    """A command's words as a shell splits them (None: no command, or one a shell would not split)."""
    if not isinstance(command, str):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _ours(command: object, sub: str) -> list[str] | None:
    """The words of a hook command that runs ``ghstate hook SUB`` (however ghstate is named), else None."""
    words = _words(command) or []
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == sub and any(Path(w).stem == "ghstate" for w in words[:i]):
            return words
    return None


STATUS_LINE = "statusline"


def our_status_line(command: object) -> bool:
    """Whether a ``statusLine`` command runs ``ghstate statusline`` (however ghstate is named)."""
    words = _words(command) or []
    return len(words) >= 2 and words[-1] == STATUS_LINE and any(Path(w).stem == "ghstate" for w in words[:-1])


def add_status_line(settings: dict[str, Any], program: str) -> bool:
    """Claude Code's ``statusLine``, ghstate's, where the file sets none (one set is never replaced)."""
    if "statusLine" in settings:
        return False
    settings["statusLine"] = {"type": "command", "command": f"{program} {STATUS_LINE}"}
    return True


def add_hooks(settings: dict[str, Any], origin: str, hooks: tuple[Hook, ...], program: str, host: str) -> bool:
    """Add ghstate's hooks to a host's settings (the ``hooks`` object of Claude Code, Codex and Gemini
    CLI share one shape), touching nothing else; a hook that calls a ghstate found on one machine only
    (an earlier init's path) calls ``program`` again. True when it changed them."""
    table = _object(settings, "hooks", origin)
    changed = False
    for hook in hooks:
        entries = table.setdefault(hook.event, [])
        if not isinstance(entries, list):
            raise InputError(f"'hooks.{hook.event}' in {origin} is not a list; fix it, then run 'ghstate init' again")
        present = False
        for entry in entries:
            listed = entry.get("hooks") if isinstance(entry, dict) else None
            for item in listed if isinstance(listed, list) else []:
                words = _ours(item.get("command") if isinstance(item, dict) else None, hook.sub)
                if words is None:
                    continue
                present = True
                local = machine_local(words)
                if local:
                    item["command"] = shlex.join([*command_words(program), *words[local:]])
                    changed = True
                for key in hook.kept:  # a limit the prompt is fitted to: as this ghstate fits it
                    if isinstance(item, dict) and item.get(key) != hook.extra[key]:
                        item[key] = hook.extra[key]
                        changed = True
        if not present:
            entry = {"matcher": hook.matcher} if hook.matcher is not None else {}
            entry["hooks"] = [{"type": "command", "command": hook_command(program, hook.sub, host), **hook.extra}]
            entries.append(entry)
            changed = True
    return changed


def mcp_entry(program: str, host: str, *, typed: bool = False) -> dict[str, Any]:
    words = command_words(program)
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    entry.update(command=words[0], args=[*words[1:], "mcp", "--agent", AGENT_NAMES[host]])
    return entry


# ------------------------------------------------------------------------------------ TOML (Codex)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def codex_table(program: str) -> str:
    words = command_words(program)
    args = ", ".join(_toml_string(a) for a in [*words[1:], "mcp", "--agent", AGENT_NAMES["codex"]])
    return (f"[mcp_servers.{SERVER}]\n# the ghstate MCP server (added by 'ghstate init')\n"
            f"command = {_toml_string(words[0])}\nargs = [{args}]\n")


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{origin} is not valid TOML ({exc}); fix it, then run 'ghstate init' again "
                         "(nothing was changed)") from None


_HEADER = re.compile(r"^[ \t]*\[\[?[ \t]*([^\]\r\n]+?)[ \t]*\]\]?[ \t]*(?:#[^\r\n]*)?\r?$", re.M)  # CRLF too


def _our_table_span(text: str) -> tuple[int, int] | None:
    """Where ``[mcp_servers.ghstate]`` and its sub-tables stand as text, when they are written as tables."""
    headers = list(_HEADER.finditer(text))
    for i, m in enumerate(headers):
        name = re.sub(r"\s+", "", m.group(1)).replace('"', "")
        if name == f"mcp_servers.{SERVER}":
            end = len(text)
            for later in headers[i + 1:]:
                later_name = re.sub(r"\s+", "", later.group(1)).replace('"', "")
                if not later_name.startswith(f"mcp_servers.{SERVER}."):
                    end = later.start()
                    break
            return m.start(), end
    return None


def with_codex_server(text: str | None, origin: str, program: str, force: bool = False) -> str | None:
    """Codex's config.toml with ``[mcp_servers.ghstate]``: appended when missing, the user's bytes
    untouched; one already there is kept unless ``force`` (then its table is replaced where it stands)."""
    ours = codex_table(program)
    if text is None:
        return ours
    config = parse_toml(text, origin)
    servers = config.get("mcp_servers")
    present = isinstance(servers, dict) and SERVER in servers
    if present:
        current = servers[SERVER]
        wanted = parse_toml(ours, "ghstate's table")["mcp_servers"][SERVER]
        if not isinstance(current, dict):
            return None
        stale = local_server(current)
        if current == wanted or not (force or stale):
            return None
        span = _our_table_span(text)
        if span is None:
            raise InputError(f"{origin} defines mcp_servers.{SERVER} in a form 'ghstate init' cannot replace in place; "
                             f"write it as a [mcp_servers.{SERVER}] table, or edit it by hand")
        start, end = span
        tail = text[end:]
        newline = "\r\n" if "\r\n" in text else "\n"
        new = text[:start] + ours.replace("\n", newline) + (newline if tail.strip() else "") + tail.lstrip("\r\n")
    else:
        newline = "\r\n" if "\r\n" in text else "\n"
        sep = "" if not text.strip() else newline  # a blank line after a last line break; else that line ended
        new = text + sep + ours.replace("\n", newline)
    parse_toml(new, origin)  # never write what the host could not read (an inline mcp_servers table, say)
    return new


# ------------------------------------------------------------------------------------ AGENTS.md


def with_agents_block(text: str | None, body: str) -> str | None:
    """AGENTS.md with ghstate's block: rewritten where it stands (a second copy is removed), appended
    when there is none. None when it is already as it should be."""
    block = f"{BLOCK_BEGIN}\n{body.rstrip()}\n{BLOCK_END}\n"
    if text is None:  # init makes the file: init --remove deletes it
        return block
    newline = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", newline)
    spans = []
    pos = 0
    while True:
        begin = _BEGIN.search(text, pos)
        if begin is None:
            break
        end = _END.search(text, begin.end())
        if end is None:
            raise InputError("AGENTS.md has a '<!-- ghstate:begin' marker without '<!-- ghstate:end -->'; "
                             "fix it, then run 'ghstate init' again (nothing was changed)")
        spans.append((begin.start(), end.end()))
        pos = end.end()
    if not spans:  # a blank line after a last line break; a text without one gets only it (init --remove knows)
        return text + newline + block
    out, last = [], 0
    for i, (start, end) in enumerate(spans):
        out.append(text[last:start])
        if i == 0:
            out.append(block)
        last = end
    out.append(text[last:])
    new = "".join(out)
    return None if new == text else new
