"""The GraphQL documents ghstate sends to GitHub, one named file each (``NAME.graphql``).

Kept as files, not strings in code, so that the tests can judge every one against GitHub's published
schema (tests/test_github_schema.py) and a reader sees exactly what is sent. A fragment two documents
share lives once in ``fragments/NAME.graphql`` and is appended to each document that spreads it
(``...NAME``) without defining it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

FOLDER = Path(__file__).parent
_SPREAD = re.compile(r"\.\.\.\s*(?!on\b)([_A-Za-z][_0-9A-Za-z]*)")  # not an inline fragment's "... on T"
_DEFINED = re.compile(r"\bfragment\s+([_A-Za-z][_0-9A-Za-z]*)\s+on\b")


def names() -> list[str]:
    return sorted(path.stem for path in FOLDER.glob("*.graphql"))


@functools.cache
def document(name: str) -> str:
    """The text of ``NAME.graphql``; a missing one is a programming error (KeyError)."""
    path = FOLDER / f"{name}.graphql"
    if not path.is_file():
        raise KeyError(f"no GraphQL document named {name!r}")
    text = path.read_text(encoding="utf-8")
    while True:  # the shared fragments it spreads and does not define (theirs too)
        defined = set(_DEFINED.findall(text))
        wanted = [f for f in dict.fromkeys(_SPREAD.findall(text)) if f not in defined]
        if not wanted:
            return text
        for fragment in wanted:
            shared = FOLDER / "fragments" / f"{fragment}.graphql"
            if not shared.is_file():
                raise KeyError(f"{name}.graphql spreads {fragment}, which is neither in it nor in fragments/")
            text += "\n" + shared.read_text(encoding="utf-8")


def batch(name: str, count: int) -> str:
    """``NAME.graphql`` for ``count`` items in one request: each line marked ``# each`` is repeated for the
    items 0 … count-1, its ``_0`` becoming ``_1``, ``_2``, … (aliases and variables alike). The file as it
    is holds one item, so that it is judged against GitHub's schema like every other document."""
    if count < 1:
        raise ValueError("a batch holds at least one item")
    out = []
    for line in document(name).splitlines():
        if line.rstrip().endswith("# each"):
            out.extend(re.sub(r"_0\b", f"_{i}", line) for i in range(count))
        else:
            out.append(line)
    return "\n".join(out) + "\n"
