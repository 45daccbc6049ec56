"""The checkpoint as data: immutable values with no I/O.

A checkpoint is one task. Its body is the durable record; this module is what the body means. Text
fields keep the markdown a person wrote (inline markup, nested lists) so that rendering a parsed body
loses no words. Everything derived (phase status, next phase, plain file paths) is computed here, never
stored. The values are NamedTuples rather than frozen dataclasses because ghstate runs inside agent
loops and hooks: a dataclass costs about a millisecond to create at import, a NamedTuple a tenth of that.
"""


import collections
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.marker import Execution, Meta
from ghstate.core.sections import LISTS, TEXTS
from ghstate.core.sections import SECTIONS as _TABLE

if TYPE_CHECKING:
    from datetime import datetime

    # pragma: no cover
    from ghstate.core.verification import Verification

# Section keys in canonical order, with the canonical heading and the accepted aliases: the table's
# (``core.sections``), in the shapes the rest of the core reads.
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple((s.key, s.heading, s.aliases) for s in _TABLE)
SECTION_KEYS: tuple[str, ...] = tuple(key for key, _, _ in SECTIONS)
HEADINGS: dict[str, str] = {key: heading for key, heading, _ in SECTIONS}
LIST_SECTIONS = LISTS
TEXT_SECTIONS = TEXTS

ALIASES: dict[str, str] = {}
for _key, _heading, _aliases in SECTIONS:
    for _name in (_heading.lower(), *_aliases):
        ALIASES[_name] = _key

GITHUB_LIMIT = 65_536  # characters GitHub accepts in an issue body or a comment
DEFAULT_MAX_BODY = 60_000  # the largest body ghstate writes to GitHub, unless configured otherwise
MAX_SESSION = 128  # characters of a session's id (a host's is a UUID): it names a holder of claims, it is no text

_BLOCKED = re.compile(r"\((?:blocked|BLOCKED|Blocked)\b[^)]*\)|\bBLOCKED\b|🚫")
_IN_PROGRESS = re.compile(r"\((?:in progress|in-progress|wip|WIP)\b[^)]*\)", re.IGNORECASE)


def github_time(value: str) -> "datetime | None":
    """A time as GitHub writes it (``2026-11-22T08:00:00Z``), in UTC; None when it is not one."""
    from datetime import datetime, timezone

    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return None




# Words that say which section a heading ghstate does not know was meant as (``## Decision``, ``## Next steps``,
# ``## Risks and mitigations``): such a section is kept as written, but no prompt places its items. Each
# section's ``meant`` words; no word of one section starts another's, so the table's order does not matter.
_MEANT = tuple((s.key, s.meant) for s in _TABLE)


_QUALIFIERS = r"(?:key|main|open|current|remaining|known|locked|unresolved|outstanding|the|our|my)"


def meant_section(heading_text: str) -> str | None:
    """The known section an unknown heading looks meant as (it starts with the section's word: ``Decision``,
    ``Key decisions``, ``Next steps``), or None (a person's own: ``Notes from Bob``, ``Release plan``)."""
    if section_key(heading_text) is not None:
        return None
    text = re.sub(r"[*_`]", "", heading_text).strip().lower()
    return next((key for key, words in _MEANT if re.match(rf"(?:{_QUALIFIERS}\s+)?(?:{words})\b", text)), None)


def section_key(heading_text: str) -> str | None:
    """Map a heading as written (any case, trailing colon, light emphasis) to a section key."""
    text = re.sub(r"[*_`]", "", heading_text).strip().rstrip(":").strip().lower()
    return ALIASES.get(" ".join(text.split()))


class Step(NamedTuple):
    """A sub-step of a phase. ``done`` is None for a plain bullet that is not a checkbox."""

    text: str
    done: bool | None = False


