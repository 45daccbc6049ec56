"""Writing one checkpoint revision, whoever asks (the CLI's flags, the MCP server's tool): a request
value in, the write's outcome and the lines to say out. No click here."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, make_dataclass

from ghstate import progress
from ghstate.core import findings
from ghstate.core.edits import Edits, lacking, removed
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import Execution
from ghstate.core.markup import control_at, not_text
from ghstate.core.model import HEADINGS, MAX_SESSION, Checkpoint
from ghstate.core.sections import PLAIN, SECTIONS
from ghstate.errors import InputError, NotFound
from ghstate.git import gitinfo
from ghstate.services.app import App
from ghstate.services.inputs import check_size, check_text, load_text
from ghstate.services.writer import WriteResult


class RequestError(InputError):
    """A request that cannot be meant (a control character, an empty item, --done and --undo of one phase,
    nothing to write). ``field`` is the field it is about, or None when it is about several; the message
    names fields as ``{field}``, and each front end says them in its own words (``said``): the CLI its
    flags (exit 2), the MCP server its tool's arguments."""

    def __init__(self, template: str, field: str | None = None) -> None:
        self.template = template
        self.field = field
        super().__init__(self.said(lambda name: name))

    def said(self, name: Callable[[str], str]) -> str:
        return re.sub(r"\{([a-z_]+)\}", lambda m: name(m.group(1)), self.template)


class _Request:
    """One checkpoint write, whoever asks: the CLI's flags and the MCP tool's arguments fill these same
    fields, named as both name them; ``check`` refuses what cannot be meant before anything is read."""

    @property
    def edits(self) -> Edits:
        return Edits(title=self.title, goal=self.goal, resume=self.resume, done=self.done, undo=self.undo,
                     phases=self.phase, reads=self.files,
                     **{key: getattr(self, flag) for key, flag in zip(PLAIN, _PLAIN_FLAGS, strict=True)})

    def check(self) -> None:
        """Refuse what cannot be meant, naming the field (RequestError), and a body far larger than any
        checkpoint can be (InputError), before anything is parsed or read."""
        if self.body:
            check_size(self.body, self.source)
        if self.issue is not None and self.new:
            raise RequestError("give either {issue} or {new}, not both")
        if self.issue is None and (self.move or self.adopt):
            raise RequestError("{move} and {adopt} are about the checkpoint an {issue} number names: give it")
        check_values({name: getattr(self, name) for name in TEXT_FIELDS})
        if self.body is None and not self.edits:
            raise RequestError("nothing to write: give {body}, or changes such as {phase}, {done}, {decision}, "
                               "{resume}")

    def incoming(self) -> tuple[Checkpoint, frozenset[str]] | None:
        """The whole checkpoint the body gives, and the sections it names (None without a body)."""
        if self.body is None:
            return None
        return load_text(check_text(self.body, self.source), self.source)


# The plain lists' flags (``--decision``, ...) are the table's (core.sections).
_PLAIN_FLAGS = tuple(s.flag for s in SECTIONS if s.items == "plain")
_TEXTS = "tuple[str, ...]"
# The request's fields, a dataclass made with the table's plain lists among them (each flag a field).
CheckpointRequest = make_dataclass("CheckpointRequest", [
    ("issue", "int | None", None),
    ("body", "str | None", None),  # a whole checkpoint as given: a markdown body or a JSON state
    ("source", "str", "the body"),  # where ``body`` came from, as an error names it ("standard input", a path)
    ("title", "str | None", None),
    ("goal", "str | None", None),
    ("resume", "str | None", None),
    ("done", _TEXTS, ()),
    ("undo", _TEXTS, ()),
    ("phase", _TEXTS, ()),
    *((flag, _TEXTS, ()) for flag in _PLAIN_FLAGS),
    ("files", _TEXTS, ()),
    ("new", "bool", False),  # another checkpoint for this branch, even if it has one
    ("allow_empty", "bool", False),  # a new checkpoint with neither a goal, phases nor a resume instruction
    ("force", "bool", False),  # the body's sections replace the current ones, unmerged
    ("dry_run", "bool", False),
    ("allow_secrets", "bool", False),
    ("move", "bool", False),  # a write by number from another branch makes it this branch's checkpoint
    ("adopt", "bool", False),  # a write by number to an issue that is no checkpoint makes it one
    ("event", "str", "checkpoint"),
], bases=(_Request,), frozen=True, namespace={"__doc__": _Request.__doc__, "__module__": __name__})


