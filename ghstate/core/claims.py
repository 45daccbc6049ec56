"""Who holds a child task, until when, and what state each child is in: leases, claim records, the
mirror a person reads in the child's body, and the roll-up of a parent's children.

Pure: every time is given (``now``), never read from a clock. A claim is live from its start while ``now`` is
before its end: its start is when it was dated (on GitHub the date GitHub gave the commit its ref points at,
else its record's ``at``), its end that start and the lease's length (``until`` less ``at``, at most the
longest lease ghstate grants). A claim dated more than ``MARGIN`` after ``now`` is refused (a clock running
fast, or a record typed by hand): it is no claim. On GitHub ``now`` is GitHub's clock (the ``Date`` of its
latest answer), so that leases hold whatever each machine's clock says; on the local store it is this
machine's. Where a claim is kept (a Git ref's commit on GitHub, a file of the local store, the child's body
when refs cannot be written) is the stores' business; what it says is this record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from ghstate.core.markup import code_span
from ghstate.core.model import Checkpoint, Extra, github_time

STATES = ("ready", "claimed", "blocked", "done")
CLAIMS_PREFIX = "refs/ghstate/claims/"  # on GitHub, a child's claim is the ref of its number here
DEFAULT_LEASE = "30m"
MAX_LEASE = timedelta(days=7)
# How far after GitHub's now a claim may be dated and still be one: GitHub's clock as one answer's Date gives
# it (whole seconds) and as it dated a commit a moment earlier may disagree by a second; more is a claim
# dated in the future, refused
MARGIN = timedelta(seconds=60)
_DURATION = re.compile(r"([1-9][0-9]{0,6})\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIRROR = "<!-- ghstate:claim "  # the first line of the mirror in a child's body: its record, hidden
# The mirror where ghstate writes it, the body's own place: its first lines (after the hidden marker), the
# record on one line and the line people read. A record anywhere else is a person's text, never a claim.
_OWN_PLACE = re.compile(r"\A\s*<!--\s*ghstate:claim\s+(\{[^\n]*?\})\s*-->[ \t]*(?:\r?\n> \*\*Claimed\*\*[^\n]*)?")
_V1_MARKER = re.compile(r"\A\s*<!--\s*ghstate:v1\b[^\n]*?-->[ \t]*(?:\r?\n|\Z)")


def lease_of(text: str) -> timedelta:
    """``90s``, ``30m``, ``2h`` or ``1d`` as a duration; ValueError for anything else or beyond 7 days."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not match:
        raise ValueError(f"{text!r} is not a duration such as 90s, 30m, 2h or 1d")
    lease = timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    if lease > MAX_LEASE:
        raise ValueError(f"{text!r} is longer than the longest lease ({MAX_LEASE.days} days)")
    return lease


