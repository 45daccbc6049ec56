"""The ``ghstate`` command: a click group that wires the commands and turns failures into one line."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from ghstate import __version__
from ghstate.errors import failure_message

# name -> (module, attribute, one-line help). Commands are imported only when run, so that
# `ghstate --version` and a local `resume` do not pay for the modules of the others.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "checkpoint": ("checkpoint", "checkpoint", "Write a checkpoint: create it, or update ISSUE."),
    "resume": ("resume", "resume", "Print the rehydration prompt for a fresh session."),
    "show": ("resume", "show", "Show a checkpoint as a person reads it in a terminal."),
    "list": ("listing", "list_", "Open checkpoints of the repository (or the local store)."),
    "log": ("listing", "log", "The revision history of a checkpoint."),
    "lint": ("plumbing", "lint", "Check a checkpoint against the strict format."),
    "parse": ("plumbing", "parse", "Turn a markdown checkpoint body into the JSON state."),
    "render": ("plumbing", "render", "Turn a JSON state into the canonical markdown body."),
    "push": ("push", "push", "Publish checkpoints kept locally while GitHub was unreachable."),
    "init": ("init", "init", "Set a repository up: labels, issue form, agent hooks and commands."),
    "hook": ("hook", "hook", "Agent host hook entry points (session-start, pre-compact)."),
    "ci": ("ci", "ci", "Record a CI result on the checkpoint (what the GitHub Action runs)."),
    "board": ("board", "board", "One line per open checkpoint of a GitHub Project, across repositories."),
    "split": ("tasks", "split", "Turn a checkpoint's open phases into child checkpoints (sub-issues)."),
    "ready": ("tasks", "ready", "The child tasks an agent may take: open, unblocked, unclaimed."),
    "claim": ("claim", "claim", "Claim a child task (exactly one racing agent wins); prints its #N."),
    "release": ("claim", "release", "Free a claimed child task."),
    "done": ("claim", "done", "Close a child task, tick its phase, release it, name what it unblocked."),
    "mcp": ("serve_mcp", "mcp", "Serve the checkpoint to any agent host as an MCP server (stdio)."),
    "doctor": ("doctor", "doctor", "Check the set-up; with --github, what GitHub must do for the write log."),
}


class Group(click.Group):
    """Lazily loaded commands; every GhstateError becomes ``Error: …`` and exit 1, and so does anything
    unexpected, unless GHSTATE_DEBUG=1."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)  # in the order of the tour

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        if name == "resume":  # git reads the tree while the command's modules load (see gitinfo.prefetch)
            from ghstate.git import gitinfo

            gitinfo.prefetch()
        return getattr(importlib.import_module(f"ghstate.commands.{module}"), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, _, summary) in COMMANDS.items()])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        finally:
            if "ghstate.git.gitinfo" in sys.modules:
                sys.modules["ghstate.git.gitinfo"].discard_prefetched()

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:
            if _debugging():
                raise
            failure = click.ClickException(failure_message(exc))
            failure.exit_code = getattr(exc, "exit_code", 1)  # 3: nothing ready to claim; 4: claimed by another
            raise failure from None


def _debugging() -> bool:
    from ghstate.config import debugging  # only when something failed: the start-up path stays light

    return debugging()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="ghstate", message="%(prog)s %(version)s")
def cli() -> None:
    """Durable working state for long AI coding sessions, kept in GitHub issues.

    \b
    Before clearing a session's context:   ghstate checkpoint --file checkpoint.md
    In the fresh session:                   ghstate resume
    """


def main() -> None:
    try:
        cli.main(prog_name="ghstate")
    except BrokenPipeError:  # `ghstate list | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
