"""``--json [FIELD,…]`` and ``--jq EXPR`` as ``gh`` has them, for every command that prints JSON: the
options (``with_gh_json``, applied where ``ghstate.cli`` loads a command), what each command's JSON may be
cut to (``JSON_FIELDS``, ``json_fields``) and the printing (``emit_json``)."""

from __future__ import annotations

import json
import re
from typing import Any

import click

# The top-level fields of each command's JSON (of each row, for a list), as --json alone prints them: what
# --json FIELD,… may name. A key a command prints only sometimes is here too (null when it is absent). The
# commands that print a checkpoint's state (checkpoint, show, resume, parse) take the state's FIELDS and
# what each adds (json_fields). tests/test_json_output.py checks these against what each command prints.
JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "list": ("number", "issue", "title", "url", "branch", "status", "phases_done", "phases_total", "next_phase",
             "verification", "revision", "updated_at", "stale"),
    "log": ("revision", "at", "event", "changes", "agent", "role", "session", "author"),
    "lint": ("source", "errors", "warnings", "problems"),
    "close": ("number", "issue", "url", "state", "stale"),
    "push": ("file", "target", "result", "issue", "url", "error"),
    "board": ("source", "stale_days", "hidden", "checkpoints"),
    "ready": ("number", "title", "state", "blocked_by", "claimed_by", "claimed_session", "lease_until", "phase", "url",
              "parent", "moved", "moved_to"),
    "doctor": ("check", "ok", "detail"),
    "split": ("number", "made", "kept", "links"),
    "claim": ("number", "claimed", "claimed_by", "claimed_session", "lease_until"),
    "release": ("number", "released", "released_session"),
    "done": ("number", "parent", "released", "released_session", "unblocked", "claimed", "claimed_by",
             "claimed_session", "lease_until"),
}
_FIELD_LIST = re.compile(r"\s*[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*")


def json_fields(command: str) -> tuple[str, ...]:
    """What ``--json FIELD,…`` of ``command`` may name."""
    if command in JSON_FIELDS:
        return JSON_FIELDS[command]
    from ghstate.core.state_json import FIELDS
    from ghstate.services.resume import CLOSED_FIELDS, READING_FIELDS, SOURCE_FIELDS, TASK_FIELDS

    extra = {"checkpoint": ("result",), "show": (*TASK_FIELDS, *CLOSED_FIELDS, *SOURCE_FIELDS),
             "resume": (*READING_FIELDS, *TASK_FIELDS, *CLOSED_FIELDS, *SOURCE_FIELDS)}
    return (*extra.get(command, ()), *FIELDS)


def with_gh_json(command: click.Command) -> click.Command:
    """``--json [FIELD,…]`` and ``--jq EXPR`` on a command that prints JSON, as ``gh`` has them: its own
    ``--json`` flag (kept under its name: the command still gets True or False) learns a field list, and
    ``--jq`` filters what ``emit_json`` prints (and implies --json). Done for every command where the CLI
    loads it (``ghstate.cli``), on a copy: the command as its module defines it stays as it is, and so
    does a command without a ``--json`` flag."""
    import copy

    found = [i for i, p in enumerate(command.params) if isinstance(p, click.Option) and "--json" in p.opts]
    if not found or isinstance(command.params[found[0]], _JsonOption):
        return command
    flag = command.params[found[0]]
    wrapped = copy.copy(command)
    wrapped.params = [*command.params[:found[0]], *_json_options(flag), *command.params[found[0] + 1:]]
    return wrapped


def _json_options(flag: click.Parameter) -> list[click.Option]:
    return [
        _JsonOption(["--json", flag.name or "as_json"], is_flag=False, flag_value="", default=None,
                    metavar="[FIELD,…]", callback=_json_option,
                    help=f"{(getattr(flag, 'help', '') or '').rstrip('.')}; --json FIELD,… prints only those "
                    "top-level fields."),
        click.Option(["--jq"], metavar="EXPR", expose_value=False, is_eager=True, callback=_jq_option,
                     help="Filter the JSON with a jq expression, as gh's --jq (implies --json).")]


class _JsonOption(click.Option):
    """``--json`` whose value may be left out (every field)."""


def json_argv(command: click.Command, args: list[str]) -> list[str]:
    """``--json`` before an argument that is no field list (``show --json 24``, ``lint --json -``) is
    ``--json`` alone: the argument stays the command's."""
    if not any(isinstance(p, _JsonOption) for p in command.params):
        return args
    out = list(args)
    for i, arg in enumerate(out[:-1]):
        if arg == "--":
            break
        nxt = out[i + 1]
        if arg == "--json" and (nxt == "-" or not nxt.startswith("-")) and not _FIELD_LIST.fullmatch(nxt):
            out[i] = "--json="
    return out


def _json_option(ctx: click.Context, param: click.Parameter, value: str | None) -> bool:
    if value is None:
        return "jq" in ctx.meta  # --jq alone is JSON too
    names = [name.strip() for name in value.split(",") if name.strip()]
    if names:
        known = json_fields(ctx.command.name or "")
        unknown = [name for name in names if name not in known]
        if unknown:
            raise click.BadParameter(f"unknown field {unknown[0]!r}; available fields: {', '.join(known)}")
        ctx.meta["json_fields"] = tuple(dict.fromkeys(names))
    return True


def _jq_option(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    try:
        import jq
    except ImportError:  # pragma: no cover - jq is a dependency
        raise click.UsageError("--jq needs the jq package: pip install jq (where ghstate is installed)") from None
    try:
        ctx.meta["jq"] = jq.compile(value)
    except ValueError as exc:
        raise click.BadParameter(" ".join(str(exc).split()), param_hint="--jq") from None


def emit_json(data: Any) -> None:
    """Print a command's JSON: every field, or those of --json FIELD,…, filtered by --jq when given."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    fields = meta.get("json_fields")
    if fields:
        data = [_select(row, fields) for row in data] if isinstance(data, list) else _select(data, fields)
    program = meta.get("jq")
    if program is None:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    try:
        values = program.input_value(data).all()
    except ValueError as exc:
        raise click.ClickException(f"--jq: {' '.join(str(exc).split())}") from None
    for value in values:
        click.echo(_jq_text(value))


def emit_json_text(text: str) -> None:
    """JSON a service rendered already: printed as it is, unless --json FIELD,… or --jq ask for part of it."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.meta.get("json_fields") or "jq" in ctx.meta):
        emit_json(json.loads(text))
    else:
        click.echo(text.rstrip("\n"))


def _select(data: Any, fields: tuple[str, ...]) -> Any:
    return {name: data.get(name) for name in fields} if isinstance(data, dict) else data


def _jq_text(value: Any) -> str:
    """One jq result as gh prints it: a string as its text, null as an empty line, anything else as JSON
    (indented on a terminal)."""
    import sys

    if isinstance(value, str):
        return value
    if value is None:
        return ""
    indent = 2 if isinstance(value, (dict, list)) and sys.stdout.isatty() else None
    return json.dumps(value, ensure_ascii=False, indent=indent)

