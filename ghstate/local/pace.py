"""Pacing the writes this machine sends to GitHub, across processes: GitHub's secondary rate limit allows
about 80 content-creating requests a minute (issue writes, comments) to one account, and agents sharing
a token share it. Each write waits until INTERVAL after the last one any ghstate process on this machine
sent for the same repository, so that thirty agents writing at once on this machine stay under the limit
instead of being refused and retried (machines sharing one token are not paced together: GitHub's
Retry-After is then waited out). The last write's time is a file in the user's cache folder, under a file lock; a
cache folder that cannot be used paces nothing (the limit's Retry-After is then waited out)."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ghstate.local.store import file_lock

INTERVAL = 0.8  # seconds between writes: 75 a minute, under GitHub's 80
MOST = 2  # turns one write takes at most (a chain's commit and its move), the longest wait
WRITING_WAIT = 10.0  # seconds a write waits for this machine's turn at writing before it goes without it
_WRITING: set[Path] = set()  # the turns this process holds


def _now() -> float:
    return time.time()


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


class Pacer:
    def __init__(self, folder: Path, key: str, *, interval: float = INTERVAL,
                 clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None) -> None:
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        self.path = folder / f"pace-{name}"
        self.interval = interval
        self.clock = clock or (lambda: _now())  # looked up when called: tests set the module's own
        self.sleep = sleep or (lambda seconds: _sleep(seconds))

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this machine's turn at writing to the repository for a whole write (its read, its commit and
        its move): writers on one machine go one at a time, and never race each other's compare-and-swap.
        A turn not had within WRITING_WAIT seconds (a write held up by GitHub), or a folder that cannot be
        used, holds nothing: the chain's compare-and-swap still keeps writers apart."""
        if self.path in _WRITING:  # this process has the turn already (a write inside a write): it is its own
            yield
            return
        with file_lock(self.path.with_suffix(".writing"), wait=WRITING_WAIT) as held:
            if held:
                _WRITING.add(self.path)
            try:
                yield
            finally:
                _WRITING.discard(self.path)

    def before_write(self, requests: int = 1) -> float:
        """Wait until this write's turn, which lasts ``requests`` turns (a write that sends two content-
        creating requests takes two); the seconds waited (0 when the folder cannot be used)."""
        try:
            with file_lock(self.path.with_suffix(".lock")):
                try:
                    last = float(self.path.read_text() or 0)
                except (OSError, ValueError):
                    last = 0.0
                now = self.clock()
                wait = max(0.0, min(self.interval * MOST, last + self.interval - now))
                if wait:
                    self.sleep(wait)
                self.path.write_text(repr(now + wait + self.interval * (min(max(1, requests), MOST) - 1)))
                return wait
        except OSError:
            return 0.0
