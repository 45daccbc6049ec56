"""What the click commands share: store options, the issue argument, the running command's App, output.
The work itself is in ``ghstate.services`` and ``ghstate.services.app``, which import no click."""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import click

from ghstate import config
from ghstate.services.app import App, build_app

__all__ = ["ISSUE", "App", "emit_json", "emit_json_text", "make_app", "store_options", "with_gh_json"]


def _check_repo(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"(?:[\w.-]+(?::[0-9]+)?/)?[\w.-]+/[\w.-]+", value.strip()):
        raise click.BadParameter(f"{value!r} is not OWNER/NAME (or HOST/OWNER/NAME)")
    return value.strip() if value else value


def store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``-R/--repo`` and ``--store``, after the command name as ``gh`` users expect."""

    @click.option("-R", "--repo", metavar="OWNER/NAME", callback=_check_repo,
                  help="GitHub repository, [HOST/]OWNER/NAME (default: GH_REPO, then GITHUB_REPOSITORY, then the "
                  "origin remote).")
    @click.option("--store", type=click.Choice(config.STORES), default=None,
                  help="Where checkpoints live (default: auto: GitHub with a token and a repository, else local).")
    @functools.wraps(fn)
    def wrapper(*args: Any, repo: str | None, store: str | None, **kwargs: Any) -> Any:
        click.get_current_context().meta["store_options"] = {"repo": repo, "store": store}
        return fn(*args, **kwargs)

    return wrapper


class IssueRef(click.ParamType):
    """``24``, ``#24`` or an issue URL."""

    name = "ISSUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        m = re.fullmatch(r"#?([1-9][0-9]{0,9})", text)
        url = re.fullmatch(r"https?://[^/]+/([\w.-]+/[\w.-]+)/issues/([1-9][0-9]{0,9})/?(?:#.*)?", text)
        if not (m or url):
            self.fail(f"{value!r} is not an issue number (24, #24 or an issue URL)", param, ctx)
        if m:
            return int(m.group(1))
        assert url is not None
        if ctx is not None:  # the repository the URL names is the one to read (make_app)
            named = ctx.meta.setdefault("issue_repos", {})
            named[url.group(1)] = text
        return int(url.group(2))


ISSUE = IssueRef()


def make_app(*, need_token: bool = True, github: dict[str, Any] | None = None, **overrides: Any) -> App:
    """The App of the running command, from its store options (and ``overrides``); what the store noticed
    is said when the command ends. ``github``: keyword arguments for the GitHub store."""
    ctx = click.get_current_context()
    options = dict(ctx.meta.get("store_options", {}))
    options.update(overrides)
    named = _repository_of_urls(ctx, options.get("repo"))
    if named:
        options["repo"] = named
    app = build_app(repo=options.get("repo"), store=options.get("store"), need_token=need_token,
                    agent=options.get("agent"), role=options.get("role"), session=options.get("session"),
                    project=options.get("project"), github=github)
    ctx.call_on_close(app.flush_notices)
    if app.fallback and not ctx.meta.get("fallback_said"):  # once per command, however many Apps it makes
        ctx.meta["fallback_said"] = True
        click.echo(f"Warning: {app.fallback}", err=True)
    if named and not app.store.remote:
        raise click.UsageError(f"{ctx.meta['issue_repos'][named]} is an issue of {named} on GitHub, and this command "
                               "uses the local store, whose checkpoints have numbers of their own: give the number")
    return app


def _repository_of_urls(ctx: click.Context, repo: str | None) -> str | None:
    """The repository the command's issue URLs name (an issue URL says which repository, as for ``gh``); a
    usage error when they name two, or another than ``--repo``."""
    named = ctx.meta.get("issue_repos", {})
    if len(named) > 1:
        raise click.UsageError(f"the issue URLs name {len(named)} repositories ({', '.join(named)}); give issues of "
                               "one")
    if not named:
        return None
    (only,) = named
    if repo and "/".join(repo.split("/")[-2:]).lower() != only.lower():
        raise click.UsageError(f"{named[only]} is an issue of {only}, but --repo says {repo}")
    return only


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """A request the services refuse as one that cannot be meant (``RequestError``) is a usage error
    (exit 2), its fields named as this command's options and arguments."""
    from ghstate.services.checkpoint import RequestError

    try:
        yield
    except RequestError as exc:
        params = {p.name: p for p in click.get_current_context().command.params}

        def name(field: str) -> str:
            param = params.get(field)
            if param is None:
                return f"--{field.replace('_', '-')}"
            return param.human_readable_name if isinstance(param, click.Argument) else max(param.opts, key=len)

        if exc.field is None:
            raise click.UsageError(exc.said(name)) from None
        raise click.BadParameter(exc.said(name), param_hint=name(exc.field)) from None


# ------------------------------------------------------------------------------ --json and --jq, as gh has them

# The top-level fields of each command's JSON (of each row, for a list), as --json alone prints them: what
# --json FIELD,… may name. A key a command prints only sometimes is here too (null when it is absent).
# tests/test_json_output.py checks these against what each command prints.
ROW_FIELDS: dict[str, tuple[str, ...]] = {
    "list": ("issue", "title", "url", "branch", "status", "phases_done", "phases_total", "next_phase",
             "verification", "revision", "updated_at"),
    "log": ("revision", "at", "event", "changes", "agent", "role", "session", "author"),
    "lint": ("source", "errors", "warnings", "problems"),
    "close": ("issue", "url", "state"),
    "push": ("file", "target", "result", "issue", "url", "error"),
    "board": ("source", "stale_days", "hidden", "checkpoints"),
    "ready": ("number", "title", "state", "blocked_by", "claimed_by", "lease_until", "phase", "url", "parent"),
    "doctor": ("check", "ok", "detail"),
}
_FIELD_LIST = re.compile(r"\s*[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*")


def json_fields(command: str) -> tuple[str, ...]:
    """What ``--json FIELD,…`` of ``command`` may name."""
    if command in ROW_FIELDS:
        return ROW_FIELDS[command]
    from ghstate.core.state_json import FIELDS
    from ghstate.services.resume import READING_FIELDS, TASK_FIELDS

    extra = {"checkpoint": ("result",), "show": TASK_FIELDS, "resume": (*READING_FIELDS, *TASK_FIELDS)}
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

