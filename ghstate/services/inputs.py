"""Reading what a user gives as a checkpoint: a file or standard input, a markdown body or a JSON state,
checked before anything is written (UTF-8 text, not empty, not binary, no control characters)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ghstate.core.markup import control_at, not_text
from ghstate.core.model import GITHUB_LIMIT, Checkpoint
from ghstate.core.parse import Parsed, ParseError, parse
from ghstate.core.sections import SECTIONS
from ghstate.core.state_json import looks_like_json
from ghstate.errors import InputError

# The largest input read as a checkpoint: a markdown body twice what GitHub keeps in an issue (a body a
# little over is read, and the write names its largest sections), a JSON state eight times (it carries
# the text escaped, and ghstate's metadata beside it: about four times the body it stands for). Far
# larger input is refused before it is parsed, merged or kept anywhere. No stream is read past
# MAX_READ_BYTES.
MAX_MARKDOWN_CHARS = 2 * GITHUB_LIMIT
MAX_JSON_CHARS = 8 * GITHUB_LIMIT
MAX_READ_BYTES = 64 << 20


def check_size(text: str, name: str) -> None:
    """Refuse a checkpoint far larger than any checkpoint can be, before it is parsed."""
    json_state = text[:4096].lstrip()[:1] in ("{", "[")
    limit = MAX_JSON_CHARS if json_state else MAX_MARKDOWN_CHARS
    if len(text) > limit:
        kind = "a JSON state" if json_state else "a markdown body"
        raise InputError(f"{name} is {len(text):,} characters, far over what a checkpoint holds (GitHub keeps "
                         f"{GITHUB_LIMIT:,} in an issue; ghstate reads {kind} of at most {limit:,}): nothing was "
                         "read or written; keep logs and long notes out of it, or compact finished phases")


def read_input(path: str) -> tuple[str, str]:
    """(text, name) of a file or of stdin (``-``): UTF-8 text, not empty, not binary, not far larger than
    a checkpoint can be."""
    name = "standard input" if path == "-" else path
    try:
        if path != "-" and Path(path).stat().st_size > MAX_READ_BYTES:
            size = Path(path).stat().st_size
            raise InputError(f"{name} is {size:,} bytes, far over what a checkpoint holds (GitHub keeps "
                             f"{GITHUB_LIMIT:,} characters in an issue): nothing was read or written")
        raw = sys.stdin.buffer.read(MAX_READ_BYTES + 1) if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_READ_BYTES:
        raise InputError(f"{name} is over {MAX_READ_BYTES:,} bytes, far over what a checkpoint holds (GitHub "
                         f"keeps {GITHUB_LIMIT:,} characters in an issue): nothing was read or written")
    if b"\x00" in raw:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text (bad byte at offset {exc.start}); "
                         "save it as UTF-8 and try again") from None
    check_size(text, name)
    return check_text(text, name), name


def check_text(text: str, name: str) -> str:
    """The text itself, when it can be a checkpoint: not empty, no NUL or other control characters."""
    if "\x00" in text:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    if not text.strip():
        raise InputError(f"{name} is empty; give a markdown body or a JSON state")
    at = control_at(text)
    if at >= 0 and not looks_like_json(text):  # in JSON, from_json names the field that holds it
        said = not_text(text, at, "only tab and newline are text: remove it (terminal output?)")
        raise InputError(f"{name} holds {said}")
    return text


def load_text(text: str, name: str) -> tuple[Checkpoint, frozenset[str]]:
    """A checkpoint from checked text (a markdown body or a JSON state) and the sections it names."""
    from ghstate.core.state_json import StateError, check_keys, from_json

    if looks_like_json(text):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{name} looks like JSON but is not valid JSON: {exc}") from None
        try:
            check_keys(data)
            cp = from_json(data)
        except StateError as exc:
            raise InputError(f"{name}: invalid state: {exc}") from None
        from ghstate.core.model import SECTION_KEYS

        present = frozenset(k for k in (*SECTION_KEYS, "extra") if k in data)  # "extra": all unknown sections
        return cp, present
    parsed = parse_text(text, name)
    broken = next((f for f in parsed.findings if f.code == "GS007"), None)
    if broken is not None:  # as lint refuses it: its data would be lost, and the checkpoint with its branch
        raise InputError(f"{name}, line {broken.line}: the ghstate marker is not valid JSON (GS007); fix it, or "
                         "take the line out (the checkpoint keeps its own)")
    if not parsed.present and parsed.marker_lines is None:
        # Not one of a checkpoint's sections and no marker: a source file given to --file when --files (a file
        # to re-read) was meant is far likelier than a checkpoint (its '# comment' lines read as headings).
        instead = f" (to add {name} to the files to re-read: --files {name})" if name not in _NOT_PATHS else ""
        raise InputError(f"{name} holds none of a checkpoint's sections ({', '.join(_HEADINGS)}, …) and no ghstate "
                         f"marker: give a checkpoint body or a JSON state{instead}")
    return parsed.checkpoint, parsed.present


_NOT_PATHS = ("standard input", "the body")
_HEADINGS = tuple(f"## {s.heading}" for s in SECTIONS[:3])  # the first few, as an example


def parse_text(text: str, name: str) -> Parsed:
    try:
        return parse(text)
    except ParseError as exc:
        raise InputError(f"{name}: {exc}") from None