class Phase(NamedTuple):
    name: str
    done: bool = False
    steps: tuple[Step, ...] = ()
    detail: str = ""  # other markdown a person wrote inside the phase item, kept verbatim

    @property
    def status(self) -> str:
        if self.done:
            return "done"
        if _BLOCKED.search(self.name):
            return "blocked"
        if _IN_PROGRESS.search(self.name) or any(s.done for s in self.steps):
            return "in_progress"
        return "pending"

    @property
    def label(self) -> str:
        """The leading label of the name: ``Phase 2`` of ``Phase 2: matcher abstraction``."""
        head, sep, _ = self.name.partition(":")
        return head.strip() if sep else self.name.strip()


CONCURRENT = "(concurrent edit)"  # a heading's end when a merge keeps the other side's value beside ours


def concurrent(heading: str) -> str:
    """The heading of the other side's value kept beside ``heading``'s when both changed it."""
    return f"{heading} {CONCURRENT}"


def concurrent_values(cp: "Checkpoint", key: str) -> list[str]:
    """The values of section ``key`` kept beside its own by a merge (both sides changed it), for a person to
    settle: the prompt shows them with the value, and lint asks for one."""
    heading = concurrent(HEADINGS.get(key, key))
    return [e.body for e in cp.extra if e.heading == heading and e.body.strip()]


def without_status_marks(name: str, blocked: bool, in_progress: bool) -> str:
    """A phase's name without the marks that say it is blocked (``(blocked by infra)``, ``BLOCKED``) or in
    progress (``(in progress)``), as a state that sets its status another way asks: the rest as written."""
    for mark, drop in ((_BLOCKED, blocked), (_IN_PROGRESS, in_progress)):
        if drop:
            name = mark.sub("", name)
    return " ".join(name.split()) if name.strip() else name


class Extra(NamedTuple):
    """Markdown that is not one of the known sections, kept verbatim and in place.

    ``heading`` None means text without a heading of its own: the preamble before the first section
    (``after`` None), or text inside a known section that parse could not place (``after`` that key).
    ``after`` names the known section this block follows; None puts it before all of them.
    """

    heading: str | None
    body: str
    level: int = 2
    after: str | None = None


# The checkpoint's fields: its title, then one per section of the table in the table's order (a text section
# holds its markdown, a str; the checklist a tuple of Phase; a list a tuple of its item texts as written: see
# file_paths_of() for the files' plain paths, runtime_entry() for a runtime check), then what the marker keeps:
# CI's structured result (``verification_data``: a Verification or None), the sections ghstate does not know
# (``extra``), the executions and the meta. A namedtuple built from the table, so that a new section is a field.
_CheckpointFields = collections.namedtuple(
    "_CheckpointFields", ["title", *(s.key for s in _TABLE), "verification_data", "extra", "executions", "meta"],
    defaults=["", *("" if s.kind == "text" else () for s in _TABLE), None, (), (), Meta()])


class Checkpoint(_CheckpointFields):
    __slots__ = ()
    title: str
    goal: str
    phases: tuple[Phase, ...]
    resume: str
    verification: str
    verification_data: "Verification | None"
    extra: tuple[Extra, ...]
    executions: tuple[Execution, ...]
    meta: Meta

    @property
    def next_phase(self) -> Phase | None:
        return next((p for p in self.phases if not p.done), None)

    @property
    def file_paths(self) -> list[str]:
        return [path for item in self.files for path in file_paths_of(item)]

    def with_meta(self, **changes: Any) -> "Checkpoint":
        return self._replace(meta=self.meta._replace(**changes))


def section_content(cp: Checkpoint, key: str) -> tuple[Any, tuple[str, ...]]:
    """What a section holds: its value and the loose text parse kept inside it."""
    return getattr(cp, key), tuple(e.body for e in cp.extra if e.heading is None and e.after == key)


def rendering_order(extra: Extra) -> tuple[int, bool]:
    """Where an extra stands in a canonical body: after its section (the preamble first), and text
    without a heading right after the section, before unknown sections anchored there."""
    return (-1 if extra.after is None else SECTION_KEYS.index(extra.after), extra.heading is not None)


