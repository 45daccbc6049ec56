"""Checkpoints on a GitHub Project (v2): what the board's fields say, and the board itself. Pure.

``ghstate.github.project_sync`` talks to GitHub; this module decides, from a checkpoint and what GitHub answered
about a project, which fields to create and which values to set (``plan``), and turns checkpoints into
board rows, sorted with the ones that need a person first (``rows``). No I/O, no environment.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, NamedTuple

from ghstate.core.markup import printable
from ghstate.core.model import Checkpoint, github_time

NEXT_PHASE, PROGRESS, CI, LAST_WRITER, CHECKPOINTED, STATUS = (
    "Next phase", "Progress", "CI", "Last writer", "Checkpointed", "Status")
FIELDS = (NEXT_PHASE, PROGRESS, CI, LAST_WRITER, CHECKPOINTED)  # kept by ghstate, created when missing
CI_STATES = ("passing", "failing", "blocked", "none")
CI_COLORS = {"passing": "GREEN", "failing": "RED", "blocked": "PURPLE", "none": "GRAY"}
IN_PROGRESS, DONE = "in progress", "done"
NO_NEXT = "—"  # the text of Next phase when every phase is done (a text field is never cleared)
MAX_TEXT = 200  # characters of a text field ghstate writes







# ------------------------------------------------------------------------------------ values


class Wanted(NamedTuple):
    """One field's value as the checkpoint says it should be."""

    name: str
    kind: str  # GitHub's data type: TEXT, NUMBER, DATE, SINGLE_SELECT
    value: str | float


def progress(cp: Checkpoint) -> int:
    """Phases done, in percent (0 without phases)."""
    total = len(cp.phases)
    return round(100 * sum(p.done for p in cp.phases) / total) if total else 0


def ci_state(cp: Checkpoint) -> str:
    status = cp.verification_data.status if cp.verification_data else ""
    return status if status in ("passing", "failing", "blocked") else "none"


def last_writer(cp: Checkpoint) -> str:
    """Agent and role of the last write, as far as the checkpoint records it."""
    if not cp.executions:
        return "unknown"
    e = cp.executions[-1]
    return _text(f"{e.agent or 'someone'}{f' ({e.role})' if e.role else ''}")


def next_phase_text(cp: Checkpoint) -> str:
    nxt = cp.next_phase
    return _text(nxt.name) if nxt else NO_NEXT


def status_of(cp: Checkpoint) -> str:
    """The project's Status: done when every phase is done and CI does not fail, else in progress. A
    repository without CI results (``none``) is not held back by them."""
    done = bool(cp.phases) and all(p.done for p in cp.phases)
    return DONE if done and ci_state(cp) in ("passing", "none") else IN_PROGRESS


def wanted(cp: Checkpoint) -> tuple[Wanted, ...]:
    """The five fields ghstate keeps, as this checkpoint says they should read."""
    return (
        Wanted(NEXT_PHASE, "TEXT", next_phase_text(cp)),
        Wanted(PROGRESS, "NUMBER", float(progress(cp))),
        Wanted(CI, "SINGLE_SELECT", ci_state(cp)),
        Wanted(LAST_WRITER, "TEXT", last_writer(cp)),
        Wanted(CHECKPOINTED, "DATE", (cp.meta.updated_at or "")[:10]),
    )


