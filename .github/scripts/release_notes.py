"""A version's section of CHANGELOG.md, as the release's notes: ``python .github/scripts/release_notes.py X.Y.Z``.

Prints the section's body (the lines under ``## [X.Y.Z] - DATE``, up to the next ``## ``), and fails when the
changelog has no such section or it is empty: a release is not cut without its notes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?[ \t]*$", re.M)


def sections(text: str) -> list[tuple[str, str, str]]:
    """Every ``## [VERSION] - DATE`` section, newest first: (version, date or "", body)."""
    found = list(HEADING.finditer(text))
    out = []
    for i, heading in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        body = text[heading.end():end]
        body = body.split("\n[", 1)[0] if i + 1 == len(found) else body  # the link references below the last
        out.append((heading["version"], heading["date"] or "", body.strip("\n")))
    return out


def notes(version: str, text: str) -> str:
    for found, _, body in sections(text):
        if found == version:
            if not body.strip():
                raise SystemExit(f"CHANGELOG.md: the section of {version} is empty")
            return body + "\n"
    raise SystemExit(f"CHANGELOG.md has no section '## [{version}] - YYYY-MM-DD'")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.stdout.write(notes(sys.argv[1].removeprefix("v"), CHANGELOG.read_text()))
