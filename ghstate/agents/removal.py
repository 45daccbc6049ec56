"""What ``ghstate init --remove`` takes out of each host's files, as pure text transforms: the inverse of
``hosts``' insertions. Each function takes a file's current text and returns its new text, ``None`` when
nothing of ghstate's is in it, or ``""`` when what is left is nothing (the file was ghstate's alone, and is
deleted). The person's own bytes are kept: an entry ``init`` inserted is cut out together with the
separator it was inserted with, so that a file ``init`` merged into reads back byte for byte as it was.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.agents import hosts

Path_ = tuple[Any, ...]  # keys and indexes from a JSON file's top object down to one of its values

# every hook subcommand init adds to a host (a hook added there is removed here too)
HOOK_SUBCOMMANDS = tuple(dict.fromkeys(h.sub for h in (*hosts.CLAUDE_HOOKS, *hosts.CODEX_HOOKS, *hosts.GEMINI_HOOKS)))


def _ours(command: object) -> bool:
    return any(hosts._ours(command, sub) is not None for sub in HOOK_SUBCOMMANDS)


def ghstate_entries(data: dict[str, Any]) -> list[Path_]:
    """Where ghstate's entries are in a host's JSON settings: ``mcpServers.ghstate``, each hook that runs
    ``ghstate hook …`` (a hook entry that holds nothing else goes whole) and Claude Code's ``statusLine`` that runs
    ``ghstate statusline``."""
    found: list[Path_] = []
    line = data.get("statusLine")
    if isinstance(line, dict) and hosts.our_status_line(line.get("command")):
        found.append(("statusLine",))
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and hosts.SERVER in servers:
        found.append(("mcpServers", hosts.SERVER))
    table = data.get("hooks")
    for event, entries in (table.items() if isinstance(table, dict) else ()):
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            listed = entry.get("hooks") if isinstance(entry, dict) else None
            if not isinstance(listed, list) or not listed:
                continue
            mine = [j for j, item in enumerate(listed) if isinstance(item, dict) and _ours(item.get("command"))]
            if len(mine) == len(listed):
                found.append(("hooks", event, i))
            else:
                found.extend(("hooks", event, i, "hooks", j) for j in mine)
    return found


def _get(data: Any, path: Path_) -> Any:
    for step in path:
        data = data[step]
    return data


def _emptied(data: dict[str, Any], paths: list[Path_]) -> list[Path_]:
    """``paths`` with each container they leave empty taken out in their place (up to, not including, the
    top object): an ``mcpServers`` or a ``hooks`` table that held only ghstate's entries goes with them."""
    chosen = set(paths)
    while True:
        by_parent: dict[Path_, set[Any]] = {}
        for path in chosen:
            by_parent.setdefault(path[:-1], set()).add(path[-1])
        grown = False
        for parent, steps in by_parent.items():
            if parent and len(steps) == len(_get(data, parent)):
                chosen = {p for p in chosen if p[:len(parent)] != parent} | {parent}
                grown = True
                break
        if not grown:
            return sorted(chosen, key=lambda p: [str(s) for s in p])


def without_entries(text: str, origin: str) -> str | None:
    """A host's JSON file without ghstate's entries (``ghstate_entries``), cut out as text; ``""`` when
    nothing is left of it, ``None`` when it holds none."""
    data = hosts.load_json(text, origin)
    paths = ghstate_entries(data)
    if not paths:
        return None
    paths = _emptied(data, paths)
    by_parent: dict[Path_, list[Any]] = {}
    for path in paths:
        by_parent.setdefault(path[:-1], []).append(path[-1])
    if by_parent.get(()) is not None and len(by_parent[()]) == len(data):
        return ""
    expected = _removed(data, paths)
    try:
        new = _cut(text, hosts._scan(text), by_parent)
        if json.loads(new) == expected:
            return new
    except (ValueError, IndexError, KeyError):
        pass
    return hosts.dump_json(expected, text)  # a layout cutting cannot undo: the whole file, in its indentation


def _removed(data: dict[str, Any], paths: list[Path_]) -> dict[str, Any]:
    import copy

    data = copy.deepcopy(data)
    # the deepest first, and of one list's items the last first, so that no index moves under another path
    for path in sorted(paths, key=lambda p: (len(p), p[-1] if isinstance(p[-1], int) else -1), reverse=True):
        del _get(data, path[:-1])[path[-1]]
    return data