def stamp(when: datetime) -> str:
    """A time as GitHub writes it, in UTC, to the second."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Claim(NamedTuple):
    """One agent's hold on a child: who (``agent``, in ``session``), since (``at``) and until (``until``),
    times as GitHub writes them. ``issue``: the child it is on."""

    agent: str
    until: str
    at: str = ""
    session: str = ""
    issue: int = 0
    dated: str = ""  # when GitHub dated it: the committer date of the commit its ref points at (no part of the record)

    def span(self) -> tuple[datetime, datetime] | None:
        """When the lease starts and ends as GitHub's clock measures it: from ``dated`` (else ``at``), for as long
        as it was taken (``until`` less ``at``), never longer than the longest lease ghstate grants, so that a
        record typed into a body holds a week at most. None: it says no time to measure from."""
        start, end, dated = github_time(self.at), github_time(self.until), github_time(self.dated)
        begin = dated or start
        if begin is None or end is None:
            return None
        length = end - start if start is not None else end - begin
        return begin, begin + min(max(length, timedelta(0)), MAX_LEASE)

    def live(self, now: datetime) -> bool:
        """Whether it holds at ``now``: started (a claim dated more than ``MARGIN`` after ``now`` is refused) and
        not ended."""
        span = self.span()
        return span is not None and span[0] <= now + MARGIN and now < span[1]

    def future(self, now: datetime) -> bool:
        """Dated more than ``MARGIN`` after ``now``: no claim (a fast clock wrote it, or a hand)."""
        span = self.span()
        return span is not None and span[0] > now + MARGIN

    def record(self) -> dict[str, Any]:
        """What it says, apart from when GitHub dated it: two reads of one claim compare equal by it."""
        return self.to_data()

    def held_by(self, agent: str, session: str) -> bool:
        """Whether this is the claim of ``agent`` in ``session``: a holder is both (two sessions of one agent
        name, two Claude Code windows say, are two holders; a claim without a session is the agent's alone)."""
        return self.agent == agent and self.session == session

    def holder_words(self) -> str:
        """``agent-a (session s-1)``: who holds it."""
        return f"{self.agent}{f' (session {self.session})' if self.session else ''}"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"agent": self.agent, "until": self.until, "at": self.at}
        if self.session:
            data["session"] = self.session
        if self.issue:
            data["issue"] = self.issue
        return data

    @classmethod
    def from_data(cls, data: Any) -> Claim | None:
        if not isinstance(data, dict) or not isinstance(data.get("agent"), str) or not data["agent"] or \
                github_time(str(data.get("until") or "")) is None:
            return None
        issue = data.get("issue")
        return cls(data["agent"], data["until"], str(data.get("at") or ""), str(data.get("session") or ""),
                   issue if isinstance(issue, int) and not isinstance(issue, bool) and issue > 0 else 0)

    def message(self) -> str:
        """The message of the commit a claim ref points at: a line for people, then the record."""
        return (f"ghstate claim of #{self.issue} by {self.agent} until {self.until}\n\n"
                + json.dumps(self.to_data(), ensure_ascii=False, sort_keys=True) + "\n")

    @classmethod
    def from_message(cls, message: str) -> Claim | None:
        """The record in a claim commit's message (None when it holds none: not ghstate's)."""
        for line in reversed((message or "").splitlines()):
            if line.startswith("{"):
                try:
                    return cls.from_data(json.loads(line))
                except ValueError:
                    return None
        return None

    def ends(self) -> str:
        """When its lease ends, as GitHub writes a time: ``until`` as measured (``span``)."""
        span = self.span()
        return stamp(span[1]) if span is not None else self.until

    def end_words(self) -> str:
        """``2026-11-22 08:30 UTC``."""
        span = self.span()
        return span[1].strftime("%Y-%m-%d %H:%M UTC") if span else self.until

    def words(self) -> str:
        """``agent-a (session s-1) until 2026-11-22 08:30 UTC``."""
        return f"{self.holder_words()} until {self.end_words()}"


def claimed(agent: str, session: str, now: datetime, lease: timedelta, issue: int) -> Claim:
    return Claim(agent, stamp(now + lease), stamp(now), session, issue)


# ------------------------------------------------------------------------------- the mirror


def _preamble(cp: Checkpoint) -> Extra | None:
    """The text before a body's first heading (the body's own place for the claim), or None."""
    return next((e for e in cp.extra if e.heading is None and e.after is None), None)


def _record(match: re.Match[str] | None) -> Claim | None:
    if not match:
        return None
    try:
        return Claim.from_data(json.loads(match.group(1)))
    except ValueError:
        return None


def mirror_of(cp: Checkpoint) -> Claim | None:
    """The claim a child's body shows in its own place (its first lines), or None: a record a person pasted
    anywhere else is their text."""
    preamble = _preamble(cp)
    return _record(_OWN_PLACE.match(preamble.body)) if preamble is not None else None


def mirror_in(body: str) -> Claim | None:
    """The claim a raw body shows in its own place, its first lines after the hidden marker (a quick scan, no
    parse): what a parent's read of its children sees."""
    body = body or ""
    marker = _V1_MARKER.match(body)
    return _record(_OWN_PLACE.match(body[marker.end():] if marker else body))


def mirror_text(claim: Claim) -> str:
    record = json.dumps(claim.to_data(), ensure_ascii=False, sort_keys=True).replace("--", "-\\u002d")
    session = f" (session {code_span(claim.session)})" if claim.session else ""
    return (f"{MIRROR}{record} -->\n> **Claimed** by {code_span(claim.agent)}{session} until {claim.end_words()} "
            "(`ghstate claim`; freed by `ghstate release` or `ghstate done`)")