def is_standalone(extra: Extra) -> bool:
    """An unknown section, or the preamble: text between sections, not loose text inside one."""
    return extra.heading is not None or extra.after is None


def extra_key(heading: str | None) -> str:
    """The digest key of an unknown section (by its heading), or of the preamble (heading None)."""
    if heading is None:
        return "preamble"
    return "x:" + hashlib.sha1(heading.encode("utf-8")).hexdigest()[:6]


def standalone_extras(cp: Checkpoint, key: str) -> list[Extra]:
    """The unknown sections of one heading (``key`` from extra_key), or the preamble ("preamble")."""
    return [e for e in cp.extra if is_standalone(e) and extra_key(e.heading) == key]


def section_digest(cp: Checkpoint, key: str) -> str:
    """A short digest of a section's content ("" when it is absent or empty): a known section (with
    the loose text inside it, and CI's data for Verification), the title, the preamble, or the unknown
    sections of one heading. Two edits of a checkpoint are told apart section by section with it."""
    value: Any
    if key == "title":
        value = cp.title
    elif key == "preamble":
        value = [e.body for e in standalone_extras(cp, key)]
    elif key.startswith("x:"):
        value = [[e.level, e.body] for e in standalone_extras(cp, key)]
    else:
        own, loose = section_content(cp, key)
        data = cp.verification_data.to_dict() if key == "verification" and cp.verification_data else None
        value = [own, loose, data] if own or loose or data else None
    if not value:
        return ""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:8]


def digest_keys(cp: Checkpoint) -> list[str]:
    headings = dict.fromkeys(extra_key(e.heading) for e in cp.extra if e.heading is not None)
    return ["title", *SECTION_KEYS, "preamble", *headings]


def section_digests(cp: Checkpoint) -> dict[str, str]:
    return {key: d for key in digest_keys(cp) if (d := section_digest(cp, key))}


def with_digests(cp: Checkpoint, digests: dict[str, str] | None = None) -> Checkpoint:
    """``cp`` whose marker carries ``digests`` (default: those of what ``cp`` holds now)."""
    return cp.with_meta(digests=section_digests(cp) if digests is None else digests)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def file_paths_of(item: str) -> list[str]:
    """The plain paths an item of "Files to re-read" names, however it was written.

    `` `src/a.py` — the parser`` → ``src/a.py``; `` `src/b.py`, `src/c.py` `` → both;
    ``[parser](src/a.py)`` → ``src/a.py``; ``src/a.py (tests too)`` → ``src/a.py``. A path with a space is a code
    span of its own (`` `my docs/read me.md` ``, as ghstate writes a path): a span with a space is a command
    (`` `npm test` ``) beside one without, and a path where none has none and it is the whole line or looks like
    one (a ``/`` or a ``.``). Text that names no path-like token comes back whole, as one entry.
    """
    first_line = item.split("\n", 1)[0].strip()
    found = [m for m in _CODE_SPAN.finditer(first_line) if m.group(2).strip()]
    spans = [m.group(2).strip() for m in found if " " not in m.group(2).strip()]
    if spans:
        return spans
    whole = len(found) == 1 and found[0].group(0) == first_line
    spaced = [m.group(2).strip() for m in found if whole or "/" in m.group(2) or "." in m.group(2)]
    if spaced:
        return spaced
    links = []
    for m in _LINK.finditer(first_line):
        target = m.group(2)
        links.append(target if "://" not in target else (m.group(1).strip() or target))
    if links:
        return links
    token = first_line.split()[0] if first_line.split() else first_line
    token = token.strip("*_\"'<>,;`")
    if "/" in token or "." in token:
        return [token]
    return [first_line]


def names_no_path(item: str) -> str:
    """The text of a "Files to re-read" item that names no path (prose, a command), or "" when it names one."""
    named = file_paths_of(item)
    spans = {m.group(2).strip() for m in _CODE_SPAN.finditer(item)}
    return named[0] if len(named) == 1 and " " in named[0] and named[0] not in spans else ""


