"""What the commands share: store options, settings, input reading, finding a checkpoint, output."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ghstate import config, gitinfo, templating
from ghstate.errors import ConfigError, InputError, NotFound
from ghstate.markup import control_at, describe_control
from ghstate.model import Checkpoint
from ghstate.parse import Parsed, ParseError, parse
from ghstate.reader import current, locate
from ghstate.state_json import looks_like_json
from ghstate.stores import Store, Stored
from ghstate.stores.local import LocalStore

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.project_sync import ProjectSync
    from ghstate.stores.github import GitHubStore
    from ghstate.writer import Writer


def _check_repo(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", value.strip()):
        raise click.BadParameter(f"{value!r} is not OWNER/NAME")
    return value.strip() if value else value


def store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``-R/--repo`` and ``--store``, after the command name as ``gh`` users expect."""

    @click.option("-R", "--repo", metavar="OWNER/NAME", callback=_check_repo,
                  help="GitHub repository (default: GITHUB_REPOSITORY, then the origin remote).")
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
        m = re.fullmatch(r"#?([1-9][0-9]{0,9})", text) or re.fullmatch(
            r"https?://[^/]+/[\w.-]+/[\w.-]+/issues/([1-9][0-9]{0,9})/?(?:#.*)?", text)
        if not m:
            self.fail(f"{value!r} is not an issue number (24, #24 or an issue URL)", param, ctx)
        return int(m.group(1))


ISSUE = IssueRef()


class App:
    """Everything a command needs, built once from flags and environment."""

    def __init__(self, settings: config.Settings, store: Store, local: LocalStore) -> None:
        self.settings = settings
        self.store = store
        self.local = local

    @functools.cached_property
    def env(self) -> Any:
        return templating.environment(self.settings.templates_dir, cache_dir=self.settings.cache_dir)

    def writer(self, *, keep_pending: bool = True) -> Writer:
        """The writer for this store; ``keep_pending``: a write GitHub cannot take is kept for 'push'."""
        from ghstate.writer import Writer

        s = self.settings
        builtin = None if templating.is_builtin(self.env, "checkpoint.md.j2") else templating.environment()
        return Writer(self.store, env=self.env, builtin=builtin, max_body_chars=s.policy.max_body_chars,
                      pending=self.local if keep_pending else None, repo=s.repo, api_url=s.api_url)

    @functools.cached_property
    def project(self) -> ProjectSync | None:
        """The GitHub Project (v2) this command keeps current, when one is configured (ids cached here)."""
        from ghstate.project_sync import connect

        return connect(self.settings, self.store)

    def keep_project(self, stored: Stored, cp: Checkpoint) -> list[str]:
        """After a write: the checkpoint's project item made current; warnings, never a failure."""
        if not self.settings.project or self.project is None or not self.settings.repo:
            return []  # no project: nothing imported, nothing asked
        return self.project.keep(self.settings.repo, stored.number, cp)

    def flush_notices(self) -> None:
        """Say what the store noticed and did not fail on (ignored history comments, unread pages)."""
        for notice in dict.fromkeys(self.store.notices):
            click.echo(f"Warning: {notice}", err=True)
        self.store.notices.clear()

    def github(self) -> GitHubStore:
        """The GitHub store, for what only GitHub does (comments, labels); a clear error elsewhere."""
        from ghstate.stores.github import GitHubStore

        if not isinstance(self.store, GitHubStore):
            raise ConfigError("this needs the GitHub store: set GH_TOKEN (or GITHUB_TOKEN) and -R OWNER/NAME, "
                              "or pass --store github")
        return self.store

    def label(self, number: int) -> str:
        return f"#{number}" if self.store.remote else f"local #{number}"

    def describe_source(self, stored: Stored) -> str:
        if self.store.remote:
            return f"GitHub issue #{stored.number} ({stored.location})"
        return f"local checkpoint #{stored.number} ({self.where(stored)})"

    def where(self, stored: Stored) -> str:
        """Where a checkpoint is, for a person: its URL, or its file relative to here."""
        return stored.location if self.store.remote else self.display_path(stored.location)

    def display_path(self, location: str) -> str:
        try:
            return str(Path(location).relative_to(Path.cwd()))
        except ValueError:
            return location

    def tree(self) -> gitinfo.WorkTree:
        """The working tree now, with at most MAX_DIRTY dirty paths (beyond them drift errs on "changed")."""
        tree = gitinfo.work_tree(self.settings.root if self.settings.in_git else None)
        return tree._replace(dirty=gitinfo.recordable(self.own_files_removed(tree.dirty)))

    def own_files_removed(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Paths without ghstate's own store: writing a checkpoint is not a change to the work."""
        try:
            prefix = self.settings.state_dir.resolve().relative_to(self.settings.root.resolve()).as_posix()
        except ValueError:
            return paths
        return tuple(p for p in paths if p != prefix and not p.startswith(prefix.rstrip("/") + "/")
                     and p != prefix + "/")

    def find(self, number: int | None, *, tree: gitinfo.WorkTree | None = None) -> tuple[Stored, Checkpoint]:
        """ISSUE, or the open checkpoint of the current branch; a clear error when there is none."""
        if number is None:
            tree = tree or self.tree()
            stored = locate(self.store, None, tree.branch)
            if stored is None:
                raise NotFound(f"no open checkpoint for {tree.place} in the {self.store.kind} store; "
                               "give an ISSUE number, or create one with 'ghstate checkpoint'")
        else:
            stored = self.store.get(number)
        return stored, current(self.store, stored)


def make_app(*, need_token: bool = True, github: dict[str, Any] | None = None, **overrides: Any) -> App:
    """``github``: keyword arguments for the GitHub store (hooks pass short timeouts)."""
    ctx = click.get_current_context()
    options = dict(ctx.meta.get("store_options", {}))
    options.update(overrides)
    settings = config.build(repo=options.get("repo"), store=options.get("store"), need_token=need_token,
                            agent=options.get("agent"), role=options.get("role"), session=options.get("session"),
                            project=options.get("project"))
    local = LocalStore(settings.state_dir)
    store: Store
    if settings.store == "github":
        from ghstate.stores.github import GitHubStore  # only GitHub commands pay for PyGithub

        assert settings.repo is not None
        store = GitHubStore.connect(settings, **(github or {}))
    else:
        store = local
    app = App(settings, store, local)
    ctx.call_on_close(app.flush_notices)
    return app


# ------------------------------------------------------------------------------------ input


def read_input(path: str) -> tuple[str, str]:
    """(text, name) of a file or of stdin (``-``): UTF-8 text, not empty, not binary."""
    name = "standard input" if path == "-" else path
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text (bad byte at offset {exc.start}); "
                         "save it as UTF-8 and try again") from None
    return check_text(text, name), name


