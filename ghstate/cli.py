"""The ``ghstate`` command: a click group that wires the commands and turns failures into one line."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ghstate import __version__
from ghstate.errors import GhstateError


class Group(click.Group):
    """Every GhstateError becomes ``Error: …`` and exit 1; anything unexpected too, unless GHSTATE_DEBUG=1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GhstateError as exc:
            if os.environ.get("GHSTATE_DEBUG") == "1":
                raise
            raise click.ClickException(_one_line(str(exc))) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:
            if os.environ.get("GHSTATE_DEBUG") == "1":
                raise
            raise click.ClickException(_one_line(
                f"internal error ({type(exc).__name__}: {exc}); run again with GHSTATE_DEBUG=1 for a traceback "
                "and report it")) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order they were added: the order of the tour


def _one_line(message: str) -> str:
    return " ".join(message.split())


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="ghstate", message="%(prog)s %(version)s")
def cli() -> None:
    """Durable working state for long AI coding sessions, kept in GitHub issues.

    \b
    Before clearing a session's context:   ghstate checkpoint --file checkpoint.md
    In the fresh session:                   ghstate resume
    """


def _register() -> None:
    from ghstate.commands import checkpoint, listing, plumbing, resume

    for command in (checkpoint.checkpoint, resume.resume, resume.show, listing.list_, listing.log,
                    plumbing.lint, plumbing.parse, plumbing.render):
        cli.add_command(command)


_register()


def main() -> None:
    try:
        cli.main(prog_name="ghstate")
    except BrokenPipeError:  # `ghstate list | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
