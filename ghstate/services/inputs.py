"""Reading what a user gives as a checkpoint: a file or standard input, a markdown body or a JSON state,
checked before anything is written (UTF-8 text, not empty, not binary, no control characters)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ghstate.core.markup import control_at, describe_control
from ghstate.core.model import Checkpoint
from ghstate.core.parse import Parsed, ParseError, parse
from ghstate.core.state_json import looks_like_json
from ghstate.errors import InputError


def read_input(path: str) -> tuple[str, str]:
    """(text, name) of a file or of stdin (``-``): UTF-8 text, not empty, not binary."""
    name = "standard input" if path == "-" else path
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a folder, not a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not UTF-8 text (bad byte at offset {exc.start}); "
                         "save it as UTF-8 and try again") from None
    return check_text(text, name), name


def check_text(text: str, name: str) -> str:
    """The text itself, when it can be a checkpoint: not empty, no NUL or other control characters."""
    if "\x00" in text:
        raise InputError(f"{name} is binary (it contains NUL bytes), not a markdown or JSON checkpoint")
    if not text.strip():
        raise InputError(f"{name} is empty; give a markdown body or a JSON state")
    at = control_at(text)
    if at >= 0 and not looks_like_json(text):  # in JSON, from_json names the field that holds it
        raise InputError(f"{name} holds a control character ({describe_control(text, at)}); only tab and "
                         "newline are text: remove it (terminal output?)")
    return text


def load_text(text: str, name: str) -> tuple[Checkpoint, frozenset[str]]:
    """A checkpoint from checked text (a markdown body or a JSON state) and the sections it names."""
    from ghstate.core.state_json import StateError, from_json

    if looks_like_json(text):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{name} looks like JSON but is not valid JSON: {exc}") from None
        try:
            cp = from_json(data)
        except StateError as exc:
            raise InputError(f"{name}: invalid state: {exc}") from None
        from ghstate.core.model import SECTION_KEYS

        present = frozenset(k for k in SECTION_KEYS if k in data)
        return cp, present
    parsed = parse_text(text, name)
    return parsed.checkpoint, parsed.present


def parse_text(text: str, name: str) -> Parsed:
    try:
        return parse(text)
    except ParseError as exc:
        raise InputError(f"{name}: {exc}") from None