def _cut(text: str, root: hosts._Node, by_parent: dict[Path_, list[Any]]) -> str:
    """``text`` with the children ``by_parent`` names cut out of their containers, each run of them with the
    separator before it (after it, for a run at the start)."""
    cuts: list[tuple[int, int]] = []
    for parent, steps in by_parent.items():
        node = root
        for step in parent:
            node = node.members[step] if node.members is not None else (node.items or [])[step]
        if node.members is not None:
            assert node.keys is not None
            order = list(node.members)
            spans = [(node.keys[k], node.members[k].end) for k in order]
            chosen = sorted(order.index(s) for s in steps)
        else:
            assert node.items is not None
            spans = [(n.start, n.end) for n in node.items]
            chosen = sorted(steps)
        runs: list[list[int]] = []
        for i in chosen:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        for run in runs:
            first, last = run[0], run[-1]
            if first > 0:
                cuts.append((spans[first - 1][1], spans[last][1]))
            else:
                cuts.append((spans[0][0], spans[last + 1][0]))
    out, pos = [], 0
    for start, end in sorted(cuts):
        if start < pos:
            raise ValueError("overlapping cuts")
        out.append(text[pos:start])
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _drop_separator(before: str) -> str:
    """What came before a block ``init`` appended, without the one line break it added to set it apart: the
    blank line after a text that ended with a line break, or the line break that ended one that did not."""
    for newline in ("\r\n", "\n"):
        if before.endswith(newline):
            return before[: -len(newline)]
    return before


def without_codex_server(text: str, origin: str) -> str | None:
    """Codex's config.toml without ``[mcp_servers.ghstate]`` (and its sub-tables), and the blank line
    ``init`` put before it; ``""`` when nothing else is in it."""
    hosts.parse_toml(text, origin)
    span = hosts._our_table_span(text)
    if span is None:
        return None
    start, end = span
    before, after = text[:start], text[end:]
    if not after.strip():
        before = _drop_separator(before)
    new = before + after
    if not new.strip():
        return ""
    hosts.parse_toml(new, origin)
    return new


EMPTY = "\x00empty"  # what is left is an empty file of the person's, kept (not "": deleted)


def without_agents_block(text: str) -> str | None:
    """AGENTS.md without ghstate's block (every copy), and the line break ``init`` put before it; ``""`` when
    init made the file (the block is all of it), ``EMPTY`` when the person's file was empty before it."""
    begin = hosts._BEGIN.search(text)
    if begin is None:
        return None
    out, pos = [], 0
    while begin is not None:
        end = hosts._END.search(text, begin.end())
        if end is None:
            from ghstate.errors import InputError

            raise InputError("AGENTS.md has a '<!-- ghstate:begin' marker without '<!-- ghstate:end -->'; "
                             "fix it, then run 'ghstate init --remove' again (nothing was changed)")
        out.append(text[pos:begin.start()])
        pos = end.end()
        begin = hosts._BEGIN.search(text, pos)
    rest = text[pos:]
    kept = "".join(out)
    if not kept and not rest.strip():
        return ""  # the file init made
    if not rest.strip():
        kept = _drop_separator(kept)
    new = kept + rest
    return new or EMPTY


def without_line(text: str, added: str, after: re.Pattern[str] | None = None) -> str | None:
    """``text`` without the lines ``added`` that ``init`` wrote (at its end, or right after the header
    ``after`` matches); ``""`` when nothing else is in it, ``None`` when they are not there."""
    if after is not None:
        header = after.search(text)
        if header is None or not text.startswith(added, header.end()):
            return None
        return text[: header.end()] + text[header.end() + len(added):]
    if not text.endswith(added):
        return None
    new = _drop_separator(text[: -len(added)])
    return "" if not new.strip() else new


# ------------------------------------------------------------------------------------ the plan

class Removal(NamedTuple):
    """One file ``init --remove`` changes: its new text (None: it stays as it is; ``""``: it is deleted)
    and what to report."""

    target: str
    text: str | None
    outcome: str


# Each host's JSON files whose ghstate entries init made (servers, hooks), the same for every host.
JSON_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json",
              ".gemini/settings.json", ".cursor/mcp.json")
