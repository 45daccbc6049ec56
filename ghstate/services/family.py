"""A checkpoint's family, for its reading: its parent and its children by state, from what the store
already read (GitHub: the parent's one read carries its children, their links and their claims; the
local store: its markers and claim files). Light on purpose: a reading of a checkpoint that has no
family imports nothing more than this (see ``tests/test_local_path.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.claims import Child, Family, rollup_lines
from ghstate.core.markup import unescape_literal
from ghstate.core.model import Checkpoint
from ghstate.core.tasks import followed, in_plan_order, linked_child, unlisted
from ghstate.services.app import App
from ghstate.services.reader import checkpoint_of
from ghstate.store import Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.tasks import GitHubTasks
    from ghstate.local.tasks import LocalTasks


def backend(app: App) -> GitHubTasks | LocalTasks:
    """The tasks of the App's store, made once per App (what one read learnt, a node id, the repository's
    id, serves the next)."""
    if app.tasks is None:
        from ghstate.services.leases import tasks_of

        app.tasks = tasks_of(app.github() if app.store.remote else app.store)
    return app.tasks


def claims_now(app: App) -> datetime:
    """The time leases are measured by: on GitHub, GitHub's clock (its latest answer's ``Date``: a machine whose
    clock is off by minutes neither takes a live claim over nor holds one too long); on the local store, this
    machine's (its claims are this machine's agents'), and on GitHub too before GitHub answered."""
    if app.store.remote:
        found = app.github().api.server_now()
        if found is not None:
            return found
    return app.clock()


def family_of(app: App, parent: int, cp: Checkpoint) -> Family:
    """``parent``'s children in its order, each named by its phase (GitHub: as the parent's read carried
    them; no request when the parent was read in this command). A child its phase lines link that is no
    longer among them (a person moved it on github.com) is there too, as moved, with where it is now: one
    request for all of them, only for a phase not done and only for a parent that has children (a ``(#N)`` a
    person ends a phase line with, in a plan never split or on a phase done, costs nothing)."""
    tasks = backend(app)
    family = tasks.family(parent)
    strays = unlisted(cp.phases, family.children)
    moved = tasks.elsewhere(parent, strays) if strays and family.children else ()
    return family._replace(children=in_plan_order(cp.phases, (*family.children, *moved)))


def open_children(app: App, stored: Stored, cp: Checkpoint) -> tuple[Child, ...]:
    """The children of ``stored`` that are still open (a close of it leaves them to a plan that is over): on
    GitHub at no request (its read carried them), on the local store from its markers."""
    if not (any(linked_child(p.name) for p in cp.phases) or backend(app).has_children(stored.number)):
        return ()
    return tuple(c for c in family_of(app, stored.number, cp).children if c.open and not c.moved)


class TaskView(NamedTuple):
    """A checkpoint's place in a plan, for its reading: its parent (number, title, locked decisions) and its
    children by state."""

    parent: tuple[int, str, tuple[str, ...]] | None = None
    children: tuple[Child, ...] = ()
    lines: tuple[str, ...] = ()
    now: datetime | None = None

    def followed(self, cp: Checkpoint) -> Checkpoint:
        """``cp`` as its children say it is: a phase whose child is closed is done (see ``core.tasks.followed``);
        what a reading shows of a parent, its next phase included. The body is not changed."""
        return cp._replace(phases=followed(cp.phases, self.children)) if self.children else cp

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.parent is not None:
            data["parent"] = {"number": self.parent[0], "title": self.parent[1],
                              "decisions": [unescape_literal(d) for d in self.parent[2]]}
        if self.children and self.now is not None:
            data["children"] = [c.to_json(self.now) for c in self.children]
        return data


def task_view(app: App, stored: Stored, cp: Checkpoint) -> TaskView:
    """The family of the checkpoint being read, at no cost: on GitHub from what its read carried, locally
    only when its marker names a parent or its phase lines link children."""
    now = claims_now(app)
    parent = _parent(app, stored, cp)
    children: tuple[Child, ...] = ()
    summary = None
    if any(linked_child(p.name) for p in cp.phases) or (app.store.remote and backend(app).has_children(stored.number)):
        family = family_of(app, stored.number, cp)
        children, summary = family.children, family.summary
    lines: list[str] = []
    if parent is not None:
        more = [d for d in parent[2] if d not in cp.decisions]  # a split carried the ones it had then
        said = ":" if more else (" (all are among this one's)." if parent[2] else ".")
        lines.append(f"Part of {app.label(parent[0])} ({parent[1]}); its locked decisions hold here too{said}")
        lines += [f"- {unescape_literal(d)}" for d in more]
    if children and summary is not None:
        lines += rollup_lines(children, summary, now, "#" if app.store.remote else "local #")
    return TaskView(parent, children, tuple(lines), now)


def _parent(app: App, stored: Stored, cp: Checkpoint) -> tuple[int, str, tuple[str, ...]] | None:
    if app.store.remote:
        read = app.github().node(stored.number) or {}
        node = read.get("parent")
        here = (read.get("repository") or {}).get("id")
        if not node or (here and (node.get("repository") or {}).get("id") not in (None, here)):
            return None  # none, or an issue of another repository: its number is not one here
        parent_cp = checkpoint_of(Stored(node["number"], node.get("title") or "", node.get("body") or "", ""))
        return node["number"], parent_cp.title, parent_cp.decisions
    if cp.meta.task is None:
        return None
    from ghstate.errors import NotFound

    try:
        parent_cp = checkpoint_of(app.store.get(cp.meta.task.parent))
    except NotFound:
        return cp.meta.task.parent, "", ()
    return cp.meta.task.parent, parent_cp.title, parent_cp.decisions


