"""Checkpoint body (markdown) → Checkpoint, losing no text.

Sections are found from markdown-it's top-level heading tokens (levels 1–4) and matched through the
aliases in ``model.SECTIONS``. Items are cut from the source lines, so inline markup survives as
written. Whatever has no place in the model is kept as an ``Extra`` where it stood and reported as a
``Finding`` that ``lint`` turns into a message.
"""


import json
import re
from functools import lru_cache
from typing import Any, NamedTuple

from ghstate.core import marker as marker_record
from ghstate.core.marker import MARKER_LINE
from ghstate.core.markup import (
    CHECKBOX,
    CODE_INDENT,
    Block,
    blocks,
    dedent,
    item_layout,
    item_text,
    unescape_item,
    unescape_text,
)
from ghstate.core.model import (
    LIST_SECTIONS,
    SECTION_KEYS,
    TEXT_SECTIONS,
    Checkpoint,
    Extra,
    Phase,
    Step,
    section_key,
)

MARKER_PREFIX = "ghstate:v1"
_MARKER = re.compile(r"^<!--\s*ghstate:v1\s+(.*?)\s*-->\s*$", re.DOTALL)
_MARKER_LIKE = re.compile(r"^<!--\s*ghstate:v1\b")
NO_RESPONSE = "_No response_"
LINE_SECTIONS = LIST_SECTIONS  # one item per line, as issue forms ask: every list section of the table


class ParseError(ValueError):
    """Input that cannot be a checkpoint body at all (not text)."""


class Finding(NamedTuple):
    """Something parse noticed about the source: the raw material for lint."""

    code: str
    line: int  # 1-based
    message: str


class Span(NamedTuple):
    """Where a headed section stands in the source: 0-based lines, the heading from ``line`` up to
    ``start`` (a setext heading takes two), the body from ``start`` up to ``end``."""

    key: str | None
    line: int
    start: int
    end: int


class Parsed(NamedTuple):
    checkpoint: Checkpoint
    present: frozenset[str]  # sections whose heading appears, even if empty
    findings: tuple[Finding, ...] = ()
    lines: dict[str, int] = {}  # "resume" / "phases.2" / "decisions.0" (".end": last line) -> line
    spans: tuple[Span, ...] = ()  # every headed section, in document order
    marker_lines: tuple[int, int] | None = None  # [start, end) of the hidden marker
    title_heading: bool = False  # the title was read from a leading "# heading", not the marker


class _Section:
    __slots__ = ("key", "heading", "level", "line", "blocks", "start", "end")

    def __init__(self, key: str | None, heading: str | None, level: int, line: int, start: int = 0) -> None:
        self.key = key
        self.heading = heading
        self.level = level
        self.line = line  # 0-based line of the heading
        self.blocks: list[Block] = []
        self.start = start  # first body line
        self.end = 0  # one past the last body line


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def clean_text(text: str, block: bool = False) -> str:
    """The canonical form of a text field: LF newlines, blank lines empty, no outer blank space. A
    ``block`` (a section's text, loose text, an unknown section) keeps the indentation of a first line
    that makes it code (four spaces or a tab): there it is meaning, not layout."""
    text = normalize_newlines(text)
    if "\n" in text:
        text = "\n".join(line if line.strip() else "" for line in text.split("\n"))
    text = text.strip("\n").rstrip()
    return text if block and CODE_INDENT.match(text) else text.lstrip()


