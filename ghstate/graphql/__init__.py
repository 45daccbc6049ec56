"""The GraphQL documents ghstate sends to GitHub, one named file each (``NAME.graphql``).

Kept as files, not strings in code, so that the tests can judge every one against GitHub's published
schema (tests/test_github_schema.py) and a reader sees exactly what is sent.
"""

from __future__ import annotations

import functools
from pathlib import Path

FOLDER = Path(__file__).parent


def names() -> list[str]:
    return sorted(path.stem for path in FOLDER.glob("*.graphql"))


@functools.cache
def document(name: str) -> str:
    """The text of ``NAME.graphql``; a missing one is a programming error (KeyError)."""
    path = FOLDER / f"{name}.graphql"
    if not path.is_file():
        raise KeyError(f"no GraphQL document named {name!r}")
    return path.read_text(encoding="utf-8")
