"""Which revision last set each claim of a checkpoint, and through it who, on which commit and when.

Pure: the previous record and the checkpoint about to be stamped in, the marker data out. The record
lives in the hidden marker under one key, compact and bounded:

    "prov": {"v": 1, "d": {"3f2a1c": 4, …}, "q": {…}, "r": {…}, "f": {…}, "p": {…}, "s": {…},
             "resume": ["9b0e11", 6], "revs": {"4": {"c": "4f2c1e9a01", "t": "…", "a": "claude-code",
             "o": "editor", "s": "s-41"}, …}, "x": ["s"]}

``x`` names the kinds that had more items than MAX_ENTRIES leaves room for: their items without an
entry are unknown, never credited to a later revision.

Items are keyed by a short digest of their text (so a person's reordering keeps them), ticks by the
digest of the phase (and step) they tick. An item keeps the revision that first recorded it as it is;
one changed on GitHub between two writes is recorded by the next write. Revision 0 means "already
there when provenance began to be kept". ``revs`` describes only the revisions still referenced.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

from ghstate.model import Checkpoint, Execution, file_paths_of

KEY = "prov"
ITEM_KINDS = (("d", "decisions"), ("q", "questions"), ("r", "risks"), ("f", "files"))
MAX_ENTRIES = 320  # entries in all (about 4 KB of marker); items beyond them have no provenance


def digest(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:6]


def _step_key(phase: str, step: str) -> str:
    return digest(phase + "\n" + step)


def _entries(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)}


def record(previous: Any, cp: Checkpoint, revision: int, *, commit: str = "", at: str = "",
           execution: Execution | None = None) -> dict[str, Any]:
    """The marker data ``{KEY: …}`` for ``cp`` stamped as ``revision``. ``previous`` is the record of
    the last write (``cp.meta.other[KEY]``, anything at all when the marker was edited by hand)."""
    prev = previous if isinstance(previous, dict) else {}
    # A checkpoint written before provenance was kept: what is already there predates this write.
    fresh = revision if (prev or not cp.meta.revision) else 0
    capped = set(prev.get("x") or ()) if isinstance(prev.get("x"), list) else set()
    wanted: dict[str, dict[str, int]] = {}
    for short, key in ITEM_KINDS:
        known = _entries(prev.get(short))
        wanted[short] = {(d := digest(item)): known.get(d, 0 if short in capped else fresh)
                         for item in getattr(cp, key)}
    ticks, steps = _entries(prev.get("p")), _entries(prev.get("s"))
    wanted["p"] = {(d := digest(p.name)): ticks.get(d, 0 if "p" in capped else fresh) for p in cp.phases if p.done}
    wanted["s"] = {(d := _step_key(p.name, s.text)): steps.get(d, 0 if "s" in capped else fresh)
                   for p in cp.phases for s in p.steps if s.done}
    out: dict[str, Any] = {}
    room = MAX_ENTRIES
    truncated = []
    for short in ("p", "d", "f", "r", "q", "s"):  # what the prompt leans on most keeps its provenance first
        entries = wanted[short]
        if len(entries) > room:  # the rest is unknown from now on, never credited to a later revision
            entries = dict(list(entries.items())[:room])
            truncated.append(short)
        room -= len(entries)
        out[short] = entries
    if cp.resume:
        old = prev.get("resume")
        same = isinstance(old, list) and len(old) == 2 and old[0] == digest(cp.resume) and isinstance(old[1], int)
        out["resume"] = [digest(cp.resume), old[1] if same else fresh]
    out = {"v": 1, **{k: v for k, v in out.items() if v}}
    if truncated:
        out["x"] = truncated
    used = {r for k, v in out.items() if isinstance(v, dict) for r in v.values()}
    used |= {out["resume"][1]} if "resume" in out else set()
    old_revs = prev.get("revs") if isinstance(prev.get("revs"), dict) else {}
    revs = {k: v for k, v in old_revs.items() if k.isdigit() and int(k) in used and isinstance(v, dict)}
    if revision in used:
        this: dict[str, str] = {"c": commit[:10], "t": at}
        if execution is not None:
            this.update({"a": execution.agent, "o": execution.role, "s": execution.session})
        revs[str(revision)] = {k: v for k, v in this.items() if v}
    if revs:
        out["revs"] = dict(sorted(revs.items(), key=lambda kv: int(kv[0])))
    return {KEY: out}


class Source(NamedTuple):
    """Where one claim came from. ``revision`` 0: it predates provenance (or is not recorded)."""

    revision: int = 0
    commit: str = ""
    at: str = ""
    agent: str = ""
    role: str = ""
    session: str = ""

    @property
    def known(self) -> bool:
        return self.revision > 0

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"revision": self.revision or None}
        for key in ("commit", "at", "agent", "role", "session"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data

    def words(self) -> str:
        """``revision 4, by claude-code as reviewer, at 4f2c1e9`` for a person or a prompt."""
        if not self.known:
            return "an earlier revision"
        who = f"by {self.agent}" if self.agent else ""
        if self.role and self.role != "editor":
            who = f"{who or 'by someone'} as {self.role}"
        return ", ".join(x for x in (f"revision {self.revision}", who,
                                     f"at {self.commit[:7]}" if self.commit else "") if x)


class Provenance:
    """The record of a checkpoint, read back: ``source_of(kind, text)`` for each claim."""

    def __init__(self, cp: Checkpoint) -> None:
        data = cp.meta.other.get(KEY)
        self.data = data if isinstance(data, dict) else {}
        self.executions = {e.revision: e for e in cp.executions if e.revision}
        self.cp = cp

    def _source(self, revision: int | None) -> Source:
        if not isinstance(revision, int) or revision <= 0:
            return Source()
        revs = self.data.get("revs")
        info = revs.get(str(revision)) if isinstance(revs, dict) else None
        info = info if isinstance(info, dict) else {}
        e = self.executions.get(revision)

        def text(key: str, fallback: str) -> str:
            value = info.get(key)
            return value if isinstance(value, str) and value else fallback

        return Source(revision, text("c", ""), text("t", e.at if e else ""), text("a", e.agent if e else ""),
                      text("o", e.role if e else ""), text("s", e.session if e else ""))

    def item(self, key: str, text: str) -> Source:
        short = {k: s for s, k in ITEM_KINDS}[key]
        return self._source(_entries(self.data.get(short)).get(digest(text)))

    def tick(self, phase_name: str) -> Source:
        return self._source(_entries(self.data.get("p")).get(digest(phase_name)))

    def step(self, phase_name: str, step_text: str) -> Source:
        return self._source(_entries(self.data.get("s")).get(_step_key(phase_name, step_text)))

    def resume(self) -> Source:
        value = self.data.get("resume")
        if isinstance(value, list) and len(value) == 2 and value[0] == digest(self.cp.resume):
            return self._source(value[1])
        return Source()

    def as_json(self) -> dict[str, Any]:
        """Per item, parallel to the state's lists (``decisions[i]`` ↔ ``provenance.decisions[i]``)."""
        cp = self.cp
        out: dict[str, Any] = {key: [self.item(key, item).as_dict() for item in getattr(cp, key)]
                               for _, key in ITEM_KINDS if key != "files"}
        out["file_items"] = [self.item("files", item).as_dict() for item in cp.files]
        out["files"] = [self.item("files", item).as_dict() for item in cp.files for _ in file_paths_of(item)]
        out["phases"] = [self.tick(p.name).as_dict() if p.done else None for p in cp.phases]
        out["steps"] = [[self.step(p.name, s.text).as_dict() if s.done else None for s in p.steps]
                        for p in cp.phases]
        out["resume"] = self.resume().as_dict() if cp.resume else None
        return out
