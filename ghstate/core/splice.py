"""Writing a checkpoint over an existing body in place: only what changed is rewritten.

A person's formatting (CRLF, their headings, list markers, order, blank lines) stays byte for byte;
a tick toggles the checkbox where it stands and new items follow the last one with its bullet.
"""

from __future__ import annotations

import re
from typing import Any

from ghstate.core.model import (
    SECTION_KEYS,
    Checkpoint,
    Extra,
    Phase,
    is_standalone,
    section_content,
    section_digests,
)
from ghstate.core.parse import ParseError, parse
from ghstate.core.render import Templates, marker, render_body, replace_marker


def _structure(cp: Checkpoint) -> list[Extra]:
    """The extras that stand between sections (unknown sections, the preamble), not inside one."""
    return [e for e in cp.extra if is_standalone(e)]


_NEWLINE = re.compile(r"(\r\n|\r|\n)")


def render_update(cp: Checkpoint, previous: str, env: Templates) -> str:
    """The body for ``cp`` written over ``previous``: ``previous`` with only the sections whose content
    changed (and the marker) replaced, so that what a person wrote elsewhere (CRLF, their headings,
    list markers, order, blank lines) stays byte for byte. When that cannot be done so that the result
    reads back as ``cp`` exactly, the canonical body."""
    spliced = _splice(cp, previous, env)
    return render_body(cp, env) if spliced is None else spliced


def written_body(cp: Checkpoint, env: Templates, over: str | None = None) -> tuple[str, Checkpoint]:
    """The body that holds ``cp``: written over ``over`` in place when given (a person's formatting
    stays), else canonical; and ``cp`` as that body records it, its marker's section digests those of
    what the body reads back as."""
    body = render_update(cp, over, env) if over is not None else render_body(cp, env)
    actual = section_digests(parse(body).checkpoint)
    if actual != cp.meta.digests:
        cp = cp.with_meta(digests=actual)
        body = replace_marker(body, cp)
    return body, cp


def _splice(cp: Checkpoint, previous: str, env: Templates) -> str | None:
    try:
        before = parse(previous)
    except ParseError:
        return None
    old = before.checkpoint
    if before.title_heading or not previous.strip() or _structure(old) != _structure(cp):
        return None
    changed = [key for key in SECTION_KEYS if section_content(old, key) != section_content(cp, key)]
    spans: dict[str | None, list[Any]] = {}
    for span in before.spans:
        spans.setdefault(span.key, []).append(span)
    if any(len(spans.get(key, ())) > 1 for key in changed):
        return None

    bom = "\ufeff" if previous.startswith("\ufeff") else ""
    pieces = _NEWLINE.split(previous.removeprefix("\ufeff"))
    lines = [(pieces[i], pieces[i + 1] if i + 1 < len(pieces) else "") for i in range(0, len(pieces), 2)]
    newline = "\r\n" if "\r\n" in previous else "\n"
    # The changed sections, rendered on their own: a section's rendering depends on nothing else.
    only_changed = Checkpoint(**{key: getattr(cp, key) for key in changed},
                              extra=tuple(e for e in cp.extra if e.heading is None and e.after in changed))
    canonical = render_body(only_changed, env)
    fresh = canonical.split("\n")
    after = parse(canonical)
    new_spans = {span.key: span for span in after.spans}

    def new_lines(texts: list[str]) -> list[tuple[str, str]]:
        return [(text, newline) for text in texts]

    def body_of(key: str) -> list[str]:
        span = new_spans.get(key)
        if span is None:
            return []
        body = fresh[span.start : span.end]
        while body and not body[-1].strip():
            body.pop()
        return body

    edits: list[tuple[int, int, int, list[tuple[str, str]]]] = []  # (start, end, order, replacement)
    marker_line = new_lines([marker(cp)])
    if before.marker_lines is not None:
        edits.append((*before.marker_lines, 0, marker_line))
    else:
        edits.append((0, 0, -1, marker_line))
    order = {key: i for i, key in enumerate(SECTION_KEYS)}
    appended: list[str] = []  # new sections that no section of the body follows
    for key in changed:
        body = body_of(key)
        fine = None
        if key in spans:
            fine = _fine_edits(key, old, cp, before, after, spans[key][0], lines, fresh, new_lines)
        if fine is not None:
            edits.extend(fine)
        elif key in spans:
            span = spans[key][0]
            old_body = lines[span.start : span.end]
            lead = next((i for i, (text, _) in enumerate(old_body) if text.strip()), len(old_body))
            trail = len(old_body) - next((i for i in range(len(old_body), 0, -1) if old_body[i - 1][0].strip()), 0)
            trail = min(trail, len(old_body) - lead)
            if not getattr(old, key):  # nothing of the person's spacing to keep: the canonical one
                lead = 0
            else:
                while body and not body[0].strip():
                    body.pop(0)
            gap = new_lines([""]) if body and not trail and span.end < len(lines) else []
            edits.append((span.start, span.end, 0,
                          old_body[:lead] + new_lines(body) + gap + old_body[len(old_body) - trail :]))
        elif body:
            heading = fresh[new_spans[key].line : new_spans[key].start]
            following = [s.line for k, group in spans.items() if k is not None and order[k] > order[key]
                         for s in group]
            if following:
                at = min(following)
                edits.append((at, at, order[key], new_lines([*heading, *body, ""])))
            else:
                appended.extend(["", *heading, *body])
    if lines[-1][0] and any(start >= len(lines) for start, *_ in edits):  # no newline after the last line
        lines[-1] = (lines[-1][0], newline)
        lines.append(("", ""))
    for start, end, _, replacement in sorted(edits, key=lambda e: (e[0], e[1], e[2]), reverse=True):
        lines[start:end] = replacement
    if appended:
        last = max((i for i, (text, _) in enumerate(lines) if text.strip()), default=-1) + 1
        trailing = lines[last:] or [("", "")]
        lines[last - 1] = (lines[last - 1][0], lines[last - 1][1] or newline)
        lines[last:] = new_lines(appended) + trailing
    text = bom + "".join(text + sep for text, sep in lines)
    return text if same_state(parse(text).checkpoint, cp) else None


