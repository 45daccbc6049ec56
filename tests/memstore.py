"""A store double that behaves as GitHub does for the writer's protocol, and records every call.

Issues with bodies and comments, in memory. As on GitHub: no compare-and-set, a write replaces the body
whatever happened meanwhile, comments are only added, an issue says how many comments it has, and a
re-read tells whether the body changed since it was read. Log entries go through their serialisation
(as a comment's hidden data would), so what the writer logs is what a reader gets back.

``before`` (when set) is called before every operation, with its name: the interleaving tests use it to
let one writer at a time take one step.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from ghstate.core.marker import LogState
from ghstate.core.model import Revision
from ghstate.core.writelog import LogEntry
from ghstate.errors import NotFound
from ghstate.github import history
from ghstate.store import Stored


class MemoryStore:
    kind = "github"
    remote = True
    # a log apart from the body (as the local store keeps it), whose writes have no lock to hold;
    # MemoryEditStore keeps the log in the body's edit history, as GitHub's store does
    log_via = "comments"

    def __init__(self) -> None:
        self.bodies: dict[int, str] = {}
        self.versions: dict[int, int] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.history: dict[int, list[str]] = {}  # every body an issue had, as GitHub's edit history keeps it
        self.calls: list[tuple[str, int]] = []
        self.notices: list[str] = []
        self.notified: list[tuple[int, str]] = []  # what notify() told people
        self.before: Callable[[str], None] | None = None

    # ------------------------------------------------------------------------------ helpers

    def _step(self, name: str, number: int) -> None:
        if self.before is not None:
            self.before(name)
        self.calls.append((name, number))

    def _stored(self, number: int) -> Stored:
        return Stored(number, "Checkpoint", self.bodies[number], f"mem://{number}", labels=("ghstate",),
                      version=str(self.versions[number]), comments=len(self.comments[number]))

    def notify(self, stored: Stored, text: str) -> str:
        self.notified.append((stored.number, text))
        return f"mem://{stored.number}#notice-{len(self.notified)}"

    def add_issue(self, number: int, body: str) -> None:
        self.bodies[number] = body
        self.versions[number] = 1
        self.comments[number] = []
        self.history[number] = [body]

    def web_edit(self, number: int, body: str) -> None:
        """A person saves the body in the web UI (no log entry, no marker change of their own)."""
        if self.before is not None:
            self.before("save")
        self._set(number, body)

    def _set(self, number: int, body: str) -> None:
        self.bodies[number] = body
        self.versions[number] += 1
        self.history[number].append(body)

    # ------------------------------------------------------------------------------ the protocol

    def lock(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def get(self, number: int) -> Stored:
        self._step("get", number)
        if number not in self.bodies:
            raise NotFound(f"no issue #{number}")
        return self._stored(number)

    def list_open(self) -> list[Stored]:
        return list(self.iter_open())

    def iter_open(self) -> Iterator[Stored]:
        self._step("list", 0)
        return iter([self._stored(n) for n in sorted(self.bodies, reverse=True)])

    def create(self, title: str, body: str, unique: str = "", entry: LogEntry | None = None) -> Stored:
        self._step("create", 0)
        number = max(self.bodies, default=0) + 1
        self.add_issue(number, body)
        self._log(number, entry)
        return self._stored(number)

    def reread(self, stored: Stored) -> Stored | None:
        self._step("reread", stored.number)
        fresh = self._stored(stored.number)
        return None if fresh.version == stored.version else fresh

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: LogEntry | None = None) -> Stored:
        self._step("update", stored.number)
        self._log(stored.number, entry)
        self._set(stored.number, body)
        return self._stored(stored.number)

    def _log(self, number: int, entry: LogEntry | None) -> None:
        """The write's entry, logged with it before the body (an empty one when it logs nothing)."""
        data = json.loads(json.dumps(entry.to_data())) if entry else {}
        self.comments[number].append({"data": data, "summary": "", "trusted": True, "edited": False})

    def add_comment(self, number: int, data: dict[str, Any] | None, *, trusted: bool = True, edited: bool = False,
                    summary: str = "a comment") -> None:
        self.comments[number].append({"data": data, "summary": summary, "trusted": trusted, "edited": edited})

    def log_length(self, stored: Stored, state: LogState) -> int:
        return stored.comments

    def stored_size(self, body: str, entry: LogEntry | None) -> int:
        return len(body)

    def lacking(self, stored: Stored, state: LogState) -> bool:
        length = self.log_length(stored, state)
        return length > state.seen and not state.complete(length)

    def log(self, stored: Stored, state: LogState, after: int, pages: int = 0) -> list[LogEntry]:
        self._step("log", stored.number)
        out = []
        for position, comment in enumerate(self.comments[stored.number][after:], start=after + 1):
            if comment["data"] is None:  # a person's comment
                out.append(LogEntry(Revision(0), position=position))
                continue
            problem = "" if comment["trusted"] else "posted by someone who is not trusted"
            if comment["edited"]:
                problem = "edited after it was posted"
            out.append(LogEntry.from_data(comment["data"], position=position, problem=problem))
        return out

    def version(self, stored: Stored, position: int) -> Stored | None:
        return None  # the log's entries are writes, not versions of the body

    def log_since(self, stored: Stored, when: str) -> list[LogEntry]:
        return [e for e in self.log(stored, LogState(via=self.log_via), 0) if e.revision.at >= when]

    def revisions(self, number: int) -> list[Revision]:
        entries = self.log(self._stored(number), LogState(), 0)
        return [e.revision for e in entries if not e.problem and e.revision.revision]

    def logged(self, number: int) -> list[dict[str, Any]]:
        """The data of every write in the log, in log order."""
        out, seen = [], set()
        for c in self.comments[number]:  # a write logged again (a later round of it) counts where it was first
            if c["data"] and c["data"].get("write") not in seen:
                seen.add(c["data"].get("write"))
                out.append(c["data"])
        return out


