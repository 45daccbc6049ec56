"""Parsed checkpoints kept between runs, keyed by the body's digest: an unchanged body is never parsed
twice, so a repeated ``resume`` or SessionStart hook never loads the markdown parser at all.

An adapter (it reads and writes files): the cache lives in the user's cache folder (``XDG_CACHE_HOME``
or ``~/.cache``, ``ghstate/parsed-VERSION-CODE``), never in a repository, and ``GHSTATE_NO_CACHE=1``
turns it off with the compiled templates. ``CODE`` changes with the parser's own files, so an entry
is never read by a parser other than the one that wrote it. An entry is read back with an unpickler
that can build ghstate's own record types and nothing else (no callable, no other class): a damaged or
foreign file is a miss, never code that runs, and is written anew. At most ``KEEP`` entries are kept,
the least recently read dropped first.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import os
import pickle
import sys
import time
from pathlib import Path

from ghstate import __version__
from ghstate.core.model import Checkpoint

KEEP = 64
MAX_ENTRY = 4 << 20  # bytes: a parsed 65,536-character body pickles to far less; a larger file is not ours
# The modules whose record types (NamedTuples, nothing else) a parsed checkpoint is made of: the only
# globals an entry may name. Their source files, and the markdown parser's, are part of the key.
RECORD_MODULES = ("ghstate.core.model", "ghstate.core.marker", "ghstate.core.verification")
_PARSER_FILES = ("parse.py", "markup.py", "marker.py", "model.py", "verification.py", "state_json.py")

_folder: Path | None = None


def use(cache_dir: str | None) -> None:
    """Keep parsed bodies beside the compiled templates' folder (None: no cache)."""
    global _folder
    if not cache_dir:
        _folder = None
        return
    core = Path(__file__).parents[1] / "core"
    files = [core / name for name in _PARSER_FILES]
    markdown_it = importlib.util.find_spec("markdown_it")  # its version too, without importing it
    if markdown_it is not None and markdown_it.origin:
        files.append(Path(markdown_it.origin).parent / "__init__.py")
    try:
        stamps = [(path.name, path.stat().st_mtime_ns, path.stat().st_size) for path in files]
    except OSError:
        _folder = None
        return
    code = hashlib.sha256(repr(stamps).encode()).hexdigest()[:12]
    _folder = Path(cache_dir).parent / f"parsed-{__version__}-{code}"


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type:
        if module in RECORD_MODULES:
            found = getattr(sys.modules.get(module) or importlib.import_module(module), name, None)
            if isinstance(found, type) and issubclass(found, tuple) and hasattr(found, "_fields"):
                return found  # a record type: building one runs no code but the tuple's own
        elif (module, name) == ("builtins", "frozenset"):
            return frozenset
        raise pickle.UnpicklingError(f"{module}.{name} is not a checkpoint's part")


def checkpoint(body: str) -> Checkpoint:
    """``parse(body).checkpoint``, from the cache when this body was parsed before."""
    folder = _folder
    if folder is None:
        return _parse(body)
    entry = folder / f"{hashlib.sha256(body.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}.pickle"
    try:
        if entry.stat().st_size <= MAX_ENTRY:
            found = _Unpickler(io.BytesIO(entry.read_bytes())).load()
            if isinstance(found, Checkpoint):
                os.utime(entry)  # read: the last to be dropped
                return found
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - damaged or not ours, whatever it is: a miss, and written anew
        pass
    cp = _parse(body)
    _store(folder, entry, cp)
    return cp


def _parse(body: str) -> Checkpoint:
    from ghstate.core.parse import parse

    return parse(body).checkpoint


def _store(folder: Path, entry: Path, cp: Checkpoint) -> None:
    """Write the entry whole or not at all (a temporary file renamed into place); a cache that cannot be
    written is no cache, never an error."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{entry.name}.{os.getpid()}"
        temporary.write_bytes(pickle.dumps(cp, protocol=5))
        os.replace(temporary, entry)
        entries = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
        for old in entries[:-KEEP]:
            old.unlink(missing_ok=True)
        if len(entries) > KEEP:  # now and then: what a killed writer left
            for left in folder.glob(".*.pickle.*"):
                if left.stat().st_mtime < time.time() - 3600:
                    left.unlink(missing_ok=True)
    except OSError:
        pass
