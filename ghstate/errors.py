"""The one family of failures a user can act on. ``cli.main`` turns each into ``Error: …`` and exit 1."""

from __future__ import annotations


class GhstateError(Exception):
    """A failure with a message that says what failed, why, and what to do."""


class InputError(GhstateError):
    """Bad input: a file that is missing, empty, binary, or not a checkpoint."""


class NotFound(GhstateError):
    """A checkpoint (or phase) that does not exist."""


class ConfigError(GhstateError):
    """A configuration file, flag combination or environment that cannot work."""


class RemoteError(GhstateError):
    """GitHub refused the request or could not be reached."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class SecretFound(GhstateError):
    """Text about to leave the machine looks like it holds a credential."""
