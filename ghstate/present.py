"""Checkpoint → what a person or a fresh session reads: the rehydration prompt, the short line, ``show``.

Pure functions over the model and a template environment passed in; issue text is data in them.
"""

from __future__ import annotations

import re
from typing import Any

from ghstate.model import HEADINGS, Checkpoint, runtime_entry
from ghstate.render import Templates

_TAG = re.compile(r"<(\s*/?\s*checkpoint)", re.IGNORECASE)
PROMPT_LISTS = (("Locked decisions (settled, do not reopen)", "decisions"), ("Open questions", "questions"),
                ("Remaining risks", "risks"))


def _data(value: object) -> str:
    """Untrusted text inside the prompt's <checkpoint> block: it must not be able to close the block."""
    return _TAG.sub(lambda m: "‹" + m.group(1), str(value))


def oneline(value: object) -> str:
    return " ".join(str(value).split())


def _indent_first(text: str, prefix: str) -> str:
    return prefix + text


def _code(value: object) -> str:
    """Text for inside a one-backtick code span: no backticks, one line."""
    return oneline(value).replace("`", "'")


def _cell(value: object) -> str:
    """Text for a markdown table cell."""
    return oneline(value).replace("|", "\\|")


FILTERS = {"data": _data, "oneline": oneline, "indent_first": _indent_first, "code": _code, "cell": _cell}


def verification_line(cp: Checkpoint) -> str:
    """The latest verification in one line, from CI's data or the section's first line."""
    data = cp.verification_data or {}
    status = data.get("status")
    if not status:
        first = cp.verification.strip().split("\n", 1)[0] if cp.verification else ""
        return first
    parts = [str(status)]
    commit = data.get("commit")
    if isinstance(commit, str) and commit:
        parts.append(f"at {commit[:9]}")
    counts = data.get("counts")
    if isinstance(counts, dict) and counts.get("tests"):
        parts.append(f"({counts.get('failed', 0)} failed of {counts.get('tests')})")
    if status != "passing":
        detail = data.get("failure_detail")
        if isinstance(detail, str) and detail:
            parts.append(f"- {oneline(detail)[:200]}")
        consecutive = data.get("consecutive_failures")
        if isinstance(consecutive, int) and consecutive > 1:
            parts.append(f"[{consecutive} failures in a row]")
    return " ".join(parts)


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
        parts.append(f"the branch is now {oneline(drift.branch)}, not the one the checkpoint was written on")
    return _data(oneline("; ".join(parts)))


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


def prompt(cp: Checkpoint, *, source: str, env: Templates, drift: Any = None,
           runtime_status: list[str] | None = None, notes: list[Any] | None = None, skipped_notes: int = 0) -> str:
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


def short(cp: Checkpoint, *, label: str, env: Templates, drift: Any = None) -> str:
    nxt = cp.next_phase
    return printable(env.get_template("short.txt.j2").render(
        label=label, title=cp.title or "(untitled)", next=nxt.name if nxt else "",
        done=sum(p.done for p in cp.phases), total=len(cp.phases),
        ci=oneline((cp.verification_data or {}).get("status") or ("recorded" if cp.verification else "none")),
        risks=len(cp.risks), drift=drift_sentence(drift) if drift is not None and drift.moved else "",
    ).rstrip("\n"))


SYMBOLS = {"done": "✓", "in_progress": "▶", "pending": "·", "blocked": "✗"}


def progress_bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def show(cp: Checkpoint, *, label: str, location: str, env: Templates) -> str:
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
