"""The template environment: the edge where templates are found on disk and compiled.

A repository's own templates (``.ghstate/templates``, or the configured folder) are searched first,
then the shipped ones. Rendering itself (``render``, ``present``) is pure and takes the environment.

A repository's templates are data from whoever wrote the repository (a clone of a stranger's included), so
an environment that may load one is Jinja2's immutable sandbox: a template reaches no attribute, method or
global a sandbox refuses (``cycler.__init__.__globals__`` and the like), and what it tries is an error that
names its file (``TemplateRefused``). The shipped templates alone are rendered in the plain environment,
which renders them to the same bytes.
"""

from __future__ import annotations

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
    search = [*existing, str(builtin_templates())]
    cache = None
    if cache_dir:
        try:
            folder = Path(cache_dir) / "sandbox" if existing else Path(cache_dir)
            folder.mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(str(folder))
        except OSError:
            cache = None
    options: dict[str, Any] = {
        "loader": jinja2.FileSystemLoader(search), "undefined": jinja2.StrictUndefined, "keep_trailing_newline": True,
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
