"""Rules over a parsed body: each problem has a code, a severity and the line it is on.

Errors make ``ghstate lint`` exit 1: a checkpoint a fresh session cannot resume from (no resume
instruction, no status) or one GitHub would refuse. Warnings are advice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ghstate.core.model import (
    CONCURRENT,
    GITHUB_LIMIT,
    HEADINGS,
    LIST_SECTIONS,
    Checkpoint,
    Phase,
    meant_section,
    names_no_path,
)
from ghstate.core.parse import Parsed, ParseError, parse
from ghstate.core.sections import REQUIRED
from ghstate.errors import InputError

RULES: dict[str, tuple[str, str]] = {
    "GS001": ("error", "missing resume instruction"),
    "GS002": ("warning", "resume instruction names no unfinished phase"),
    "GS003": ("error", "phase is not a checkbox"),
    "GS004": ("error", "empty status: no phases"),
    "GS005": ("warning", "item too long for a compact checkpoint"),
    "GS006": ("warning", "text that parse could not place"),
    "GS007": ("error", "hidden marker is not valid JSON"),
    "GS008": ("warning", "section appears twice"),
    "GS009": ("error", "body longer than GitHub accepts"),
    "GS010": ("warning", "no goal"),
    "GS011": ("warning", "file to re-read names no path"),
    "GS012": ("warning", "two phases share a label"),
    "GS013": ("warning", "a phase's checkbox and its steps' disagree"),
    "GS014": ("warning", "a section that looks meant as one of ghstate's, which no prompt places"),
    "GS015": ("warning", "a concurrent edit kept beside a value, for a person to settle"),
}


@dataclass(frozen=True)
class Problem:
    code: str
    line: int
    message: str

    @property
    def severity(self) -> str:
        return RULES[self.code][0]

    def format(self, source: str) -> str:
        return f"{source}:{self.line}: {self.code} {self.severity}: {self.message}"


def lint(parsed: Parsed, text: str, *, max_item_chars: int = 400) -> list[Problem]:
    cp = parsed.checkpoint
    where = parsed.lines
    last_line = text.count("\n") + (0 if text.endswith("\n") else 1)
    problems = [Problem(f.code, f.line, f.message) for f in parsed.findings]

    for section in REQUIRED:  # the table says which sections lint requires, and what to write there
        if not getattr(cp, section.key):
            code, what, how = section.required
            line = where.get(section.key, last_line if section.key == "resume" else 1)  # the resume: last
            problems.append(Problem(code, line, f"no {what}: add '## {section.heading}' with {how}"))
    if cp.resume and cp.next_phase is not None:  # the resume instruction's own rule: it names where to start
        text_lower = cp.resume.lower()
        open_phases = [(i, p) for i, p in enumerate(cp.phases, start=1) if not p.done]
        if not any(p.label.lower() in text_lower or p.name.lower() in text_lower
                   or re.search(rf"\bphase\s*{i}\b", text_lower) for i, p in open_phases):
            problems.append(Problem("GS002", where.get("resume", last_line),
                                    f"the resume instruction names no unfinished phase; say where to start, "
                                    f"e.g. '{cp.next_phase.label}'"))

    for key in LIST_SECTIONS:
        for i, item in enumerate(getattr(cp, key)):
            if len(item) > max_item_chars:
                problems.append(Problem("GS005", where.get(f"{key}.{i}", where.get(key, 1)),
                                        f"{key} item {i + 1} has {len(item)} characters (limit {max_item_chars}); "
                                        "keep what is expensive to rediscover, in a sentence"))
    for i, item in enumerate(cp.files):
        prose = names_no_path(item)
        if prose:
            problems.append(Problem("GS011", where.get(f"files.{i}", where.get("files", 1)),
                                    f"{prose[:60]!r} names no path; write it as '- `path/to/file`'"))
    seen: dict[str, int] = {}
    for i, phase in enumerate(cp.phases):
        label = phase.label.lower()
        if label in seen:
            problems.append(Problem("GS012", where.get(f"phases.{i}", 1),
                                    f"phase {i + 1} and phase {seen[label] + 1} are both {phase.label!r}, so "
                                    f"--done {phase.label!r} is ambiguous: rename one, or remove the duplicate"))
        seen.setdefault(label, i)
        disagreement = _steps_disagree(phase)
        if disagreement:
            problems.append(Problem("GS013", where.get(f"phases.{i}", 1), disagreement))
        size = len(phase.name) + len(phase.detail) + sum(len(s.text) for s in phase.steps)
        if size > max_item_chars * 4:
            problems.append(Problem("GS005", where.get(f"phases.{i}", 1),
                                    f"phase {phase.label!r} has {size} characters with its steps; "
                                    "compact finished work"))
    problems += _heading_problems(parsed, text)
    if len(text) > GITHUB_LIMIT:
        problems.append(Problem("GS009", 1, f"the body has {len(text)} characters; GitHub accepts "
                                            f"{GITHUB_LIMIT}: compact finished phases or move notes out"))
    return sorted(problems, key=lambda p: (p.line, p.code))


_SUB = re.compile(r"^\s{0,3}#{3,}")


def unplaced_words(heading: str, whose: str = "the") -> str:
    """Why a section named ``heading`` (one ``meant_section`` knows) is not placed, and what to do."""
    known = HEADINGS[meant_section(heading) or "goal"]
    return (f"{whose} section {heading!r} is not ghstate's {known!r}: it is kept as written, but no prompt shows "
            f"its items; rename it '## {known}' (or merge it into that section)")


def _heading_problems(parsed: Parsed, text: str) -> list[Problem]:
    """The sections of their own (level 1 or 2, not a person's sub-heading inside one) that ghstate does not
    place: one that looks meant as ghstate's (GS014), a value a merge kept beside another (GS015)."""
    source = text.split("\n")
    problems = []
    for span in parsed.spans:
        line = source[span.line] if span.key is None and span.line < len(source) else "### "
        heading = re.sub(r"^\s{0,3}#{1,2}(?:\s+|$)|\s#+\s*$", "", line).strip() if not _SUB.match(line) else ""
        if heading.endswith(CONCURRENT):  # a person settles it
            problems.append(Problem("GS015", span.line + 1, f"{heading!r} holds the other value of "
                                    f"{heading[:-len(CONCURRENT)].strip()!r}, kept when both sides changed it: keep "
                                    "the one you mean and delete the other, with its heading"))
        elif heading and meant_section(heading):
            problems.append(Problem("GS014", span.line + 1, unplaced_words(heading)))
    return problems


def unplaced(cp: Checkpoint) -> list[str]:
    """The headings of ``cp``'s sections that look meant as ghstate's own (``## Decision``), in order."""
    return list(dict.fromkeys(e.heading for e in cp.extra if e.heading and e.level <= 2 and meant_section(e.heading)
                              and not e.heading.endswith(CONCURRENT)))  # ghstate's own: GS015 asks to settle it


def _steps_disagree(phase: Phase) -> str:
    """Why a phase's own checkbox contradicts its checkbox steps (plain bullets are notes), or ""."""
    boxes = [s.done for s in phase.steps if s.done is not None]
    if phase.done and not all(boxes):
        open_steps = boxes.count(False)
        return (f"phase {phase.label!r} is done but {open_steps} of its {len(boxes)} steps are not ticked: tick "
                f"them (--done {phase.label!r} ticks them all), or reopen the phase (--undo {phase.label!r})")
    if boxes and all(boxes) and not phase.done:
        return (f"every step of phase {phase.label!r} is ticked but the phase is not: tick it "
                f"(--done {phase.label!r}), or untick the step still to do")
    return ""


def problems_of(text: str, name: str, max_item_chars: int) -> list[Problem]:
    try:
        parsed = parse(text)
    except ParseError as exc:
        raise InputError(f"{name}: {exc}") from None
    return lint(parsed, text, max_item_chars=max_item_chars)


def as_json(problems: list[Problem], name: str) -> dict[str, object]:
    """What ``ghstate lint --json`` prints: the source, the counts and every problem."""
    errors = sum(p.severity == "error" for p in problems)
    return {"source": name, "errors": errors, "warnings": len(problems) - errors,
            "problems": [{"line": p.line, "code": p.code, "severity": p.severity, "message": p.message}
                         for p in problems]}


def report(text: str, name: str, max_item_chars: int,
           problems: list[Problem] | None = None) -> tuple[list[str], str | None]:
    """One line per problem, and the failure message when any is an error (what ``ghstate lint`` prints
    and the MCP server's ``lint`` tool answers)."""
    if problems is None:
        problems = problems_of(text, name, max_item_chars)
    errors = sum(p.severity == "error" for p in problems)
    failure = None
    if errors:
        warnings = len(problems) - errors
        failure = (f"{name}: {errors} error{'s' if errors != 1 else ''} and {warnings} "
                   f"warning{'s' if warnings != 1 else ''}; fix the errors listed above")
    return [problem.format(name) for problem in problems], failure
