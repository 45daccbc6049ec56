"""Parsed checkpoints kept between runs, keyed by the body's digest: an unchanged body is never parsed
twice, so a repeated ``resume`` or SessionStart hook never loads the markdown parser at all.

An adapter (it reads and writes files): the cache lives in the user's cache folder (``XDG_CACHE_HOME``
or ``~/.cache``, ``ghstate/parsed-VERSION-CODE``), never in a repository, and ``GHSTATE_NO_CACHE=1``
turns it off with the compiled templates. ``CODE`` changes with the parser's own files, so an entry
is never read by a parser other than the one that wrote it. An entry is read back with an unpickler
that can build ghstate's own record types and nothing else (no callable, no other class): a damaged or
foreign file is a miss, never code that runs. At most ``KEEP`` entries are kept.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from pathlib import Path

from ghstate import __version__
from ghstate.model import Checkpoint

KEEP = 64
# The record types a parsed checkpoint is made of (all NamedTuples): the only globals an entry may name.
ALLOWED = {
    "ghstate.model": {"Checkpoint", "Phase", "Step", "Extra"},
    "ghstate.marker": {"Meta", "Execution", "DigestsAt", "LogState", "RevisionFacts", "ProvenanceRecord"},
    "ghstate.verify": {"Verification", "Run", "FailingTest"},
    "builtins": {"frozenset"},
}
_PARSER_FILES = ("parse.py", "markup.py", "marker.py", "model.py", "verify.py", "state_json.py")

_folder: Path | None = None


def use(cache_dir: str | None) -> None:
    """Keep parsed bodies beside the compiled templates' folder (None: no cache)."""
    global _folder
    if not cache_dir:
        _folder = None
        return
    package = Path(__file__).parent
    code = hashlib.sha256(repr([(name, (package / name).stat().st_mtime_ns, (package / name).stat().st_size)
                                for name in _PARSER_FILES]).encode()).hexdigest()[:12]
    _folder = Path(cache_dir).parent / f"parsed-{__version__}-{code}"


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type:
        if name in ALLOWED.get(module, ()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a checkpoint's part")


def checkpoint(body: str) -> Checkpoint:
    """``parse(body).checkpoint``, from the cache when this body was parsed before."""
    folder = _folder
    if folder is None:
        return _parse(body)
    entry = folder / f"{hashlib.sha256(body.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}.pickle"
    try:
        found = _Unpickler(io.BytesIO(entry.read_bytes())).load()
        if isinstance(found, Checkpoint):
            return found
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError,
            MemoryError, RecursionError):
        pass  # not there, or not one of ours: parse
    cp = _parse(body)
    _store(folder, entry, cp)
    return cp


def _parse(body: str) -> Checkpoint:
    from ghstate.parse import parse

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
    except OSError:
        pass
