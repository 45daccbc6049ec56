"""The GitHub store: checkpoint issues read, listed and created, and a write put together from its two
parts, through GitHub's transport (``ghstate.github.transport``, the only module that speaks to PyGithub).

Each checkpoint's writes are commits on ``refs/ghstate/checkpoints/N`` (``ghstate.github.chain_ref``: the
commit, and the ref moved with ``updateRefs`` naming the head the writer read, GitHub's compare-and-swap,
with the body written as the new head's mirror in the same request). The body written alone, and the
people's saves a write replaced, are ``ghstate.github.body``'s. Branches find their checkpoint through the
branch index (``ghstate.github.branches``).

Requests (asserted in the tests): a read 1 (the issue with its head, ``Checkpoint``); a write 2 after its
read (the commit over REST, then ``AppendCheckpoint``, whose answer holds the newest versions of the body
and the head now); a new checkpoint 1 (its chain starts at its first write; its branch's entry in the index
is ``branches``'). The repository's first commit costs 2 more, once: three requests in place of one (the
commit refused, the tree every commit names, the commit again).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from ghstate.config import Policy, Settings
from ghstate.core.chain import Head, Link, embed, ref_name, split
from ghstate.core.marker import PullRequest
from ghstate.core.model import Revision, github_time
from ghstate.core.saves import body_digest
from ghstate.errors import NotFound, RemoteError
from ghstate.github.archive import Archive
from ghstate.github.body import Body, login
from ghstate.github.branches import BranchIndex
from ghstate.github.chain_ref import ChainRef, Landed, Refused, Unknown, send_looking
from ghstate.github.transport import (
    TIMEOUT,
    GitHubAPI,
    GraphQLNotFound,
    checking,
    describe_errors,
    errors_of,
)
from ghstate.store import (
    BodyVersion,
    Note,
    Partial,
    Stored,
    StoreKind,
    Unchecked,
    Unindexed,
    Unprotected,
    WriteOutcome,
)

PROMPT_MARKER = "<!-- ghstate:prompt -->"
CI_MARKER = "<!-- ghstate:ci -->"  # the comment of a CI result a person should act on
NOTICE_MARKER = "<!-- ghstate:notice -->"  # a comment ghstate posts for people to look at (a kept concurrent edit)
_UNTRUSTED = object()  # a comment whose author is not trusted: counted, never read
LOG_MARKER = re.compile(r"<!--\s*ghstate:log\s+\{")  # the revision comments of an older ghstate (never shown as notes)
MAX_OPEN = 1_000  # open checkpoints a listing reads at most (a branch's is found by the branch index)
BODY_PAGE = 10  # checkpoints a page of a listing with bodies holds: 10 bodies of 65,536 characters stay under 1 MB
PAST_LISTINGS = 5  # issue numbers read after the newest listed one, when a lost create is looked for
COMMENTS = 20  # newest comments read with a checkpoint (what people said since)
LOG_COMMITS = 100  # commits `ghstate log` reads
CONTENTS_NEEDED = ("the token lacks Contents: write on {repo} (a fine-grained token or GitHub App needs "
                   "Contents: read and write beside Issues; a classic token the 'repo' scope; in Actions, "
                   "'permissions: contents: write')")
CONTENTS_READ = CONTENTS_NEEDED.replace("lacks Contents: write", "lacks Contents: read")


class GitHubStore:
    kind: StoreKind = "github"
    remote = True

    def __init__(self, api: GitHubAPI, policy: Policy) -> None:
        self.api = api
        self.repo_name = api.repo_name
        self.policy = policy
        self._nodes: dict[int, dict[str, Any]] = {}  # the last GraphQL answer for each issue read
        self._label_ids: dict[str, str] = {}  # label name -> node id, for updateIssue's labelIds
        self.repository_id = ""  # the repository's node id (what a ref's move names), once read
        self.chain = ChainRef(self)  # the checkpoints' write logs on refs
        self.body = Body(self)  # the bodies written alone, and their edit histories
        self.archive = Archive(self)  # closed checkpoints' refs, folded into one
        self.notices: list[str] = []  # problems after a write landed: warnings, not failures
        self.unchecked: list[Unchecked] = []  # bodies written whose history never showed them (``Body._shown``)
        self.unprotected = ""  # why the chain cannot be written here ("" while it can, or it is not known)
        # Waits for a write's turn among this machine's writes to GitHub (``ghstate.local.pace``); None: none
        self.before_write: Callable[[int], float] | None = None
        self.machine_lock: Callable[[], contextlib.AbstractContextManager[None]] | None = None
        # A checkpoint's body brought to its chain's head before a close folds the chain (a write that changes
        # nothing else: ``App.caught_up``); None: a body that lags is left, and so are its refs
        self.caught_up: Callable[[Stored], Stored] | None = None
        self._heads: dict[int, Head | None] = {}  # each checkpoint's head, as read in this command
        self.branch_index = BranchIndex(self)
        self.open_count = 0  # open checkpoints, as the last listing counted them
        self.viewer = ""  # the token's own user (REST login), as the reads that ask for it answered
        self._authors: dict[int, tuple[str, str]] = {}  # issue -> (who opened it, their association), as read

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """This machine's writers to the repository one at a time (``machine_lock``, when the user's cache
        folder can hold it), so that they never race each other; across machines, GitHub's compare-and-swap
        on the chain's ref keeps writers apart."""
        return self.machine_lock() if self.machine_lock is not None else contextlib.nullcontext()

    @classmethod
    def connect(cls, settings: Settings, timeout: int = TIMEOUT, **kwargs: Any) -> GitHubStore:
        return cls(GitHubAPI.connect(settings, timeout, **kwargs), settings.policy)

    # ------------------------------------------------------------------------------ requests

    def graphql(self, name: str, variables: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """One GraphQL request through the transport (``ghstate.github.transport.GitHubAPI.graphql``)."""
        return self.api.graphql(name, variables, **kwargs)

    def variables(self, **more: Any) -> dict[str, Any]:
        owner, _, name = self.repo_name.partition("/")
        return {"owner": owner, "name": name, **more}

    def tolerated(self, answer: dict[str, Any], what: str) -> tuple[dict[str, Any], bool]:
        return _tolerated(answer, self, what)

    @staticmethod
    def said(errors: list[dict[str, Any]]) -> str:
        return _said(errors)

    def _pace(self, requests: int = 1) -> None:
        if self.before_write is not None:
            self.before_write(requests)

    # ----------------------------------------------------------------------------- answers

    def _keep(self, node: dict[str, Any], head: Head | None = None, chained: bool = True) -> Stored:
        """A checkpoint as GraphQL answers it, kept (what else it carried, ``node``; the labels' ids); the body as
        it is (its marker may name the commit it mirrors), and who opened it (a write's answer does not say: as
        the read before it did)."""
        self._nodes[node["number"]] = node
        self._keep_labels({"labels": node.get("labels"), "id": (node.get("repository") or {}).get("id")})
        author, association = self._author(node)
        return Stored(
            number=node["number"], title=node.get("title") or "", body=node.get("body") or "",
            location=node.get("url") or "",
            labels=tuple(x["name"] for x in (node.get("labels") or {}).get("nodes") or ()),
            state=str(node.get("state") or "OPEN").lower(), version=node.get("updatedAt") or "",
            comments=(node.get("comments") or {}).get("totalCount") or 0, head=head, chained=chained,
            editor=login(node.get("editor")), edited_at=str(node.get("lastEditedAt") or ""),
            author=author, association=association,
            trusted=not (author or association) or self.trusts(author, association),
        )

    def _author(self, node: dict[str, Any]) -> tuple[str, str]:
        """Who opened issue ``node`` and their association, as this answer or (a write's, which does not say) the
        read before it said."""
        if "authorAssociation" in node:
            self._authors[node["number"]] = (login(node.get("author")), str(node.get("authorAssociation") or ""))
        return self._authors.get(node["number"], ("", ""))

    def trusts(self, author: str, association: str) -> bool:
        """Whether the policy trusts ``author`` (``Policy.trusts``; the token's own user as the reads answered)."""
        return self.policy.trusts(author, association, self.viewer)

    def learn_viewer(self, data: dict[str, Any]) -> None:
        """The token's own user, from an answer that asks for it (``viewer { login }``)."""
        self.viewer = login((data or {}).get("viewer")) or self.viewer

    def node(self, number: int) -> dict[str, Any] | None:
        """The last GraphQL answer for issue ``number`` read in this command (what else it carried: its
        children and claims, ``ghstate.github.tasks``), or None."""
        return self._nodes.get(number)

    def _issues_enabled(self, repository: dict[str, Any]) -> None:
        """A repository with its issues turned off has no checkpoint to read: said as such, not as "no issue"."""
        if repository.get("hasIssuesEnabled") is False:
            raise NotFound(f"issues are disabled in {self.repo_name}: turn them on in its settings (General, "
                           "Features, Issues), or keep checkpoints in the local store (--store local)")

    def _keep_labels(self, repository: dict[str, Any] | None) -> None:
        """What a read of the repository brings along: its labels' ids and its own (what writes name)."""
        for label in ((repository or {}).get("labels") or {}).get("nodes") or ():
            self._label_ids[label["name"]] = label["id"]
        self.repository_id = (repository or {}).get("id") or self.repository_id

    def get(self, number: int) -> Stored:
        """The checkpoint with everything a reader needs, in one request: the issue with its chain's head and
        newest comments (query ``Checkpoint``), and whether the repository has issues at all. A head the
        token may not read leaves the issue good."""
        try:
            answer = self.graphql("checkpoint", self.variables(number=number, comments=COMMENTS,
                                                                labels=self.policy.label, ref=ref_name(number)),
                                  number=number, what=f"reading issue #{number} of {self.repo_name}",
                                  tolerate=("head",))
        except GraphQLNotFound as exc:  # with its issues turned off, none of them is found: say why
            self._issues_enabled((exc.data or {}).get("repository") or {})
            raise
        data, chained = _tolerated(answer, self, f"the chain of #{number}")
        self.learn_viewer(data)
        repository = data.get("repository") or {}
        self._issues_enabled(repository)
        node = repository.get("issue")
        if not node:
            raise NotFound(f"no issue #{number} in {self.repo_name}, or the token cannot see it")
        if node.get("__typename") == "PullRequest":
            raise NotFound(f"#{number} in {self.repo_name} is a pull request, not a checkpoint issue")
        self._keep_labels(repository)
        self._heads[number], own = self._own_head(number, repository.get("head"))
        if self._heads[number] is None and chained and own:  # no ref: folded into the archive when it closed
            key = split(node.get("body") or "")[1]
            self._heads[number] = self.chain.archived(number, key.head) if key is not None and key.head else None
        return self._keep(node, self._heads[number], chained and own)

    def _own_head(self, number: int, ref: dict[str, Any] | None) -> tuple[Head | None, bool]:
        """The head of ``number``'s chain as its ref answers it, and whether the ref is its own: one that holds
        no write of ghstate's is said (a write's commit goes on top of it); one on another checkpoint's log is
        said and not built on (None, False: the body is read, and a write is not protected)."""
        head = _head(ref)
        said = f"{ref_name(number)}'s newest commit"
        message = ((ref or {}).get("target") or {}).get("message")
        if head is not None and head.link is None and isinstance(message, str) \
                and not any(said in n for n in self.notices):  # a commit that holds no write of ghstate's
            self.notices.append(f"{said} ({head.oid[:12]}) is no write of ghstate's (its message does not hold "
                                f"one): #{number} is read from its body, and a write's commit goes on top of it")
        if head is None or head.link is None or head.link.number == number:
            return head, True
        self.unprotected = self.unprotected or f"{ref_name(number)} points at a commit of #{head.link.number}'s log"
        self.notices.append(f"{ref_name(number)} points at a commit of #{head.link.number}'s write log, not "
                            f"#{number}'s (moved by hand?): #{number} is read from its body, and a write to it "
                            f"is not built on that log; point the ref back at #{number}'s own commit, or delete "
                            "it to start its log again")
        return None, False

    # ---------------------------------------------------------------------------- checkpoints

    def list_open(self, bodies: bool = True) -> list[Stored]:
        found: list[Stored] = []
        try:
            found.extend(self.iter_open(bodies=bodies))
        except Partial as exc:
            self.notices.append(f"{self.repo_name} has more open checkpoints than were read ({exc}); close "
                                "finished ones")
        return found

    def iter_open(self, heads: bool = False, bodies: bool = True, page: int = 0) -> Iterator[Stored]:
        """Open checkpoints, most recently updated first, a page per GraphQL request as they are needed (100,
        or BODY_PAGE with ``bodies``: every answer stays under 1 MB; ``page``: as many as a caller that stops
        after them needs, one more body at most), at most MAX_OPEN in all. No chain heads
        (``heads`` is for the local store): ``with_head`` reads one by number for a reader that needs it."""
        after: str | None = None
        most = BODY_PAGE + 1 if bodies else 100  # a page with bodies: one more than a screen, to know of more
        first = min(page, most) if page else min(BODY_PAGE, most)
        for _ in range(-(-MAX_OPEN // first)):
            nodes, after = self._open_page(after, first, bodies)
            for node in nodes:
                yield self._keep(node, None, chained=False)  # its chain is read by number, where needed
            if after is None:
                return
        raise Partial(MAX_OPEN)

    def _open_page(self, after: str | None, first: int, bodies: bool) -> tuple[list[dict[str, Any]], str | None]:
        """One page of open checkpoints (one request): their nodes, and the cursor of the next page (None: the
        last one)."""
        answer = self.graphql("open_checkpoints", self.variables(label=self.policy.label, after=after, first=first,
                                                                 labels=self.policy.label, bodies=bodies),
                              what=f"listing checkpoints of {self.repo_name}")
        self.learn_viewer(answer)
        repository = answer.get("repository") or {}
        self._issues_enabled(repository)
        self._keep_labels(repository)
        page = repository.get("issues") or {}
        self.open_count = int(page.get("totalCount") or 0)
        info = page.get("pageInfo") or {}
        return [n for n in page.get("nodes") or () if n], info.get("endCursor") if info.get("hasNextPage") else None

    def find_branch(self, branch: str) -> Stored | None | Unindexed:
        """The branch's checkpoint by the branch index (``ghstate.github.branches``): two requests; one the
        index does not hold three (GitHub's issue search), a branch with none two."""
        return self.branch_index.find(branch)

    def pull_request(self, branch: str) -> PullRequest | None:
        return self.branch_index.pulls.get(branch)

    def index_branch(self, stored: Stored, branch: str, leaving: str = "") -> int:
        """``branch``'s entry in the branch index made to name ``stored``; the number it names afterwards."""
        return self.branch_index.claim(stored, branch, leaving)

    def with_head(self, stored: Stored) -> Stored:
        """``stored`` with its head's content: the checkpoint read again by number (one request, which also
        brings what a parent's roll-up reads) when the listing that found it showed only the head's
        commit, or could not show its chain at all."""
        if stored.chained and (stored.head is None or stored.head.link is not None):
            return stored
        if stored.number in self._heads and not stored.chained:
            return stored  # read by number in this command: its chain cannot be read, reading again will not help
        return self.get(stored.number)

    def saves(self, stored: Stored) -> tuple[BodyVersion, ...]:
        """The people's saves the edited body is made of (``ghstate.github.body``: one request)."""
        return self.body.saves(stored, _merged(stored))

    def link(self, stored: Stored, oid: str) -> Link | None:
        return self.chain.link(stored, oid)

    def links(self, stored: Stored, count: int) -> list[tuple[str, Link]]:
        return self.chain.links(stored, count)

    def has_write(self, stored: Stored, write: str) -> bool:
        return self.chain.has_write(stored, write=write)

    def look_back(self, stored: Stored, look: Unchecked) -> tuple[BodyVersion, ...] | None:
        """The people's saves a body written earlier replaced, looked for in its history now (``Body.look_back``:
        one request or a few); None while the history still does not show that body."""
        return self.body.look_back(stored, look)

    # ------------------------------------------------------------------------------ creating

    def find_open(self, unique: str) -> Stored | None:
        """The open checkpoint whose body holds ``unique`` (a marker id): one that was created although
        the answer to its creation was lost. Also among the newest issues without the label: GitHub
        drops labels silently when the token may not set them."""
        with contextlib.suppress(Partial):  # not among the newest: the newest issues are looked at below
            for stored in self.iter_open():
                if unique in stored.body:
                    return stored
        newest = self.api.newest_issues()
        for issue in newest:
            if unique in issue["body"]:
                return self._stored_rest(issue)
        return self._past_listings(unique, max((i["number"] for i in newest), default=0))

    def _past_listings(self, unique: str, known: int) -> Stored | None:
        """GitHub's listings can lag behind a create; reading an issue by its number does not: the numbers
        after the newest one listed are read one by one, until one does not exist (a handful at most)."""
        for number in range(known + 1, known + 1 + PAST_LISTINGS):
            try:
                stored = self.get(number)
            except NotFound as exc:
                if "pull request" in str(exc):
                    continue  # pull requests share the numbers
                return None
            if unique in stored.body:
                return stored
        return None

    def _stored_rest(self, issue: dict[str, Any]) -> Stored:
        """A checkpoint as REST answered it (``ghstate.github.transport``'s plain form): new, no chain yet."""
        return Stored(number=issue["number"], title=issue["title"], body=issue["body"], location=issue["url"],
                      labels=tuple(issue["labels"]), state=issue["state"], version=issue["updatedAt"],
                      comments=issue["comments"])

    def create(self, title: str, body: str, unique: str = "") -> Stored:
        """Open a checkpoint issue; its chain starts with its first write. ``unique`` is text only this body
        contains; it finds an issue whose creation reached GitHub although the answer was lost, so a
        retry cannot make a second one."""
        def landed() -> dict[str, Any] | None:  # the issue as it was found, in place of REST's answer
            found = checking(lambda: self.find_open(unique)) if unique else None
            return None if found is None else {"found": found}

        self._pace()
        made = self.api.create_issue(title, body, [self.policy.label], landed)
        stored = made["found"] if "found" in made else self._stored_rest(made)
        if self.policy.label not in stored.labels:  # labels are dropped silently without push access
            try:
                self.api.add_label(stored.number, self.policy.label)
                stored = stored._replace(labels=(*stored.labels, self.policy.label))
            except (RemoteError, NotFound) as exc:  # the issue exists: a missing label must not lose it
                self.notices.append(f"issue #{stored.number} was created without the {self.policy.label!r} label "
                                    f"({exc}); add it by hand so that ghstate finds the checkpoint")
        return stored

    # ------------------------------------------------------------------------------ writing

    def append(self, stored: Stored, link: Link, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        """Commit ``link`` on the head ``stored`` was read with (REST), then in one GraphQL request move the
        chain's ref to it only if it still points at that head, and write the body as its mirror
        (``ghstate.github.chain_ref``); what it wrote over is found by ``ghstate.github.body``."""
        if self.unprotected or not stored.chained:  # its head could not be read: no move can name it
            raise self.unprotected_by(f"the write log could not be read ({CONTENTS_READ.format(repo=self.repo_name)})")
        node = self._node_with_id(stored)
        parent = stored.head.oid if stored.head is not None else ""
        self._pace(2)
        oid = self.chain.commit(link.to_message(), stored.head.tree if stored.head else "", [parent] if parent else [])
        text = embed(link.body, oid)
        sent = self.chain.move_and_mirror(stored, oid, self._issue_input(node, text, title, labels))
        if isinstance(sent, Unknown):
            return self._after_lost_append(stored, sent.fresh, oid, link)
        if isinstance(sent, Refused):
            return self._after_refused_move(stored, sent, oid, text)
        return self._after_move(stored, sent, Head(oid, link, self.chain.tree), text, labels)

    def _after_lost_append(self, stored: Stored, fresh: Stored, oid: str, link: Link) -> WriteOutcome:
        """A write whose answer was lost, and the checkpoint changed since its read: whatever landed of it (the
        move, when the chain has its commit), and what its body's write, if it ran, wrote over."""
        held = fresh.head is not None and (fresh.head.oid == oid or self.chain.has_write(fresh, oid=oid))
        merged = frozenset(link.merged) if held else _merged(fresh)
        return WriteOutcome(held, fresh, self.body.replaced(stored, embed(link.body, oid), None, merged),
                            moved=held and fresh.head is not None and fresh.head.oid != oid)

    def _after_refused_move(self, stored: Stored, sent: Refused, oid: str, text: str) -> WriteOutcome:
        """The ref did not move: GitHub refused the body's write too (the token, the issue: an error), or
        moved it after all (an error about something else, or a first send that landed after its look), or
        another writer's commit is there (build on it), or the chain cannot be written here (``Unprotected``).
        A body written beside the refused move wrote over what did not reach the chain, whatever it was."""
        number = stored.number
        overwritten = self.body.replaced(stored, text, sent.issue, _merged(stored)) if sent.issue else ()
        if sent.issue_refused and not sent.on_refs:  # the body's write itself was refused: the token, the issue
            raise self._refusal(sent.data, sent.on_issue, number)
        fresh = self.get(number)
        if fresh.head is not None and (fresh.head.oid == oid or (sent.resent and self.chain.has_write(fresh, oid=oid))):
            return WriteOutcome(True, fresh, overwritten, moved=fresh.head.oid != oid)
        if (fresh.head.oid if fresh.head else "") == (stored.head.oid if stored.head else ""):
            if sent.issue_refused:  # both refused: the token may write neither
                raise self._refusal(sent.data, sent.on_issue, number)
            self._refused(sent.on_refs or sent.errors, overwritten)
        return WriteOutcome(False, fresh, overwritten)

    def _after_move(self, stored: Stored, sent: Landed, head: Head, text: str,
                    labels: tuple[str, ...] | None) -> WriteOutcome:
        """The ref moved: the mirror as written (and what it wrote over), or, when its write failed beside the
        move, the checkpoint read again for the writer to write the head's mirror."""
        if not sent.issue:
            self.notices.append(f"#{stored.number}'s write is on its chain, but its body could not be written "
                                f"({_said(sent.errors)}); it is written again")
            return WriteOutcome(True, self.get(stored.number), moved=True)
        assert head.link is not None
        overwritten = self.body.replaced(stored, text, sent.issue, frozenset(head.link.merged))
        written, now = self._kept_write(sent.issue, sent.errors, labels, head, default=head.oid)
        return WriteOutcome(True, written, overwritten, moved=now != head.oid)

    def _refusal(self, data: dict[str, Any], errors: list[dict[str, Any]], number: int) -> Exception:
        """GitHub's refusal of a body's write, as the transport says one (a checkpoint gone from view is a
        failure to keep the write for, not a checkpoint that does not exist)."""
        refusal = self.api.failure({"errors": errors, "data": data}, f"updating issue #{number}", number)
        return RemoteError(str(refusal), status=404) if isinstance(refusal, NotFound) else refusal

    def _refused(self, errors: list[dict[str, Any]], overwritten: tuple[BodyVersion, ...]) -> None:
        """The ref did not move and no other writer moved it: say why (a token without Contents: write, a
        GitHub without ``updateRefs``: the chain cannot be written here; the saves the body's write beside it
        wrote over go with it, to be merged)."""
        kinds = {e.get("type") for e in errors}
        said = _said(errors)
        if kinds & {"FORBIDDEN", "INSUFFICIENT_SCOPES"}:
            raise self.unprotected_by(self.contents_needed(said), overwritten)
        if "updateRefs" in said and ("doesn't exist" in said or "undefined" in said.lower()):
            raise self.unprotected_by(f"this GitHub has no 'updateRefs' mutation ({said}); a newer GitHub "
                                      "Enterprise Server has it", overwritten)
        raise RemoteError(f"writing the chain of this checkpoint failed: GitHub answered {said}")

    def contents_needed(self, said: str) -> str:
        return CONTENTS_NEEDED.format(repo=self.repo_name) + f" ({said})"

    def unprotected_by(self, why: str, overwritten: tuple[BodyVersion, ...] = ()) -> Unprotected:
        """The chain cannot be written here: remembered for the rest of the command, and said once."""
        if not self.unprotected:
            self.unprotected = why
            self.notices.append(f"concurrent writers are not protected: the write log cannot be written ({why}); "
                                "the body was written alone")
        return Unprotected(self.unprotected, overwritten)

    def mirror(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome:
        """Write the body alone (``updateIssue``): a mirror repaired, or a write where the chain cannot be
        written. Its answer says what it wrote over, as ``append``'s does; a lost answer is looked into
        (landed, or someone wrote meanwhile: not landed, read again), and sent again when nothing changed."""
        number = stored.number
        payload = self._issue_input(self._node_with_id(stored), body, title, labels)
        merged = _merged(stored) | {body_digest(stored.body)}  # the body read is in what is written over it
        self._pace()
        sent = send_looking(self, stored, lambda lost: self.body.write(stored, payload, resending=lost))
        if isinstance(sent, Unknown):  # whatever landed of it, and what it wrote over if it did
            fresh = sent.fresh
            return WriteOutcome(fresh.body == body, fresh, self.body.replaced(stored, body, None, merged))
        answer, _ = sent
        data, errors = answer.get("data") or {}, errors_of(answer)
        issue = (data.get("updateIssue") or {}).get("issue")
        if not issue:  # the write itself failed (GitHub's refusal, as the transport says one), or no answer
            raise self._refusal(data, errors, number) if errors else RemoteError(
                f"updating issue #{number} failed: GitHub's answer holds no issue", retryable=True)
        written, now = self._kept_write(issue, errors, labels, stored.head, stored.chained)
        key = split(body)[1]
        return WriteOutcome(True, written, self.body.replaced(stored, body, issue, merged),
                            moved=bool(now) and key is not None and key.head != now)

    def _kept_write(self, issue: dict[str, Any], errors: list[dict[str, Any]], labels: tuple[str, ...] | None,
                    known: Head | None, chained: bool = True, default: str = "") -> tuple[Stored, str]:
        """The issue a body's write answered, kept with its chain's head (``known`` when the answer's is it;
        ``default`` when it names none) and the labels it asked for; and that head's oid. Errors beside it are
        a warning: the write stands."""
        if errors:
            self.notices.append(f"issue #{issue['number']} was written, but GitHub's answer also held errors "
                                f"({_said(errors)}); the write stands")
        now = (((issue.get("repository") or {}).get("head") or {}).get("target") or {}).get("oid") or default
        written = self._keep(issue, known if known is not None and known.oid == now else Head(now) if now else None,
                             chained)
        # Labels a write asked for that the repository does not have yet (their ids unknown): set by REST,
        # which creates them.
        if labels is not None and set(labels) != set(written.labels):
            try:
                self.api.edit_issue(written.number, {"labels": list(labels)}, lambda: True)
            except (RemoteError, NotFound) as exc:
                self.notices.append(f"the labels of #{written.number} could not be set ({exc})")
        return written, now

    def _issue_input(self, node: dict[str, Any], body: str, title: str | None,
                     labels: tuple[str, ...] | None) -> dict[str, Any]:
        payload: dict[str, Any] = {"id": node["id"], "body": body, **({"title": title} if title else {})}
        ids = [self._label_ids.get(name) for name in labels or ()]
        current = {x["name"] for x in (node.get("labels") or {}).get("nodes") or ()}
        if labels is not None and set(labels) != current and all(ids):
            payload["labelIds"] = ids
        return payload

    def _node_with_id(self, stored: Stored) -> dict[str, Any]:
        if "id" not in (self._nodes.get(stored.number) or {}):
            self.get(stored.number)
        return self._nodes[stored.number]

    def missing_label(self, stored: Stored) -> str:
        return "" if self.policy.label in stored.labels else self.policy.label

    def close(self, stored: Stored, reason: str = "completed") -> Stored:
        """Close the issue (GraphQL ``closeIssue``) as completed or not planned (``reason``), and fold its refs
        into the archive (``ghstate.github.archive``: 3 requests more, 1 when there is nothing to fold); one
        that is closed already only has its refs folded (a checkpoint closed before this version)."""
        number = stored.number
        if stored.state == "closed":  # closed already (before this version, say): only its refs folded
            self.archive.fold(stored)
            return stored
        node = self._node_with_id(stored)
        data = self.graphql("close_checkpoint", {"input": {"issueId": node["id"], "stateReason": reason.upper()}},
                            number=number, what=f"closing issue #{number}",
                            landed=lambda: None)  # closing twice is closing once: a lost answer is resent
        answer = (data.get("closeIssue") or {}).get("issue") or {}
        closed = stored._replace(state=str(answer.get("state") or "CLOSED").lower(),
                                 location=answer.get("url") or stored.location)
        if closed.state == "closed":
            self.archive.fold(closed)  # its refs folded: the refs kept grow with open checkpoints only
        return closed

    def retire_branch(self, branch: str, stored: Stored) -> bool:
        """``branch`` is gone from GitHub: its entry in the branch index dropped when it names ``stored``, which is
        closed (``ghstate.github.archive``: one request, and one more to drop it)."""
        return stored.state == "closed" and self.archive.drop_entry(branch, stored.number)

    # ------------------------------------------------------------------------------ reading more

    def revisions(self, number: int) -> list[Revision]:
        """The writes on the chain, oldest first (its newest LOG_COMMITS commits; one request after the read)."""
        head = self._heads[number] if number in self._heads else self.get(number).head  # read by the command
        links = self.links(Stored(number, "", "", "", head=head), LOG_COMMITS) if head is not None else []
        return [e.revision for _, link in reversed(links) for e in link.entries
                if e.revision.revision or e.revision.event == "edit"]

    def post_comment(self, stored: Stored, text: str, *, allow_secrets: bool = False) -> str:
        if not allow_secrets:
            from ghstate.core.secrets import scan
            from ghstate.errors import SecretFound

            found = scan(text)
            if found:
                raise SecretFound(f"refusing to post to GitHub: {found[0].describe()}")
        # GitHub's own clock, not ours: the issue's last update as GitHub reported it, a minute earlier
        updated = github_time(stored.version.replace("+00:00", "Z")) or datetime.now(timezone.utc)
        self._pace()
        try:
            return self.api.create_comment(stored.number, text, updated - timedelta(minutes=1))
        except NotFound as exc:  # it was there a moment ago: access lost, or moved; keep the write
            raise RemoteError(str(exc), status=404) from None

    def notify(self, stored: Stored, text: str) -> str:
        """One comment for the people who follow the checkpoint (it notifies them): a thing to act on."""
        return self.post_comment(stored, f"{NOTICE_MARKER}\n{text}")

    def notes_since(self, stored: Stored, since: str) -> tuple[list[Note], int]:
        """Comments people left since the checkpoint was written: those by authors with write access
        (or listed as trusted), and how many others were left out. ghstate's own comments are skipped.
        No request when the checkpoint was read in this command (its newest comments came with it)."""
        if not stored.comments:
            return [], 0
        node = self._nodes.get(stored.number)
        if node is None or (node.get("comments") or {}).get("nodes") is None:
            self.get(stored.number)
            node = self._nodes[stored.number]
        after = github_time(since)
        notes: list[Note] = []
        skipped = 0
        for comment in (node.get("comments") or {}).get("nodes") or ():
            note = self._note(comment, after)
            if note is _UNTRUSTED:
                skipped += 1  # never read further, whatever it holds
            elif isinstance(note, Note):
                notes.append(note)
        return notes[-5:], skipped + max(0, len(notes) - 5)

    def _note(self, comment: dict[str, Any], after: datetime | None) -> Note | object | None:
        """A comment as a note a resume may show; None when it is older than ``after`` or ghstate's own;
        ``_UNTRUSTED`` when its author may not write to the repository (and is not listed as trusted)."""
        created = github_time(comment.get("createdAt") or "")
        edited = github_time(comment.get("lastEditedAt") or "") or created
        if after and edited and edited < after:
            return None
        author, association = login(comment.get("author")), comment.get("authorAssociation") or ""
        if not self.trusts(author, association):
            return _UNTRUSTED
        body = comment.get("body") or ""
        if _ghstates_own(body):
            return None
        when = created.strftime("%Y-%m-%d %H:%M") if created else ""
        return Note(author, association, when, _clip(body), comment.get("url") or "")

    def ensure_labels(self, labels: list[tuple[str, str, str]]) -> list[str]:
        """Create labels that do not exist (``ghstate init``); returns the ones created."""
        return [name for name, color, description in labels if self.api.create_label(name, color, description)]


def _tolerated(answer: dict[str, Any], store: GitHubStore, what: str) -> tuple[dict[str, Any], bool]:
    """An answer read with ``tolerate``: its data, and whether the tolerated part could be read (if not, the
    token may not read Git refs: said once)."""
    if "data" not in answer and "errors" not in answer:
        return answer, True  # the plain data (no errors)
    errors = errors_of(answer)
    if errors:
        store.notices.append(f"{what} could not be read ({_said(errors)}): shown as the body is; "
                             + CONTENTS_READ.format(repo=store.repo_name))
    return answer.get("data") or {}, not errors


def _head(ref: dict[str, Any] | None) -> Head | None:
    """A chain's head as GraphQL answers its ref (``ChainHead``), or None when there is no such ref."""
    target = (ref or {}).get("target") or {}
    message = target.get("message")
    return Head(str(target["oid"]), Link.from_message(message) if isinstance(message, str) else None,
                str((target.get("tree") or {}).get("oid") or "")) if target.get("oid") else None


def _said(errors: list[dict[str, Any]]) -> str:
    return describe_errors(errors) or "no result"


def _ghstates_own(body: str) -> bool:
    """A comment ghstate posted: a prompt, a CI result, a notice, an older ghstate's revision comment."""
    return bool(LOG_MARKER.search(body)) or any(m in body for m in (PROMPT_MARKER, CI_MARKER, NOTICE_MARKER)) \
        or _posted_prompt(body)


def _posted_prompt(body: str) -> bool:
    """A rehydration prompt that an earlier ghstate posted without its marker (``resume --post``)."""
    return body.lstrip().startswith("Resuming a task from ") and "\n<checkpoint>\n" in body.replace("\r\n", "\n")


def _merged(stored: Stored) -> frozenset[str]:
    """The digests of people's bodies the chain held as ``stored`` was read (none without a chain)."""
    link = stored.head.link if stored.head is not None else None
    return frozenset(link.merged) if link is not None else frozenset()


def _clip(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

