"""What a long command is doing now, for the one line a terminal shows while it runs (``cli``'s ticker).

Anything may say its stage (``stage``): reading a large file, merging it, a GitHub request and its
retries. Holding a string is all this module does: the ticker in ``cli`` writes it to stderr, and only
on a terminal, after two seconds.
"""

from __future__ import annotations

_STAGE = [""]


def stage(text: str) -> None:
    _STAGE[0] = text


def current() -> str:
    return _STAGE[0]
