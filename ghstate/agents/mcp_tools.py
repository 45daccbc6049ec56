"""The MCP server's tools, resource and prompt as plain Python: schemas, argument checks, dispatch.

Each tool runs the code path of its CLI command (same stores, merge, secret refusal and trust rules)
and answers the text the command prints; a failure is an error answer holding the CLI's one
``Error: …`` line. Nothing here imports the MCP SDK (``mcp_server`` does), so tests can call the
tools directly and no other command pays for the SDK.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from ghstate.core.model import MAX_SESSION
from ghstate.core.sections import BY_KEY, RENAMED, SECTIONS
from ghstate.errors import InputError

ISSUE = {"type": "integer", "minimum": 1, "description": "Checkpoint number (default: the current branch's)."}
TEXTS = {"type": "array", "items": {"type": "string"}}
TASK = {"type": "integer", "minimum": 1, "description": "A child task's number."}
AGENT = {"type": "string", "description": "Your agent name (default: the server's --agent)."}
LEASE = {"type": "string", "description": "How long the claim holds: 90s, 30m (default), 2h, 1d."}
SESSION = {"type": "string", "maxLength": MAX_SESSION, "description": "Your session (default: the server's)."}

TOOLS: dict[str, dict[str, Any]] = {
    "resume": {
        "description": (
            "The task's checkpoint as a prompt to continue from: next phase, locked decisions, files to re-read, "
            "the exact resume instruction, drift since. Call it first in a fresh or compacted session."),
        "schema": {"issue": ISSUE, "format": {
            "type": "string", "enum": ["prompt", "short", "json", "markdown"],
            "description": "prompt (default), short, json or markdown (the body as stored)."},
            "budget": {"type": "integer", "minimum": 0, "description": "Fit the prompt into this many characters by "
                       "leaving out the lowest-ranked items whole (default: the project's prompt_budget; 0: no limit "
                       "of its own, as for the CLI). It always fits what this host takes of a tool's answer."}},
        "read_only": True,
    },
    "checkpoint": {
        "description": (
            "Save the task's working state before the context is cleared or at a milestone: tick phases, add "
            "decisions, questions, risks, files to re-read, set the exact resume instruction; or write a whole "
            "body. Creates the branch's checkpoint when it has none. Short items; no transcripts or secrets."),
        "schema": {
            "issue": ISSUE,
            "body": {"type": "string", "description": "A whole checkpoint, markdown or JSON state; only the "
                                                      "sections it has are written."},
            "title": {"type": "string"},
            "goal": {"type": "string"},
            "done": {**TEXTS, "description": "Phases to tick: name, label ('Phase 2') or number."},
            "undo": TEXTS,
            "phase": {**TEXTS, "description": "Phases to add."},
            **{s.flag: {**TEXTS, "description": s.argument} if s.argument else TEXTS  # the table's plain lists
               for s in SECTIONS if s.items == "plain"},
            BY_KEY["files"].flag: {**TEXTS, "description": "Files to re-read."},
            BY_KEY["resume"].flag: {"type": "string", "description": "The exact next action."},
            "new": {"type": "boolean", "description": "Start another checkpoint for this branch."},
            "allow_empty": {"type": "boolean", "description": "Create one without goal, phases or resume."},
            "dry_run": {"type": "boolean"},
            "allow_secrets": {"type": "boolean", "description": "Write even if the text looks like it holds a "
                                                                "credential (as the CLI's --allow-secrets)."},
        },
        "read_only": False,
    },
    "show": {
        "description": "A checkpoint as a person reads it (progress, phases, decisions), or its JSON state.",
        "schema": {"issue": ISSUE, "json": {"type": "boolean"}},
        "read_only": True,
    },
    "lint": {
        "description": ("Check a checkpoint (a number, the branch's, or a body given as text) against the strict "
                        "format: one line per problem with a rule code and line number."),
        "schema": {"issue": ISSUE, "body": {"type": "string", "description": "A checkpoint body to check."}},
        "read_only": True,
    },
    "ready": {
        "description": ("The child tasks of a split plan you may take now (open, waiting for nothing open, held by "
                        "nobody), in the plan's order; json: every child with its state (ready, claimed, blocked, "
                        "done), what it waits for and who holds it until when."),
        "schema": {"issue": {**ISSUE, "description": "The parent checkpoint (default: every one that has children)."},
                   "json": {"type": "boolean"}},
        # not read-only: a child whose body shows another claim than its ref holds gets the ref's line written back
        "read_only": False, "idempotent": True,
    },
    "claim": {
        "description": ("Take a child task before working on it: exactly one of any number of agents wins it. Give "
                        "next (the parent) to get the first ready one, or child; answers its number. Claiming again "
                        "renews. Fails naming the holder and the lease's end when another agent holds it, or when "
                        "nothing is ready."),
        "schema": {"child": {**TASK, "description": "The child task to claim."},
                   "next": {**TASK, "description": "The parent: claim its first ready child."},
                   "agent": AGENT, "lease": LEASE, "session": SESSION},
        "read_only": False, "idempotent": False,
    },
    "release": {
        "description": "Give a claimed child task back without finishing it (only its holder, or force).",
        "schema": {"child": TASK, "agent": AGENT, "session": SESSION, "force": {"type": "boolean"}},
        "read_only": False, "destructive": True,  # deletes the claim's ref
    },
    "done": {
        "description": ("Finish a child task: close it as completed, tick its phase in the parent, release it; "
                        "answers the children it unblocked. claim_next: then claim one of them (or another ready "
                        "one)."),
        "schema": {"child": TASK, "agent": AGENT, "claim_next": {"type": "boolean"}, "lease": LEASE,
                   "session": SESSION, "force": {"type": "boolean",
                                                            "description": "Finish it whoever holds it."}},
        "read_only": False, "destructive": True,  # closes the child's issue, deletes its claim's ref
    },
}

# An argument's earlier name is still taken (a host's instructions an earlier ghstate wrote say it), and listed, so
# that a host that checks arguments against the schema lets it through; the answer is the name's.
TOOLS["checkpoint"]["schema"].update({old: {**TOOLS["checkpoint"]["schema"][new], "description": f"The old name of "
                                            f"{new}: give {new}."} for old, new in RENAMED.items()})

# A state's JSON key given as an argument ("decisions"): the argument that adds to that section ("decision").
_ARGUMENT_OF = {s.key: s.flag.replace("-", "_") for s in SECTIONS if s.flag and s.key != s.flag}

URI = re.compile(r"ghstate://checkpoint/([1-9][0-9]{0,9})")
URI_TEMPLATE = "ghstate://checkpoint/{number}"
PROMPT_DESCRIPTION = ("Continue the task of this branch (or of checkpoint ISSUE) from its ghstate checkpoint: "
                      "the rehydration prompt.")


def input_schema(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": TOOLS[name]["schema"], "additionalProperties": False}


class Answer(NamedTuple):
    text: str
    error: bool = False


def arguments(name: str, given: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's arguments checked against its schema, with one clear message for the first problem."""
    schema = TOOLS[name]["schema"]
    out: dict[str, Any] = {}
    for key, value in (given or {}).items():
        if key not in schema:
            meant = _ARGUMENT_OF.get(key, "") if name == "checkpoint" else ""
            hint = f" (the argument for that is {meant!r})" if meant else ""
            raise InputError(f"{name} takes no argument {key!r}{hint}; it takes "
                             f"{', '.join(k for k in schema if k not in RENAMED)}")
        if value is None:
            continue
        kind = schema[key]["type"]
        if kind == "integer":
            least = schema[key].get("minimum", 1)  # budget: 0 is no limit, as the schema says
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                what = "a checkpoint number (1, 2, …)" if key == "issue" else f"a whole number from {least}"
                raise InputError(f"{name}: {key} must be {what}, not {value!r}")
        elif kind == "boolean":
            if not isinstance(value, bool):
                raise InputError(f"{name}: {key} must be true or false, not {value!r}")
        elif kind == "array":
            value = [value] if isinstance(value, str) else value  # a lone string is one item
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InputError(f"{name}: {key} must be a list of strings")
            value = tuple(value)
        elif not isinstance(value, str):
            raise InputError(f"{name}: {key} must be a string, not {type(value).__name__}")
        elif len(value) > schema[key].get("maxLength", len(value)):
            raise InputError(f"{name}: {key} is {len(value):,} characters long; at most {schema[key]['maxLength']} "
                             "are taken")
        if "enum" in schema[key] and value not in schema[key]["enum"]:
            raise InputError(f"{name}: {key} must be one of {', '.join(schema[key]['enum'])}, not {value!r}")
        out[key] = value
    for old, new in RENAMED.items():  # an earlier name (resume_at) is its name's (resume)
        if old in out:
            if new in out:
                raise InputError(f"{name}: give {new} or {old} (its old name), not both")
            out[new] = out.pop(old)
    return out


