"""The template environment: the edge where templates are found on disk and compiled.

A repository's own templates (``.ghstate/templates``, or the configured folder) are searched first,
then the shipped ones. Rendering itself (``render``, ``present``) is pure and takes the environment.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from ghstate.core import present, render

_PACKAGE = Path(__file__).resolve().parent


def builtin_templates() -> Path:
    """``ghstate/templates`` in an installed wheel; the top-level ``templates/`` in a source checkout."""
    installed = _PACKAGE / "templates"
    return installed if installed.is_dir() else _PACKAGE.parent / "templates"


def environment(*override_dirs: str, cache_dir: str | None = None) -> jinja2.Environment:
    """Templates from ``override_dirs`` (those that exist are searched first), then the shipped ones.

    ``cache_dir`` keeps compiled templates between runs (a fresh process would otherwise spend
    ~10 ms compiling the prompt template); it is skipped when it cannot be created.
    """
    existing = tuple(d for d in override_dirs if d and Path(d).is_dir())
    return _environment(existing, cache_dir)


@lru_cache(maxsize=8)
def _environment(existing: tuple[str, ...], cache_dir: str | None) -> jinja2.Environment:
    search = [*existing, str(builtin_templates())]
    cache = None
    if cache_dir:
        try:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(cache_dir)
        except OSError:
            cache = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        bytecode_cache=cache,
    )
    env.filters.update({**render.FILTERS, **present.FILTERS})
    return env


def is_builtin(env: jinja2.Environment, name: str) -> bool:
    """Whether ``name`` comes from the shipped templates, not a repository's own."""
    filename = env.get_template(name).filename or ""
    return Path(filename).parent == builtin_templates()
