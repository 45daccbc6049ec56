"""Checkpoint → text: the canonical body, and every presentation of a task (prompt, short, show).

Pure functions over the model and a Jinja2 environment. The environment is built from a list of
template folders chosen at the edge (a repository's own templates first, then the shipped ones).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ghstate import verify
from ghstate.markup import CODE_INDENT, escape_item, escape_text, indent, wrap_text
from ghstate.model import (
    HEADINGS,
    LIST_SECTIONS,
    SECTION_KEYS,
    Checkpoint,
    Execution,
    Extra,
    Step,
    is_standalone,
    section_content,
)

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


def environment(*override_dirs: str, cache_dir: str | None = None) -> jinja2.Environment:
    """Templates from ``override_dirs`` (those that exist are searched first), then the shipped ones.

    ``cache_dir`` keeps compiled templates between runs (a fresh process would otherwise spend
    ~10 ms compiling the prompt template); it is skipped when it cannot be created.
    """
    existing = tuple(d for d in override_dirs if d and Path(d).is_dir())
    return _environment(existing, cache_dir)


@lru_cache(maxsize=8)
def _environment(existing: tuple[str, ...], cache_dir: str | None) -> jinja2.Environment:
    search = [*existing, str(builtin_templates())]
    cache = None
    if cache_dir:
        try:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(cache_dir)
        except OSError:
            cache = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        bytecode_cache=cache,
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
    from ghstate.parse import MARKER_LINE

    new = marker(cp)
    return MARKER_LINE.sub(lambda _: new, body, count=1)


def render_body(cp: Checkpoint, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    return env.get_template("checkpoint.md.j2").render(marker=marker(cp), parts=_parts(cp))


# ----------------------------------------------------------------------------- presentations

_TAG = re.compile(r"<(\s*/?\s*checkpoint)", re.IGNORECASE)
PROMPT_LISTS = (("Locked decisions (settled, do not reopen)", "decisions"), ("Open questions", "questions"),
                ("Remaining risks", "risks"))


def _data(value: object) -> str:
    """Untrusted text inside the prompt's <checkpoint> block: it must not be able to close the block."""
    return _TAG.sub(lambda m: "‹" + m.group(1), str(value))


def _oneline(value: object) -> str:
    return " ".join(str(value).split())


def _indent_first(text: str, prefix: str) -> str:
    return prefix + text


def _code(value: object) -> str:
    """Text for inside a one-backtick code span: no backticks, one line."""
    return _oneline(value).replace("`", "'")


def _cell(value: object) -> str:
    """Text for a markdown table cell."""
    return _oneline(value).replace("|", "\\|")


FILTERS.update({"data": _data, "oneline": _oneline, "indent_first": _indent_first, "code": _code, "cell": _cell})


def verification_line(cp: Checkpoint) -> str:
    """The latest verification in one line, from CI's data or the section's first line."""
    return verify.verification_line(cp.verification_data, cp.verification)


def drift_sentence(drift: Any) -> str:
    """Drift in words, for the prompt and ``short``; "" when it cannot be known."""
    if drift is None or not drift.known:
        return ""
    parts = []
    if drift.commit_missing:
        parts.append("the recorded commit is not in this repository (rebased, or not fetched)")
    elif drift.rewritten:
        parts.append(f"history was rewritten ({drift.rewritten} recorded commits are no longer on HEAD)")
    parts.append(f"{drift.commits_since} commit{'s' if drift.commits_since != 1 else ''}")
    if drift.changed_files:
        shown = ", ".join(drift.changed_files[:8]) + (", …" if len(drift.changed_files) > 8 else "")
        parts.append(f"{len(drift.changed_files)} file{'s' if len(drift.changed_files) != 1 else ''} "
                     f"changed ({shown})")
    else:
        parts.append("no files changed")
    if drift.reread_changed:
        parts.append(f"files to re-read that changed: {', '.join(drift.reread_changed)}")
    if drift.detached:
        parts.append("HEAD is detached (the checkpoint was written on a branch)")
    elif drift.branch_changed:  # the recorded name comes from the issue: it is not repeated out here
        parts.append(f"the branch is now {_oneline(drift.branch)}, not the one the checkpoint was written on")
    return _data(_oneline("; ".join(parts)))


