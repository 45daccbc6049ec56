"""Checkpoint → canonical body: the hidden marker and the sections, through ``checkpoint.md.j2``.

Pure: the template environment is built at the edge (``ghstate.templating``) and passed in.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from ghstate.core import marker as marker_record
from ghstate.core.markup import CODE_INDENT, escape_item, escape_text, indent, short_commit, wrap_text
from ghstate.core.model import HEADINGS, LIST_SECTIONS, SECTION_KEYS, Checkpoint, Extra, Step
from ghstate.core.parse import MARKER_LINE


class Templates(Protocol):
    """What rendering needs of a template environment (a ``jinja2.Environment``)."""

    def get_template(self, name: str) -> Any: ...


def _list_item(text: str) -> str:
    return indent(escape_item(text), "  ")


def _step_item(step: Step) -> str:
    if step.done is None:
        return indent(escape_item(step.text, plain_step=True), "    ")
    return indent(f"[{'x' if step.done else ' '}] {step.text}", "    ")


FILTERS = {"continued": indent, "list_item": _list_item, "step_item": _step_item, "short_commit": short_commit}


def marker(cp: Checkpoint) -> str:
    """The hidden HTML comment with the machine data. ``<`` and ``>`` are JSON-escaped so that the
    comment can never be closed early by what it carries."""
    data = marker_record.dump(marker_record.Marker(cp.meta, cp.title, cp.executions, cp.verification_data))
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
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
                body = escape_text(extra.body)
                if anchor in (*LIST_SECTIONS, "phases") and CODE_INDENT.match(body):
                    body = wrap_text(extra.body)  # indented after a list, it would join the last item
                parts.append({"kind": "leftover", "body": body})
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


def replace_marker(body: str, cp: Checkpoint) -> str:
    """``body`` with its hidden marker rewritten from ``cp`` (the first one; none added if it has none)."""
    new = marker(cp)
    return MARKER_LINE.sub(lambda _: new, body, count=1)


def render_body(cp: Checkpoint, env: Templates) -> str:
    return env.get_template("checkpoint.md.j2").render(marker=marker(cp), parts=_parts(cp))