# The request's fields that hold text, and those the CLI also takes for the App (who writes): one rule each.
TEXT_FIELDS = ("title", "goal", "resume", "done", "undo", "phase", *_PLAIN_FLAGS, "files")
FIELDS = ("issue", "body", "new", "allow_empty", *TEXT_FIELDS, "agent", "role", "session")
_BOUNDED = {"session": MAX_SESSION}  # a session names a holder of claims: an id, not a text
_ONE_LINE = ("title", "agent", "role", "session")  # a title is an issue title and a line of list
# An empty text given for a field is refused, not written: ``--goal ""`` beside another change emptied the goal
# (an empty ``## Goal`` in a --file is the way to empty it on purpose).
_NOT_EMPTY = ("title", "goal", "resume", "done", "undo", "phase", *_PLAIN_FLAGS, "files")


def check_values(values: dict[str, str | tuple[str, ...] | None]) -> None:
    """Refuse values that cannot be meant, before anything is read or written (keys are field names)."""
    for name, given in values.items():
        for value in (given,) if isinstance(given, str) else (given or ()):
            at = control_at(value)
            if at >= 0:
                raise RequestError(f"holds {not_text(value, at, 'only tab and newline are text (terminal output?)')}",
                                   name)
            if name in _ONE_LINE and ("\n" in value or "\r" in value):
                raise RequestError("must be one line", name)
            if name in _BOUNDED and len(value) > _BOUNDED[name]:
                raise RequestError(f"is {len(value):,} characters long; at most {_BOUNDED[name]} are taken", name)
            if name in _NOT_EMPTY and not value.strip():
                raise RequestError("is empty", name)
    done, undo = values.get("done") or (), values.get("undo") or ()
    both = ({" ".join(x.split()).lower() for x in done if x} & {" ".join(x.split()).lower() for x in undo if x})
    if both:
        raise RequestError(f"{{done}} and {{undo}} both name {sorted(both)[0]!r}; give one of them")


def _intent(request: CheckpointRequest) -> tuple[Intent, str | None]:
    """The request's change as data (a body read and parsed here), and the title it gives."""
    if request.body is not None:
        progress.stage(f"reading {request.source} ({len(request.body):,} characters)")
    given = request.incoming()
    if given is None:
        return Intent(edits=request.edits), request.title
    incoming, present = given
    return (Intent(edits=request.edits, incoming=incoming, present=present, force=request.force),
            request.title or incoming.title or None)


def _file_words(intent: Intent, request: CheckpointRequest, result: WriteResult) -> list[str]:
    """What a --file write did that a person would not see in its summary: a section the file brings that looks
    meant as ghstate's (``## Decision``), kept but placed in no prompt; what --force removed, by name."""
    from ghstate.core.lint import unplaced, unplaced_words

    if intent.incoming is None:
        return []
    had = set(unplaced(result.previous)) if result.previous is not None else set()  # said when they came
    said = [unplaced_words(heading, "the file's") for heading in unplaced(intent.incoming) if heading not in had]
    if request.force and result.previous is not None and result.changed:
        gone = removed(result.previous, result.checkpoint)
        said += [f"--force removed what the file does not hold: {'; '.join(gone)}"] if gone else []
    elif result.previous is not None and _guessed(intent):  # items the file lacks, kept: said, as a removal
        both = {key for key, heading in HEADINGS.items() if heading in result.file_conflicts}  # (said already)
        kept = lacking(intent.incoming, result.checkpoint, intent.present - both)
        were = "it was" if len(kept) == 1 else "they were"
        said += [f"the file has no digests of the checkpoint it was made from, and lacks {'; '.join(kept)}, which "
                 f"the checkpoint holds: kept, as the file may have been made before {were} written (--force "
                 "writes the file's sections as they are)"] if kept else []
    theirs, ours = intent.incoming.meta.id, result.previous.meta.id if result.previous is not None else ""
    if theirs and ours and theirs != ours:  # a draft of another checkpoint (another worktree's, a mistyped number)
        said.append(f"the file's hidden marker is another checkpoint's (id {theirs}, not {ours}): its sections "
                    "were written here all the same")
    for key in ("goal", "resume"):  # a flag's value and the file's for one text: the flag's is written
        given, filed = getattr(request, key), getattr(intent.incoming, key)
        if given is not None and key in intent.present and filed.strip() and filed.strip() != given.strip():
            said.append(f"--{key} replaced the file's {HEADINGS[key].lower()}")
    return said


def _guessed(intent: Intent) -> bool:
    """Whether what a --file was made from is a guess (``edits.base_digests``: the revision it matches best),
    not known: the file carries no digests of the checkpoint's own, and the write read none for it."""
    incoming = intent.incoming
    return incoming is not None and intent.base is None and not (incoming.meta.id and incoming.meta.digests)


