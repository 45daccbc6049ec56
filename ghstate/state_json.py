"""Checkpoint ↔ the JSON state of the contract (``ghstate parse``, ``show --json``, ``render``).

``to_json`` adds what is derived (phase status, next phase, plain file paths) and what the store or
a resume knows (issue, url, drift, runtime status). ``from_json`` reads such an object back, checking
every field and saying which one is wrong; derived keys are ignored, so they cannot disagree.
"""

from __future__ import annotations

import re
from typing import Any

from ghstate.markup import CHECKBOX
from ghstate.model import (
    LIST_SECTIONS,
    SECTION_KEYS,
    TEXT_SECTIONS,
    Checkpoint,
    Execution,
    Extra,
    Meta,
    Phase,
    Step,
    file_paths_of,
    runtime_entry,
    section_key,
)
from ghstate.parse import clean_text, execution_from_dict
from ghstate.provenance import KEY as PROVENANCE_KEY
from ghstate.provenance import Provenance
from ghstate.render import execution_dict

SCHEMA = 1
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


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
    runtime = []
    for i, item in enumerate(cp.runtime):
        name, check = runtime_entry(item)
        status = runtime_status[i] if runtime_status and i < len(runtime_status) else "unknown"
        runtime.append({"name": name, "check": check, "status": status, "text": item})
    verification: dict[str, Any] | None = None
    if cp.verification or cp.verification_data:
        verification = dict(cp.verification_data or {"status": "unknown"})
        verification["text"] = cp.verification
    meta = {
        "revision": cp.meta.revision,
        "branch": cp.meta.branch,
        "commit": cp.meta.commit,
        "dirty": list(cp.meta.dirty),
        "created_at": cp.meta.created_at,
        "updated_at": cp.meta.updated_at,
        "id": cp.meta.id,
    }
    meta.update({k: v for k, v in cp.meta.other.items() if k not in meta})
    return {
        "schema": SCHEMA,
        "title": cp.title,
        "issue": issue,
        "url": url,
        "goal": cp.goal,
        "phases": [_phase_json(p) for p in cp.phases],
        "next_phase": next_phase.name if next_phase else None,
        "decisions": list(cp.decisions),
        "questions": list(cp.questions),
        "risks": list(cp.risks),
        "files": cp.file_paths,
        "file_items": list(cp.files),
        "resume": cp.resume,
        "runtime": runtime,
        "verification": verification,
        "executions": [execution_dict(e) for e in cp.executions],
        "drift": drift,
        "extra": [{"heading": e.heading, "level": e.level, "after": e.after, "body": e.body} for e in cp.extra],
        "meta": meta,
        **({"provenance": Provenance(cp).as_json()} if PROVENANCE_KEY in cp.meta.other else {}),
    }


def _phase_json(phase: Phase) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": phase.name,
        "done": phase.done,
        "status": phase.status,
        "steps": [{"name": s.text, "done": s.done} for s in phase.steps],
    }
    if phase.detail:
        data["detail"] = phase.detail
    return data


# ------------------------------------------------------------------------------------------- read


def _fail(path: str, problem: str) -> StateError:
    return StateError(f"{path}: {problem}")


