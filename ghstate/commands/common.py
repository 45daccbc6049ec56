"""What the click commands share: store options, the issue argument, the running command's App, output.
The work itself is in ``ghstate.services`` and ``ghstate.services.app``, which import no click."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

import click

from ghstate import config
from ghstate.commands.json_output import emit_json, emit_json_text
from ghstate.services.app import App, build_app

__all__ = ["ISSUE", "App", "emit_json", "emit_json_text", "make_app", "store_options"]


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


def make_app(*, need_token: bool = True, github: dict[str, Any] | None = None, send_kept: bool = False,
             **overrides: Any) -> App:
    """The App of the running command, from its store options (and ``overrides``); what the store noticed
    is said when the command ends. ``github``: keyword arguments for the GitHub store. ``send_kept``: a command
    that reaches GitHub without reading a checkpoint through ``App.read`` (a listing, a close) sends this clone's
    kept writes first, as that does (not on a dry run: it writes nothing)."""
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
    if send_kept and app.store.remote and not ctx.params.get("dry_run"):
        from ghstate.services import kept

        sent = kept.send_first(app)
        if sent.unanswered is not None:  # GitHub did not answer them: the command would not be answered either
            raise sent.unanswered
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
            if isinstance(param, click.Argument):
                return param.human_readable_name
            return next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])  # its name

        if exc.field is None:
            raise click.UsageError(exc.said(name)) from None
        raise click.BadParameter(exc.said(name), param_hint=name(exc.field)) from None