# ------------------------------------------------------------------------------------ the tools
# Each takes an App (built per call: a call is one command, with its own GitHub request budget) and
# the checked arguments, and returns the text the CLI would print.


def _resume(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.resume import ResumeRequest, opened_by, rehydrate

    if args.get("budget") is not None and args.get("format") in ("short", "markdown"):  # nothing there to fit
        raise InputError(f"resume: budget fits the prompt (and format json's 'fit'), not format {args['format']}: "
                         "give one of them")
    request = ResumeRequest(issue=args.get("issue"), fmt=args.get("format", "prompt"),
                            budget=answer_budget(app, args.get("budget")))
    app.reads_last_seen = True  # without GitHub: this machine's copy, said
    found = rehydrate(app, request)
    text = found.text()
    return opened_by(app, found.stored) + text if request.fmt == "markdown" else text  # (the body alone else)


def answer_budget(app: Any, given: int | None = None) -> Any:
    """What a prompt this server answers fits: the host's limit on a tool's answer (``limits``, by the server's
    agent), and the budget given (else the project's ``prompt_budget``) when tighter."""
    from ghstate.core import fit

    return fit.mcp_budget(app.settings.agent, app.settings.policy.prompt_budget if given is None else given)


def _show(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.resume import show_text

    app.reads_last_seen = True
    return show_text(app, args.get("issue"), bool(args.get("json")))


def _lint(app: Any, args: dict[str, Any]) -> str | Answer:
    from ghstate.core.lint import report as lint_report
    from ghstate.services.inputs import check_text

    if "body" in args:
        if "issue" in args:
            raise InputError("lint: give issue or body, not both")
        text, name = check_text(args["body"], "the body"), "body"
    else:
        stored, _ = app.find(args.get("issue"))
        text = stored.body
        name = app.where(stored)
    lines, failure = lint_report(text, name, app.settings.policy.max_item_chars)
    if failure:  # the problems, then the CLI's error line
        return Answer("\n".join([*lines, f"Error: {failure}"]) + "\n", True)
    return "\n".join(lines) + "\n" if lines else f"{name}: no problems\n"


def _checkpoint(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.checkpoint import CheckpointRequest, RequestError, run_checkpoint

    request = CheckpointRequest(**args, event="mcp")  # the tool's arguments are the request's fields
    try:
        request.check()
    except RequestError as exc:
        said = exc.said(lambda name: name)
        raise InputError(f"checkpoint: {exc.field} {said}" if exc.field else f"checkpoint: {said}") from None
    with _tool_words():
        outcome = run_checkpoint(app, request)
    warnings = [f"Warning: {w}" for w in outcome.warnings]
    if request.dry_run:
        return "\n".join([*warnings, outcome.result.body])
    return "\n".join([*outcome.lines(), *warnings]) + "\n"


def _ready(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.tasks import ReadyRequest, dumps, run_ready

    found = run_ready(app, ReadyRequest(issue=args.get("issue"), json=bool(args.get("json"))))
    if args.get("json"):
        return dumps(found.json_rows())
    out, said = found.lines(app)
    return "\n".join([*out, *said]) + "\n"


def _task_request(app: Any, name: str, kind: Any, args: dict[str, Any]) -> Any:
    """The tool's arguments as the request the CLI makes (agent and session default to the server's)."""
    from dataclasses import MISSING, fields

    from ghstate.services.checkpoint import RequestError

    given = dict(args)
    for key in ("agent", "session"):
        if key in {f.name for f in fields(kind)}:
            given[key] = given.get(key) or getattr(app.settings, key)
    missing = [f.name for f in fields(kind) if f.default is MISSING and f.name not in given]
    if missing:
        raise InputError(f"{name}: {missing[0]} is needed (the child task's number)")
    request = kind(**given)
    try:
        request.check()
    except RequestError as exc:
        said = exc.said(lambda field: field)
        raise InputError(f"{name}: {exc.field} {said}" if exc.field else f"{name}: {said}") from None
    return request


def _claim(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.claims import ClaimRequest, run_claim

    with _tool_words():
        return run_claim(app, _task_request(app, "claim", ClaimRequest, args)).text()


def _release(app: Any, args: dict[str, Any]) -> str:
    from ghstate.services.claims import ReleaseRequest, run_release

    with _tool_words():
        return run_release(app, _task_request(app, "release", ReleaseRequest, args)).text()


def _done(app: Any, args: dict[str, Any]) -> Answer:
    from ghstate.services.claims import DoneRequest, run_done

    with _tool_words():
        outcome = run_done(app, _task_request(app, "done", DoneRequest, args))
    return Answer(outcome.text(), outcome.failure is not None)  # claim_next, nothing ready: the done still said


# The CLI's flags a service's refusal names, and the tool's arguments that say the same (``_tool_words``).
_TOOL_WORDS = ((re.compile(r"--agent (\S+) --session (\S+)"), r"agent: \1, session: \2"),
               (re.compile(r"--agent (\S+)"), r"agent: \1"), (re.compile(r"--session (\S+)"), r"session: \1"),
               (re.compile(r"--allow-secrets\b"), "allow_secrets: true"), (re.compile(r"--force\b"), "force: true"),
               (re.compile(r"with --new\b"), "with new: true"))


@contextlib.contextmanager
def _tool_words() -> Iterator[None]:
    """A refusal that names a way past it (a credential let through, a new checkpoint, another agent's claim)
    in the tool's words: its arguments, not the CLI's flags; the same failure, its exit code kept."""
    from ghstate.errors import HeldByAnother, NotFound, SecretFound

    try:
        yield
    except (SecretFound, NotFound, HeldByAnother) as exc:
        said = str(exc)
        for flag, argument in _TOOL_WORDS:
            said = flag.sub(argument, said)
        raise type(exc)(said) from None


_RUN: dict[str, Callable[[Any, dict[str, Any]], str | Answer]] = {
    "resume": _resume, "checkpoint": _checkpoint, "show": _show, "lint": _lint, "ready": _ready, "claim": _claim,
    "release": _release, "done": _done}


def call(name: str, given: dict[str, Any] | None, make_app: Callable[[], Any]) -> Answer:
    """Run one tool. Whatever goes wrong is an error answer with the CLI's one-line message; never raises
    (with GHSTATE_DEBUG=1 the traceback goes to stderr as well)."""
    from ghstate.errors import failure_message

    if name not in TOOLS:
        return Answer(f"Error: no tool {name!r}; the tools are {', '.join(TOOLS)}", True)
    app = None
    try:
        app = make_app()
        args = arguments(name, given)
        out = _RUN[name](app, args)
    except Exception as exc:  # noqa: BLE001 - a tool error is an answer; the server goes on serving
        if os.environ.get("GHSTATE_DEBUG") == "1":
            traceback.print_exc(file=sys.stderr)
        return Answer(f"Error: {failure_message(exc)}", True)
    finally:
        if app is not None:
            app.flush_notices()  # to stderr: stdout is the protocol's
    answer = out if isinstance(out, Answer) else Answer(out)
    report = not answer.error or not answer.text.startswith("Error: ")  # (a failure after a report: done, lint)
    return answer._replace(text=_fence(answer.text)) if report and _fenced_answer(name, args) else answer


def _fenced_answer(name: str, args: dict[str, Any]) -> bool:
    """Whether a tool's answer is text from checkpoints, their issues or git, to be put inside the data fence: all
    but JSON (a string in it is quoted data already), the rehydration prompt (its own fence and preamble) and what
    a write says it did (the caller's own text; a dry run's body is a checkpoint's)."""
    if args.get("json"):
        return False
    if name == "checkpoint":
        return bool(args.get("dry_run"))
    return name != "resume" or args.get("format", "prompt") in ("short", "markdown")


def _fence(text: str) -> str:
    from ghstate.core.present import fenced

    return fenced(text, "checkpoints, their issues and git")


def read_checkpoint(uri: str, make_app: Callable[[], Any]) -> str:
    """The body of ``ghstate://checkpoint/N`` as stored (its marker's digests those of what it holds now), inside
    the data fence as every answer made of a checkpoint's text is, after who opened it when ghstate does not
    trust them."""
    from ghstate.services.resume import ResumeRequest, opened_by, rehydrate

    m = URI.fullmatch(uri)
    if not m:
        raise InputError(f"no such resource {uri!r}; ghstate's resources are {URI_TEMPLATE}")
    app = make_app()
    app.reads_last_seen = True
    found = rehydrate(app, ResumeRequest(issue=int(m.group(1)), fmt="markdown"))
    return opened_by(app, found.stored) + _fence(found.text())


def open_checkpoints(make_app: Callable[[], Any]) -> list[tuple[str, str]]:
    """(uri, name) of each open checkpoint a trusted author opened, named by its number (a title is an issue's
    text: the list of resources is no data fence)."""
    app = make_app()
    return [(f"ghstate://checkpoint/{s.number}", f"ghstate checkpoint {app.label(s.number)}")
            for s in app.store.list_open(bodies=False) if s.trusted]


def prompt_text(issue: str | None, make_app: Callable[[], Any]) -> str:
    from ghstate.services.resume import ResumeRequest, rehydrate

    number = None
    if issue not in (None, ""):
        text = str(issue).strip().lstrip("#")
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise InputError(f"resume: issue must be a checkpoint number, not {issue!r}")
        number = int(text)
    app = make_app()
    app.reads_last_seen = True
    return rehydrate(app, ResumeRequest(issue=number, budget=answer_budget(app))).text()


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def tool_summary() -> str:
    """The tools' names and schemas as JSON (what every session pays for in context)."""
    return json.dumps([{"name": n, "description": t["description"], "inputSchema": input_schema(n)}
                       for n, t in TOOLS.items()], separators=(",", ":"))