def with_mirror(cp: Checkpoint, claim: Claim | None) -> Checkpoint:
    """``cp`` whose body shows ``claim`` (None: shows none) as its first lines, for people. Only the mirror's own
    lines go: what a person wrote beside it, a record they pasted included, stays."""
    preamble = _preamble(cp)
    found = _OWN_PLACE.match(preamble.body) if preamble is not None else None
    kept = cp.extra
    if preamble is not None and found is not None:
        rest = preamble.body[found.end():].lstrip("\r\n")
        kept = tuple((e._replace(body=rest) if rest.strip() else None) if e is preamble else e for e in cp.extra)
        kept = tuple(e for e in kept if e is not None)
    if claim is None:
        return cp._replace(extra=kept) if kept != cp.extra else cp
    return cp._replace(extra=(Extra(None, mirror_text(claim), 2, None), *kept))


class MirrorEdit(NamedTuple):
    """A claim shown in (or taken from) a child's body. ``claim`` None: the one ``agent`` in ``session``
    shows is taken away. ``force``: whatever the body shows (the claim is decided elsewhere: a Git ref);
    otherwise only when the body shows no claim that is live at the edit's time (``claim.at``) and held by
    another holder: applied in log order, the first of two racing claims stands (the body's own
    compare-and-swap, best effort)."""

    claim: Claim | None
    agent: str = ""
    force: bool = False
    session: str = ""

    def apply(self, cp: Checkpoint) -> Checkpoint:
        shown = mirror_of(cp)
        if self.claim is None:
            if shown is not None and (self.force or shown.held_by(self.agent, self.session)):
                return with_mirror(cp, None)
            return cp
        at = github_time(self.claim.at)
        if not self.force and shown is not None and not shown.held_by(self.claim.agent, self.claim.session) and \
                at is not None and shown.live(at):
            return cp
        return with_mirror(cp, self.claim)

    def to_data(self) -> dict[str, Any]:
        data = {"claim": self.claim.to_data() if self.claim else None, "agent": self.agent, "force": self.force}
        return {**data, "session": self.session} if self.session else data

    @classmethod
    def from_data(cls, data: Any) -> MirrorEdit | None:
        if not isinstance(data, dict):
            return None
        return cls(Claim.from_data(data.get("claim")), str(data.get("agent") or ""), data.get("force") is True,
                   str(data.get("session") or ""))


# ------------------------------------------------------------------------------- children


class Child(NamedTuple):
    """A child task as its parent sees it. ``blocked_by``: the children or issues of this repository it waits for
    that are still open, ``blocked_elsewhere`` those of other repositories (``owner/name#N``: a number of theirs
    is no number here); ``phase``: the parent's phase it is (its line links it, or its marker says so).

    ``moved``: the parent's phase line links it, and it was split from this parent, but it is not among the
    parent's children any more (a person moved it on github.com): ``moved_to`` is its parent now (0: none).
    ``shown``: the claim its body shows, where the claim itself is kept elsewhere (``from_ref``: a Git ref);
    people read the body, so the two should agree."""

    number: int
    title: str
    open: bool = True
    blocked_by: tuple[int, ...] = ()
    claim: Claim | None = None
    phase: str = ""
    url: str = ""
    version: str = ""  # what a compare-and-swap of its claim compares (see Held)
    moved: bool = False
    moved_to: int = 0
    shown: Claim | None = None
    from_ref: bool = False
    blocked_elsewhere: tuple[str, ...] = ()

    @property
    def held(self) -> Held:
        return Held(self.version, self.claim)

    def shows_wrong(self, now: datetime) -> bool:
        """Its body shows another claim than the one that holds (the claimer stopped between moving its ref
        and writing the body, or a person edited it), and either of the two is live: worth repairing."""
        if not self.from_ref or not self.open or _same(self.shown, self.claim):
            return False
        return any(c is not None and c.live(now) for c in (self.claim, self.shown))

    def where(self, label: Callable[[int], str], parent: int) -> str:
        """Where a moved child of ``parent`` is now: ``moved to #9``, or ``is no sub-issue of #8 any more``."""
        return f"moved to {label(self.moved_to)}" if self.moved_to else f"is no sub-issue of {label(parent)} any more"

    def state(self, now: datetime) -> str:
        if not self.open:
            return "done"
        if self.claim is not None and self.claim.live(now):
            return "claimed"
        return "blocked" if self.blocked_by or self.blocked_elsewhere else "ready"

    def waits_for(self, label: Callable[[int], str]) -> str:
        """What it waits for, named: ``#2, other/x#31``."""
        return ", ".join([*(label(n) for n in self.blocked_by), *self.blocked_elsewhere])

    def to_json(self, now: datetime) -> dict[str, Any]:
        live = self.claim if self.claim is not None and self.claim.live(now) and self.open else None
        return {"number": self.number, "title": self.title, "state": self.state(now),
                "blocked_by": [*self.blocked_by, *self.blocked_elsewhere], "claimed_by": live.agent if live else None,
                "claimed_session": (live.session or None) if live else None,
                "lease_until": live.ends() if live else None, "phase": self.phase or None, "url": self.url or None,
                "moved": self.moved, "moved_to": (self.moved_to or None) if self.moved else None}