@lru_cache(maxsize=8)
def parse(text: str) -> Parsed:
    """The checkpoint a body holds. Memoised for the few bodies one command sees more than once (the
    writer reads a stored body, then writes over it); the result is immutable but for ``lines``,
    which no caller changes."""
    if "\x00" in text:
        raise ParseError("the input contains NUL bytes; it is binary, not a markdown body")
    text = normalize_newlines(text.removeprefix("\ufeff"))
    lines = text.split("\n")
    tree = blocks(text)

    sections: list[_Section] = [_Section(None, None, 0, 0)]
    marker: dict[str, Any] | None = None
    marker_block: Block | None = None
    findings: list[Finding] = []
    for block in tree:
        if block.type == "heading" and block.tag in ("h1", "h2", "h3", "h4"):
            heading = " ".join(block.content.split("\n")).strip()
            sections.append(_Section(section_key(heading), heading, int(block.tag[1]), block.start,
                                     start=block.end))
            continue
        if block.type == "html_block" and marker_block is None and _MARKER_LIKE.match(block.content):
            match = _MARKER.match(block.content)
            data = _load_marker(match.group(1)) if match else None
            if data is not None:
                marker, marker_block = data, block
                continue
            findings.append(Finding("GS007", block.start + 1, "the ghstate marker is not valid JSON; "
                                    "its text is kept but its data (revision, branch) is ignored"))
        sections[-1].blocks.append(block)

    # A section's body runs from the end of its heading to the start of the next heading.
    for here, nxt in zip(sections, [*sections[1:], None], strict=True):
        here.end = nxt.line if nxt is not None else len(lines)
    if marker_block is not None:
        for i in range(marker_block.start, marker_block.end):
            lines[i] = ""

    title = ""
    title_heading = False
    if marker is None:
        first = sections[1] if len(sections) > 1 else None
        if (first is not None and first.key is None and first.level == 1
                and not _section_text(lines, sections[0])):
            title = first.heading or ""
            title_heading = True
            sections[0].start = first.start
            sections[0].end = first.end
            sections[0].blocks = first.blocks
            del sections[1]
    loaded = marker_record.load(marker) if marker is not None else None
    if loaded is not None:
        title = loaded.title

    parsed = _assemble(lines, sections, loaded, title, findings)
    return parsed._replace(
        spans=tuple(Span(sec.key, sec.line, sec.start, sec.end) for sec in sections[1:]),
        marker_lines=(marker_block.start, marker_block.end) if marker_block is not None else None,
        title_heading=title_heading,
    )


def _load_marker(raw: str) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # not ours, or built to break a reader (nesting past any depth)
        return None
    return data if isinstance(data, dict) else None


def _section_text(lines: list[str], section: _Section) -> str:
    return "\n".join(lines[section.start : section.end]).strip()


def _assemble(lines: list[str], sections: list[_Section], marker: marker_record.Marker | None, title: str,
              findings: list[Finding]) -> Parsed:
    values: dict[str, Any] = {}
    leftovers: dict[str | None, list[str]] = {}
    headed: list[tuple[tuple[str, ...], Extra]] = []  # (known sections before it, extra)
    present: set[str] = set()
    where: dict[str, int] = {}
    known_before: list[str] = []

    for section in sections:
        key = section.key
        if key is None:
            body = unescape_text(_clean_body(lines, section.start, section.end))
            if section.heading is None:
                if body:
                    leftovers.setdefault(None, []).append(body)
            else:
                headed.append((tuple(known_before), Extra(section.heading, body, section.level, None)))
            continue
        if key in present:
            findings.append(Finding("GS008", section.line + 1,
                                    f"section {section.heading!r} appears twice; its contents were merged"))
        present.add(key)
        where.setdefault(key, section.line + 1)
        known_before.append(key)
        if key in TEXT_SECTIONS:
            text = unescape_text(_clean_body(lines, section.start, section.end))
            if text == NO_RESPONSE:
                text = ""
            values[key] = f"{values[key]}\n\n{text}".strip() if values.get(key) and text else (
                values.get(key) or text)
            continue
        items, rest = _list_items(lines, section)
        line_items: list[tuple[int, str]] = []
        if key in LINE_SECTIONS:  # one path or check per line, as issue-form textareas give them
            rest, line_items = _split_paragraph_lines(lines, section, rest)
        for chunk_line, chunk in rest:
            if chunk == NO_RESPONSE:
                continue
            leftovers.setdefault(key, []).append(unescape_text(clean_text(chunk, block=True)))
            findings.append(Finding("GS006", chunk_line + 1,
                                    f"text in {section.heading!r} is not a list item; it is kept as is"))
        if key == "phases":
            phases = []
            for item in items:
                phase, problem, step_lines = _phase(lines, item)
                if phase is None:
                    leftovers.setdefault(key, []).append(_raw_item(lines, item))
                    findings.append(Finding("GS006", item.start + 1, "a status item with no phase name; "
                                            "it is kept as is"))
                    continue
                if problem:
                    findings.append(Finding("GS003", item.start + 1, problem))
                index = len(values.get("phases", ())) + len(phases)
                where[f"phases.{index}"] = item.start + 1
                where[f"phases.{index}.end"] = item.end  # the last line of the phase with its steps, 1-based
                where.update({f"phases.{index}.steps.{j}": line for j, line in enumerate(step_lines)})
                phases.append(phase)
            values["phases"] = (*values.get("phases", ()), *phases)
        else:
            found = [(item.start, unescape_item(item_text(lines, item)), item.end) for item in items]
            texts = []
            for start, text, end in sorted([*found, *((i, t, i + 1) for i, t in line_items)]):
                if text:
                    index = len(values.get(key, ())) + len(texts)
                    where[f"{key}.{index}"] = start + 1
                    where[f"{key}.{index}.end"] = end  # the last line of the item, 1-based
                    texts.append(text)
            values[key] = (*values.get(key, ()), *texts)

    checkpoint = Checkpoint(
        title=title,
        extra=_place_extras(values, leftovers, headed),
        **({"meta": marker.meta, "executions": marker.executions, "verification_data": marker.verification}
           if marker is not None else {}),
        **values,
    )
    return Parsed(checkpoint, frozenset(present), tuple(findings), where, marker is not None)


