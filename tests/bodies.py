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
    """``body`` as ghstate writes it: with its hidden marker, saying it holds nothing of a write log yet
    (a store that keeps no versions of a body reads a body without the marker as a person's text that
    holds all of its log; a checkpoint ghstate made always has the marker)."""
    from ghstate.core.marker import LogState
    from ghstate.core.parse import parse

    return render_body(parse(body).checkpoint.with_meta(log=LogState()))
