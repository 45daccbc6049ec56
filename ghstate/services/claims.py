"""Claiming child tasks, whoever asks (the CLI, the MCP server's tools): ``claim`` (one child, or the first
ready one of a parent), ``release`` and ``done``. No click here.

A claim is a compare-and-swap on what was read (``Held.version``): taking a free child, renewing one's
own claim and taking over a claim whose lease ran out all name the value seen, and exactly one of any
number of agents that saw the same value wins (GitHub: ``updateRefs``; the local store: an exclusively
created file). On GitHub the claim is also shown in the child's body, for people. Where the token cannot
write refs (no ``contents: write``), the body is the claim, written as any write is there (the body alone,
with no compare-and-swap), so two agents racing for one child may both be told they won: best effort, and
said once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ghstate.core.claims import DEFAULT_LEASE, Child, Claim, Family, Held, MirrorEdit, claimed, lease_of, mirror_of
from ghstate.core.claims import ready as ready_of
from ghstate.core.claims import unblocked as unblocked_by
from ghstate.core.edits import Edits
from ghstate.core.intent import Intent
from ghstate.core.model import Checkpoint
from ghstate.core.tasks import TaskEdit, child_phase
from ghstate.errors import GhstateError, HeldByAnother, InputError, NothingReady, RemoteError
from ghstate.services import interrupt
from ghstate.services.app import App
from ghstate.services.checkpoint import RequestError, check_values
from ghstate.services.family import backend, claims_now, family_of
from ghstate.services.tasks import nothing_ready, show_claims, sweep, write_task

ATTEMPTS = 3  # reads of one child's claim in a row that another agent may move meanwhile
FALLBACK = ("the token cannot write Git refs (it needs contents: write besides issues: write): claims are kept in "
            "the child's body instead, best effort (two agents racing for one child may both be told they won)")


def _check_agent(agent: str, lease: str | None = None) -> None:
    if not agent.strip():
        raise RequestError("{agent} is needed: the name of the agent that holds the claim (or set GHSTATE_AGENT)")
    check_values({"agent": agent})
    if lease is not None:  # given, if only as "": a claim's lease is a duration
        try:
            lease_of(lease)
        except ValueError as exc:
            raise RequestError(str(exc), "lease") from None


@dataclass(frozen=True)
class ClaimRequest:
    """``ghstate claim``: ``child``, or the first ready child of ``next`` (a parent), for ``agent`` for
    ``lease``."""

    child: int | None = None
    next: int | None = None
    agent: str = ""
    lease: str = DEFAULT_LEASE
    session: str = ""

    def check(self) -> None:
        if (self.child is None) == (self.next is None):
            raise RequestError("give the {child} to claim, or {next} with its parent, not both" if self.child
                               else "give the {child} to claim, or {next} with its parent")
        _check_agent(self.agent, self.lease)
        check_values({"session": self.session})


@dataclass(frozen=True)
class ReleaseRequest:
    child: int
    agent: str = ""
    force: bool = False
    session: str = ""

    def check(self) -> None:
        if not self.force:
            _check_agent(self.agent)
        check_values({"session": self.session})


@dataclass(frozen=True)
class DoneRequest:
    child: int
    agent: str = ""
    claim_next: bool = False
    lease: str = DEFAULT_LEASE
    session: str = ""
    force: bool = False  # finish it whoever holds it

    def check(self) -> None:
        if self.claim_next or self.agent:
            _check_agent(self.agent, self.lease)
        check_values({"session": self.session})


@dataclass
class Outcome:
    """What a claim, release or done did: ``out`` for standard output (``claim``: the claimed ``#N`` alone,
    for scripts), ``said`` for a person (standard error), and warnings. ``failure``: what failed after the
    rest was done (``done --claim-next`` with nothing ready: the done stands, and is reported)."""

    out: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    claimed: int | None = None
    claim: Claim | None = None
    failure: GhstateError | None = None
    data: dict[str, Any] = field(default_factory=dict)  # what --json prints beside the claim (done: what it did)

    def json_data(self) -> dict[str, Any]:
        """``--json``: what was done (``data``) and the claim it made, as ``ready --json`` names a claim."""
        if "released" in self.data and "parent" not in self.data:  # a release claims nothing
            return self.data
        claim = self.claim
        made = {"claimed": self.claimed, "claimed_by": claim.agent if claim else None,
                "claimed_session": (claim.session or None) if claim else None,
                "lease_until": claim.until if claim else None}
        return {**self.data, **made} if self.data else {"number": self.claimed, **made}

    def text(self) -> str:
        """Everything, as the MCP tools answer it."""
        from ghstate.errors import failure_message

        failed = [f"Error: {failure_message(self.failure)}"] if self.failure is not None else []
        return "\n".join([*self.out, *self.said, *(f"Warning: {w}" for w in self.warnings), *failed]) + "\n"


def _who(agent: str, session: str) -> str:
    """``a1``, or ``a1 (session s-1)``: a holder, as a claim names it."""
    return f"{agent}{f' (session {session})' if session else ''}"


def _as_holder(claim: Claim) -> str:
    """The options that name ``claim``'s holder, to give when one is that holder."""
    return f"--agent {claim.agent}" + (f" --session {claim.session}" if claim.session else "")