_TOOL_GHSTATE = re.compile(r"^\[tool\.ghstate\][ \t]*\r?\n", re.M)


def plan(root: Path, state_dir: Path, force: bool = False) -> list[Removal]:
    """Everything ``init`` may have written, for every host, and what taking ghstate's part out of it
    leaves; worked out before anything is written (a file that cannot be read stops it here)."""
    from ghstate.agents import setup

    out: list[Removal] = []

    def change(target: str, new: str | None, done: str) -> None:
        if new is not None:
            out.append(Removal(target, new, "deleted" if new == "" else done))

    for target in JSON_FILES:
        text = setup._read(root / target)
        if text is not None:
            change(target, without_entries(text, str(root / target)), "ghstate's entries removed")
    text = setup._read(root / ".codex/config.toml")
    if text is not None:
        change(".codex/config.toml", without_codex_server(text, str(root / ".codex/config.toml")),
               "[mcp_servers.ghstate] removed")
    retired = [(source, old) for files in setup.RETIRED.values() for old, source, _ in files]
    for source, target in [pair for sources in setup.FILES.values() for pair in sources] + retired:
        text = setup._read(root / target)
        if text is None:
            continue
        if force or setup.as_shipped(text, source, setup.PROGRAM):
            out.append(Removal(target, "", "deleted"))
        else:
            out.append(Removal(target, None, "edited since init wrote it: kept (--force deletes it)"))
    text = setup._read(root / "AGENTS.md")
    if text is not None:
        change("AGENTS.md", without_agents_block(text), "ghstate block removed")
    out.extend(_store_folder(root, state_dir))
    return out


def _store_folder(root: Path, state_dir: Path) -> list[Removal]:
    """``.ghstate/.gitignore`` and ``github = true``, as init wrote them; the local store's checkpoints are
    data, not set-up: kept, and said."""
    from ghstate.agents import setup

    def name(path: Path) -> str:
        try:
            return str(path.relative_to(root))
        except ValueError:
            return str(path)

    out: list[Removal] = []
    config = state_dir / "config.toml"
    text = setup._read(config)
    if text is not None:
        new = without_line(text, setup.GITHUB_SET_UP)
        if new is not None:
            out.append(Removal(name(config), new, "deleted" if new == "" else "github = true removed"))
    else:
        pyproject = setup._read(root / "pyproject.toml")
        new = without_line(pyproject, setup.GITHUB_SET_UP, _TOOL_GHSTATE) if pyproject else None
        if new is not None:
            out.append(Removal("pyproject.toml", new, "github = true removed from [tool.ghstate]"))
    ignore = state_dir / ".gitignore"
    text = setup._read(ignore)
    if text is None:
        return out
    from ghstate.local.store import EARLIER_HEADERS, RECORDS

    known = set(setup.ignored().splitlines()) | set(EARLIER_HEADERS)
    config_left = config.exists() and not any(r.target == name(config) and r.text == "" for r in out)
    others = [p for p in state_dir.iterdir() if p.name not in (".gitignore", "config.toml")]
    caches = [p for p in others if p.name in RECORDS and (p.is_file() or p.name == "reported")]
    if len(caches) < len(others) or config_left:
        held = "the local store's checkpoints or writes kept for push" if others else "your config.toml"
        out.append(Removal(name(ignore), None, f"kept: {name(state_dir)}/ holds {held} (delete the folder when you "
                           "no longer need them)"))
    elif set(text.splitlines()) <= known:
        out.extend(Removal(name(p), "", "deleted (this machine's own record, ignored by git)") for p in caches)
        out.append(Removal(name(ignore), "", "deleted"))
    else:
        out.append(Removal(name(ignore), None, "has lines of your own: kept"))
    return out




def apply(root: Path, removals: list[Removal]) -> None:
    """Write or delete each changed file, then remove the folders that deleting left empty (up to the root)."""
    from ghstate.local.store import atomic_write

    for removal in removals:
        if removal.text is None:
            continue
        path = root / removal.target
        if removal.text:
            atomic_write(path, "" if removal.text == EMPTY else removal.text)
            continue
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        folder = path.parent
        while folder != root and root in folder.parents:
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
            folder = folder.parent
