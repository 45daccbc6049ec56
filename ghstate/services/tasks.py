"""Tasks that split, whoever asks (the CLI, the MCP server's tools): ``split`` turns a checkpoint's phases
into child checkpoints and ``ready`` lists the children an agent may take. A checkpoint's family for its
reading is ``ghstate.services.family``; claims are ``ghstate.services.claims``. No click here.

Each store keeps tasks its own way (``ghstate.github.tasks``: sub-issues, issue dependencies, Git refs;
``ghstate.local.tasks``: markers and claim files); what is done with them is the same and is here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.claims import Child, Family
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import Execution, TaskLink
from ghstate.core.markup import unescape_literal
from ghstate.core.model import Checkpoint, Phase, WorkTree
from ghstate.core.tasks import (
    SplitPlan,
    TaskEdit,
    bare,
    child_checkpoint,
    creation_order,
    linked_child,
    plan_split,
)
from ghstate.services import interrupt
from ghstate.services.app import App
from ghstate.services.checkpoint import check_values
from ghstate.services.family import backend, claims_now, family_of
from ghstate.services.reader import checkpoint_of
from ghstate.store import Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.services.writer import NewCheckpoint, WriteResult

CHILD_SECTIONS = frozenset({"goal", "phases", "decisions", "files", "resume"})


def write_task(app: App, number: int, intent: Intent, *, agent: str = "", session: str = "",
               event: str = "task") -> WriteResult:
    """One revision of an existing checkpoint through the writer (logged, replayed, kept for ``push``); the
    tree it was written from is not recorded (a claim or a tick says nothing of this working tree)."""
    execution = Execution(agent=agent, role="editor", session=session, event=event) if agent else None
    return app.writer().write(WriteSpec(intent=intent, number=number, lookup=True, create=False, record_tree=False,
                                        event=event, execution=execution))


def show_claims(app: App, children: tuple[Child, ...], skip: int = 0) -> list[str]:
    """Repair the body of each open child that shows another claim than its ref holds (the claimer stopped
    between moving the ref and writing the body, or a person edited the line), as any command that reads the
    claims does: a write of that line alone (two requests each, only where one is wrong). What was repaired
    is said; what could not be is a warning, with why."""
    from ghstate.core.claims import MirrorEdit
    from ghstate.errors import GhstateError

    said: list[str] = []
    now = claims_now(app)
    for child in children:
        if child.number == skip or not child.shows_wrong(now):
            continue
        claim, label = child.claim, app.label(child.number)
        edit = MirrorEdit(claim, claim.agent if claim else "", force=True, session=claim.session if claim else "")
        what = f"the claim of {claim.words()}" if claim is not None else "no claim"
        try:
            write_task(app, child.number, Intent(task=TaskEdit(mirror=edit)), event="claim")
        except GhstateError as exc:
            app.store.notices.append(f"{label}'s body does not show what its claim ref holds ({what}), and "
                                     f"showing it failed ({exc})")
            continue
        said.append(f"{label}'s body now shows {what}, as its claim ref holds it.")
    return said


def sweep(app: App, children: tuple[Child, ...]) -> None:
    """Delete the claim refs this command's reads found holding nothing (a claim that ended, the claim of a
    closed child): on GitHub one request, only when there are any; nothing on the local store."""
    backend(app).sweep(claims_now(app), frozenset(c.number for c in children if not c.open))


# ------------------------------------------------------------------------------------ split


@dataclass(frozen=True)
class SplitRequest:
    """``ghstate split``: the parent, the phases to split (default: every phase not done), and whether each
    waits for the one before (``in_order``) instead of what its line says."""

    issue: int
    phase: tuple[str, ...] = ()
    in_order: bool = False
    allow_secrets: bool = False  # the children carry the parent's decisions: one allowed there is theirs too

    def check(self) -> None:
        check_values({"phase": self.phase})


class SplitOutcome(NamedTuple):
    parent: int
    made: tuple[tuple[int, str], ...]  # (number, title) of each child made now
    kept: tuple[int, ...]  # children there already
    links: tuple[tuple[int, int], ...]  # (waiting, awaited) made now
    label: str

    def lines(self, app: App) -> list[str]:
        if not self.made and not self.links:
            kept = ", ".join(app.label(n) for n in self.kept)
            return [f"Nothing to split: {self.label}'s open phases are children already{f' ({kept})' if kept else ''}."]
        out = [f"Split {self.label} into {len(self.made)} new child{'ren' if len(self.made) != 1 else ''}"
               f"{f' (and {len(self.kept)} there already)' if self.kept else ''}:"]
        out += [f"  {app.label(n)} {title}" for n, title in self.made]
        out += [f"  {app.label(a)} waits for {app.label(b)}" for a, b in self.links]
        return out

    def json_data(self) -> dict[str, Any]:
        """``split --json``: the parent, the children made now, those there already, the waits made now."""
        return {"number": self.parent, "made": [{"number": n, "title": title} for n, title in self.made],
                "kept": list(self.kept), "links": [{"number": a, "waits_for": b} for a, b in self.links]}


def run_split(app: App, request: SplitRequest) -> SplitOutcome:
    """Make the children and their links, then the parent's phase lines link them: on GitHub all of it in at
    most five requests for up to twenty children (four: the parent's read, which the write builds on, the
    children, the links, the parent's write). A split again makes only what is missing."""
    request.check()
    tasks = backend(app)
    writer = app.writer()
    tree = app.tree()._replace(dirty=())
    done: dict[str, Any] = {}

    def intent(cp: Checkpoint) -> Intent:  # the parent as the write read it; children made once
        if "intent" in done:
            return done["intent"]
        plan = _plan(tasks, request, cp)

        def prepare(index: int, after: tuple[int, ...]) -> NewCheckpoint:
            return writer.prepare_create(_child_spec(app, cp, index, request, after, tree))

        numbers, later = _make(app, tasks, plan, prepare, request.issue)
        if numbers:
            made = ", ".join(app.label(n) for n in sorted(numbers.values()))
            interrupt.note(f"'ghstate split {request.issue}' made {made} and stopped before it finished: run it "
                           "again, it makes only the children and links that are missing")
        every = {**plan.children, **numbers}
        links = tuple((cp.phases[i].name, n) for i, n in sorted(every.items()) if linked_child(cp.phases[i].name) != n)
        done.update(plan=plan, numbers=numbers, later=later, every=every, cp=cp,
                    intent=Intent(task=TaskEdit(links=links)) if links else Intent())
        return done["intent"]

    interrupt.note(f"'ghstate split {request.issue}' stopped before it finished: run it again, it makes only the "
                   "children and links that are missing")
    writer.write(WriteSpec(intent=intent, number=request.issue, lookup=True, create=False, record_tree=False,
                           event="split", allow_secrets=request.allow_secrets))
    app.store.notices.extend(tasks.notices)  # what making the children left to say (the project)
    plan, numbers, every, cp = done["plan"], done["numbers"], done["every"], done["cp"]
    for waiting, awaited in done["later"]:  # local: children there already that now wait for new ones
        write_task(app, waiting, Intent(task=TaskEdit(after=(awaited,))), event="split")
    made = tuple((numbers[i], unescape_literal(bare(cp.phases[i].name))) for i in sorted(numbers))
    return SplitOutcome(request.issue, made, tuple(sorted(plan.children.values())),
                        tuple((every[i], every[j]) for i, j in plan.links), app.label(request.issue))


def _plan(tasks: Any, request: SplitRequest, cp: Checkpoint) -> SplitPlan:
    return plan_split(cp.phases, tasks.existing(request.issue, cp.phases), chosen=request.phase,
                      in_order=request.in_order)


def _make(app: App, tasks: Any, plan: SplitPlan, prepare: Any, parent: int
          ) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """The children of ``plan`` made (phase index → number), and the links left for afterwards."""
    if tasks.remote:  # GitHub: every child in batches, then every link in batches
        drafts = [prepare(i, ()) for i in plan.new]
        created = tasks.create_children(parent, [(d.checkpoint.title, d.body) for d in drafts],
                                        app.settings.policy.label, _project(app, tasks.notices)) if drafts else []
        numbers = dict(zip(plan.new, created, strict=True))
        every = {**plan.children, **numbers}
        if plan.links:
            tasks.add_links([(every[i], every[j]) for i, j in plan.links])
        return numbers, []
    numbers = {}  # local: each child made knowing the children it waits for
    for i in creation_order(plan):
        after = tuple(sorted(numbers.get(j) or plan.children[j] for a, j in plan.links if a == i))
        new = prepare(i, after)
        numbers[i] = tasks.create(new.checkpoint.title, new.body, new.unique)
    later = [(plan.children[i], numbers.get(j) or plan.children[j]) for i, j in plan.links if i not in numbers]
    return numbers, later


def _project(app: App, said: list[str]) -> str | None:
    """The project the children join as they are made (the board lists them under their parent), when one is
    configured and this token may add to it: one request. With a token for the project only, the children
    join it at their first write (the token that makes them may not add them), and that is said."""
    if not app.settings.project or app.project is None:
        return None
    label = app.settings.project
    if app.settings.project_token:
        said.append(f"the children join project {label} at their first write (GHSTATE_PROJECT_TOKEN is "
                                 "for the project only: the issues' token cannot add them as it makes them)")
        return None
    found, why = app.project.for_new_issues()
    if found is None:
        said.append(f"the children were not added to project {label} ({why}); each joins it at "
                                 "its first write")
    return found


def _child_spec(app: App, cp: Checkpoint, index: int, request: SplitRequest, after: tuple[int, ...],
                tree: WorkTree) -> WriteSpec:
    parent = request.issue
    phase: Phase = cp.phases[index]
    child = child_checkpoint(cp, phase, app.label(parent))
    settings = app.settings
    execution = Execution(agent=settings.agent, role="editor", session=settings.session, event="split") \
        if settings.agent else None
    link = TaskLink(parent, bare(phase.name), after)
    return WriteSpec(intent=Intent(incoming=child, present=CHILD_SECTIONS, task=TaskEdit(link=link)), number=None,
                     lookup=False, create=True, tree=tree, title=child.title, event="split", execution=execution,
                     allow_secrets=request.allow_secrets)


# ------------------------------------------------------------------------------------ ready


@dataclass(frozen=True)
class ReadyRequest:
    """``ghstate ready``: the children of ``issue`` (default: of every open parent) an agent may take."""

    issue: int | None = None
    json: bool = False
    limit: int | None = None  # at most this many children (ready ones; with json, any), newest parents first

    def check(self) -> None:
        return None


class Ready(NamedTuple):
    families: tuple[tuple[Stored, Checkpoint, Family], ...]
    now: datetime
    repaired: tuple[str, ...] = ()  # claims shown again in a child's body (see show_claims)
    limit: int | None = None
    cut: bool = False  # the parents were read only until more than ``limit`` children were found

    def json_rows(self) -> list[dict[str, Any]]:
        rows = [{**child.to_json(self.now), "parent": family.parent}
                for _, _, family in self.families for child in family.children]
        return rows[:self.limit]

    def more(self, shown: int, found: int) -> str:
        """What a listing cut at ``limit`` says ("" when nothing is left)."""
        from ghstate.services.lifecycle import more_line

        return more_line(shown, "children") if self.limit is not None and (found > shown or self.cut) else ""

    def lines(self, app: App) -> tuple[list[str], list[str]]:
        """(stdout, stderr): one line per ready child; what the others are, when none is ready; where the
        children a person moved to another parent went (that parent's ``ready`` offers them)."""
        out: list[str] = []
        said: list[str] = []
        for _, cp, family in self.families:
            ready = family.offered(self.now)
            # #N as ghstate takes it back (claim, resume), on either store
            out += [f"#{c.number}\t{c.title}\t(of #{family.parent})" for c in ready]
            if not ready:
                said.append(nothing_ready(app, family, self.now, cp.title))
            else:
                said += [moved_line(app, c, family.parent) for c in family.children if c.moved]
        if not self.families:
            said.append(f"No checkpoint in the {app.store.kind} store has children; make some with "
                        "'ghstate split ISSUE'.")
        found = len(out)
        out = out[:self.limit]
        more = self.more(len(out), found)
        return out, [*said, *self.repaired, *([more] if more else [])]


def moved_line(app: App, child: Child, parent: int) -> str:
    """A child of ``parent`` that a person moved (on github.com): where it is, and who offers it now."""
    offered = f": 'ghstate ready {child.moved_to}' offers it" if child.moved_to else ""
    return f"{app.label(child.number)} {child.title} {child.where(app.label, parent)}{offered}"


def nothing_ready(app: App, family: Family, now: datetime, title: str = "") -> str:
    """Why no child of ``family`` is ready, each state named."""
    words = []
    for child in family.children:
        state = child.state(now)
        if child.moved:
            words.append(f"{app.label(child.number)} {child.where(app.label, family.parent)}")
        elif state == "claimed" and child.claim is not None:
            words.append(f"{app.label(child.number)} claimed by {child.claim.words()}")
        elif state == "blocked":
            words.append(f"{app.label(child.number)} waits for {child.waits_for(app.label)}")
        elif state == "done":
            words.append(f"{app.label(child.number)} done")
    what = "; ".join(words) or "it has no children (make them with 'ghstate split')"
    if family.closed:
        left = [app.label(c.number) for c in family.children if c.open and not c.moved]
        what = "it is closed" + (f": its open children ({', '.join(left)}) are offered no more" if left else "")
    return f"nothing ready in {app.label(family.parent)}{f' ({title})' if title else ''}: {what}"


PARENT_SCAN = 100  # open checkpoints `ready` without ISSUE looks at on GitHub, newest first: one request


def run_ready(app: App, request: ReadyRequest) -> Ready:
    """GitHub: one request for ISSUE (the parent's read carries its children, their links and claims)."""
    request.check()
    if request.issue is not None:
        stored, cp = app.find(request.issue)
        family = family_of(app, stored.number, cp)._replace(closed=stored.state == "closed")
        found = Ready(((stored, cp, family),), claims_now(app), tuple(show_claims(app, family.children)),
                      request.limit)
        sweep(app, family.children)
        return found
    from ghstate.services.lifecycle import listed

    families = []
    tasks = backend(app)
    found, cut = 0, False
    remote = app.store.remote  # GitHub: parents told by their sub-issues' count, the newest PARENT_SCAN looked at
    for seen, stored in enumerate(listed(app, bodies=not remote, page=PARENT_SCAN if remote else 0)):
        if request.limit is not None and found > request.limit:
            cut = True  # enough to fill the limit and know that more are left
            break
        cp = Checkpoint() if remote else checkpoint_of(stored)  # GitHub's listing holds no bodies: none parsed
        if tasks.has_children(stored.number) or (not remote and any(linked_child(p.name) for p in cp.phases)):
            stored, cp = app.find(stored.number) if remote else (stored, cp)
            family = family_of(app, stored.number, cp)
            families.append((stored, cp, family))
            found += len(family.children) if request.json else len(family.offered(claims_now(app)))
        if remote and seen == PARENT_SCAN - 1:  # as many as one request reads: more were left if GitHub counts more
            cut = getattr(app.store, "open_count", 0) > PARENT_SCAN
            break
    children = tuple({c.number: c for _, _, f in families for c in f.children if not c.moved}.values())
    found = Ready(tuple(families), claims_now(app), tuple(show_claims(app, children)), request.limit, cut)
    sweep(app, tuple(c for _, _, f in families for c in f.children))
    return found


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