def last_execution(cp: Checkpoint) -> str:
    """Who wrote the last revision, as far as the checkpoint records it."""
    if not cp.executions:
        return ""
    e = cp.executions[-1]
    who = e.agent or "someone"
    detail = ", ".join(x for x in (e.role, f"session {e.session}" if e.session else "") if x)
    when = f" at {e.at}" if e.at else ""
    text = f"{who}{f' ({detail})' if detail else ''}{when}"
    if e.revision and cp.meta.revision and e.revision != cp.meta.revision:
        return f"an unrecorded writer (revision {cp.meta.revision}); before that, {text} (revision {e.revision})"
    return text


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text for a terminal or a prompt: control characters (terminal escapes among them) removed."""
    return _UNPRINTABLE.sub("", text)


def prompt(cp: Checkpoint, *, source: str, drift: Any = None, runtime_status: list[str] | None = None,
           notes: list[Any] | None = None, skipped_notes: int = 0, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    from ghstate.model import runtime_entry

    nxt = cp.next_phase
    changed = set(drift.reread_changed) if drift is not None else set()
    runtime = []
    for i, item in enumerate(cp.runtime):
        name, check = runtime_entry(item)
        status = runtime_status[i] if runtime_status and i < len(runtime_status) else "not checked"
        runtime.append({"name": name, "check": check, "status": status})
    return printable(env.get_template("prompt.md.j2").render(
        source=source,
        revision=cp.meta.revision,
        title=cp.title,
        goal=cp.goal,
        phases=cp.phases,
        next=nxt,
        next_index=cp.phases.index(nxt) + 1 if nxt else 0,
        done=[p.name for p in cp.phases if p.done],
        later=[p.name for p in cp.phases if not p.done and p is not nxt],
        lists=[(heading, getattr(cp, key)) for heading, key in PROMPT_LISTS],
        files=[{"path": p, "changed": p in changed} for p in cp.file_paths],
        runtime=runtime,
        verification=verification_line(cp),
        notes=notes or [],
        skipped_notes=skipped_notes,
        resume=cp.resume,
        last=last_execution(cp),
        drift=drift_sentence(drift),
    ))


def short(cp: Checkpoint, *, label: str, drift: Any = None, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    nxt = cp.next_phase
    return printable(env.get_template("short.txt.j2").render(
        label=label, title=cp.title or "(untitled)", next=nxt.name if nxt else "",
        done=sum(p.done for p in cp.phases), total=len(cp.phases),
        ci=_oneline((cp.verification_data or {}).get("status") or ("recorded" if cp.verification else "none")),
        risks=len(cp.risks), drift=drift_sentence(drift) if drift is not None and drift.moved else "",
    ).rstrip("\n"))


SYMBOLS = {"done": "✓", "in_progress": "▶", "pending": "·", "blocked": "✗"}


def progress_bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def show(cp: Checkpoint, *, label: str, location: str, env: jinja2.Environment | None = None) -> str:
    env = env or environment()
    done = sum(p.done for p in cp.phases)
    return printable(env.get_template("show.txt.j2").render(
        label=label, title=cp.title or "(untitled)", location=location, revision=cp.meta.revision,
        branch=cp.meta.branch, commit=cp.meta.commit, updated=cp.meta.updated_at, goal=cp.goal,
        bar=progress_bar(done, len(cp.phases)), done=done, total=len(cp.phases), phases=cp.phases,
        symbols=SYMBOLS,
        lists=[("Decisions locked", cp.decisions), ("Open questions", cp.questions),
               ("Remaining risks", cp.risks), ("Files to re-read", tuple(cp.file_paths)),
               ("Runtime", cp.runtime)],
        resume=cp.resume, verification=verification_line(cp),
        extras=[{"heading": e.heading or f"(notes in {HEADINGS.get(e.after or '', 'preamble')})", "body": e.body}
                for e in cp.extra],
    ))


# ------------------------------------------------------------------------- updating a body in place


def _structure(cp: Checkpoint) -> list[Extra]:
    """The extras that stand between sections (unknown sections, the preamble), not inside one."""
    return [e for e in cp.extra if is_standalone(e)]


_NEWLINE = re.compile(r"(\r\n|\r|\n)")


def render_update(cp: Checkpoint, previous: str, env: jinja2.Environment | None = None) -> str:
    """The body for ``cp`` written over ``previous``: ``previous`` with only the sections whose content
    changed (and the marker) replaced, so that what a person wrote elsewhere (CRLF, their headings,
    list markers, order, blank lines) stays byte for byte. When that cannot be done so that the result
    reads back as ``cp`` exactly, the canonical body."""
    spliced = _splice(cp, previous, env)
    return render_body(cp, env) if spliced is None else spliced


def _splice(cp: Checkpoint, previous: str, env: jinja2.Environment | None) -> str | None:
    from ghstate.parse import ParseError, parse

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
            a._replace(done=b.done) == b for a, b in zip(before_value, after_value, strict=True)):
        edits = []
        for i, (a, b) in enumerate(zip(before_value, after_value, strict=True)):
            if a.done == b.done:
                continue
            at = before.lines.get(f"phases.{i}", 0) - 1
            m = _CHECKBOX_AT.match(lines[at][0]) if at >= 0 else None
            if m is None:
                return None
            text = lines[at][0]
            edits.append((at, at + 1, 0, [(text[: m.end(1)] + ("[x]" if b.done else "[ ]") + text[m.end():],
                                           lines[at][1])]))
        return edits
    n = len(before_value)
    if key != "phases" and n and len(after_value) > n and tuple(after_value[:n]) == tuple(before_value):
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
        return [(last, last, 0, new_lines(added))]
    return None