NEEDS_SUBSTANCE = ("a new checkpoint needs a goal, phases or a resume instruction: give {goal}, {phase} or "
                   "{resume} (or a {body} that has them), or {allow_empty} to make it without")


def _says_what_to_do(intent: Intent) -> bool:
    """Whether a checkpoint made by ``intent`` alone would have a goal, phases or a resume instruction
    (one that cannot be made from nothing, a tick of a phase, fails as it always did)."""
    try:
        cp = intent.apply(Checkpoint()).checkpoint
    except InputError:
        return True
    return bool(cp.goal.strip() or cp.phases or cp.resume.strip())


@dataclass(frozen=True)
class CheckpointOutcome:
    result: WriteResult
    warnings: tuple[str, ...]
    label: str  # "#24" or "local #3"
    location: str  # the issue URL, or the local path as a person would type it

    @property
    def said(self) -> str:
        """What the write did (with --dry-run: would do), in a word: created, updated or unchanged."""
        if not self.result.changed:
            return "unchanged"
        return "created" if self.result.created else "updated"

    def lines(self) -> list[str]:
        """What the CLI prints after a write (and the MCP tool answers)."""
        result = self.result
        if not result.changed:
            first = f"No changes: {self.label} is up to date (revision {result.checkpoint.meta.revision})."
        else:
            verb = "Created" if result.created else "Updated"
            summary = "; ".join(result.changes)
            first = (f"{verb} checkpoint {self.label} (revision {result.checkpoint.meta.revision})"
                     f"{': ' + summary if summary else ''}")
        return [first, self.location]


def run_checkpoint(app: App, request: CheckpointRequest) -> CheckpointOutcome:
    """Write one revision: the one place where a checkpoint request becomes a WriteSpec and is written."""
    request.check()
    intent, title = _intent(request)
    # A new checkpoint says what the task is: one that would have neither a goal, phases nor a resume
    # instruction is made only when asked for; without them this write may only add to an existing one.
    bare = not request.allow_empty and not _says_what_to_do(intent)
    if bare and request.new:
        raise RequestError(NEEDS_SUBSTANCE)
    settings = app.settings
    tree = app.tree()
    execution = None
    if settings.agent or settings.role or settings.session:
        execution = Execution(agent=settings.agent, role=settings.role or "editor", session=settings.session,
                              event=request.event)
    # A reviewer (or any role but editor) adds to the task; the working tree it records stays the editor's.
    reviewing = (settings.role or "editor") != "editor"
    spec = WriteSpec(
        number=request.issue,
        intent=intent,
        tree=tree,
        fingerprints=gitinfo.fingerprints(settings.root if settings.in_git else None, tree.dirty),
        execution=execution,
        title=title,
        lookup=not request.new,
        create=(not reviewing or request.new) and not bare,
        record_tree=not reviewing,
        dry_run=request.dry_run,
        allow_secrets=request.allow_secrets,
        move=request.move,
        adopt=request.adopt,
    )
    progress.stage("merging and writing the checkpoint" if intent.incoming is not None else "writing the checkpoint")
    try:
        result = app.writer().write(spec)
    except NotFound as exc:
        if bare and not reviewing and str(exc) == f"no open checkpoint for {tree.place}":  # none to add to
            raise RequestError(f"{exc}, and {NEEDS_SUBSTANCE}") from None
        if not reviewing or request.issue is not None:
            raise
        raise NotFound(f"{exc}; a {settings.role} adds to an existing checkpoint: give its ISSUE number "
                       "(or --new to start one)") from None
    warnings = [*result.warnings, *(f"both sides changed {c}; theirs is kept beside it" for c in result.conflicts)]
    unchanged = "" if result.changed else ", so this write changed nothing (--force writes the file's sections)"
    warnings += [f"the file and the checkpoint both changed {c} since the file was made; both are kept{unchanged}"
                 for c in result.file_conflicts]
    warnings += [w for w in [findings.write_warning(result.previous, result.checkpoint)] if w and result.changed]
    warnings += _file_words(intent, request, result)
    stored = result.stored
    if stored is None or spec.dry_run:  # a dry run (of an update, the checkpoint as read): nothing written anywhere
        return CheckpointOutcome(result, tuple(warnings), "", "")
    warnings += app.keep_project(stored, result.checkpoint)
    location = app.where(stored)
    return CheckpointOutcome(result, tuple(warnings), app.label(stored.number), location)
