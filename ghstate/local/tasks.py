"""Tasks on the local store: a child is a checkpoint whose marker names its parent, its phase, the children
it waits for and when it was closed (``TaskLink``); its claim is the newest file of ``claims/N/``
(``ghstate.local.claims``). Reading a family reads the store's checkpoints, no network."""

from __future__ import annotations

from typing import NamedTuple

from ghstate.core.claims import Child, Claim, Family, Held, Summary
from ghstate.core.marker import TaskLink
from ghstate.core.model import Checkpoint, Phase
from ghstate.core.tasks import Existing, existing_children
from ghstate.local import parsecache
from ghstate.local.claims import LocalClaims
from ghstate.local.store import LocalStore
from ghstate.store import Stored


class LocalChild(NamedTuple):
    child: Child
    parent: int | None
    split_from: int | None = None  # the same: a child's parent is its marker's
    labels: frozenset[str] = frozenset()
    parent_closed: bool = False  # the parent it was split from is closed


class LocalTasks:
    remote = False
    notices: tuple[str, ...] = ()  # nothing to say of children made here

    def __init__(self, store: LocalStore) -> None:
        self.store = store
        self.claims = LocalClaims(store.directory / "claims")
        self._parents: set[int] | None = None  # the checkpoints that have children, once asked

    def _all(self) -> dict[int, tuple[Stored, Checkpoint]]:
        """Every checkpoint of the store, closed ones too (a child closed by ``ghstate close`` is done)."""
        return {s.number: (s, parsecache.checkpoint(s.body)) for s in self.store.list_all()}

    def _child(self, stored: Stored, cp: Checkpoint, everyone: dict[int, tuple[Stored, Checkpoint]]) -> Child:
        task = cp.meta.task
        assert task is not None
        waiting = tuple(n for n in task.after if n in everyone and not _closed(*everyone[n]))
        held = self.claims.read(stored.number)
        return Child(stored.number, cp.title, not _closed(stored, cp), waiting, held.claim, task.phase, stored.location,
                     held.version)

    def family(self, parent: int) -> Family:
        everyone = self._all()
        children = tuple(self._child(s, cp, everyone) for s, cp in everyone.values()
                         if cp.meta.task is not None and cp.meta.task.parent == parent)
        done = sum(not c.open for c in children)
        return Family(parent, children, Summary(len(children), done))

    def has_children(self, number: int) -> bool:
        """Whether a checkpoint of the store is any child's parent (its marker's), the store read once."""
        if self._parents is None:
            self._parents = {cp.meta.task.parent for _, cp in self._all().values() if cp.meta.task is not None}
        return number in self._parents

    def elsewhere(self, parent: int, numbers: tuple[int, ...]) -> tuple[Child, ...]:
        """Children of ``parent`` that are not among its family: none here, where a child's parent is the one
        its marker names (nobody moves it but by editing that)."""
        return ()

    def existing(self, parent: int, phases: tuple[Phase, ...]) -> Existing:
        family = self.family(parent)
        numbers = {c.number for c in family.children}
        children = existing_children(phases, family.children)
        everyone = self._all()
        links = frozenset((n, a) for n in numbers for a in (everyone[n][1].meta.task or _NO_TASK).after)
        degrees = {n: (sum(1 for x, _ in links if x == n), sum(1 for _, y in links if y == n)) for n in numbers}
        return Existing(children, links, len(numbers), degrees, frozenset(c.number for c in family.children
                                                                           if not c.open))

    def read_child(self, number: int) -> LocalChild:
        stored = self.store.get(number)
        cp = parsecache.checkpoint(stored.body)
        if cp.meta.task is None:
            held = self.claims.read(number)
            return LocalChild(Child(number, cp.title, True, (), held.claim, "", stored.location, held.version), None)
        everyone = self._all()
        parent = everyone.get(cp.meta.task.parent)
        return LocalChild(self._child(stored, cp, everyone), cp.meta.task.parent, cp.meta.task.parent,
                          parent_closed=parent is not None and _closed(*parent))

    def create(self, title: str, body: str, unique: str) -> int:
        """A child made by ``split`` (whose write holds the store's lock)."""
        self._parents = None
        return self.store.create(title, body, unique=unique).number

    def held(self, number: int) -> Held:
        return self.claims.read(number)

    def held_as_read(self, number: int) -> Held:
        """The claim on ``number``: its files are read, no network (what a GitHub read lists, here always known)."""
        return self.claims.read(number)

    def sweep(self, now: object, closed: frozenset[int] = frozenset()) -> int:
        """Nothing to delete: a claim's files are its generations, never removed (see ``LocalClaims``)."""
        return 0

    def swap(self, number: int, seen: Held, claim: Claim | None, by: str = "") -> Held | None:
        """``claim`` (None: released) made ``number``'s if it still is as ``seen``: None when this call did
        it, else what it is now."""
        return None if self.claims.swap(number, seen, claim, by) else self.claims.read(number)


_NO_TASK = TaskLink()


def _closed(stored: Stored, cp: Checkpoint) -> bool:
    """Done: closed by ``done`` (its time in the marker) or by ``ghstate close`` (moved to ``closed/``)."""
    return stored.state == "closed" or (cp.meta.task is not None and bool(cp.meta.task.closed))
