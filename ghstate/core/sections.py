"""The sections of a checkpoint, each declared once: the table the rest of the core reads.

A checkpoint is a fixed set of sections. Each row says what a section is called (its key, its heading and the
headings accepted for it), what it holds (``kind``), how a person's words name one of its items, how the prompt
counts it when it is fitted and how its items' provenance is kept. Parse, render, lint, fit, present, the
summary of a person's edit, provenance and the seen-file read these rows instead of spelling the sections out.

Adding a plain list section is adding a row here: the records whose fields are sections (``model.Checkpoint``,
``fit.Selection``, ``seen.Changes``, ``edits.Edits``, the checkpoint request) are built from this table, the
templates walk the sections they are given, and tests/test_sections.py adds a test-only row to show it. What a
section does that no other does stays with the code that does it, and says so there: the status checklist's
phases (``kind`` "checklist": ticks and steps, ``--done``/``--undo``), the resume instruction's and the goal's
places in the prompt, the files' paths (``items`` "paths": code spans, changed ones first), the runtime's
checks (``items`` "checks"), the verification CI writes.

This module imports nothing of ghstate's: every other module of the core may read it.
"""

from typing import NamedTuple


class Section(NamedTuple):
    key: str  # the field of ``model.Checkpoint``, the ``--json`` key and the ``lines`` key of parse
    heading: str  # the heading render writes
    aliases: tuple[str, ...]  # other headings parse accepts for it (any case), besides ``heading``
    kind: str  # "text": markdown; "list": one item a line (as issue forms ask); "checklist": the phases
    meant: str  # the words a heading ghstate does not know starts with when meant as this one (a regex)
    noun: str = ""  # one item, as a person's edit is summarised ("2 risks"); a list's only
    shown: tuple[str, str] = ("", "")  # one item and many, as the fitted prompt says what it left out
    fit: int = 0  # its place among what the prompt says it left out (0: not counted there)
    code: str = ""  # its items' one-letter provenance code in the hidden marker ("" none kept)
    kept: int = 0  # the order in which provenance keeps room for its items when the marker is full
    prompt: str = ""  # its heading in a session's prompt, when the prompt shows it as a plain list
    items: str = ""  # a list's items: "plain" (markdown), "paths" (files: code spans), "checks" (runtime: name, check)
    flag: str = ""  # the CLI flag that adds to it or sets it (``--flag``); the MCP argument is its ``_`` spelling
    was: str = ""  # the flag's earlier name, still taken (``--read``; the MCP argument's too), help leaves it out
    adds: str = ""  # a plain list's flag's help: "Add {adds}."
    argument: str = ""  # a plain list's MCP argument's description ("" none)
    new: str = ""  # the heading of its items a session has not seen yet, in the prompt of what changed
    # lint's rule when it is empty (its code), and what to write there: "no {noun}: add '## {heading}' with {it}"
    required: tuple[str, str, str] = ("", "", "")


SECTIONS: tuple[Section, ...] = (
    Section("goal", "Goal", ("task", "objective"), "text", r"goal|objective",
            required=("GS010", "goal", "one or two sentences")),
    Section("phases", "Current status", ("status", "progress", "phases", "plan"), "checklist",
            r"status|progress|phases?|plan|checklist|todo", flag="phase",
            required=("GS004", "phases", "'- [ ] Phase 1: …' checkboxes")),
    Section("decisions", "Decisions locked", ("locked decisions", "decisions"), "list", r"decisions?|decided",
            noun="decision", shown=("locked decision", "locked decisions"), fit=1, code="d", kept=1,
            prompt="Locked decisions (settled, do not reopen)", new="New locked decisions (settled, do not reopen)",
            items="plain", flag="decision", adds="a locked decision", argument="Locked decisions to add."),
    Section("questions", "Open questions", ("unresolved questions", "questions"), "list", r"questions?",
            noun="question", shown=("open question", "open questions"), fit=2, code="q", kept=4,
            prompt="Open questions", new="New open questions", items="plain", flag="question",
            adds="an open question"),
    Section("risks", "Remaining risks", ("risks", "open risks"), "list", r"risks?",
            noun="risk", shown=("risk", "risks"), fit=3, code="r", kept=3, prompt="Remaining risks", new="New risks",
            items="plain", flag="risk", adds="a remaining risk"),
    Section("files", "Files to re-read", ("files/modules to re-read", "files", "re-read"), "list",
            r"files?|re-?read", noun="file to re-read", shown=("file to re-read", "files to re-read"), fit=5,
            code="f", kept=2, new="New files to re-read", items="paths", flag="files", was="read"),
    Section("runtime", "Runtime", ("live state", "environment"), "list", r"runtime",
            noun="runtime check", shown=("runtime check", "runtime checks"), fit=6, items="checks"),
    Section("resume", "Resume instruction", ("resume", "resume point", "next step"), "text",
            r"resume|next steps?|next actions?|where to start", flag="resume", was="resume-at",
            required=("GS001", "resume instruction", "the exact next step")),
    Section("verification", "Verification", ("ci",), "text", r"verification|ci"),
)

BY_KEY: dict[str, Section] = {s.key: s for s in SECTIONS}
# The sections lint requires (an error or a warning when empty), with their rule codes.
REQUIRED: tuple[Section, ...] = tuple(s for s in SECTIONS if s.required[0])
LISTS: tuple[str, ...] = tuple(s.key for s in SECTIONS if s.kind == "list")
TEXTS: tuple[str, ...] = tuple(s.key for s in SECTIONS if s.kind == "text")
# The lists of plain markdown items: no shape of their own (the files' paths and the runtime's checks have one).
PLAIN: tuple[str, ...] = tuple(s.key for s in SECTIONS if s.items == "plain")
# The MCP argument (the flag's ``_`` spelling) of each section a flag writes, and the section.
ARGUMENTS: dict[str, str] = {s.flag.replace("-", "_"): s.key for s in SECTIONS if s.flag}
# A flag's or an MCP argument's earlier name (``_`` spelling), and its name now: one name per field, the
# state's JSON key where a flag can say it (``--files``, ``--resume``), the old ones still taken.
RENAMED: dict[str, str] = {s.was.replace("-", "_"): s.flag.replace("-", "_") for s in SECTIONS if s.was}
# The sections whose items carry provenance, by code, in the table's order.
PROVENANCE: tuple[tuple[str, str], ...] = tuple((s.code, s.key) for s in SECTIONS if s.code)
# The marker's provenance kinds in the order they keep room: the checklist's ticked phases first (``p``, what
# the prompt leans on most), its ticked steps last (``s``); between them the lists' codes by ``kept``.
PROVENANCE_ORDER: tuple[str, ...] = ("p", *(s.code for s in sorted(SECTIONS, key=lambda s: s.kept) if s.code), "s")
