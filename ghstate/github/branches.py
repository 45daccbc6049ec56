"""The branch index on GitHub: which checkpoint is a branch's, found in one request at any count.

Each branch with a checkpoint has a ref ``refs/ghstate/branches/B`` (B the branch's name, every byte but
letters, digits, ``_`` and ``-`` written ``%XX``, so that ``a`` and ``a/b`` never collide) pointing at a
small commit whose message names the checkpoint: ``ghstate #24: the checkpoint of branch feature/x``, then
one JSON object. It is created with the checkpoint, moved with compare-and-swap (two creators racing for
one branch: one wins, the other's issue is closed as its duplicate), moved by ``--move``, and left in place
when the checkpoint closes (a session on that branch is told it closed). ``refs/ghstate/indexed`` says that
every open checkpoint is in the index: a branch without a ref then has none, said in one request.
Checkpoints an older ghstate wrote are not in it: their branch is found by looking through the open
checkpoints, and the write that found it adds it; the look that finds every open one indexed sets
``refs/ghstate/indexed``.

Requests: a lookup 1 (``BranchCheckpoint``: the ref, the flag and the branch's pull requests), then the
checkpoint by number 1; indexing a branch 2 (the commit over REST, ``updateRefs``), once per checkpoint
and branch.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, NamedTuple

from ghstate.core.chain import ZERO
from ghstate.core.marker import PullRequest
from ghstate.core.parse import branch_match
from ghstate.errors import GhstateError, NotFound
from ghstate.store import UNINDEXED, Stored, Unindexed

PREFIX = "refs/ghstate/branches/"
INDEXED = "refs/ghstate/indexed"
FORMAT = "ghstate-branch/1"
LONGEST = 200  # characters of an encoded name; a longer branch is named by its digest
_PLAIN = re.compile(r"[A-Za-z0-9_-]")
_NUMBER = re.compile(r"^ghstate #(\d+)\b")


def ref_name(branch: str) -> str:
    """The branch's ref in the index: one path component, valid for Git whatever the branch is called."""
    encoded = "".join(c if _PLAIN.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in branch)
    if len(encoded) > LONGEST:
        encoded = "sha256-" + hashlib.sha256(branch.encode("utf-8")).hexdigest()
    return PREFIX + encoded


def message(number: int, branch: str) -> str:
    """The message of the commit a branch's ref points at: a headline a person can read, and its record."""
    record = json.dumps({"format": FORMAT, "checkpoint": number, "branch": branch}, ensure_ascii=False)
    return f"ghstate #{number}: the checkpoint of branch {' '.join(branch.split())[:150]}\n\n{record}\n"


def number_of(text: str, branch: str | None = None) -> int | None:
    """The checkpoint a branch ref's commit names (its headline alone when ``branch`` is None); None when it
    is no commit of the index, or one of another branch's (a ref moved by hand)."""
    found = _NUMBER.match(text or "")
    if found is None:
        return None
    if branch is None:
        return int(found.group(1))
    start = text.find("\n{")
    try:
        data = json.loads(text[start + 1:]) if start >= 0 else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("branch") != branch \
            or data.get("checkpoint") != int(found.group(1)):
        return None
    return int(found.group(1))


class Entry(NamedTuple):
    """A branch's place in the index as a lookup read it: the commit its ref points at ("" none) and the
    checkpoint it names (None: none, or not one of the index's)."""

    oid: str
    number: int | None


