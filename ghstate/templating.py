"""The template environment: the edge where templates are found on disk and compiled.

A repository's own templates (``.ghstate/templates``, or the configured folder) are searched first,
then the shipped ones. Rendering itself (``render``, ``present``) is pure and takes the environment.

A repository's templates are data from whoever wrote the repository (a clone of a stranger's included), so
an environment that may load one is Jinja2's immutable sandbox: a template reaches no attribute, method or
global a sandbox refuses (``cycler.__init__.__globals__`` and the like), builds no string or list past a bound,
and what it tries is an error that names its file (``TemplateRefused``). Its loader (``_RepositoryLoader``) opens
only a plain file of a plain name (``prompt.md.j2``) in the folder itself, never a symbolic link, so that no
template, included or not, reads a file from elsewhere (``/proc/self/environ``, ``.git/config``); the folder is
the repository's own (``Settings.templates_dir``). The shipped templates alone are rendered in the plain
environment, which renders them to the same bytes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ghstate.core import present, render
from ghstate.errors import GhstateError

_PACKAGE = Path(__file__).resolve().parent


class TemplateRefused(GhstateError):
    """A repository's template tried what the sandbox refuses, or cannot be used at all."""

    def __init__(self, filename: str, why: str) -> None:
        import os

        shown = os.path.relpath(filename) if os.path.isabs(filename) else filename
        filename = filename if shown.startswith("..") else shown  # inside the current folder: as a person names it
        super().__init__(f"the template {filename} cannot be used ({' '.join(why.split())}): a repository's "
                         "templates render in a sandbox, where no code runs; fix it, or remove it to use the "
                         "built-in one")
        self.filename = filename


def builtin_templates() -> Path:
    """``ghstate/templates`` in an installed wheel; the top-level ``templates/`` in a source checkout."""
    installed = _PACKAGE / "templates"
    return installed if installed.is_dir() else _PACKAGE.parent / "templates"


def environment(*override_dirs: str, cache_dir: str | None = None, fallback: bool = False) -> jinja2.Environment:
    """Templates from ``override_dirs`` (those that exist are searched first), then the shipped ones: in the
    sandbox when any of those folders exists (a repository's), else the plain environment. ``fallback`` (the
    hooks, which must give a session its context whatever a repository holds): a repository's template that
    cannot be used is replaced by the shipped one of its name, said once in ``fallen_back(env)``.

    ``cache_dir`` keeps compiled templates between runs (a fresh process would otherwise spend
    ~10 ms compiling the prompt template); it is skipped when it cannot be created. The sandbox's code
    differs from the plain environment's, so it is kept apart (``sandbox/``).
    """
    existing = tuple(d for d in override_dirs if d and Path(d).is_dir())
    return _environment(existing, cache_dir, fallback and bool(existing))


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.j2")  # a repository's template: a plain name in its folder
MAX_SIZE = 1_000_000  # items or characters a repository's template may build with one * (a string, a list)


class _Refused(jinja2.TemplateError):
    """What a repository's template may not open (a symbolic link, a device): said as the sandbox's refusals."""


class _RepositoryLoader(jinja2.BaseLoader):
    """A repository's templates folder: a plain file of a plain name in it (no folder, no dot first, ``.j2``),
    opened without following a symbolic link; any other name is none of the folder's (the shipped ones are
    looked in next)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
        import os
        import stat

        if not _NAME.fullmatch(template):
            raise jinja2.TemplateNotFound(template)
        path = os.path.join(self.folder, template)
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            raise jinja2.TemplateNotFound(template) from None
        except OSError as exc:
            raise _Refused(f"{path} cannot be read ({exc.strerror})") from None
        if not stat.S_ISREG(found.st_mode):  # a link to a file elsewhere (its token, the git config), a device
            raise _Refused(f"{template} is a symbolic link or no plain file: a repository's template is a file of "
                           "its own in its folder")
        try:
            handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise _Refused(f"{path} cannot be read ({exc.strerror})") from None
        with os.fdopen(handle, "rb") as fh:
            source = fh.read().decode("utf-8", errors="replace")
        mtime = found.st_mtime_ns
        return source, path, lambda: _unchanged(path, mtime)


def _unchanged(path: str, mtime: int) -> bool:
    import os

    try:
        return os.lstat(path).st_mtime_ns == mtime
    except OSError:
        return False


class _RepositoryTemplate(jinja2.Template):
    """A template of the sandbox: what the sandbox refuses while it renders, or any other failure of it, is an
    error naming its file; or, in an environment with a fallback, the shipped template of its name instead."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        try:
            return super().render(*args, **kwargs)
        except jinja2.TemplateError as exc:
            refused = TemplateRefused(self.filename or self.name or "a template", str(exc) or type(exc).__name__)
            builtin = _fall_back(self.environment, refused, self.name)
            if builtin is None:
                raise refused from None
            return builtin.render(*args, **kwargs)