def _same_agent(claim: Claim, agent: str) -> str:
    """For an agent refused its own name's claim (another session holds it): how to be that session."""
    return f" ({_as_holder(claim)}, if that session is yours)" if claim.agent == agent and claim.session else ""


class _Claimer:
    """One holder (an agent in a session) claiming children of one store in one command (the fallback to the
    body said once)."""

    def __init__(self, app: App, agent: str, session: str, lease: str) -> None:
        self.app = app
        self.tasks = backend(app)
        self.agent, self.session, self.lease = agent, session, lease_of(lease)
        self.in_body = False
        self.warnings: list[str] = []

    def take(self, child: Child) -> tuple[Claim | None, Claim | None]:
        """Claim ``child`` as read: (this agent's claim, None) when won; (None, the holder's) when another
        agent holds it."""
        held = child.held
        interrupt.note(f"whether the claim of {self.app.label(child.number)} landed could not be told: 'ghstate claim "
                       f"{child.number}' again, as {_who(self.agent, self.session)}, renews it if it is yours or names "
                       "its holder")
        for _ in range(ATTEMPTS):
            now = claims_now(self.app)
            if held.claim is not None and not held.claim.held_by(self.agent, self.session) and held.claim.live(now):
                return None, held.claim
            claim = claimed(self.agent, self.session, now, self.lease, child.number)
            found = self._swap(child.number, held, claim)
            if found is None:
                return claim, None
            held = found
        return None, held.claim

    def _swap(self, number: int, seen: Held, claim: Claim) -> Held | None:
        if not self.in_body:
            from ghstate.github.tasks import RefsUnavailable, Untold

            try:
                found = self.tasks.swap(number, seen, claim)
            except RefsUnavailable:
                self.in_body = True
                self.warnings.append(FALLBACK)
            except Untold as exc:
                raise RemoteError(f"{exc}; run 'ghstate claim {number} {self._options()}' again to find out "
                                  f"whether {self.app.label(number)} is yours: it renews the claim if it landed, "
                                  "or names who holds it", retryable=True) from None
            else:
                if found is None and self.tasks.remote:
                    self._mirror(number, MirrorEdit(claim, self.agent, force=True, session=self.session))
                return found
        result = self._mirror(number, MirrorEdit(claim, self.agent, session=self.session))
        shown = mirror_of(result) if result is not None else None
        return None if shown == claim else Held("", shown)

    def _options(self) -> str:
        return f"--agent {self.agent}" + (f" --session {self.session}" if self.session else "")

    def _mirror(self, number: int, edit: MirrorEdit) -> Any:
        """The claim shown in the child's body (GitHub); the checkpoint as written, or None."""
        from ghstate.errors import GhstateError

        try:
            return write_task(self.app, number, Intent(task=TaskEdit(mirror=edit)), agent=self.agent,
                              session=self.session, event="claim").checkpoint
        except GhstateError as exc:
            if self.in_body:
                raise
            self.warnings.append(f"the claim holds, but showing it in #{number}'s body failed ({exc})")
            return None


