"""Writing one checkpoint revision, whoever asks (the CLI's flags, the MCP server's tool): a request
value in, the write's outcome and the lines to say out. No click here."""

from __future__ import annotations

from dataclasses import dataclass, field

from ghstate.core import findings
from ghstate.core.edits import Edits
from ghstate.core.intent import Intent, WriteSpec
from ghstate.core.marker import Execution
from ghstate.core.markup import control_at, describe_control
from ghstate.core.model import Checkpoint
from ghstate.errors import InputError, NotFound
from ghstate.git import gitinfo
from ghstate.services.app import App
from ghstate.services.writer import WriteResult


@dataclass(frozen=True)
class CheckpointRequest:
    """What one checkpoint write asks for, whoever asks (the CLI's flags, the MCP server's tool)."""

    issue: int | None = None
    edits: Edits = field(default_factory=Edits)
    incoming: tuple[Checkpoint, frozenset[str]] | None = None  # a whole body or state, and the sections it names
    force: bool = False
    title: str | None = None
    force_new: bool = False
    dry_run: bool = False
    log: bool = True
    allow_secrets: bool = False
    event: str = "checkpoint"


@dataclass(frozen=True)
class CheckpointOutcome:
    result: WriteResult
    warnings: tuple[str, ...]
    label: str  # "#24" or "local #3"
    location: str  # the issue URL, or the local path as a person would type it

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
    intent = Intent(edits=request.edits)
    title = request.title
    if request.incoming is not None:
        incoming, present = request.incoming
        intent = Intent(edits=request.edits, incoming=incoming, present=present, force=request.force)
        title = title or incoming.title or None
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
        lookup=not request.force_new,
        create=not reviewing or request.force_new,
        record_tree=not reviewing,
        dry_run=request.dry_run,
        log=request.log,
        allow_secrets=request.allow_secrets,
    )
    try:
        result = app.writer().write(spec)
    except NotFound as exc:
        if not reviewing or request.issue is not None:
            raise
        raise NotFound(f"{exc}; a {settings.role} adds to an existing checkpoint: give its ISSUE number "
                       "(or --new to start one)") from None
    warnings = [*result.warnings, *(f"both sides changed {c}; theirs is kept beside it" for c in result.conflicts)]
    warnings += [f"the file and the checkpoint both changed {c} since the file was made; both are kept"
                 for c in result.file_conflicts]
    warnings += [w for w in [findings.write_warning(result.previous, result.checkpoint)] if w and result.changed]
    stored = result.stored
    if stored is None:  # a dry run
        return CheckpointOutcome(result, tuple(warnings), "", "")
    warnings += app.keep_project(stored, result.checkpoint)
    location = app.where(stored)
    return CheckpointOutcome(result, tuple(warnings), app.label(stored.number), location)


_ONE_LINE = ("--agent", "--role", "--session")
_NOT_EMPTY = ("--done", "--undo", "--phase", "--decision", "--question", "--risk", "--read")


class ChangeError(InputError):
    """A change that cannot be meant (a control character, an empty item, --done and --undo of one phase).
    ``flag`` names the option it came from, or None when it is about two of them."""

    def __init__(self, message: str, flag: str | None = None) -> None:
        super().__init__(message)
        self.flag = flag


def check_changes(values: dict[str, tuple[str | None, ...]]) -> None:
    """Refuse values that cannot be meant, before anything is read or written. Keys are the CLI's flag
    names; the CLI reports a ChangeError as a usage error (exit 2), the MCP server as a tool error."""
    for flag, given in values.items():
        for value in (v for v in given if v is not None):
            at = control_at(value)
            if at >= 0:
                raise ChangeError(f"holds a control character ({describe_control(value, at)}); only tab and "
                                  "newline are text (terminal output?)", flag)
            if flag in _ONE_LINE and ("\n" in value or "\r" in value):
                raise ChangeError("must be one line", flag)
            if flag in _NOT_EMPTY and not value.strip():
                raise ChangeError("is empty", flag)
    both = ({" ".join(x.split()).lower() for x in values.get("--done", ()) if x}
            & {" ".join(x.split()).lower() for x in values.get("--undo", ()) if x})
    if both:
        raise ChangeError(f"--done and --undo both name {sorted(both)[0]!r}; give one of them")
