"""The branch index on GitHub: which checkpoint is a branch's, found in the same requests at any count.

Each branch with a checkpoint has a ref ``refs/ghstate/branches/B`` (B the branch's name, every byte but
letters, digits, ``_`` and ``-`` written ``%XX``, so that ``a`` and ``a/b`` never collide) pointing at a
small commit whose message names the checkpoint: ``ghstate #24: the checkpoint of branch feature/x``, then
one JSON object. It is created with the checkpoint, moved with compare-and-swap (two creators racing for
one branch: one wins, the other's issue is closed as its duplicate), moved by ``--move``, and left in place
when the checkpoint closes (a session on that branch is told it closed).

A checkpoint the index does not hold (made by the issue form, by a person, by an older ghstate, or before
the index) is found with GitHub's issue search: a branch without an entry is searched for (``BranchSearch``:
the phrase "branch B" in bodies, which a marker's ``"branch": "B"`` and the form's ``### Branch`` then B
hold, "heads/B" for a form that names the whole ref, and "Checkpoint B" in titles), and the branch each
found body names is checked. What the search misses is only what is seconds old (its index lags), and
ghstate's own new checkpoints are in the branch index by then. The first write by branch to such a
checkpoint adds its entry.

Only an issue a trusted author opened (``Policy.trusts``: the associations and logins trusted for comments, or
the token's own user) is a branch's checkpoint: on a public repository anyone may open an issue from the form,
which names a branch and gets the label. Another one that names the branch is said in one line and passed
over by the entry, the search and the scan alike, and never indexed.

Requests: a lookup 1 (``BranchCheckpoint``: the ref and the branch's pull requests), then the checkpoint by
number 1; a branch without an entry 1 more (the search); indexing a branch 2 (the commit over REST,
``updateRefs``), once per checkpoint and branch.
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
from ghstate.github.transport import GraphQLFailure
from ghstate.store import UNINDEXED, Stored, Unindexed, passed_over

PREFIX = "refs/ghstate/branches/"
INDEXED = "refs/ghstate/indexed"  # set by ghstate 0.x while it trusted the index alone for "none"; no longer read
SEARCHED = 5  # candidates each of a branch's three searches reads, with their bodies
PHRASE = 100  # characters of a branch's name searched for (a longer one: its start; each body is checked whole)
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


def _trusted(store: Any, node: dict[str, Any], branch: str) -> bool:
    """Whether a search's (or listing's) issue was opened by a trusted author; one that was not is said."""
    from ghstate.github.body import login

    author, association = login(node.get("author")), str(node.get("authorAssociation") or "")
    if store.trusts(author, association):
        return True
    passed_over(store.notices, int(node["number"]), author, association, branch)
    return False


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

    def find(self, branch: str) -> Stored | None | Unindexed:
        """The checkpoint of ``branch``, open or closed (two requests by its entry; an entry that names a closed
        one, the open one GitHub's search finds first, four, else the closed one, three); without an entry, the
        open one GitHub's search finds (three), None (two); UNINDEXED when neither can tell (the search refused,
        or more issues name the branch's words than it reads): the open checkpoints are looked through then."""
        store = self.store
        answer = store.graphql("branch_checkpoint", store.variables(ref=ref_name(branch), branch=branch),
                               what=f"finding the checkpoint of branch {branch} in {store.repo_name}",
                               tolerate=("index",))
        data, _ = store.tolerated(answer, "the branch index")
        repository = data.get("repository") or {}
        store._issues_enabled(repository)
        store.repository_id = repository.get("id") or store.repository_id
        self.pulls[branch] = next((PullRequest(int(p["number"]), str(p.get("url") or ""))
                                   for p in (repository.get("pullRequests") or {}).get("nodes") or ()
                                   if p and p.get("state") == "OPEN" and not p.get("isCrossRepository")), None)
        target = (repository.get("index") or {}).get("target") or {}
        number = number_of(str(target.get("message") or ""), branch)
        self.read[branch] = Entry(str(target.get("oid") or ""), number)
        if number is None:
            if target.get("oid"):
                store.notices.append(f"{ref_name(branch)} names no checkpoint of branch {branch} (moved by hand?): "
                                     "it was looked for by search instead")
            return self.search(branch)  # (a token that may not read refs: said, and searched for too)
        try:
            stored = store.get(number)
        except NotFound:  # deleted, transferred, or a pull request now: not the branch's
            store.notices.append(f"the branch index names #{number} for branch {branch}, which cannot be read: "
                                 "it was looked for by search instead")
            return self.search(branch)
        if not branch_match(stored.body, stored.title, branch):
            store.notices.append(f"the branch index names #{number} for branch {branch}, whose marker names "
                                 "another branch: it was looked for by search instead")
            return self.search(branch)
        if not stored.trusted:  # indexed by an older ghstate, which took anyone's issue
            passed_over(store.notices, stored.number, stored.author, stored.association, branch)
            return self.search(branch)
        if stored.state == "closed":  # an open one made since without an entry (the form, an older ghstate)
            found = self.search(branch)  # comes first; none: the closed one, said to be closed
            return stored if found is None else found
        return stored

    def search(self, branch: str) -> Stored | None | Unindexed:
        """The newest open checkpoint whose marker (or issue form) names ``branch``, among those GitHub's issue
        search finds for its words (one request), read by number (one more); None when the search finds none;
        UNINDEXED when it cannot tell (refused, or more found than it reads and none of those the branch's)."""
        store = self.store
        words = " ".join(branch.replace('"', " ").split())[:PHRASE]
        scope = f'repo:{store.repo_name} is:issue is:open label:"{store.policy.label.replace(chr(34), "")}"'
        try:
            data = store.graphql("branch_search", {"body": f'{scope} in:body "branch {words}"',
                                                   "ref": f'{scope} in:body "heads/{words}"',
                                                   "title": f'{scope} in:title "checkpoint {words}"',
                                                   "first": SEARCHED},
                                 what=f"searching for the checkpoint of branch {branch} in {store.repo_name}")
        except GraphQLFailure as exc:  # refused (a GHES without search, a search limit): look through them all
            store.notices.append(f"GitHub's issue search could not look for branch {branch}'s checkpoint ({exc}): "
                                 "the open checkpoints were looked through instead")
            return UNINDEXED
        store.learn_viewer(data)
        found = [(data.get(part) or {}) for part in ("body", "ref", "title")]
        nodes = sorted({int(n["number"]): n for part in found for n in part.get("nodes") or () if n and n.get("number")
                        }.values(), key=lambda n: str(n.get("updatedAt") or ""), reverse=True)
        matches = [(branch_match(str(n.get("body") or ""), str(n.get("title") or ""), branch), n) for n in nodes
                   if str(n.get("state") or "OPEN") == "OPEN"]
        matches = [(m, n) for m, n in matches if not m or _trusted(store, n, branch)]
        best = next((n for m, n in matches if m == 2), None) or next((n for m, n in matches if m), None)
        if best is None:
            more = any((part.get("pageInfo") or {}).get("hasNextPage") for part in found)
            return UNINDEXED if more else None
        stored = store.get(int(best["number"]))
        if not stored.trusted:  # (its association read again by number)
            passed_over(store.notices, stored.number, stored.author, stored.association, branch)
            return UNINDEXED
        return stored if branch_match(stored.body, stored.title, branch) else UNINDEXED

    def claim(self, stored: Stored, branch: str, leaving: str = "") -> int:
        """Make ``branch``'s entry name ``stored`` (``leaving``: the branch it was moved from, whose entry is
        dropped when it names it); the checkpoint the entry names afterwards: another one when its creator
        indexed the branch first (two created at once). No request when a lookup found it so already; a
        failure is a notice (the write it follows stands: the branch is then found by looking)."""
        known = self.read.get(branch)
        if known is not None and known.number == stored.number and not leaving:
            return stored.number
        store = self.store
        if not stored.trusted:  # written by number (the person chose it): still never a branch's checkpoint
            passed_over(store.notices, stored.number, stored.author, stored.association, branch, indexed=True)
            return stored.number
        try:
            known = known or self._entry(branch)  # not looked up (a write by number, --new): read now
            oid = store.chain.commit(message(stored.number, branch), "", [])
            updates: list[dict[str, Any]] = [{"name": ref_name(branch), "afterOid": oid, "force": True,
                                              "beforeOid": known.oid or ZERO}]
            if leaving and leaving != branch:
                left = self._entry(leaving)
                if left.number == stored.number:
                    updates.append({"name": ref_name(leaving), "afterOid": ZERO, "beforeOid": left.oid})
            answer = self._move(branch, oid, updates)
            if answer.get("errors"):
                now = self._entry(branch)
                if now.number is None:
                    raise GhstateError(store.said(answer["errors"]))
                self.read[branch] = now
                return now.number  # another writer's checkpoint for the branch (or this one) was indexed first
        except GhstateError as exc:
            store.notices.append(f"branch {branch} could not be added to the branch index ({exc}); its checkpoint "
                                 f"#{stored.number} is found by GitHub's issue search")
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
