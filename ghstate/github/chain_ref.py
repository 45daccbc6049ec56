"""A checkpoint's write log on GitHub: commits on the ref ``refs/ghstate/checkpoints/N`` (``ghstate.core.chain``
says what they hold). This module makes a commit, moves the ref to it and writes its mirror in one request
(``AppendCheckpoint``: ``updateRefs`` with ``beforeOid``, GitHub's compare-and-swap, then ``updateIssue``),
and tells whether a commit or a write is on the chain.

The move answers ``Landed`` (the ref moved; the body's write may have failed beside it), ``Refused`` (the
ref did not move: another writer's commit is there, or GitHub refused) or ``Unknown`` (the answer was lost
and the checkpoint changed since the read: what landed is read from it). A lost answer is looked into once
per loss: a checkpoint as the writer read it means nothing landed, and the request is sent again.

A look that finds the checkpoint as read resends; the resend's answer can be a refusal when the first send
landed after the look: the chain's newest commits are then searched for this commit (``has_write``), and a
write found there has landed (never applied twice). A look that finds it changed answers ``Unknown``: the
store searches the chain for the commit the same way, and pages the edit history for what the body's write
replaced (``ghstate.github.body``).

Requests: a commit 1 (the repository's first 3: the commit refused, the tree every commit names, the commit
again); the move and mirror 1; a lost answer 1 more (the look) and the resend, or the look, the chain's log
(1) and the edit history (a page of 10 a request, back to the read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ghstate.core.chain import TREE_FILES, ZERO, Head, Link, headline_write, ref_name, tree_id
from ghstate.errors import NotFound, RemoteError
from ghstate.github.body import EDITS
from ghstate.github.transport import AnswerLost, CannotTell, checking, errors_of
from ghstate.store import Stored

DENIED = (403, 404)  # what GitHub answers a token without Contents: write that writes Git objects
REFUSALS = {"FORBIDDEN", "INSUFFICIENT_SCOPES", "NOT_FOUND"}  # GitHub's errors that refuse a write itself
SEARCHED_COMMITS = 100  # commits looked through for a write whose answer was lost


class Landed(NamedTuple):
    """The ref moved to the commit. ``issue``: the body as its write answered it (None: that write failed,
    ``errors`` say why); ``data``/``errors``: the whole answer."""

    issue: dict[str, Any] | None
    data: dict[str, Any]
    errors: list[dict[str, Any]]


class Refused(NamedTuple):
    """The ref did not move. ``issue``: the body's write, which GitHub may have run after the refused move
    (None: it did not, or failed); ``resent``: the request was sent twice (the first may have landed after
    the look that resent it)."""

    issue: dict[str, Any] | None
    data: dict[str, Any]
    errors: list[dict[str, Any]]
    resent: bool = False

    @property
    def on_refs(self) -> list[dict[str, Any]]:
        """GitHub's errors about the move."""
        return [e for e in self.errors if (e.get("path") or [""])[0] == "updateRefs"]

    @property
    def on_issue(self) -> list[dict[str, Any]]:
        """GitHub's errors about the body's write."""
        return [e for e in self.errors if (e.get("path") or [""])[0] == "updateIssue"]

    @property
    def issue_refused(self) -> bool:
        """Whether GitHub refused the body's write (not merely skipped it after the refused move): an error on
        it and no issue; beside errors on the move too, one that says the token or the issue (what a refused
        move does not cause)."""
        on_issue = self.on_issue
        kinds = {e.get("type") for e in on_issue}
        return bool(on_issue) and not self.issue and (not self.on_refs or bool(kinds & REFUSALS))


class Unknown(NamedTuple):
    """The answer was lost, and the checkpoint is no longer as the writer read it: ``fresh``, read since."""

    fresh: Stored


