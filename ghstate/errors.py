"""The one family of failures a user can act on. ``cli.main`` turns each into ``Error: …`` and exit 1."""

from __future__ import annotations


class GhstateError(Exception):
    """A failure with a message that says what failed, why, and what to do; ``exit_code`` is the CLI's."""

    exit_code = 1


class InputError(GhstateError):
    """Bad input: a file that is missing, empty, binary, or not a checkpoint."""


class NotFound(GhstateError):
    """A checkpoint (or phase) that does not exist."""


class ConfigError(GhstateError):
    """A configuration file, flag combination or environment that cannot work."""


class RemoteError(GhstateError):
    """GitHub refused the request or could not be reached. ``unreachable``: GitHub did not answer within the
    command's budget (refused connections, timeouts, 5xx, a rate limit asking for a longer wait than the
    budget): what this machine last saw of a checkpoint may stand in for it."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None,
                 unreachable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.unreachable = unreachable


class NothingReady(GhstateError):
    """No child task is ready to claim (all done, claimed, or waiting for others): exit 3."""

    exit_code = 3


class HeldByAnother(GhstateError):
    """The task is claimed by another agent whose lease has not run out (the message names both): exit 4."""

    exit_code = 4


class SecretFound(GhstateError):
    """Text about to be written to a checkpoint (or posted) looks like it holds a credential."""


def failure_message(exc: Exception) -> str:
    """The one line (after ``Error: ``) that tells a user what failed: the CLI's and the MCP server's."""
    if isinstance(exc, GhstateError):
        return _one_line(str(exc))
    if isinstance(exc, OSError):
        path = f" {exc.filename}" if exc.filename else ""
        return _one_line(
            f"cannot use{path}: {exc.strerror or exc}; check that the folder exists and is writable "
            "(the local store is ghstate/ in the clone's git folder, or GHSTATE_DIR)")
    if isinstance(exc, UnicodeEncodeError) and "surrogates" in str(exc):  # what the input checks did not reach
        return _one_line("an argument or input holds bytes that are not UTF-8 text (or a lone surrogate); give it "
                         "in UTF-8")
    if type(exc).__module__.startswith("jinja2"):
        name = getattr(exc, "filename", None) or getattr(exc, "name", None) or "a template"
        return _one_line(f"the template {name} cannot be used ({exc}); fix it, or remove it to use the built-in one")
    return _one_line(f"internal error ({type(exc).__name__}: {exc}); run again with GHSTATE_DEBUG=1 for a traceback "
                     "and report it")


def _one_line(message: str) -> str:
    return " ".join(message.split())