def _clean_body(lines: list[str], start: int, end: int) -> str:
    return clean_text("\n".join(lines[start:end]), block=True)


def _raw_item(lines: list[str], item: Block) -> str:
    return "\n".join(lines[item.start : item.end]).strip()


def _list_items(lines: list[str], section: _Section) -> tuple[list[Block], list[tuple[int, str]]]:
    """Top-level list items of a section, and the text around them that is not a list."""
    items: list[Block] = []
    covered: set[int] = set()
    for block in section.blocks:
        if block.type in ("bullet_list", "ordered_list"):
            items.extend(child for child in block.children if child.type == "list_item")
            covered.update(range(block.start, block.end))
    return items, _chunks(lines, section.start, section.end, covered)


def _split_paragraph_lines(lines: list[str], section: _Section, rest: list[tuple[int, str]]
                           ) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """Paragraph lines of a line-oriented section become items; other loose text stays loose."""
    paragraph_lines: set[int] = set()
    for block in section.blocks:
        if block.type == "paragraph":
            paragraph_lines.update(range(block.start, block.end))
    items = [(i, unescape_item(lines[i].strip())) for i in sorted(paragraph_lines)
             if lines[i].strip() and lines[i].strip() != NO_RESPONSE]
    if not items:
        return rest, []
    kept = _chunks(lines, section.start, section.end,
                   paragraph_lines | {i for b in section.blocks if b.type in ("bullet_list", "ordered_list")
                                      for i in range(b.start, b.end)})
    return kept, items


def _chunks(lines: list[str], start: int, end: int, covered: set[int], width: int = 0) -> list[tuple[int, str]]:
    """Runs of lines in [start, end) outside ``covered``, de-indented by ``width``, as (line, text)."""
    out: list[tuple[int, str]] = []
    run: list[str] = []
    run_start = start
    for i in range(start, end + 1):
        if i == end or i in covered:
            text = "\n".join(line if line.strip() else "" for line in run).strip("\n")
            if text.strip():
                out.append((run_start, text))
            run = []
            continue
        if not run:
            run_start = i
        run.append(dedent(lines[i], width) if width else lines[i])
    return out


def _phase(lines: list[str], item: Block) -> tuple[Phase | None, str, list[int]]:
    """One item of "Current status": checkbox + name, sub-steps, and any other text as detail; and the
    (1-based) line of each step."""
    children = item.children
    if not children or children[0].type != "paragraph" or children[0].start != item.start:
        return None, "", []
    first = item_text(lines, Block("list_item", item.start, children[0].end, item.level))
    first = " ".join(part.strip() for part in first.split("\n"))
    match = CHECKBOX.match(first)
    problem = ""
    if match:
        done = match.group(1) in "xX"
        name = first[match.end() :].strip()
    else:
        done = False
        name = first
        problem = f"phase {name!r} is not a checkbox; write it as '- [ ] {name}'"
    if not name:
        return None, "", []
    steps: list[Step] = []
    step_lines: list[int] = []
    covered = set(range(item.start, children[0].end))
    for child in children[1:]:
        if child.type in ("bullet_list", "ordered_list"):
            covered.update(range(child.start, child.end))
            for sub in child.children:
                if sub.type == "list_item":
                    step = _step(item_text(lines, sub))
                    if step is not None:
                        steps.append(step)
                        step_lines.append(sub.start + 1)
    _, width = item_layout(lines, item)
    detail = clean_text("\n\n".join(text for _, text in _chunks(lines, item.start, item.end, covered, width)))
    return Phase(name, done, tuple(steps), detail), problem, step_lines


def _step(text: str) -> Step | None:
    if not text:
        return None
    match = CHECKBOX.match(text)
    if match and text[match.end() :].strip():
        return Step(text[match.end() :].strip(), match.group(1) in "xX")
    return Step(unescape_item(text, plain_step=True), None)