class ChainRef:
    """One repository's checkpoint refs, through the store's transport and GraphQL."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.tree = ""  # the tree chain commits name in this repository, once known to exist

    def commit(self, message: str, tree: str, parents: list[str]) -> str:
        """A commit of ghstate's (one request). The tree every such commit names is known by its id; the first
        commit of a repository writes it (2 requests more: the commit refused, the tree, the commit again).
        A token that may not write Git objects: ``Unprotected``."""
        api = self.store.api
        tree = tree or self.tree or tree_id(TREE_FILES)
        try:
            try:
                oid = api.commit(message, tree, parents)
            except RemoteError as exc:
                if exc.status != 422 or parents:
                    raise
                tree = api.tree(TREE_FILES)  # not in this repository yet
                oid = api.commit(message, tree, parents)
        except RemoteError as exc:
            if exc.status in DENIED:
                raise self.store.unprotected_by(self.store.contents_needed(str(exc))) from None
            raise
        self.tree = tree
        return oid

    def move_and_mirror(self, stored: Stored, oid: str, payload: dict[str, Any]) -> Landed | Refused | Unknown:
        """Move ``stored``'s ref from the head it was read with to ``oid`` and write ``payload`` (the mirror),
        in one request; a lost answer looked into (see the module's docstring)."""
        number, parent = stored.number, stored.head.oid if stored.head is not None else ""
        archived = stored.head is not None and stored.head.archived  # its ref made again, on its archived head
        refs = {"repositoryId": self.store.repository_id, "refUpdates": [
            {"name": ref_name(number), "afterOid": oid, "beforeOid": ZERO if archived else parent or ZERO}]}
        variables = {"refs": refs, "issue": payload, "edits": EDITS, "ref": ref_name(number)}
        sent = send_looking(self.store, stored, lambda lost: self.store.graphql(
            "append_checkpoint", variables, partial=True, lost=True, resending=lost, number=number,
            what=f"updating issue #{number}"), lambda fresh: (fresh.head.oid if fresh.head else "") == parent
            and (fresh.head is None or fresh.head.archived == archived))
        if isinstance(sent, Unknown):
            return sent
        answer, resent = sent
        data, errors = answer.get("data") or {}, errors_of(answer)
        issue = (data.get("updateIssue") or {}).get("issue")
        if data.get("updateRefs") is None:
            return Refused(issue, data, errors, resent=resent)
        return Landed(issue, data, errors)

    # ------------------------------------------------------------------------------ what is on it

    def link(self, stored: Stored, oid: str) -> Link | None:
        """The commit ``oid`` (a person's page was made from it): one request; None when GitHub does not have
        it (a commit that lost its race may be collected) or it is not a chain commit."""
        if stored.head is not None and stored.head.oid == oid:
            return stored.head.link
        return self._commit_link(oid, f"reading a commit of #{stored.number}")

    def _commit_link(self, oid: str, what: str) -> Link | None:
        """What the chain commit ``oid`` holds (one request); None when it is no object id, GitHub does not have
        it, or it is not a chain commit."""
        if not re.fullmatch(r"[0-9a-f]{40}", oid or ""):
            return None
        try:
            data = self.store.graphql("chain_commit", self.store.variables(oid=oid), what=what)
        except (NotFound, RemoteError):
            return None
        return Link.from_message(((data.get("repository") or {}).get("commit") or {}).get("message") or "")

    def links(self, stored: Stored, count: int) -> list[tuple[str, Link]]:
        """The newest ``count`` commits of the chain, newest first (one request)."""
        found = ((str(n.get("oid") or ""), Link.from_message(n.get("message") or ""))
                 for n in self.history(stored.number, count, messages=True, at=_archived(stored)))
        return [(oid, link) for oid, link in found if link is not None]

    def has_write(self, stored: Stored, write: str = "", oid: str = "") -> bool:
        """Whether the chain has a commit of the write ``write`` (its headline names it), or the commit ``oid``:
        among its newest SEARCHED_COMMITS (one request)."""
        if stored.head is None and stored.chained:
            return False
        return any((oid and n.get("oid") == oid) or (write and headline_write(n.get("messageHeadline") or "") == write)
                   for n in self.history(stored.number, SEARCHED_COMMITS, messages=False, at=_archived(stored)))

    def archived(self, number: int, oid: str) -> Head | None:
        """The head of ``number``'s chain folded into the archive (its ref gone): the commit ``oid`` its body
        names, when it is one of ``number``'s own (one request); None when it is not, or cannot be read."""
        link = self._commit_link(oid, f"reading the archived head of #{number}")
        return Head(oid, link, "", archived=True) if link is not None and link.number == number else None

    def history(self, number: int, count: int, *, messages: bool, at: str = "") -> list[dict[str, Any]]:
        """The chain's newest ``count`` commits, newest first: from its ref, or from ``at`` (an archived head)."""
        if at:
            data = self.store.graphql("archived_log", self.store.variables(oid=at, count=count, messages=messages),
                                      what=f"reading the archived log of #{number}")
        else:
            data = self.store.graphql("chain_log", self.store.variables(ref=ref_name(number), count=count,
                                                                        messages=messages),
                                      what=f"reading the log of #{number}")
        head = (data.get("repository") or {}).get("head") or {}
        target = head if at else head.get("target") or {}  # an archived head is the commit itself
        return [n for n in ((target.get("history") or {}).get("nodes") or ()) if n]


def _archived(stored: Stored) -> str:
    """The head to read an archived chain from ("" when its ref is there)."""
    return stored.head.oid if stored.head is not None and stored.head.archived else ""


def send_looking(store: Any, stored: Stored, send: Callable[[AnswerLost | None], dict[str, Any]],
                 as_read: Callable[[Stored], bool] = lambda fresh: True) -> tuple[dict[str, Any], bool] | Unknown:
    """A write to ``stored`` sent (``send``, given the loss it resends after) until GitHub answers it: after a
    lost answer the checkpoint is read again (one request); as the write read it (its body, and ``as_read``),
    nothing landed and it is sent again; else ``Unknown``. The answer, and whether it was sent again. A look
    that fails ends the write as the transport says it: whether it reached GitHub cannot be checked, so it
    was not sent again."""
    lost: AnswerLost | None = None
    while True:
        try:
            return send(lost), lost is not None
        except AnswerLost as exc:
            lost = exc
            try:
                fresh = checking(lambda: store.get(stored.number))
            except CannotTell:
                raise exc.unchecked() from None
            if fresh.body != stored.body or not as_read(fresh):
                return Unknown(fresh)
