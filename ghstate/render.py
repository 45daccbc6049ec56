"""Checkpoint → text: the canonical body, and every presentation of a task (prompt, short, show).

Pure functions over the model and a Jinja2 environment. The environment is built from a list of
template folders chosen at the edge (a repository's own templates first, then the shipped ones).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ghstate.markup import escape_item, escape_text, indent
from ghstate.model import HEADINGS, LIST_SECTIONS, SECTION_KEYS, Checkpoint, Execution, Extra, Step

_PACKAGE = Path(__file__).resolve().parent
MARKER_KEYS = ("revision", "id", "title", "branch", "commit", "dirty", "created_at", "updated_at")


def builtin_templates() -> Path:
    """``ghstate/templates`` in an installed wheel; the top-level ``templates/`` in a source checkout."""
    installed = _PACKAGE / "templates"
    return installed if installed.is_dir() else _PACKAGE.parent / "templates"


def _continued(text: str, prefix: str) -> str:
    return indent(text, prefix)


def _list_item(text: str) -> str:
    return indent(escape_item(text), "  ")


def _step_item(step: Step) -> str:
    if step.done is None:
        return indent(escape_item(step.text, plain_step=True), "    ")
    return indent(f"[{'x' if step.done else ' '}] {step.text}", "    ")


FILTERS = {"continued": _continued, "list_item": _list_item, "step_item": _step_item}


@lru_cache(maxsize=8)
def environment(*override_dirs: str) -> jinja2.Environment:
    """Templates from ``override_dirs`` (those that exist are searched first), then the shipped ones."""
    search = [d for d in override_dirs if d and Path(d).is_dir()]
    search.append(str(builtin_templates()))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters.update(FILTERS)
    return env


# ------------------------------------------------------------------------------------------ body


def marker_data(cp: Checkpoint) -> dict[str, Any]:
    meta = cp.meta
    data: dict[str, Any] = {"revision": meta.revision}
    for key, value in (("id", meta.id), ("title", cp.title), ("branch", meta.branch),
                       ("commit", meta.commit), ("dirty", list(meta.dirty)),
                       ("created_at", meta.created_at), ("updated_at", meta.updated_at)):
        if value:
            data[key] = value
    if cp.executions:
        data["executions"] = [execution_dict(e) for e in cp.executions]
    if cp.verification_data:
        data["verification"] = cp.verification_data
    for key, value in meta.other.items():
        data.setdefault(key, value)
    return data


def execution_dict(execution: Execution) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key in ("agent", "role", "session", "revision", "at", "event", "transcript"):
        value = getattr(execution, key)
        if value or key == "revision":
            data[key] = value
    return data


def marker(cp: Checkpoint) -> str:
    """The hidden HTML comment with the machine data. ``<`` and ``>`` are JSON-escaped so that the
    comment can never be closed early by what it carries."""
    raw = json.dumps(marker_data(cp), ensure_ascii=False, separators=(",", ":"))
    raw = raw.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<!-- ghstate:v1 {raw} -->"


def _parts(cp: Checkpoint) -> list[dict[str, Any]]:
    extras: dict[str | None, list[Extra]] = {}
    for extra in cp.extra:
        extras.setdefault(extra.after, []).append(extra)
    parts: list[dict[str, Any]] = []

    def add_extras(anchor: str | None) -> None:
        for extra in extras.get(anchor, []):
            if extra.heading is None:
                parts.append({"kind": "leftover", "body": escape_text(extra.body)})
            else:
                heading = "#" * extra.level + (f" {extra.heading}" if extra.heading else "")
                parts.append({"kind": "extra", "heading": heading, "body": escape_text(extra.body)})

    add_extras(None)
    for key in SECTION_KEYS:
        has_leftover = any(e.heading is None for e in extras.get(key, []))
        value = getattr(cp, key)
        if value or has_leftover:
            heading = HEADINGS[key]
            if key == "phases":
                parts.append({"kind": "phases", "heading": heading, "phases": cp.phases})
            elif key in LIST_SECTIONS:
                parts.append({"kind": "list", "heading": heading, "entries": value})
            else:
                parts.append({"kind": "text", "heading": heading, "body": escape_text(value)})
        add_extras(key)
    return parts


def render_body(cp: Checkpoint, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    return env.get_template("checkpoint.md.j2").render(marker=marker(cp), parts=_parts(cp))
