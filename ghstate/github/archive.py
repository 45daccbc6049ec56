"""Closed checkpoints' refs, folded into one: the refs ghstate keeps grow with open checkpoints, not with every
checkpoint ever made (every ``git push`` and ``git ls-remote`` to the repository downloads them all).

Closing a checkpoint (``GitHubStore.close``, whoever closes it: ``ghstate close``, the Action on a merge, a
duplicate) folds its chain into ``refs/ghstate/archive``: a commit whose parents are the archive's head and the
chain's head (its message names the checkpoint and that head), then one ``updateRefs`` moves the archive to it
and deletes ``refs/ghstate/checkpoints/N``, both compared with what was read (all or none). The chain stays
reachable from the archive, so GitHub keeps its commits: ``log N``, ``show N`` and an audit read it from the
head its body names (``ghstate.github.store``: one request more). A reopened checkpoint's next write makes its
chain ref again, on that head. The branch's entry in the branch index goes in the same request when the
branch is gone from GitHub and the entry names this checkpoint; a branch deleted after its checkpoint closed
drops its entry when the Action sees the deletion (``drop_entry``).

Requests: a close 3 more than ``closeIssue`` (the state, the archive's commit over REST, ``updateRefs``); 1
more (the state) when there is nothing to fold. A failure is a notice: the checkpoint is closed either way.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ghstate.core.chain import ZERO, ref_name, split
from ghstate.core.claims import claim_ref
from ghstate.core.parse import branch_of, is_child
from ghstate.errors import GhstateError
from ghstate.github import branches
from ghstate.store import Stored, Unprotected

ARCHIVE = "refs/ghstate/archive"
FORMAT = "ghstate-archive/1"
TRIES = 3  # moves of the archive tried when another closer moved it first


class State(NamedTuple):
    """What a close folds, as read: the archive's head, the chain's head, the branch's entry and whether it
    names this checkpoint, whether the branch is on GitHub, and the claim on it as a child task ("" where there
    is none)."""

    archive: str
    chain: str
    entry: str
    names_it: bool
    branch_exists: bool
    claim: str = ""


def _named_head(stored: Stored) -> str:
    """The commit a body names as the one it mirrors ("" none)."""
    key = split(stored.body)[1]
    return key.head if key is not None else ""


def message(number: int, head: str) -> str:
    record = json.dumps({"format": FORMAT, "checkpoint": number, "head": head})
    return f"ghstate archive: #{number} closed at {head}\n\n{record}\n"


class Archive:
    """One repository's archive of closed chains, through its GitHub store."""

    def __init__(self, store: Any) -> None:  # the GitHubStore it serves
        self.store = store

    def fold(self, stored: Stored) -> None:
        """``stored`` (closed now) folded into the archive, and its branch's entry dropped when its branch is
        gone; a failure is said (the close stands). Only a chain whose head the body names is folded (a closed
        checkpoint is read from the head its body names): a body that lags its chain (a write whose body could
        not be brought up to date, a person's edit from an older page) is brought to the head first
        (``GitHubStore.caught_up``), else its refs stay, said, until ``ghstate close N`` folds them."""
        branch = "" if is_child(stored.body) else branch_of(stored.body)
        store = self.store
        said, unprotected = len(store.notices), store.unprotected
        try:
            for _ in range(TRIES):
                state = self._state(stored.number, branch)
                if state.chain and _named_head(stored) != state.chain:
                    stored = self._caught_up(stored, state.chain)
                    continue
                updates = self._updates(stored.number, branch, state)
                if not updates or self._move(stored.number, updates):
                    return
            raise GhstateError(f"{ARCHIVE} kept moving ({TRIES} tries)")
        except (GhstateError, Unprotected) as exc:  # a token without Contents: write, GitHub out of reach
            del store.notices[said:]  # (not a write left unprotected: the checkpoint is closed, its refs stay)
            store.unprotected = unprotected
            store.notices.append(f"#{stored.number} is closed, but its refs could not be folded into {ARCHIVE} "
                                 f"({exc}); 'ghstate close {stored.number}' folds them")

    def _caught_up(self, stored: Stored, head: str) -> Stored:
        """``stored`` with its body brought to its chain's head (the store's ``caught_up``: a write that merges
        people's edits and repairs an older mirror); a failure when it still names the commit it named."""
        catch_up = self.store.caught_up
        fresh = catch_up(stored) if catch_up is not None else stored
        if _named_head(fresh) == _named_head(stored):
            raise GhstateError(f"its body names another commit than its chain's head ({head}), and could not be "
                               "brought up to date: folded, the writes since would be hidden")
        return fresh

    def drop_entry(self, branch: str, number: int) -> bool:
        """``branch``'s entry deleted when it names ``number`` (a closed checkpoint) and the branch is gone from
        GitHub; whether it went (a request, and one more to delete it)."""
        state = self._state(number, branch)
        if not (state.names_it and state.entry) or state.branch_exists:
            return False
        updates = [{"name": branches.ref_name(branch), "afterOid": ZERO, "beforeOid": state.entry}]
        return self._move(number, updates)

    def _updates(self, number: int, branch: str, state: State) -> list[dict[str, Any]]:
        updates: list[dict[str, Any]] = []
        if state.chain:
            self.store._pace(2)
            parents = [state.archive, state.chain] if state.archive else [state.chain]
            oid = self.store.chain.commit(message(number, state.chain), "", parents)
            updates += [{"name": ARCHIVE, "afterOid": oid, "beforeOid": state.archive or ZERO},
                        {"name": ref_name(number), "afterOid": ZERO, "beforeOid": state.chain}]
        if branch and state.entry and state.names_it and not state.branch_exists:
            updates.append({"name": branches.ref_name(branch), "afterOid": ZERO, "beforeOid": state.entry})
        if state.claim:  # a closed child is nobody's task: its claim would only fill the parent's listing
            updates.append({"name": claim_ref(number), "afterOid": ZERO, "beforeOid": state.claim})
        return updates

    def _state(self, number: int, branch: str) -> State:
        """The archive, the chain of ``number`` and ``branch``'s entry and branch, as they are (one request)."""
        store = self.store
        chain = ref_name(number)
        data = store.graphql("archive_state", store.variables(
            archive=ARCHIVE, chain=chain, entry=branches.ref_name(branch) if branch else chain,
            branch=f"refs/heads/{branch}" if branch else chain, claim=claim_ref(number)),
            what=f"reading the refs of #{number}")
        repository = data.get("repository") or {}
        store.repository_id = repository.get("id") or store.repository_id

        def oid(name: str) -> str:
            return str(((repository.get(name) or {}).get("target") or {}).get("oid") or "")

        entry = (repository.get("entry") or {}).get("target") or {}
        named = branches.number_of(str(entry.get("message") or ""), branch) if branch else None
        return State(oid("archive"), oid("chain"), oid("entry") if branch else "", bool(branch) and named == number,
                     bool(branch) and repository.get("branch") is not None, oid("claim"))

    def _move(self, number: int, updates: list[dict[str, Any]]) -> bool:
        """The refs moved in one ``updateRefs`` (all or none): whether they were (False: another writer moved
        one first)."""
        store = self.store
        answer = store.graphql("update_refs", {"input": {"repositoryId": store.repository_id, "refUpdates": updates}},
                               partial=True, what=f"folding the refs of #{number}",
                               landed=lambda: {} if self._landed(updates) else None)
        return not answer.get("errors")

    def _landed(self, updates: list[dict[str, Any]]) -> bool:
        """Whether a move whose answer was lost landed: every ref it names is as it would leave it."""
        return all(self._ref(u["name"]) == ("" if u["afterOid"] == ZERO else u["afterOid"]) for u in updates)

    def _ref(self, name: str) -> str:
        data = self.store.graphql("ref_state", self.store.variables(ref=name), what=f"reading {name}")
        return str((((data.get("repository") or {}).get("ref") or {}).get("target") or {}).get("oid") or "")