def same_state(a: Checkpoint, b: Checkpoint) -> bool:
    """Equal, but for where unknown sections are anchored: that only says where a canonical render
    would put them, and filling a section that was empty, in place, can move an anchor. (The splice
    never reorders the lines of a body, so their order in the document is not in question.)"""
    def unanchored(cp: Checkpoint) -> Checkpoint:
        # Anchors also decide the order parse lists unknown sections in, so they are compared as a
        # multiset; text inside a section (heading None) stays anchored, it is that section's content.
        headed = sorted((e._replace(after=None) for e in cp.extra if e.heading is not None), key=repr)
        return cp._replace(extra=(*(e for e in cp.extra if e.heading is None), *headed))

    return a == b or unanchored(a) == unanchored(b)


def _ticks_only(a: Phase, b: Phase) -> bool:
    """Phase ``b`` is ``a`` with its checkbox or its steps' checkboxes toggled, and nothing else."""
    if len(a.steps) != len(b.steps):
        return False
    pairs = list(zip(a.steps, b.steps, strict=True))
    return (a._replace(done=b.done, steps=b.steps) == b and all(x.text == y.text for x, y in pairs)
            and all((x.done is None) == (y.done is None) for x, y in pairs))


_ORDERED_ITEM = re.compile(r"([0-9]{1,9})([.)]) ")  # an ordered list's item: its number and its mark
_CHECKBOX_AT = re.compile(r"^([ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[([ xX])\]")


def _fine_edits(key: str, old: Checkpoint, new: Checkpoint, before: Any, after: Any, span: Any,
                lines: list[tuple[str, str]], fresh: list[str], new_lines: Any) -> list[Any] | None:
    """Edits smaller than the section, for the two changes incremental flags make: ticking phases
    (the checkbox is toggled where it stands) and adding items (appended after the last one, the
    rest of the list untouched). None when the change is anything else. ``before``/``after`` are the
    parsed old body and the parsed canonical new one, for their item positions."""
    if section_content(old, key)[1] != section_content(new, key)[1]:
        return None
    before_value, after_value = getattr(old, key), getattr(new, key)
    if key == "phases" and len(before_value) == len(after_value) and all(
            _ticks_only(a, b) for a, b in zip(before_value, after_value, strict=True)):
        toggles: list[tuple[str, bool]] = []  # each box that changed, where the body's lines have it
        for i, (a, b) in enumerate(zip(before_value, after_value, strict=True)):
            toggles += [(f"phases.{i}", b.done)] if a.done != b.done else []
            toggles += [(f"phases.{i}.steps.{j}", bool(y.done))
                        for j, (x, y) in enumerate(zip(a.steps, b.steps, strict=True)) if x.done != y.done]
        edits = []
        for where, done in toggles:
            at = before.lines.get(where, 0) - 1
            m = _CHECKBOX_AT.match(lines[at][0]) if at >= 0 else None
            if m is None:
                return None
            text = lines[at][0]
            edits.append((at, at + 1, 0, [(text[: m.end(1)] + ("[x]" if done else "[ ]") + text[m.end():],
                                           lines[at][1])]))
        return edits
    n = len(before_value)
    if n and len(after_value) > n and tuple(after_value[:n]) == tuple(before_value):
        end = before.lines.get(f"{key}.{n - 1}.end", 0)
        last = max((i for i in range(span.start, min(end, span.end)) if lines[i][0].strip()), default=-1) + 1
        first_new, last_new = after.lines.get(f"{key}.{n}", 0), after.lines.get(f"{key}.{len(after_value) - 1}.end", 0)
        if not last or not first_new:
            return None
        added = fresh[first_new - 1 : last_new]
        while added and not added[-1].strip():  # an item's span takes the blank lines after it
            added.pop()
        previous_item = lines[before.lines.get(f"{key}.{n - 1}", 0) - 1][0].lstrip()
        if previous_item[:2] in ("* ", "+ "):  # the same bullet, or GitHub shows a second list
            added = [previous_item[0] + text[1:] if text.startswith("- ") else text for text in added]
        ordered = _ORDERED_ITEM.match(previous_item)
        if ordered and all(text.startswith("- ") for text in added):  # numbered on, one line an item
            start, mark = int(ordered.group(1)), ordered.group(2)
            added = [f"{start + i}{mark} {text[2:]}" for i, text in enumerate(added, start=1)]
        return [(last, last, 0, new_lines(added))]
    return None