def _same(a: Claim | None, b: Claim | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.record() == b.record())


class Summary(NamedTuple):
    """GitHub's ``subIssuesSummary``: how many children, how many completed."""

    total: int = 0
    completed: int = 0

    @property
    def percent(self) -> int:
        return self.completed * 100 // self.total if self.total else 0


def ready(children: tuple[Child, ...], now: datetime) -> tuple[Child, ...]:
    """The children to offer: ready, and still the parent's (one moved elsewhere is its new parent's)."""
    return tuple(c for c in children if not c.moved and c.state(now) == "ready")


def by_state(children: tuple[Child, ...], now: datetime) -> dict[str, tuple[Child, ...]]:
    """The children still the parent's, by state (the moved ones apart, under "moved")."""
    groups = {state: tuple(c for c in children if not c.moved and c.state(now) == state) for state in STATES}
    return {**groups, "moved": tuple(c for c in children if c.moved)}


def rollup_lines(children: tuple[Child, ...], summary: Summary, now: datetime, label: str = "#") -> list[str]:
    """The children by state, a line each state that has any, for the prompt, ``show`` and the hook. A
    reading writes nothing: a claim the child's body does not show is said, for a command that repairs it."""
    if not children:
        return []
    groups = by_state(children, now)
    done = summary.completed if summary.total else len(groups["done"])
    total = summary.total or sum(len(groups[state]) for state in STATES)
    lines = [f"Sub-tasks: {done} of {total} done ({done * 100 // total if total else 0}%)"]

    def claimed_words(c: Child) -> str:
        unshown = "; its body does not show it yet: 'ghstate ready' shows it" if c.shows_wrong(now) else ""
        return f"{label}{c.number} {c.title} (by {c.claim.words() if c.claim else '?'}{unshown})"

    words = {
        "ready": lambda c: f"{label}{c.number} {c.title}",
        "claimed": claimed_words,
        "blocked": lambda c: f"{label}{c.number} {c.title} (waits for {c.waits_for(lambda n: f'{label}{n}')})",
        "done": lambda c: f"{label}{c.number} {c.title}",
        "moved": lambda c: f"{label}{c.number} {c.title} ("
                           f"{f'to {label}{c.moved_to}' if c.moved_to else 'no sub-issue any more'}"
                           f"{', done' if not c.open else ''})",
    }
    for state in (*STATES, "moved"):
        if groups[state]:
            lines.append(f"{state}: " + "; ".join(words[state](c) for c in groups[state]))
    return lines


def unblocked(before: tuple[Child, ...], closed: int, now: datetime) -> tuple[Child, ...]:
    """The children that waited only for ``closed`` (and are held by nobody): ready once it is closed."""
    out = []
    for child in before:
        if child.open and child.number != closed and child.blocked_by and set(child.blocked_by) <= {closed} \
                and not child.blocked_elsewhere:
            freed = child._replace(blocked_by=())
            if freed.state(now) == "ready":
                out.append(freed)
    return tuple(out)


class Held(NamedTuple):
    """A claim as a store read it: ``version`` is what a compare-and-swap compares (a ref's commit on GitHub,
    a generation on the local store; "0" or "": none yet), ``claim`` the record (None: free)."""

    version: str
    claim: Claim | None


class Family(NamedTuple):
    """A parent and its children, in the parent's order (its phase lines' order, then the others); ``closed``:
    the parent is closed (a person closed the plan with children open)."""

    parent: int
    children: tuple[Child, ...] = ()
    summary: Summary = Summary()
    closed: bool = False  # the parent is closed: the plan is over, none of its children is offered

    def child(self, number: int) -> Child | None:
        return next((c for c in self.children if c.number == number), None)

    def offered(self, now: datetime) -> tuple[Child, ...]:
        """The children to hand out: the ready ones (``ready``), none once the parent is closed."""
        return () if self.closed else ready(self.children, now)


def claim_ref(child: int) -> str:
    """The Git ref that holds ``child``'s claim on GitHub (its commit's message records the claim)."""
    return f"{CLAIMS_PREFIX}{child}"
