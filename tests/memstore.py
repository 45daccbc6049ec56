"""A store double that behaves as GitHub does for the writer's protocol, and records every call.

Issues in memory, each with a chain of commits: as on GitHub, the chain's ref moves only from the head a
writer names (compare-and-swap), the body has no compare-and-set (a write replaces it whatever happened
meanwhile), and every version of the body is kept with who saved it. A write is two steps, as
``AppendCheckpoint`` is one request in which the ref moves and then the body is written: another actor
may act between them (``ref``, then ``mirror``). ``mirror_after_refusal``: the body is written even when
the move was refused (GitHub may run the mutations after a failed one; ``False``: it does not).

``before`` (when set) is called before every operation, with its name: the interleaving tests use it to
let one actor at a time take one step.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator

from ghstate.core.chain import Head, Link, embed
from ghstate.core.model import Revision
from ghstate.errors import NotFound
from ghstate.store import UNINDEXED, BodyVersion, Stored, Unindexed, WriteOutcome


class MemoryStore:
    kind = "github"
    remote = True

    def __init__(self, *, mirror_after_refusal: bool = True) -> None:
        self.bodies: dict[int, str] = {}  # the bodies as they are (with the chain's key)
        self.history: dict[int, list[tuple[str, str]]] = {}  # every version: (text, editor)
        self.heads: dict[int, str] = {}
        self.commits: dict[str, tuple[str, Link]] = {}  # oid -> (parent, link)
        self.calls: list[tuple[str, int]] = []
        self.notices: list[str] = []
        self.unchecked: list = []  # (every version is known here: none is left unchecked)
        self.notified: list[tuple[int, str]] = []  # what notify() told people
        self.before: Callable[[str], None] | None = None
        self.mirror_after_refusal = mirror_after_refusal

    # ------------------------------------------------------------------------------ helpers

    def _step(self, name: str, number: int) -> None:
        if self.before is not None:
            self.before(name)
        self.calls.append((name, number))

    def _head(self, number: int) -> Head | None:
        oid = self.heads.get(number)
        return Head(oid, self.commits[oid][1]) if oid else None

    def _stored(self, number: int) -> Stored:
        editor = self.history[number][-1][1]
        return Stored(number, "Checkpoint", self.bodies[number], f"mem://{number}", labels=("ghstate",),
                      version=str(len(self.history[number])), head=self._head(number),
                      editor=editor if editor != "octocat" else "")

    def notify(self, stored: Stored, text: str) -> str:
        self.notified.append((stored.number, text))
        return f"mem://{stored.number}#notice-{len(self.notified)}"

    def add_issue(self, number: int, body: str) -> None:
        self.bodies[number] = body
        self.history[number] = [(body, "octocat")]

    def web_edit(self, number: int, body: str, editor: str = "mona") -> None:
        """A person saves the body in the web UI."""
        if self.before is not None:
            self.before("save")
        self._save(number, body, editor)

    def _save(self, number: int, text: str, editor: str) -> None:
        self.bodies[number] = text
        self.history[number].append((text, editor))

    def chain(self, number: int) -> list[Link]:
        """The checkpoint's chain, oldest first."""
        out, oid = [], self.heads.get(number, "")
        while oid:
            parent, link = self.commits[oid]
            out.append(link)
            oid = parent
        return out[::-1]

    def entries(self, number: int) -> list:
        """Every entry on the chain, in chain order."""
        return [e for link in self.chain(number) for e in link.entries]

    # ------------------------------------------------------------------------------ the protocol

    def lock(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def get(self, number: int) -> Stored:
        self._step("get", number)
        if number not in self.bodies:
            raise NotFound(f"no issue #{number}")
        return self._stored(number)

    def list_open(self, bodies: bool = True) -> list[Stored]:
        return list(self.iter_open())

    def find_branch(self, branch: str) -> Unindexed:
        return UNINDEXED  # no index: looked through, as a repository an older ghstate wrote

    def pull_request(self, branch: str) -> None:
        return None

    def index_branch(self, stored: Stored, branch: str, leaving: str = "") -> int:
        return stored.number

    def iter_open(self, heads: bool = False, bodies: bool = True, page: int = 0) -> Iterator[Stored]:
        self._step("list", 0)
        return iter([self._stored(n) for n in sorted(self.bodies, reverse=True)])

    def create(self, title: str, body: str, unique: str = "") -> Stored:
        self._step("create", 0)
        number = max(self.bodies, default=0) + 1
        self.add_issue(number, body)
        return self._stored(number)

    def retire_branch(self, branch: str, stored: Stored) -> bool:
        """No branch index here: nothing to drop."""
        return False

    def saves(self, stored: Stored) -> tuple[BodyVersion, ...]:
        """The body as read, alone: no versions are kept to tell people's saves apart."""
        return (BodyVersion(stored.body, stored.editor, stored.edited_at),)

    def with_head(self, stored: Stored) -> Stored:
        return stored

    def link(self, stored: Stored, oid: str) -> Link | None:
        self._step("commit-read", stored.number)
        found = self.commits.get(oid)
        return found[1] if found else None

    def links(self, stored: Stored, count: int) -> list[tuple[str, Link]]:
        self._step("log", stored.number)
        out, oid = [], self.heads.get(stored.number, "")
        while oid and len(out) < count:
            parent, link = self.commits[oid]
            out.append((oid, link))
            oid = parent
        return out

    def look_back(self, stored: Stored, look) -> tuple[BodyVersion, ...]:
        return ()

    def has_write(self, stored: Stored, write: str) -> bool:
        return bool(write) and any(e.write == write for _, link in self.links(stored, 1000) for e in link.entries)

    def append(self, stored: Stored, link: Link, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        number = stored.number
        parent = stored.head.oid if stored.head is not None else ""
        self._step("commit", number)
        oid = hashlib.sha1(f"{parent}\n{link.to_message()}\n{len(self.commits)}".encode()).hexdigest()
        self.commits[oid] = (parent, link)
        self._step("ref", number)
        if self.heads.get(number, "") != parent:
            overwritten = ()
            if self.mirror_after_refusal:  # what it wrote over did not reach the chain, whatever it was
                self._step("mirror", number)
                overwritten = self._mirror(stored, embed(link.body, oid), always=True)
            return WriteOutcome(False, self._stored(number), overwritten)
        self.heads[number] = oid
        self._step("mirror", number)
        overwritten = self._mirror(stored, embed(link.body, oid))
        return WriteOutcome(True, self._stored(number), overwritten, moved=self.heads[number] != oid)

    def mirror(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        self._step("mirror", stored.number)
        overwritten = self._mirror(stored, body)
        head = self.heads.get(stored.number, "")
        return WriteOutcome(True, self._stored(stored.number), overwritten, moved=bool(head) and head not in body)

    def _mirror(self, stored: Stored, text: str, always: bool = False) -> tuple[BodyVersion, ...]:
        before, editor = self.history[stored.number][-1]
        self._save(stored.number, text, "octocat")
        person = editor if editor != "octocat" else ""
        return () if before == stored.body and not always else (BodyVersion(before, person),)

    def missing_label(self, stored: Stored) -> str:
        return ""

    def close(self, stored: Stored, reason: str = "completed") -> Stored:
        return stored._replace(state="closed")

    def revisions(self, number: int) -> list[Revision]:
        return [e.revision for e in self.entries(number)]