def _child_task(app: App, tasks: Any, number: int) -> Any:
    """The child ``number`` as read, refused when it is no child task of ghstate's: claims and ``done`` are for
    the children ``split`` made (their marker says which parent and phase), or a sub-issue of this repository
    that carries ghstate's label (a checkpoint a person put under a plan); a person's sub-issue of their own
    epic is theirs, never closed or claimed. Closing a plan with open children is ``ghstate close``'s, asked."""
    read = tasks.read_child(number)
    labelled = read.parent is not None and app.settings.policy.label in getattr(read, "labels", ())
    if read.split_from is None and not labelled:
        what = (f"a sub-issue of {app.label(read.parent)} that no 'ghstate split' made (without the "
                f"'{app.settings.policy.label}' label)" if read.parent is not None else "not a child task")
        raise InputError(f"{app.label(number)} is {what}: claim, release and done take a child that 'ghstate "
                         "split' made ('ghstate ready PARENT' lists them)")
    return read


def run_claim(app: App, request: ClaimRequest) -> Outcome:
    request.check()
    claimer = _Claimer(app, request.agent, request.session, request.lease)
    if request.child is not None:
        read = _child_task(app, claimer.tasks, request.child)
        child = read.child
        why = _not_offered(app, read)
        if why:
            raise NothingReady(f"{app.label(child.number)} {why}: nothing to claim there")
        claim, holder = claimer.take(child)
        if claim is None:
            show_claims(app, (child,))  # the holder's claim, shown to people if its body did not say it
            raise _held_by(app, child.number, holder)
        return _won(app, claimer, child, claim, held_before=child.claim)
    stored, cp = app.find(request.next)
    family = family_of(app, stored.number, cp)._replace(closed=stored.state == "closed")
    return claim_next(app, claimer, family, cp.title)


def _not_offered(app: App, read: Any) -> str:
    """Why a child as read may not be claimed ("": it may): closed, waiting, or of a plan that is closed."""
    child = read.child
    if not child.open:
        return "is closed"
    if child.blocked_by or child.blocked_elsewhere:
        return "waits for " + child.waits_for(app.label)
    if read.parent_closed:
        return f"is a child of {app.label(read.split_from or read.parent)}, which is closed"
    return ""


def claim_next(app: App, claimer: _Claimer, family: Family, title: str = "", first: tuple[Child, ...] = ()) -> Outcome:
    """The first ready child (``first`` before the others; a child this holder, the agent in its session, holds
    already comes back to it, renewed); if another holder wins it meanwhile, the next."""
    now = claims_now(app)
    mine = [c for c in family.children if c.open and not c.moved and c.claim is not None
            and c.claim.held_by(claimer.agent, claimer.session) and c.claim.live(now)]
    ready = {c.number: c for c in family.offered(now)}
    wanted = [c.number for c in mine] + [c.number for c in first if c.number in ready] + list(ready)
    seen = {c.number: c for c in family.children}
    for number in dict.fromkeys(wanted):
        claim, holder = claimer.take(seen[number])
        if claim is not None:
            won = _won(app, claimer, seen[number], claim, held_before=seen[number].claim)
            won.said += show_claims(app, _untried(family, wanted))
            sweep(app, family.children)
            return won
        seen[number] = seen[number]._replace(claim=holder)  # another agent won it meanwhile
    show_claims(app, _untried(family, wanted))
    sweep(app, family.children)
    raise NothingReady(nothing_ready(app, family._replace(children=tuple(seen.values())), claims_now(app), title))


def _untried(family: Family, tried: list[int]) -> tuple[Child, ...]:
    """The children a claim did not try: what was read of them still holds (a child tried was read again)."""
    return tuple(c for c in family.children if c.number not in tried)


def _won(app: App, claimer: _Claimer, child: Child, claim: Claim, held_before: Claim | None) -> Outcome:
    label = app.label(child.number)
    if held_before is not None and held_before.held_by(claim.agent, claim.session):
        verb = "Renewed"
    elif held_before is not None:
        verb = f"Took over (the lease of {held_before.holder_words()} ended {held_before.end_words()})"
    else:
        verb = "Claimed"
    said = f"{verb} {label} {child.title} for {claim.holder_words()} until {claim.end_words()}"
    return Outcome([f"#{child.number}"], [said], claimer.warnings, child.number, claim)  # as CHILD takes it


def _held_by(app: App, number: int, holder: Claim | None) -> HeldByAnother:
    who = holder.words() if holder is not None else "another agent"
    return HeldByAnother(f"{app.label(number)} is claimed by {who}; claim another (ghstate claim --next PARENT), or "
                         "wait for the lease to end")


