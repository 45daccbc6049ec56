"""The ``ghstate`` command: a click group that wires the commands and turns failures into one line."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

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
    "close": ("close", "close", "Close a finished checkpoint, or (--stale) the stale ones."),
    "push": ("push", "push", "Publish checkpoints kept locally while GitHub was unreachable."),
    "init": ("init", "init", "Set a repository up: labels, issue form, agent hooks and commands."),
    "hook": ("hook", "hook", "Agent host hook entry points (session-start, pre-compact, checkpoint-due)."),
    "statusline": ("statusline", "statusline", "One line for Claude Code's status line: checkpoint, changes, fill."),
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
        command = getattr(importlib.import_module(f"ghstate.commands.{module}"), attribute)
        from ghstate.commands.json_output import with_gh_json  # --json [FIELD,…] and --jq, for every command

        return with_gh_json(command)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                            list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            from ghstate.commands.json_output import json_argv

            rest = json_argv(command, rest)
        return name, command, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary) for name, (_, _, summary) in COMMANDS.items()])

    def invoke(self, ctx: click.Context) -> None:
        if "ghstate.services.interrupt" in sys.modules:  # a command run before in this process (tests)
            sys.modules["ghstate.services.interrupt"].reset()
        try:
            self._invoke(ctx)  # a command's return value is no exit code (``main`` reads only Exit's)
        finally:
            if "ghstate.git.gitinfo" in sys.modules:
                sys.modules["ghstate.git.gitinfo"].discard_prefetched()

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise
        except Exception as exc:
            if _interrupt_received():  # a failure Ctrl-C caused (a git it killed): said as the interruption
                _interrupted()
            if _debugging():
                raise
            failure = click.ClickException(failure_message(exc))
            failure.exit_code = getattr(exc, "exit_code", 1)  # 3: nothing ready to claim; 4: claimed by another
            raise failure from None


_SIGINT: list[bool] = []  # one entry once SIGINT arrived in this process


def _interrupt_received() -> bool:
    return bool(_SIGINT)


def _interrupted() -> NoReturn:
    """Ctrl-C: one line that says whether the write landed (and its revision) or was not made, exit 130.
    Asking the store whether a write under way landed may be stopped by a second Ctrl-C; a third waits."""
    from ghstate.services import interrupt

    message = interrupt.line()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo(f"Error: {message}", err=True)
    raise click.exceptions.Exit(130)


def _exit_interrupted() -> NoReturn:
    """``_interrupted`` outside click: the line, then exit 130."""
    try:
        _interrupted()
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)


def _on_sigint(signum: int, frame: Any) -> None:
    _SIGINT.append(True)
    raise KeyboardInterrupt


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


class Ticker:
    """After ``after`` seconds, one line on a terminal's stderr that says what the command is doing
    (``ghstate.progress``) and for how long, rewritten in place; erased before anything else is written
    to stderr (a warning, the error line) and when the command is done."""

    def __init__(self, stream: Any, after: float = 2.0, every: float = 0.5) -> None:
        import threading

        self.stream, self.after, self.every = stream, after, every
        self.shown = False
        self.lock = threading.Lock()

    def line(self, seconds: float) -> str:
        from ghstate import progress

        return f"ghstate: {progress.current() or 'working'}… {seconds:.0f} s"

    def show(self, seconds: float) -> None:
        with self.lock:
            self.stream.write(f"\r\033[K{self.line(seconds)}")
            self.stream.flush()
            self.shown = True

    def erase(self) -> None:
        with self.lock:
            self._erase()

    def _erase(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False

    def write(self, text: str) -> int:
        """stderr's write while the ticker runs: the ticker's line goes first."""
        with self.lock:
            self._erase()
            return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:  # the rest of stderr as it is (isatty, encoding, flush, …)
        return getattr(self.stream, name)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        import threading
        import time

        done = threading.Event()
        start = time.monotonic()

        def tick() -> None:
            if done.wait(self.after):
                return
            while not done.is_set():
                self.show(time.monotonic() - start)
                done.wait(self.every)

        thread = threading.Thread(target=tick, name="ghstate-ticker", daemon=True)
        saved, sys.stderr = sys.stderr, self
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            sys.stderr = saved
            self.erase()


def _ticking(args: list[str]) -> contextlib.AbstractContextManager[None]:
    """The ticker on a terminal; nothing where stderr is read by a program (agents, hooks, CI, tests),
    nor for the MCP server, which runs until its host stops it."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    command = next((a for a in args if not a.startswith("-")), "")
    if not interactive or command == "mcp":
        return contextlib.nullcontext()
    return Ticker(sys.stderr).running()


def main() -> None:
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where SIGINT is ignored
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        with _ticking(sys.argv[1:]):
            code = cli.main(prog_name="ghstate", standalone_mode=False)
    except KeyboardInterrupt:  # once the command had finished (its ticker stopping): what it wrote is said
        _exit_interrupted()
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort as exc:  # Ctrl-C while click itself ran (reading the arguments): nothing was written
        if not isinstance(exc.__cause__, KeyboardInterrupt):
            raise
        _exit_interrupted()
    except BrokenPipeError:  # `ghstate list | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    sys.exit(code or 0)
