"""Rendering with the shipped templates, for tests: the core takes its template environment as an
argument, and this is the one tests use unless they build their own."""

from __future__ import annotations

from ghstate.core import render, splice
from ghstate.core.model import Checkpoint
from ghstate.templating import environment

ENV = environment()


def render_body(cp: Checkpoint, env=ENV) -> str:
    return render.render_body(cp, env)


def render_update(cp: Checkpoint, previous: str, env=ENV) -> str:
    return splice.render_update(cp, previous, env)


def with_marker(body: str) -> str:
    """``body`` as ghstate writes it: with its hidden marker (at revision 1, as a new checkpoint is)."""
    from ghstate.core.parse import parse

    return render_body(parse(body).checkpoint.with_meta(revision=1))