# ------------------------------------------------------------------------------------ release


def run_release(app: App, request: ReleaseRequest) -> Outcome:
    request.check()
    tasks = backend(app)
    child = _child_task(app, tasks, request.child).child
    label = app.label(child.number)
    held = child.held
    now = claims_now(app)
    if held.claim is None:
        return Outcome([f"{label} is not claimed: nothing to release."],
                       data={"number": child.number, "released": None})
    if not held.claim.held_by(request.agent, request.session) and held.claim.live(now) and not request.force:
        raise HeldByAnother(f"{label} is claimed by {held.claim.words()}, not by "
                            f"{_who(request.agent, request.session) if request.agent else 'you'}: only the holder "
                            f"releases it{_same_agent(held.claim, request.agent)} (or --force)")
    released = {"number": child.number, "released": held.claim.agent, "released_session": held.claim.session or None}
    outcome = Outcome(data=released)
    interrupt.note(f"whether {label} was released could not be told: 'ghstate release {child.number}' again says")
    if _free(app, tasks, child, held, request.agent, outcome, force=request.force, session=request.session):
        outcome.out.append(f"Released {label} (claimed by {held.claim.words()}).")
    else:
        outcome.out.append(f"{label} was not released: it was claimed again meanwhile.")
        outcome.data.update(released=None, released_session=None)
    return outcome


def _free(app: App, tasks: Any, child: Child, held: Held, agent: str, outcome: Outcome, *, force: bool,
          again: str = "release", session: str = "") -> bool:
    """Take the claim ``held`` away (the ref, the body's mirror); a race lost is said, not raised: False then
    (the claim another holder made meanwhile stands). ``again``: the command that finds out, when whether it
    was taken away cannot be told."""
    from ghstate.github.tasks import Untold

    try:
        found = tasks.swap(child.number, held, None, agent)
    except Untold as exc:
        raise RemoteError(f"{exc}; run 'ghstate {again} {child.number}' again to find out: it does what is left",
                          retryable=True) from None
    if found is not None and found.claim is not None:
        outcome.warnings.append(f"{app.label(child.number)} was claimed again meanwhile, by {found.claim.words()}; "
                                "that claim stands")
        return False
    if tasks.remote and (held.claim is not None):
        from ghstate.errors import GhstateError

        edit = MirrorEdit(None, agent, force=True, session=session)
        try:
            write_task(app, child.number, Intent(task=TaskEdit(mirror=edit)), agent=agent, session=session,
                       event="release")
        except GhstateError as exc:
            if not held.version:  # no ref: the body's line was all there was to free, and it is still there
                raise RemoteError(f"{app.label(child.number)} was not released: its body still shows the claim of "
                                  f"{held.claim.words()} ({exc}); run 'ghstate {again} {child.number}' again",
                                  retryable=True) from None
            outcome.warnings.append(f"released, but the claim still shows in {app.label(child.number)}'s body ({exc})")
    return True


# ------------------------------------------------------------------------------------ done