class MemoryEditStore(MemoryStore):
    """The same double with GitHub's store of today: a write's log entry travels in the body it writes,
    and the log is the body's edit history (every version, with who saved it); no revision comment."""

    log_via = "edits"

    def __init__(self) -> None:
        super().__init__()
        self.raw: dict[int, str] = {}  # the bodies as GitHub holds them (with the log line)
        self.editors: dict[int, list[str]] = {}

    def _stored(self, number: int) -> Stored:
        body, _ = history.split(self.raw.get(number, self.bodies[number]))
        return Stored(number, "Checkpoint", body, f"mem://{number}", labels=("ghstate",),
                      version=str(self.versions[number]), comments=len(self.comments[number]),
                      edits=len(self.history[number]))

    def add_issue(self, number: int, body: str) -> None:
        super().add_issue(number, body)
        self.raw[number] = body
        self.editors[number] = ["octocat"]

    def _save(self, number: int, text: str, editor: str) -> None:
        self.raw[number] = text
        self.bodies[number] = history.split(text)[0]
        self.versions[number] += 1
        self.history[number].append(text)
        self.editors[number].append(editor)

    def web_edit(self, number: int, body: str) -> None:
        if self.before is not None:
            self.before("save")
        self._save(number, body, "mona")

    def create(self, title: str, body: str, unique: str = "", entry: LogEntry | None = None) -> Stored:
        self._step("create", 0)
        number = max(self.bodies, default=0) + 1
        self.add_issue(number, history.embed(body, entry) if entry else body)
        return self._stored(number)

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: LogEntry | None = None) -> Stored:
        self._step("update", stored.number)
        self._save(stored.number, history.embed(body, entry) if entry else body, "octocat")
        return self._stored(stored.number)

    def _log(self, number: int, entry: LogEntry | None) -> None:
        pass  # the entry travels in the body: the version saved is the log entry

    def reread(self, stored: Stored) -> Stored | None:
        self._step("reread", stored.number)
        return None  # as GitHub's store: the write's answer tells what was saved in between

    def version(self, stored: Stored, position: int) -> Stored | None:
        texts = self.history[stored.number]
        if not 1 <= position <= len(texts):
            return None
        return stored._replace(body=history.split(texts[position - 1])[0])

    def log_length(self, stored: Stored, state: LogState) -> int:
        return stored.edits if state.via == "edits" else stored.comments

    def stored_size(self, body: str, entry: LogEntry | None) -> int:
        return len(history.embed(body, entry)) if entry is not None else len(body)

    def lacking(self, stored: Stored, state: LogState) -> bool:
        return super().lacking(stored, state) or (state.via != "edits" and stored.edits > 1)

    def log(self, stored: Stored, state: LogState, after: int, pages: int = 0) -> list[LogEntry]:
        if state.via != "edits":
            newest = self.log(stored, LogState(via="edits"), max(0, stored.edits - 20))
            return [*super().log(stored, state, after, pages), *(e._replace(position=e.position + 1_000_000)
                                                                 for e in newest)]
        self._step("log", stored.number)
        versions = list(zip(self.history[stored.number], self.editors[stored.number], strict=True))
        return [history.entry_of(text, position, editor=editor, trusted=True)
                for position, (text, editor) in enumerate(versions, start=1) if position > after]

    def logged(self, number: int) -> list[dict[str, Any]]:
        """The data of every write in the log, in log order, each once."""
        out, seen = [], set()
        for entry in self.log(self._stored(number), LogState(via="edits"), 0):
            if entry.replayable and entry.write not in seen:
                seen.add(entry.write)
                out.append(json.loads(json.dumps(entry.to_data())))
        return out