def _text(value: str) -> str:
    text = " ".join(printable(value).split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


# ------------------------------------------------------------------------------------ plan


class Field(NamedTuple):
    """A field of the project, as GitHub describes it."""

    id: str
    name: str
    kind: str  # dataType: TEXT, NUMBER, DATE, SINGLE_SELECT, ITERATION, TITLE, …
    options: tuple[tuple[str, str], ...] = ()  # (id, name) of a single select's options


class Update(NamedTuple):
    name: str  # the field ghstate calls it by (Next phase, …, Status)
    field_id: str
    value: dict[str, Any]  # ProjectV2FieldValue: {"text": …}, {"number": …}, {"date": …} or {"singleSelectOptionId": …}


class Plan(NamedTuple):
    create: tuple[Wanted, ...]  # fields to create before values can be set
    updates: tuple[Update, ...]  # values that differ from what the item holds
    notices: tuple[str, ...]  # fields left alone, and why (said once)


def fields_of(nodes: Any) -> tuple[Field, ...]:
    """The fields of ``ProjectV2.fields.nodes`` (nodes GitHub does not describe are skipped)."""
    found = []
    for node in nodes or ():
        if isinstance(node, dict) and isinstance(node.get("id"), str) and isinstance(node.get("name"), str):
            options = tuple((o["id"], o["name"]) for o in node.get("options") or ()
                            if isinstance(o, dict) and isinstance(o.get("id"), str) and isinstance(o.get("name"), str))
            found.append(Field(node["id"], node["name"], str(node.get("dataType") or ""), options))
    return tuple(found)


def values_of(nodes: Any) -> dict[str, dict[str, Any]]:
    """Field id → the value an item holds, in the shape of ``ProjectV2FieldValue``."""
    found: dict[str, dict[str, Any]] = {}
    for node in nodes or ():
        if not isinstance(node, dict) or not isinstance(node.get("field"), dict):
            continue
        field_id = node["field"].get("id")
        for key, shape in (("text", "text"), ("number", "number"), ("date", "date"),
                           ("optionId", "singleSelectOptionId")):
            if node.get(key) is not None and isinstance(field_id, str):
                found[field_id] = {shape: node[key]}
    return found


def _norm(name: str) -> str:
    return " ".join(re.sub(r"[-_]", " ", name).lower().split())


def _named(fields: tuple[Field, ...], name: str) -> Field | None:
    exact = [f for f in fields if f.name == name]
    if exact:
        return exact[0]
    return next((f for f in fields if _norm(f.name) == _norm(name)), None)


def _option(field: Field, name: str) -> str | None:
    return next((oid for oid, oname in field.options if _norm(oname) == _norm(name)), None)


_KINDS = {"TEXT": "a text field", "NUMBER": "a number field", "DATE": "a date field",
          "SINGLE_SELECT": "a single select field", "ITERATION": "an iteration field"}


def plan(cp: Checkpoint, fields: tuple[Field, ...], current: dict[str, dict[str, Any]], project: str) -> Plan:
    """What to create and to set so that the item reads as ``cp`` says. ``current``: the item's values
    (field id → value), empty for a new item. A field of one of ghstate's names and another type, a CI
    field without the option, and a Status without matching options are left alone, with a notice."""
    create: list[Wanted] = []
    updates: list[Update] = []
    notices: list[str] = []
    for want in wanted(cp):
        field = _named(fields, want.name)
        if field is None:
            create.append(want)
            continue
        if field.kind != want.kind:
            kind = _KINDS.get(field.kind, f"a {field.kind.lower() or 'built-in'} field")
            notices.append(f"the field {_text(field.name)!r} of project {project} is {kind}, not "
                           f"{_KINDS[want.kind]}: left alone (rename or delete it, and ghstate creates its own)")
            continue
        if want.kind == "SINGLE_SELECT":
            option = _option(field, str(want.value))
            if option is None:
                notices.append(f"the field {_text(field.name)!r} of project {project} has no option "
                               f"{want.value!r}: left alone (give it the options {', '.join(CI_STATES)})")
                continue
            value: dict[str, Any] = {"singleSelectOptionId": option}
        else:
            value = {{"TEXT": "text", "NUMBER": "number", "DATE": "date"}[want.kind]: want.value}
        if not (want.kind == "DATE" and not want.value) and current.get(field.id) != value:
            updates.append(Update(want.name, field.id, value))
    status = next((f for f in fields if f.name == STATUS and f.kind == "SINGLE_SELECT"), None)
    if status is not None:
        option = _option(status, status_of(cp))
        if option is None or _option(status, IN_PROGRESS) is None or _option(status, DONE) is None:
            names = ", ".join(repr(_text(n)) for _, n in status.options) or "none"
            notices.append(f"the Status of project {project} has no 'In progress' and 'Done' options (it has "
                           f"{names}): left alone")
        elif current.get(status.id) != {"singleSelectOptionId": option}:
            updates.append(Update(STATUS, status.id, {"singleSelectOptionId": option}))
    return Plan(tuple(create), tuple(updates), tuple(notices))


def create_input(want: Wanted, project_id: str) -> dict[str, Any]:
    """``CreateProjectV2FieldInput`` for a field ghstate keeps."""
    data: dict[str, Any] = {"projectId": project_id, "name": want.name, "dataType": want.kind}
    if want.kind == "SINGLE_SELECT":
        data["singleSelectOptions"] = [{"name": s, "color": CI_COLORS[s], "description": ""} for s in CI_STATES]
    return data


# ------------------------------------------------------------------------------------ board

MARKS = ("blocked", "failing", "stale")


class Row(NamedTuple):
    repo: str
    number: int
    url: str
    title: str
    branch: str
    done: int
    total: int
    progress: int
    next_phase: str
    ci: str
    last_writer: str
    updated_at: str  # when the checkpoint was last written (ISO 8601), "" when not known
    age_days: float | None
    marks: tuple[str, ...]
    parent: str = ""  # OWNER/NAME#N of its parent, when it is a child task (``ghstate split``)

    @property
    def key(self) -> str:
        return f"{self.repo}#{self.number}"

    def to_json(self) -> dict[str, Any]:
        data = self._asdict()
        data["marks"] = list(self.marks)
        data["next_phase"] = self.next_phase if self.next_phase != NO_NEXT else None
        data["parent"] = self.parent or None
        return data



def row(cp: Checkpoint, *, repo: str, number: int, url: str, updated_at: str, now: datetime,
        stale_days: float, parent: str = "") -> Row:
    """One board row from a checkpoint read from its issue (``updated_at``: the issue's, used when the
    checkpoint does not say when it was written)."""
    written = cp.meta.updated_at if github_time(cp.meta.updated_at) else updated_at
    at = github_time(written)
    age = round((now - at).total_seconds() / 86400, 2) if at else None
    ci = ci_state(cp)
    marks = tuple(m for m in MARKS if (m == ci) or (m == "stale" and age is not None and age >= stale_days))
    return Row(repo=repo, number=number, url=url, title=_text(cp.title), branch=_text(cp.meta.branch),
               done=sum(p.done for p in cp.phases), total=len(cp.phases), progress=progress(cp),
               next_phase=next_phase_text(cp), ci=ci, last_writer=last_writer(cp), updated_at=written if at else "",
               age_days=age, marks=marks, parent=parent)


def sort_rows(rows: list[Row]) -> list[Row]:
    """Blocked, then failing, then stale (longest idle first within each), then the rest, newest first."""
    def key(r: Row) -> tuple[int, float, str, int]:
        rank = min((MARKS.index(m) for m in r.marks), default=len(MARKS))
        age = r.age_days if r.age_days is not None else float("inf")
        return rank, -age if rank < len(MARKS) else age, r.repo, r.number

    return _nested(sorted(rows, key=key))


def _nested(rows: list[Row]) -> list[Row]:
    """Each child task right under its parent, when its parent is on the board (in the order they came)."""
    shown = {r.key for r in rows}
    children: dict[str, list[Row]] = {}
    for r in rows:
        if r.parent in shown and r.parent != r.key:
            children.setdefault(r.parent, []).append(r)
    out: list[Row] = []

    def add(r: Row) -> None:
        if r in out:
            return
        out.append(r)
        for child in children.get(r.key, ()):
            add(child)

    for r in rows:
        if r.parent not in shown or r.parent == r.key:
            add(r)
    return out + [r for r in rows if r not in out]  # a circle of parents (hand-made): shown as they came


def _depth(r: Row, by_key: dict[str, Row]) -> int:
    depth, seen = 0, {r.key}
    while r.parent in by_key and r.parent not in seen:
        r = by_key[r.parent]
        seen.add(r.key)
        depth += 1
    return depth


def ago(days: float | None) -> str:
    if days is None:
        return "unknown"
    minutes = max(0, int(days * 1440))
    if minutes < 60:
        return f"{minutes}m ago"
    if minutes < 48 * 60:
        return f"{minutes // 60}h ago"
    return f"{int(days)}d ago"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lines(rows: list[Row]) -> list[str]:
    """The board as a person reads it in a terminal: one aligned line per checkpoint."""
    table = []
    by_key = {r.key: r for r in rows}
    for r in rows:
        mark = ("!" + ",".join(m.upper() for m in r.marks)) if r.marks else ""
        depth = _depth(r, by_key)
        name = ("  " * (depth - 1) + "└ " if depth else "") + r.key
        table.append((mark, name, r.branch or "-", f"{r.done}/{r.total} {r.progress}%",
                      f"next: {_clip(r.next_phase, 48)}", f"CI {r.ci}", r.last_writer, ago(r.age_days)))
    if not table:
        return []
    widths = [max(len(cells[i]) for cells in table) for i in range(len(table[0]) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(cells, [*widths, 0], strict=True)).rstrip() for cells in table]