def run_done(app: App, request: DoneRequest) -> Outcome:
    """Close the child as completed, tick its phase in the parent it was split from, release its claim, and say
    which children that unblocked; ``claim_next``: then claim one of them (the report on stderr, the claimed
    ``#N`` alone on stdout; with nothing ready, the report and the failure)."""
    request.check()
    tasks = backend(app)
    read = _child_task(app, tasks, request.child)
    child, now = read.child, claims_now(app)
    holder = child.claim
    if holder is not None and not holder.held_by(request.agent, request.session) and holder.live(now) \
            and not request.force:
        if not request.agent:  # as release: only the holder finishes it, and a nameless done is no one's
            raise HeldByAnother(f"{app.label(child.number)} is claimed by {holder.words()}: give {_as_holder(holder)} "
                                f"if you are that {'session' if holder.session else 'agent'}, or --force to finish it "
                                "anyway")
        raise HeldByAnother(f"{app.label(child.number)} is claimed by {holder.words()}, not by "
                            f"{_who(request.agent, request.session)}: only its holder finishes it"
                            f"{_same_agent(holder, request.agent)}; --force finishes it anyway")
    home = read.split_from or read.parent  # the plan it is a phase of, wherever a person moved it since
    before, parent_cp = Family(home), None
    if home is not None:
        _, parent_cp = app.find(home)
        before = family_of(app, home, parent_cp)
    interrupt.note(f"'ghstate done {child.number}' stopped before it finished: run it again, it does only what "
                   "is left")
    _close(app, tasks, child, now)
    report = [f"Closed {app.label(child.number)} {child.title} as completed"
              f"{'' if child.open else ' (it was closed already)'}."]
    if parent_cp is not None:
        report += _tick(app, read, home, parent_cp, request.agent)
    freeing, released = Outcome(), None
    if holder is not None:
        if _free(app, tasks, child, child.held, request.agent or holder.agent, freeing, force=True, again="done",
                 session=request.session if request.agent else holder.session):
            released = holder
            report.append(f"Released the claim of {holder.holder_words()}.")
        else:
            report.append("Released no claim: it was claimed again meanwhile (see the warning).")
    warnings = freeing.warnings
    freed = _freed(app, before, child, now, report)
    if not (request.claim_next and home is not None):
        outcome = Outcome(report, show_claims(app, before.children, skip=child.number), warnings)
    else:
        outcome = _then_claim(app, request, before, child, freed, parent_cp, report, warnings)
    sweep(app, (*before.children, child._replace(open=False)))
    outcome.data = {"number": child.number, "parent": home, "released": released.agent if released else None,
                    "released_session": (released.session or None) if released else None,
                    "unblocked": [c.number for c in freed]}
    return outcome


def _tick(app: App, read: Any, home: int, parent_cp: Checkpoint, agent: str) -> list[str]:
    """Tick the child's phase in ``home``, the parent it was split from; said when GitHub's parent differs."""
    index = child_phase(parent_cp.phases, read.child)
    if index is None:
        return [f"No phase of {app.label(home)} is {read.child.title} any more: nothing ticked there."]
    result = write_task(app, home, Intent(edits=Edits(done=(parent_cp.phases[index].name,))), agent=agent,
                        event="done")
    line = f"Ticked its phase in {app.label(home)}"
    if app.store.remote and read.parent != home:
        now = f"a sub-issue of {app.label(read.parent)}" if read.parent else "no sub-issue of any issue"
        line += f", which it was split from (on GitHub it is {now} now)"
    return [line + ("" if result.changed else " (it was ticked already)") + "."]


def _freed(app: App, before: Family, child: Child, now: datetime, report: list[str]) -> tuple[Child, ...]:
    """The children the done unblocked (a done again, after an interruption: the ready ones), said."""
    if child.open:
        freed, said = unblocked_by(before.children, child.number, now), "Unblocked"
    else:  # done again (after an interruption): what waited for it is no longer told apart from the others
        freed, said = ready_of(before.children, now), "Ready now"
    report.append(f"{said}: " + ("; ".join(f"{app.label(c.number)} {c.title}" for c in freed) if freed
                                 else "nothing"))
    return freed


def _then_claim(app: App, request: DoneRequest, before: Family, child: Child, freed: tuple[Child, ...],
                parent_cp: Any, report: list[str], warnings: list[str]) -> Outcome:
    """``done --claim-next``: the report for a person (stderr), then the claimed ``#N`` alone (stdout); with
    nothing ready, the report and that failure (exit 3)."""
    claimer = _Claimer(app, request.agent, request.session, request.lease)
    after = before._replace(children=tuple(
        c._replace(blocked_by=tuple(n for n in c.blocked_by if n != child.number),
                   open=c.open and c.number != child.number) for c in before.children))
    try:
        more = claim_next(app, claimer, after, parent_cp.title if parent_cp else "", first=freed)
    except NothingReady as exc:
        return Outcome([], report, warnings + claimer.warnings, failure=exc)
    return Outcome(more.out, report + more.said, warnings + more.warnings, more.claimed, more.claim)


def _close(app: App, tasks: Any, child: Child, now: datetime) -> None:
    """Close the child: on GitHub the issue (as completed); locally the closing time in its marker, then
    the file moved to ``closed/`` as ``ghstate close`` does. Each step only if not done yet."""
    if tasks.remote:
        if child.open:
            tasks.close(child.number)
        return
    from ghstate.core.claims import stamp

    if child.open:
        write_task(app, child.number, Intent(task=TaskEdit(closed=stamp(now))), event="done")
    app.store.close(app.store.get(child.number))