def _place_extras(values: dict[str, Any], leftovers: dict[str | None, list[str]],
                  headed: list[tuple[tuple[str, ...], Extra]]) -> tuple[Extra, ...]:
    """Order extras for rendering: each after the nearest known section before it that is rendered.

    Known sections are rendered in canonical order and empty ones not at all, so an extra is anchored
    to the last non-empty known section that preceded it in the document (None: before them all).
    """
    rendered = {key for key in SECTION_KEYS if values.get(key) or leftovers.get(key)}
    by_anchor: dict[str | None, list[Extra]] = {}
    for known_before, extra in headed:
        anchor = next((k for k in reversed(known_before) if k in rendered), None)
        by_anchor.setdefault(anchor, []).append(extra._replace(after=anchor))
    result: list[Extra] = []
    for key in (None, *SECTION_KEYS):
        text = "\n\n".join(leftovers.get(key, []))
        if text:
            result.append(Extra(None, text, 2, key))
        result.extend(by_anchor.get(key, []))
    return tuple(result)


__all__ = ["Finding", "ParseError", "Parsed", "Span", "clean_text", "parse", "LIST_SECTIONS", "MARKER_PREFIX"]


def _quick_marker(body: str) -> dict[str, Any] | None:
    """The marker's raw data found by a quick scan, for picking a checkpoint among many (no full parse)."""
    match = MARKER_LINE.search(body)
    return _load_marker(match.group(1)) if match else None


def marker_of(body: str) -> "marker_record.Marker | None":
    """A body's marker, loaded, by a quick scan (no markdown parse): what a reader of a checkpoint's revision,
    commit and time needs, and nothing of its sections; None when it has none (or a broken one)."""
    marker = _quick_marker(body)
    return marker_record.load(marker) if marker is not None else None


_FORM_BRANCH = re.compile(r"^[ ]{0,3}#{1,4}[ \t]+Branch:?[ \t]*\r?\n(?:[ \t]*\r?\n)*[ \t]*`?([^\s`]+)`?[ \t]*\r?$",
                          re.IGNORECASE | re.MULTILINE)


def branch_of(body: str) -> str:
    """The branch a checkpoint is about: its marker's, or, for an issue made from the issue form that
    ghstate has not written yet, its Branch field (quick scans, no full parse)."""
    marker = _quick_marker(body)
    if marker is not None:
        return marker_record.text(marker.get(marker_record.BRANCH))
    match = _FORM_BRANCH.search(body)
    return match.group(1).removeprefix("refs/heads/") if match and match.group(1) != NO_RESPONSE else ""


_BROKEN_BRANCH = re.compile(r'"branch"\s*:\s*"((?:[^"\\]|\\.)*)"')


def broken_marker(body: str) -> str | None:
    """For a body whose marker line does not hold valid JSON (broken by hand): the branch its text still
    names ("" when none); None when the marker is whole or there is none."""
    if _quick_marker(body) is not None:
        return None
    line = next((x for x in body.splitlines()[:3] if _MARKER_LIKE.match(x.lstrip())), None)
    if line is None:
        return None
    found = _BROKEN_BRANCH.search(line)
    return found.group(1) if found else ""


def branch_match(body: str, title: str, branch: str) -> int:
    """How a checkpoint's body names ``branch``: 2 its marker does (a child task never does), 1 a marker broken
    by hand still names it (or the issue's title does), 0 not at all. No branch ("": outside git, a detached
    HEAD) is named only by a whole marker that names none: a body without one (anyone's issue) names no branch."""
    if branch_of(body) == branch and not is_child(body) and (branch or _quick_marker(body) is not None):
        return 2
    named = broken_marker(body)
    return int(bool(branch) and named is not None and (named == branch or title in (f"Checkpoint: {branch}", branch)))


def is_child(body: str) -> bool:
    """Whether a checkpoint is a child task of another (``ghstate split``), by a quick scan of its marker: a
    child is never a branch's checkpoint, however it was written."""
    return task_link_of(body) is not None


def task_link_of(body: str) -> "marker_record.TaskLink | None":
    """The parent and phase a child was split from, as its marker records them (a quick scan, no full parse):
    what a child knows of its place in a plan wherever a person moved it since."""
    marker = _quick_marker(body)
    return marker_record.TaskLink.from_data(marker.get(marker_record.TASK)) if marker is not None else None
