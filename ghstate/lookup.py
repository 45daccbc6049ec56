"""Finding a checkpoint in a store and reading it: shared by every command, light to import."""

from __future__ import annotations

from ghstate.model import Checkpoint
from ghstate.parse import branch_of, parse
from ghstate.stores import Store, Stored


def checkpoint_of(stored: Stored) -> Checkpoint:
    """The parsed checkpoint; on GitHub the issue title is the title."""
    cp = parse(stored.body).checkpoint
    return cp._replace(title=stored.title) if stored.title else cp


def locate(store: Store, number: int | None, branch: str) -> Stored | None:
    """ISSUE when given, else the most recent open checkpoint whose marker names ``branch``. With no
    branch (outside git, a detached HEAD) that is the most recent one written without a branch."""
    if number is not None:
        return store.get(number)
    for stored in store.iter_open():
        if branch_of(stored.body) == branch:
            return stored
    return None
