"""Plumbing with no store: ``parse`` (body → JSON), ``render`` (JSON → body) and ``lint``."""

from __future__ import annotations

import json

import click

from ghstate import templating
from ghstate.commands.common import emit_json, make_app, store_options
from ghstate.core import render as render_mod
from ghstate.core.lint import as_json as lint_json
from ghstate.core.lint import problems_of as lint_problems
from ghstate.core.lint import report as lint_report
from ghstate.core.state_json import StateError, check_keys, from_json, looks_like_json, to_json
from ghstate.errors import GhstateError, InputError
from ghstate.services.inputs import parse_text, read_input


@click.command()
@click.argument("file", default="-", metavar="[FILE|-]")
@click.option("--json", "as_json", is_flag=True, help="The JSON state (what parse always prints).")
def parse(file: str, as_json: bool) -> None:
    """Turn a markdown checkpoint body into the JSON state.

    \b
    Examples:
      ghstate parse checkpoint.md | jq .next_phase
      ghstate parse checkpoint.md --json goal,next_phase
      ghstate parse checkpoint.md --jq '.phases[] | select(.done | not) | .name'
    """
    text, name = read_input(file)
    emit_json(to_json(parse_text(text, name).checkpoint))


@click.command()
@click.argument("file", default="-", metavar="[FILE|-]")
def render(file: str) -> None:
    """Turn a JSON state into the canonical markdown body.

    \b
    Example:
      ghstate parse checkpoint.md | ghstate render -
    """
    text, name = read_input(file)
    if not looks_like_json(text):
        raise InputError(f"{name} is not a JSON state (render takes JSON; to read markdown use 'ghstate parse')")
    try:
        data = json.loads(text)
        check_keys(data)
        cp = from_json(data)
    except ValueError as exc:
        kind = "invalid state" if isinstance(exc, StateError) else "not valid JSON"
        raise InputError(f"{name}: {kind}: {exc}") from None
    click.echo(render_mod.render_body(cp, templating.environment()), nl=False)


@click.command()
@click.argument("target", required=False, metavar="[FILE|-|ISSUE]")
@store_options
@click.option("--json", "json_out", is_flag=True,
              help="Print the problems as JSON (source, errors, warnings, problems); exit 1 on errors all the same.")
def lint(target: str | None, json_out: bool) -> None:
    """Check a checkpoint against the strict format.

    One line per problem: where, rule code, severity, message. Exits 1 when any error is found.
    With no argument, lints the current branch's checkpoint.

    \b
    Examples:
      ghstate lint checkpoint.md
      ghstate lint 24 --json | jq '.problems[] | select(.severity == "error")'
    """
    if target is not None and (target == "-" or not target.lstrip("#").isdigit()):
        text, name = read_input(target)
        max_item = make_app(store="local").settings.policy.max_item_chars  # the repository's policy, no store
    else:
        app = make_app()
        number = int(target.lstrip("#")) if target else None
        stored, _ = app.find(number)
        text, name = stored.body, app.where(stored)
        max_item = app.settings.policy.max_item_chars
    problems = lint_problems(text, name, max_item)
    lines, failure = lint_report(text, name, max_item, problems)
    if json_out:
        emit_json(lint_json(problems, name))
    else:
        for line in lines:
            click.echo(line)
    if failure:
        raise LintFailed(failure.replace("listed above", "listed") if json_out else failure)


class LintFailed(GhstateError):
    """Lint found errors (the problems themselves are on stdout)."""