def check_text(text: str, name: str) -> str:
    """The text itself, when it can be a checkpoint: not empty, no NUL or other control characters."""
    if "\x00" in text:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    if not text.strip():
        raise InputError(f"{name} is empty; give a markdown body or a JSON state")
    at = control_at(text)
    if at >= 0 and not looks_like_json(text):  # in JSON, from_json names the field that holds it
        raise InputError(f"{name} holds a control character ({describe_control(text, at)}); only tab and "
                         "newline are text: remove it (terminal output?)")
    return text


def load_input(path: str) -> tuple[Checkpoint, frozenset[str], str]:
    """A checkpoint from a markdown body or a JSON state, the sections it names, and its name."""
    text, name = read_input(path)
    cp, present = load_text(text, name)
    return cp, present, name


def load_text(text: str, name: str) -> tuple[Checkpoint, frozenset[str]]:
    """A checkpoint from checked text (a markdown body or a JSON state) and the sections it names."""
    from ghstate.state_json import StateError, from_json

    if looks_like_json(text):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{name} looks like JSON but is not valid JSON: {exc}") from None
        try:
            cp = from_json(data)
        except StateError as exc:
            raise InputError(f"{name}: invalid state: {exc}") from None
        from ghstate.model import SECTION_KEYS

        present = frozenset(k for k in SECTION_KEYS if k in data)
        return cp, present
    parsed = parse_text(text, name)
    return parsed.checkpoint, parsed.present


def parse_text(text: str, name: str) -> Parsed:
    try:
        return parse(text)
    except ParseError as exc:
        raise InputError(f"{name}: {exc}") from None


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))