class BranchIndex:
    """The branch index of one repository, read and written through its GitHub store."""

    def __init__(self, store: Any) -> None:  # the GitHubStore it serves (``ghstate.github.store``)
        self.store = store
        self.read: dict[str, Entry] = {}  # branch -> its entry, as looked up in this command
        self.pulls: dict[str, PullRequest | None] = {}  # branch -> its open pull request, read with the lookup
        self.indexed = False  # refs/ghstate/indexed was there at a lookup
        self._asked = False  # whether every open checkpoint is in the index was asked in this command

    def find(self, branch: str) -> Stored | None | Unindexed:
        """The checkpoint of ``branch``, open or closed (two requests), None (one), UNINDEXED when the index
        cannot tell (not set up everywhere yet, a ref that names another branch's checkpoint, refs the token
        may not read): the open checkpoints are looked through then."""
        store = self.store
        answer = store.graphql("branch_checkpoint", store.variables(ref=ref_name(branch), indexed=INDEXED,
                                                                     branch=branch),
                               what=f"finding the checkpoint of branch {branch} in {store.repo_name}",
                               tolerate=("index", "indexed"))
        data, readable = store.tolerated(answer, "the branch index")
        repository = data.get("repository") or {}
        store._issues_enabled(repository)
        store.repository_id = repository.get("id") or store.repository_id
        self.pulls[branch] = next((PullRequest(int(p["number"]), str(p.get("url") or ""))
                                   for p in (repository.get("pullRequests") or {}).get("nodes") or ()
                                   if p and p.get("state") == "OPEN" and not p.get("isCrossRepository")), None)
        target = (repository.get("index") or {}).get("target") or {}
        number = number_of(str(target.get("message") or ""), branch)
        self.read[branch] = Entry(str(target.get("oid") or ""), number)
        self.indexed = self.indexed or repository.get("indexed") is not None
        if not readable:
            return UNINDEXED
        if number is None:
            if target.get("oid"):
                store.notices.append(f"{ref_name(branch)} names no checkpoint of branch {branch} (moved by hand?): "
                                     "the open checkpoints were looked through instead")
                return UNINDEXED
            return None if repository.get("indexed") is not None else UNINDEXED
        try:
            stored = store.get(number)
        except NotFound:  # deleted, transferred, or a pull request now: not the branch's
            store.notices.append(f"the branch index names #{number} for branch {branch}, which cannot be read: "
                                 "the open checkpoints were looked through instead")
            return UNINDEXED
        if not branch_match(stored.body, stored.title, branch):
            store.notices.append(f"the branch index names #{number} for branch {branch}, whose marker names "
                                 "another branch: the open checkpoints were looked through instead")
            return UNINDEXED
        return stored

    def claim(self, stored: Stored, branch: str, leaving: str = "") -> int:
        """Make ``branch``'s entry name ``stored`` (``leaving``: the branch it was moved from, whose entry is
        dropped when it names it); the checkpoint the entry names afterwards: another one when its creator
        indexed the branch first (two created at once). No request when a lookup found it so already; a
        failure is a notice (the write it follows stands: the branch is then found by looking)."""
        known = self.read.get(branch)
        if known is not None and known.number == stored.number and not leaving:
            return stored.number
        store = self.store
        try:
            known = known or self._entry(branch)  # not looked up (a write by number, --new): read now
            oid = store.chain.commit(message(stored.number, branch), "", [])
            updates: list[dict[str, Any]] = [{"name": ref_name(branch), "afterOid": oid, "force": True,
                                              "beforeOid": known.oid or ZERO}]
            if leaving and leaving != branch:
                left = self._entry(leaving)
                if left.number == stored.number:
                    updates.append({"name": ref_name(leaving), "afterOid": ZERO, "beforeOid": left.oid})
            flag = [{"name": INDEXED, "afterOid": oid, "beforeOid": ZERO}] if self._complete(branch) else []
            answer = self._move(branch, oid, updates + flag)
            if answer.get("errors") and flag and self._entry(branch).oid == known.oid:
                answer = self._move(branch, oid, updates)  # refs/ghstate/indexed set meanwhile, by another writer
            if answer.get("errors"):
                now = self._entry(branch)
                if now.number is None:
                    raise GhstateError(store.said(answer["errors"]))
                self.read[branch] = now
                return now.number  # another writer's checkpoint for the branch (or this one) was indexed first
        except GhstateError as exc:
            store.notices.append(f"branch {branch} could not be added to the branch index ({exc}); its checkpoint "
                                 f"#{stored.number} is found by looking through the open checkpoints")
            return stored.number
        self.read[branch] = Entry(oid, stored.number)
        return stored.number

    def _move(self, branch: str, oid: str, updates: list[dict[str, Any]]) -> dict[str, Any]:
        """The index's refs moved in one ``updateRefs`` (all or none), its whole answer (a lost one is looked
        into: moved when the branch's ref points at ``oid``)."""
        store = self.store
        return store.graphql("update_refs", {"input": {"repositoryId": store.repository_id, "refUpdates": updates}},
                             partial=True, what=f"indexing the checkpoint of branch {branch}",
                             landed=lambda: {} if self._entry(branch).oid == oid else None)

    def _entry(self, branch: str) -> Entry:
        """The branch's entry as it is now, and the repository's id (one request)."""
        store = self.store
        data = store.graphql("ref_state", store.variables(ref=ref_name(branch)), what=f"reading {ref_name(branch)}")
        store.repository_id = (data.get("repository") or {}).get("id") or store.repository_id
        target = ((data.get("repository") or {}).get("ref") or {}).get("target") or {}
        return Entry(str(target.get("oid") or ""), number_of(str(target.get("message") or ""), branch))

    def _complete(self, branch: str) -> bool:
        """Whether, with ``branch`` added, every branch with an open checkpoint is in the index, as far as a
        look through all of them in this command showed (then refs/ghstate/indexed is set with the entry).
        The index's refs are read for it (a request per 100 branches), once."""
        seen = self.store.seen_branches
        if self.indexed or self._asked or seen is None:
            return False
        self._asked = True  # once in a command, whatever the answer
        wanted = {ref_name(b).removeprefix(PREFIX) for b in seen} - {ref_name(branch).removeprefix(PREFIX)}
        after = None
        while wanted:
            data = self.store.graphql("branch_index", self.store.variables(after=after),
                                      what="reading the branch index")
            page = ((data.get("repository") or {}).get("index")) or {}
            wanted -= {str(node.get("name") or "") for node in page.get("nodes") or () if node}
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                break
            after = info.get("endCursor")
        return not wanted
