"""Claims on the local store: ``claims/N/G.json`` of the clone's store (every worktree's), generation G of the
claim on child N.

A claim is taken, renewed, taken over or released by creating the next generation's file, exclusively:
the name is linked into place only if nothing has it (link(2) fails with EEXIST, as an O_EXCL create
does), with the record already whole in it. Of any number of processes that saw generation G, exactly one
creates G + 1; the others see EEXIST and lost. Files are never rewritten or removed, so a generation,
once seen, never comes back (no ABA): the newest file is the claim's state. Kept out of git (its own
``.gitignore``): a claim is about the agents on this machine.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ghstate.core.claims import Claim, Held
from ghstate.local.store import atomic_create

_GENERATION = re.compile(r"^([1-9][0-9]{0,9})\.json$")


class LocalClaims:
    def __init__(self, directory: Path) -> None:
        self.directory = directory  # claims/ of the store

    def _folder(self, child: int) -> Path:
        return self.directory / str(child)

    def read(self, child: int) -> Held:
        """The newest generation of ``child``'s claim ("0": never claimed)."""
        try:
            names = os.listdir(self._folder(child))
        except FileNotFoundError:
            return Held("0", None)
        generations = [int(m.group(1)) for m in map(_GENERATION.match, names) if m]
        if not generations:
            return Held("0", None)
        newest = max(generations)
        try:
            data = json.loads((self._folder(child) / f"{newest}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        claim = Claim.from_data(data.get("claim")) if isinstance(data, dict) else None
        return Held(str(newest), claim)

    def swap(self, child: int, seen: Held, claim: Claim | None, by: str = "") -> bool:
        """Make ``claim`` (None: released, by ``by``) the next generation after ``seen``; False when
        another process made it first."""
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            atomic_create(ignore, "# ghstate: claims of the agents on this machine\n*\n")
        folder = self._folder(child)
        folder.mkdir(exist_ok=True)
        record = {"claim": claim.to_data() if claim else None}
        if claim is None:
            record["released_by"] = by
        return atomic_create(folder / f"{int(seen.version) + 1}.json", json.dumps(record, ensure_ascii=False) + "\n")

    def held(self) -> dict[int, Claim]:
        """Every child's current claim (released ones left out), as one listing reads them."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return {}
        out = {}
        for name in names:
            if name.isdigit():
                claim = self.read(int(name)).claim
                if claim is not None:
                    out[int(name)] = claim
        return out