def runtime_status(statuses: list[str] | None, index: int) -> str:
    """What the probe of the ``index``-th Runtime item found, or "not checked" when it was not run."""
    return statuses[index] if statuses and index < len(statuses) else "not checked"


def runtime_entry(item: str) -> tuple[str, str]:
    """Split a Runtime item ``dev server: http://127.0.0.1:3000/health`` into (name, check)."""
    first_line = item.split("\n", 1)[0].strip()
    name, sep, check = first_line.partition(": ")
    if not sep:
        if first_line.endswith(":"):
            return first_line[:-1].strip(), ""
        return first_line, ""
    return name.strip(), check.strip()


def find_phase(phases: tuple[Phase, ...], ref: str) -> int:
    """Resolve PHASE as the CLI accepts it: full name, leading label, or 1-based index.

    Returns the index, or raises LookupError with a message that lists what exists.
    """
    wanted = " ".join(ref.split()).lower()
    if not wanted:
        raise LookupError("empty phase reference")
    exact = [i for i, p in enumerate(phases) if " ".join(p.name.split()).lower() == wanted]
    if len(exact) == 1:  # the full name first, as the CONTRACT orders them: a phase named "2" before the 2nd
        return exact[0]
    if wanted.isdigit():
        index = int(wanted) - 1
        if 0 <= index < len(phases):
            return index
    labelled = [i for i, p in enumerate(phases) if p.label.lower() == wanted]
    if len(labelled) == 1:
        return labelled[0]
    at_word_end = re.compile(re.escape(wanted) + r"(?!\w)")  # "Phase 2" is not a prefix of "Phase 20"
    prefixed = [i for i, p in enumerate(phases) if at_word_end.match(" ".join(p.name.split()).lower())]
    if len(prefixed) == 1:
        return prefixed[0]
    candidates = exact or labelled or prefixed
    if candidates:
        names = "; ".join(f"{i + 1}. {phases[i].name}" for i in candidates)
        raise LookupError(f"phase {ref!r} is ambiguous: {names}")
    if not phases:
        raise LookupError(f"no phase {ref!r}: the checkpoint has no phases yet (add one with --phase)")
    listing = "; ".join(f"{i + 1}. {p.name}" for i, p in enumerate(phases))
    raise LookupError(f"no phase {ref!r}; phases are: {listing}")


class WorkTree(NamedTuple):
    """What the working tree looks like now."""

    branch: str = ""  # "" when HEAD is detached or there is no repository
    commit: str = ""
    dirty: tuple[str, ...] = ()  # changed, staged or untracked paths

    @property
    def place(self) -> str:
        """Where a checkpoint of this tree belongs, in words, for messages."""
        if self.branch:
            return f"branch {self.branch}"
        return "this detached HEAD" if self.commit else "this folder (no git branch)"


class Changes(NamedTuple):
    """What happened between a recorded commit and the working tree now."""

    commit_known: bool = True
    commits_since: int = 0
    commits_dropped: int = 0  # commits of the recorded one that HEAD no longer contains (rebase, reset)
    changed_files: tuple[str, ...] = ()


class Revision(NamedTuple):
    """One write to a checkpoint, as ``log`` shows it: who wrote it, when, and what changed."""

    revision: int
    at: str = ""
    agent: str = ""
    role: str = ""
    session: str = ""
    event: str = "checkpoint"
    changes: tuple[str, ...] = ()
    author: str = ""  # the GitHub login that posted it, when read from GitHub

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"revision": self.revision, "at": self.at, "event": self.event,
                                "changes": list(self.changes)}
        for key in ("agent", "role", "session", "author"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Revision":
        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        revision = data.get("revision")
        changes = data.get("changes")
        return cls(
            revision=revision if isinstance(revision, int) and not isinstance(revision, bool) else 0,
            at=text("at"), agent=text("agent"), role=text("role"), session=text("session"),
            event=text("event") or "checkpoint",
            changes=tuple(c for c in changes if isinstance(c, str)) if isinstance(changes, list) else (),
            author=text("author"),
        )