def _text(obj: dict[str, Any], key: str, path: str, *, single_line: bool = False, block: bool = False) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(f"{path}{key}", f"must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise _fail(f"{path}{key}", "contains a NUL character")
    text = clean_text(value, block=block)
    return " ".join(text.split("\n")).strip() if single_line else text


def _strings(obj: dict[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(key, "must be a list of strings")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _fail(f"{key}[{i}]", "must be a string")
        if "\x00" in item:
            raise _fail(f"{key}[{i}]", "contains a NUL character")
        text = clean_text(item)
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
            out.append(f"`{path}`" if "`" not in path else path)
    return tuple(out)


def _runtime(obj: dict[str, Any]) -> tuple[str, ...]:
    value = obj.get("runtime")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail("runtime", "must be a list")
    out = []
    for i, entry in enumerate(value):
        if isinstance(entry, str):
            text = clean_text(entry)
        elif isinstance(entry, dict):
            name = _text(entry, "name", f"runtime[{i}].", single_line=True)
            check = _text(entry, "check", f"runtime[{i}].", single_line=True)
            written = _text(entry, "text", f"runtime[{i}].")
            if written and runtime_entry(written) == (name, check):
                text = written
            else:
                text = f"{name}: {check}" if check else name
        else:
            raise _fail(f"runtime[{i}]", "must be an object or a string")
        if text:
            out.append(text)
    return tuple(out)


def _phases(obj: dict[str, Any]) -> tuple[Phase, ...]:
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
        name = _text(entry, "name", path, single_line=True)
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
            text = _text(step, "name", f"phases[{i}].steps[{j}].")
            step_done = step.get("done", False)
            if step_done is not None and not isinstance(step_done, bool):
                raise _fail(f"phases[{i}].steps[{j}].done", "must be true, false or null")
            if text:
                if step_done is None and CHECKBOX.match(text) is None:
                    steps.append(Step(text, None))
                else:
                    steps.append(Step(text, bool(step_done)) if step_done is not None else Step(text, None))
        phase = Phase(name, done, tuple(steps), _text(entry, "detail", path))
        if status in ("blocked", "in_progress") and phase.status != status:
            suffix = " (blocked)" if status == "blocked" else " (in progress)"
            phase = phase._replace(name=phase.name + suffix)
        phases.append(phase)
    return tuple(phases)


def _extras(obj: dict[str, Any]) -> tuple[Extra, ...]:
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
            heading = _text(entry, "heading", f"extra[{i}].", single_line=True)
            heading = _CLOSING_HASHES.sub("", heading).strip()  # "## Notes ##" closes; "Notes on C#" does not
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
        body = _text(entry, "body", f"extra[{i}].", block=True)
        if heading is None and not body:
            continue
        out.append(Extra(heading, body, level, after))
    # Text without a heading is rendered first after its section; keep that order here too.
    out.sort(key=lambda e: (_anchor_rank(e.after), e.heading is not None))
    return tuple(out)


def _anchor_rank(after: str | None) -> int:
    return -1 if after is None else SECTION_KEYS.index(after)


def _executions(obj: dict[str, Any]) -> tuple[Execution, ...]:
    value = obj.get("executions")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise _fail("executions", "must be a list of objects")
    return tuple(execution_from_dict(e) for e in value)


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
    known = {"revision", "branch", "commit", "dirty", "created_at", "updated_at", "id", "title"}
    return Meta(
        revision=revision,
        branch=_text(value, "branch", "meta.", single_line=True),
        commit=_text(value, "commit", "meta.", single_line=True),
        dirty=tuple(dirty),
        created_at=_text(value, "created_at", "meta.", single_line=True),
        updated_at=_text(value, "updated_at", "meta.", single_line=True),
        id=_text(value, "id", "meta.", single_line=True),
        other={k: v for k, v in value.items() if k not in known},
    )


def _verification(obj: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    value = obj.get("verification")
    if value is None:
        return "", None
    if isinstance(value, str):
        return clean_text(value, block=True), None
    if not isinstance(value, dict):
        raise _fail("verification", "must be null, a string or an object")
    text = _text(value, "text", "verification.", block=True)
    data = {k: v for k, v in value.items() if k != "text"}
    if data == {"status": "unknown"}:
        data = {}
    return text, data or None


_SCHEMA_KEYS = re.compile(r"^[a-z_]+$")


def from_json(obj: Any) -> Checkpoint:
    if not isinstance(obj, dict):
        raise StateError("the JSON state must be an object")
    schema = obj.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise _fail("schema", f"this ghstate reads schema {SCHEMA}, not {schema!r}")
    verification, verification_data = _verification(obj)
    values: dict[str, Any] = {key: _strings(obj, key) for key in LIST_SECTIONS if key not in ("files", "runtime")}
    return Checkpoint(
        title=_text(obj, "title", "", single_line=True),
        goal=_text(obj, "goal", "", block=True),
        phases=_phases(obj),
        files=_files(obj),
        runtime=_runtime(obj),
        resume=_text(obj, "resume", "", block=True),
        verification=verification,
        verification_data=verification_data,
        extra=_extras(obj),
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
