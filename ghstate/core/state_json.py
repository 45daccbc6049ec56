"""Checkpoint ↔ the JSON state of the contract (``ghstate parse``, ``show --json``, ``render``).

``to_json`` adds what is derived (phase status, next phase, plain file paths) and what the store or
a resume knows (issue, url, drift, runtime status). ``from_json`` reads such an object back, checking
every field and saying which one is wrong; derived keys are ignored, so they cannot disagree.

The strings of the state are literal text, what a person sees on GitHub (see ``markup.escape_literal``):
``to_json`` gives the literal form of each text, and ``from_json`` escapes literal text into markdown.
Text a person wrote with markup (a link, ``**bold**``) is not the escape of its literal form; for it
``to_json`` also gives the markdown as written under ``"markdown"`` (JSON path -> markdown), and
``from_json`` takes that markdown back wherever the literal text it stands for is unchanged. So a state
edited with ``jq`` keeps every item it did not touch byte for byte, and new or changed text is literal.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ghstate.core import marker
from ghstate.core.marker import Execution, Meta
from ghstate.core.markup import (
    CHECKBOX,
    code_span,
    control_at,
    escape_literal,
    not_text,
    unescape_literal,
)
from ghstate.core.model import (
    SECTION_KEYS,
    TEXT_SECTIONS,
    Checkpoint,
    Extra,
    Phase,
    Step,
    file_paths_of,
    rendering_order,
    runtime_entry,
    section_key,
    without_status_marks,
)
from ghstate.core.model import runtime_status as probe_status
from ghstate.core.parse import clean_text
from ghstate.core.provenance import Provenance
from ghstate.core.sections import ARGUMENTS, PLAIN, RENAMED

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.verification import Verification

SCHEMA = 1
# The top-level keys of the JSON state (``to_json``); ``provenance`` only where the marker keeps it.
FIELDS = ("schema", "title", "issue", "url", "goal", "phases", "next_phase", *PLAIN,
          "files", "file_items", "resume", "runtime", "verification", "executions", "drift", "extra", "meta",
          "pull_request", "provenance", "markdown")


class StateError(ValueError):
    """A JSON state that is not a valid checkpoint; the message names the field."""


def to_json(
    cp: Checkpoint,
    *,
    issue: int | None = None,
    url: str | None = None,
    drift: dict[str, Any] | None = None,
    runtime_status: list[str] | None = None,
) -> dict[str, Any]:
    next_phase = cp.next_phase
    marks: dict[str, str] = {}

    def lit(markdown: str, path: str, kind: str) -> str:
        return _literal(markdown, path, kind, marks)

    runtime = []
    for i, item in enumerate(cp.runtime):
        text = lit(item, f"runtime[{i}].text", "item")
        name, check = runtime_entry(text)
        status = probe_status(runtime_status, i)
        runtime.append({"name": name, "check": check, "status": status, "text": text})
    verification: dict[str, Any] | None = None
    if cp.verification or cp.verification_data:
        verification = cp.verification_data.to_dict() if cp.verification_data else {"status": "unknown"}
        verification["text"] = lit(cp.verification, "verification.text", "block")
    meta = {
        "revision": cp.meta.revision,
        "branch": cp.meta.branch,
        "commit": cp.meta.commit,
        "dirty": list(cp.meta.dirty),
        "created_at": cp.meta.created_at,
        "updated_at": cp.meta.updated_at,
        "id": cp.meta.id,
    }
    meta.update({k: v for k, v in marker.dump(marker.Marker(cp.meta)).items() if k not in meta})
    return {
        "schema": SCHEMA,
        "title": cp.title,
        "issue": issue,
        "url": url,
        "goal": lit(cp.goal, "goal", "block"),
        "phases": [_phase_json(p, i, lit) for i, p in enumerate(cp.phases)],
        "next_phase": unescape_literal(next_phase.name) if next_phase else None,
        **{key: [lit(item, f"{key}[{i}]", "item") for i, item in enumerate(getattr(cp, key))]
           for key in PLAIN},
        "files": cp.file_paths,
        "file_items": list(cp.files),
        "resume": lit(cp.resume, "resume", "block"),
        "runtime": runtime,
        "verification": verification,
        "executions": [e.to_data() for e in cp.executions],
        "drift": drift,
        "extra": [{"heading": lit(e.heading, f"extra[{i}].heading", "heading") if e.heading else e.heading,
                   "level": e.level, "after": e.after, "body": lit(e.body, f"extra[{i}].body", "block")}
                  for i, e in enumerate(cp.extra)],
        "meta": meta,
        "pull_request": cp.meta.pull_request.to_data() if cp.meta.pull_request is not None else None,
        **({"provenance": Provenance(cp).as_json()} if cp.meta.provenance is not None else {}),
        "markdown": marks,
    }


def _phase_json(phase: Phase, i: int, lit: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": lit(phase.name, f"phases[{i}].name", "line"),
        "done": phase.done,
        "status": phase.status,
        "steps": [{"name": lit(s.text, f"phases[{i}].steps[{j}].name", "item"), "done": s.done}
                  for j, s in enumerate(phase.steps)],
    }
    if phase.detail:
        data["detail"] = lit(phase.detail, f"phases[{i}].detail", "item")
    return data


# -------------------------------------------------------------------------------- literal text


def literal_markdown(kind: str, text: str) -> str:
    """Literal text (a flag's value, a string of a JSON state) as the markdown of its place: ``line``
    (a phase name), ``item`` (a list item, a step, a phase's detail), ``block`` (a section's text) or
    ``heading``; normalised as parse would read it back (LF newlines, no outer blank space)."""
    text = clean_text(text, block=kind == "block")
    if kind in ("line", "heading"):
        text = " ".join(text.split("\n")).strip()
    markdown = escape_literal(text)
    if kind == "heading":  # a run of # at the end would close the heading, not show
        markdown = re.sub(r"(^|[ \t])(#+)$", lambda m: m.group(1) + "\\" + m.group(2), markdown)
    return markdown


def _literal(markdown: str, path: str, kind: str, marks: dict[str, str]) -> str:
    text = unescape_literal(markdown)
    if literal_markdown(kind, text) != markdown:
        marks[path] = markdown  # a person's markup: the literal form alone would not give it back
    return text


_INDEX = re.compile(r"\[[0-9]+\]")


class _Markdown:
    """The ``markdown`` key of a JSON state: the markdown of a text whose literal form is still the one
    given, at its own path or, for an item that moved, at the index it moved to (each used once)."""

    def __init__(self, value: Any, state: dict[str, Any]) -> None:
        if value is None:
            value = {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _fail("markdown", "must be an object of strings (JSON path -> markdown)")
        self.own: dict[str, str] = {}  # path -> markdown, where the path still holds what it shows
        self.moved: dict[tuple[str, str], list[str]] = {}  # (path without indexes, literal) -> markdown
        for path, entry in value.items():
            shown = unescape_literal(entry)
            if _at(state, path) == shown:
                self.own[path] = entry
            else:
                self.moved.setdefault((_INDEX.sub("[]", path), shown), []).append(entry)

    def text(self, raw: str, path: str, kind: str) -> str:
        entry = self.own.get(path)
        if entry is None:
            moved = self.moved.get((_INDEX.sub("[]", path), raw))
            entry = moved.pop(0) if moved else None
        if entry is None:
            return literal_markdown(kind, raw)
        text = clean_text(entry, block=kind == "block")
        return " ".join(text.split("\n")).strip() if kind in ("line", "heading") else text


_STEP = re.compile(r"\.?([A-Za-z_]+)|\[([0-9]+)\]")


def _at(state: Any, path: str) -> Any:
    """The value at a JSON path such as ``phases[1].steps[0].name``, or None."""
    value = state
    for m in _STEP.finditer(path):
        if m.group(1) is not None:
            value = value.get(m.group(1)) if isinstance(value, dict) else None
        else:
            index = int(m.group(2))
            value = value[index] if isinstance(value, list) and index < len(value) else None
    return value


def _check_controls(value: Any, path: str) -> None:
    """Refuse control characters anywhere in the state, naming the field and where in it."""
    if isinstance(value, str):
        at = control_at(value)
        if at >= 0:
            raise _fail(path or "the state", f"holds {not_text(value, at, 'remove it (terminal output?)')}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_controls(key, f"{path}{'.' if path else ''}{key!s} (the key)")
            _check_controls(item, f"{path}{'.' if path else ''}{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_controls(item, f"{path}[{i}]")


# ------------------------------------------------------------------------------------------- read


def _fail(path: str, problem: str) -> StateError:
    return StateError(f"{path}: {problem}")


def _string(obj: dict[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(f"{path}{key}", f"must be a string, not {type(value).__name__}")
    return value


def _plain(obj: dict[str, Any], key: str, path: str) -> str:
    """A one-line string that is data, not text for the body (a branch, an id, the title)."""
    value = _string(obj, key, path)
    return " ".join(clean_text(value).split("\n")).strip() if value else ""


def _text(obj: dict[str, Any], key: str, path: str, md: _Markdown, kind: str) -> str:
    """Literal text at ``path + key``, as markdown for its place."""
    value = _string(obj, key, path)
    return md.text(value, f"{path}{key}", kind) if value else ""


def _strings(obj: dict[str, Any], key: str, md: _Markdown | None = None) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(key, "must be a list of strings")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _fail(f"{key}[{i}]", "must be a string")
        text = clean_text(item) if md is None else md.text(item, f"{key}[{i}]", "item")
        if text:
            out.append(text)
    return tuple(out)


def _files(obj: dict[str, Any]) -> tuple[str, ...]:
    """Use the items as written where they still name the listed paths (an item may name several);
    write new paths as code."""
    paths = _strings(obj, "files")
    written = list(_strings(obj, "file_items"))
    used = [False] * len(written)
    owed: list[str] = []  # paths of items already written that the list has yet to reach
    out = []
    for path in paths:
        if path in owed:
            owed.remove(path)
            continue
        for i, item in enumerate(written):
            named = file_paths_of(item)
            if not used[i] and path in named:
                used[i] = True
                out.append(item)
                named.remove(path)
                owed.extend(named)
                break
        else:
            out.append(code_span(path))
    return tuple(out)


def _runtime(obj: dict[str, Any], md: _Markdown) -> tuple[str, ...]:
    value = obj.get("runtime")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail("runtime", "must be a list")
    out = []
    for i, entry in enumerate(value):
        if isinstance(entry, str):
            text = md.text(entry, f"runtime[{i}]", "item") if entry else ""
        elif isinstance(entry, dict):
            name = _plain(entry, "name", f"runtime[{i}].")
            check = _plain(entry, "check", f"runtime[{i}].")
            written = _text(entry, "text", f"runtime[{i}].", md, "item")
            if written and runtime_entry(unescape_literal(written)) == (name, check):
                text = written
            else:
                text = literal_markdown("item", f"{name}: {check}" if check else name)
        else:
            raise _fail(f"runtime[{i}]", "must be an object or a string")
        if text:
            out.append(text)
    return tuple(out)


def _phases(obj: dict[str, Any], md: _Markdown) -> tuple[Phase, ...]:
    value = obj.get("phases")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail("phases", "must be a list")
    phases = []
    for i, entry in enumerate(value):
        path = f"phases[{i}]."
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict):
            raise _fail(f"phases[{i}]", "must be an object with a name")
        name = _text(entry, "name", path, md, "line")
        if not name:
            raise _fail(f"phases[{i}].name", "is required")
        done = entry.get("done", False)
        status = entry.get("status")
        if status is not None and status not in ("done", "in_progress", "pending", "blocked"):
            raise _fail(f"phases[{i}].status", "must be done, in_progress, pending or blocked")
        if not isinstance(done, bool):
            raise _fail(f"phases[{i}].done", "must be true or false")
        done = done or status == "done"
        steps = []
        raw_steps = entry.get("steps") or []
        if not isinstance(raw_steps, list):
            raise _fail(f"phases[{i}].steps", "must be a list")
        for j, step in enumerate(raw_steps):
            if isinstance(step, str):
                step = {"name": step, "done": False}
            if not isinstance(step, dict):
                raise _fail(f"phases[{i}].steps[{j}]", "must be an object with a name")
            text = _text(step, "name", f"phases[{i}].steps[{j}].", md, "item")
            step_done = step.get("done", False)
            if step_done is not None and not isinstance(step_done, bool):
                raise _fail(f"phases[{i}].steps[{j}].done", "must be true, false or null")
            if text:
                if step_done is None and CHECKBOX.match(text) is None:
                    steps.append(Step(text, None))
                else:
                    steps.append(Step(text, bool(step_done)) if step_done is not None else Step(text, None))
        phase = Phase(name, done, tuple(steps), _text(entry, "detail", path, md, "item"))
        if status in ("pending", "in_progress") and phase.status == "blocked" or status == "pending" and \
                phase.status == "in_progress":  # the marks that said otherwise go (set back to pending, unblocked)
            phase = phase._replace(name=without_status_marks(phase.name, True, status == "pending"))
        if status in ("blocked", "in_progress") and phase.status != status:
            suffix = " (blocked)" if status == "blocked" else " (in progress)"
            phase = phase._replace(name=phase.name + suffix)
        phases.append(phase)
    return tuple(phases)


def _extras(obj: dict[str, Any], md: _Markdown) -> tuple[Extra, ...]:
    value = obj.get("extra")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail("extra", "must be a list")
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise _fail(f"extra[{i}]", "must be an object with heading and body")
        heading = entry.get("heading")
        if heading is not None:
            heading = _text(entry, "heading", f"extra[{i}].", md, "heading")
            if section_key(heading):
                raise _fail(f"extra[{i}].heading", f"{heading!r} is a known section; put it in its own key")
        level = entry.get("level", 2)
        if not isinstance(level, int) or not 1 <= level <= 4:
            raise _fail(f"extra[{i}].level", "must be a heading level from 1 to 4")
        after = entry.get("after")
        if after is not None and after not in SECTION_KEYS:
            raise _fail(f"extra[{i}].after", f"must be null or one of {', '.join(SECTION_KEYS)}")
        if heading is None and after in TEXT_SECTIONS:
            raise _fail(f"extra[{i}]", f"text without a heading cannot follow {after!r}; add a heading")
        body = _text(entry, "body", f"extra[{i}].", md, "block")
        if heading is None and not body:
            continue
        out.append(Extra(heading, body, level, after))
    # Text without a heading is rendered first after its section; keep that order here too.
    out.sort(key=rendering_order)
    return tuple(out)


def _executions(obj: dict[str, Any]) -> tuple[Execution, ...]:
    value = obj.get("executions")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise _fail("executions", "must be a list of objects")
    return tuple(Execution.from_data(e) for e in value)


def _meta(obj: dict[str, Any]) -> Meta:
    value = obj.get("meta") or {}
    if not isinstance(value, dict):
        raise _fail("meta", "must be an object")
    revision = value.get("revision", 0)
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
        raise _fail("meta.revision", "must be a non-negative integer")
    dirty = value.get("dirty") or []
    if not isinstance(dirty, list) or not all(isinstance(d, str) for d in dirty):
        raise _fail("meta.dirty", "must be a list of paths")
    return marker.load(value).meta._replace(
        revision=revision,
        branch=_plain(value, "branch", "meta."),
        commit=_plain(value, "commit", "meta."),
        dirty=tuple(dirty),
        created_at=_plain(value, "created_at", "meta."),
        updated_at=_plain(value, "updated_at", "meta."),
        id=_plain(value, "id", "meta."),
    )


def _verification(obj: dict[str, Any], md: _Markdown) -> tuple[str, Verification | None]:
    value = obj.get("verification")
    if value is None:
        return "", None
    if isinstance(value, str):
        return md.text(value, "verification", "block") if value else "", None
    if not isinstance(value, dict):
        raise _fail("verification", "must be null, a string or an object")
    text = _text(value, "text", "verification.", md, "block")
    data = {k: v for k, v in value.items() if k != "text"}
    if data == {"status": "unknown"}:
        data = {}
    return text, marker.verification_of(data)


_SCHEMA_KEYS = re.compile(r"^[a-z_]+$")
# Keys ghstate's own JSON output carries beside the state (``resume --json``, ``checkpoint --json``): a state
# read back ignores them, as it ignores the derived ones, so that output is input as it stands.
OUTPUT_KEYS = ("closed", "findings", "fit", "notes", "notes_left_out", "reread_stale", "delivery", "parent",
               "children", "result", "reading")
# A key a person may give for a state's key: the flag's or the MCP argument's spelling, said in the error.
_SPELLED = {**ARGUMENTS, **{old: ARGUMENTS[new] for old, new in RENAMED.items()}, "resume_instruction": "resume",
            "status": "phases", "done": "phases"}


_PHASE_KEYS = ("name", "done", "status", "steps", "detail")
_STEP_KEYS = ("name", "done")
_EXTRA_KEYS = ("heading", "level", "after", "body")


def check_keys(obj: Any) -> None:
    """Refuse a key a state does not have (a typo, a flag's spelling), at the top or in a phase, a step or an
    unknown section, naming the known ones, as config.toml does: a key read as nothing would drop what it
    holds without a word."""
    if not isinstance(obj, dict):
        return
    unknown = [key for key in obj if key not in FIELDS and key not in OUTPUT_KEYS]
    if unknown:
        key = unknown[0]
        hint = f" (the state's key for that is {_SPELLED[key]!r})" if key in _SPELLED else ""
        raise StateError(f"unknown key {key!r}{hint}; a state's keys are {', '.join(FIELDS)}")
    for path, known, value in _nested(obj):
        odd = next((key for key in value if key not in known), None) if isinstance(value, dict) else None
        if odd is not None:
            raise _fail(path, f"unknown key {odd!r}; its keys are {', '.join(known)}")


def _nested(obj: dict[str, Any]) -> list[tuple[str, tuple[str, ...], Any]]:
    """The objects inside a state whose keys are fixed: each phase, each of its steps, each unknown section."""
    phases = obj.get("phases") if isinstance(obj.get("phases"), list) else []
    extra = obj.get("extra") if isinstance(obj.get("extra"), list) else []
    out = [(f"phases[{i}]", _PHASE_KEYS, p) for i, p in enumerate(phases)]
    out += [(f"phases[{i}].steps[{j}]", _STEP_KEYS, step) for i, p in enumerate(phases) if isinstance(p, dict)
            and isinstance(p.get("steps"), list) for j, step in enumerate(p["steps"])]
    return out + [(f"extra[{i}]", _EXTRA_KEYS, e) for i, e in enumerate(extra)]


def from_json(obj: Any) -> Checkpoint:
    if not isinstance(obj, dict):
        raise StateError("the JSON state must be an object")
    schema = obj.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise _fail("schema", f"this ghstate reads schema {SCHEMA}, not {schema!r}")
    _check_controls(obj, "")
    md = _Markdown(obj.get("markdown"), obj)
    verification, verification_data = _verification(obj, md)
    values: dict[str, Any] = {key: _strings(obj, key, md) for key in PLAIN}
    return Checkpoint(
        title=_plain(obj, "title", ""),
        goal=_text(obj, "goal", "", md, "block"),
        phases=_phases(obj, md),
        files=_files(obj),
        runtime=_runtime(obj, md),
        resume=_text(obj, "resume", "", md, "block"),
        verification=verification,
        verification_data=verification_data,
        extra=_extras(obj, md),
        executions=_executions(obj),
        meta=_meta(obj),
        **values,
    )


def looks_like_json(text: str) -> bool:
    """A JSON object, or other JSON (which is refused: a state is an object), rather than markdown."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return True
    scalar = stripped in ("null", "true", "false") or re.fullmatch(r"-?[0-9][0-9.eE+-]*", stripped)
    if stripped[:1] in ("[", '"') or scalar:
        import json

        try:
            json.loads(stripped)
        except ValueError:
            return False
        return True
    return False