def _make_sandbox(fallback: bool, **options: Any) -> jinja2.Environment:
    """The sandbox (its module imported only where a repository has templates)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Sandbox(ImmutableSandboxedEnvironment):
        template_class = _RepositoryTemplate
        fallback: list[str] | None = None  # with a fallback: what it replaced, said
        intercepted_binops = frozenset(["*", "**"])

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            """``*`` and ``**`` bounded: no string or list of more than MAX_SIZE items, no huge power."""
            from jinja2.sandbox import SecurityError

            if operator == "**" and isinstance(right, int) and abs(right) > 1_000:
                raise SecurityError(f"a power of {right} is more than a template may compute")
            if operator == "*" and isinstance(left, (str, list, tuple)) != isinstance(right, (str, list, tuple)):
                items, times = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
                if isinstance(times, int) and len(items) * times > MAX_SIZE:
                    raise SecurityError(f"{len(items) * times:,} items are more than a template may build")
            return super().call_binop(context, operator, left, right)

        def get_template(self, name: Any, *args: Any, **kwargs: Any) -> jinja2.Template:
            try:
                return super().get_template(name, *args, **kwargs)
            except jinja2.TemplateNotFound:
                raise
            except jinja2.TemplateError as exc:  # a repository's template that does not compile
                filename = getattr(exc, "filename", None) or str(name)
                builtin = _fall_back(self, TemplateRefused(filename, str(exc)), str(name))
                if builtin is None:
                    raise TemplateRefused(filename, str(exc)) from None
                return builtin

    env = Sandbox(**options)
    env.fallback = [] if fallback else None
    return env


def _fall_back(env: jinja2.Environment, refused: TemplateRefused, name: str | None) -> jinja2.Template | None:
    """The shipped template ``name`` for ``env``'s failed one, the failure said once; None without a fallback."""
    said = getattr(env, "fallback", None)
    if said is None or not name:
        return None
    line = f"{refused}; the built-in {name} was used instead"
    if line not in said:
        said.append(line)
    return _environment((), None, False).get_template(name)


def fallen_back(env: jinja2.Environment) -> list[str]:
    """What ``env`` replaced by a shipped template since it was made (``environment(fallback=True)``)."""
    return list(getattr(env, "fallback", None) or ())


@lru_cache(maxsize=8)
def _environment(existing: tuple[str, ...], cache_dir: str | None, fallback: bool) -> jinja2.Environment:
    shipped = jinja2.FileSystemLoader(str(builtin_templates()))
    loader = jinja2.ChoiceLoader([*(_RepositoryLoader(d) for d in existing), shipped]) if existing else shipped
    cache = None
    if cache_dir:
        try:
            folder = Path(cache_dir) / "sandbox" if existing else Path(cache_dir)
            folder.mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(str(folder))
        except OSError:
            cache = None
    options: dict[str, Any] = {
        "loader": loader, "undefined": jinja2.StrictUndefined, "keep_trailing_newline": True,
        "trim_blocks": True, "lstrip_blocks": True, "autoescape": False, "bytecode_cache": cache}
    env = _make_sandbox(fallback, **options) if existing else jinja2.Environment(**options)
    env.filters.update({**render.FILTERS, **present.FILTERS})
    return env


def is_builtin(env: jinja2.Environment, name: str) -> bool:
    """Whether ``name`` comes from the shipped templates, not a repository's own."""
    filename = env.get_template(name).filename or ""
    return Path(filename).parent == builtin_templates()


def sandboxed(env: jinja2.Environment) -> bool:
    """Whether ``env`` renders in the sandbox (a repository's templates may be in it)."""
    return bool(getattr(env, "sandboxed", False))
