"""Tasks on GitHub: children as sub-issues, what they wait for as issue dependencies, claims as Git refs.

A child is a sub-issue of its parent (``createIssue(parentIssueId:)``), made in batches of aliased
mutations, and so are its blocked-by links (``addBlockedBy``). A claim on child N is the ref
``refs/ghstate/claims/N``, pointing at a commit (on no branch) whose message records the agent, the session
and the lease's end. It is taken, renewed, taken over and released only with ``updateRefs`` naming the
value the ref held when it was read (``beforeOid``; all zeros: it must not exist), which GitHub compares
atomically: of any number of agents that read the same value, one moves the ref and the others are
refused. A refusal is told apart from other failures by reading the ref again (GitHub's error does not
say which it was). A ref outside ``refs/heads/`` and ``refs/tags/`` is no branch or tag: it starts no
workflow. Reading a parent (``Checkpoint``) brings its children, their links and the claims along.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any, NamedTuple

from ghstate.core.chain import ZERO
from ghstate.core.claims import CLAIMS_PREFIX, Child, Claim, Family, Held, Summary, claim_ref, mirror_in, stamp
from ghstate.core.model import Phase
from ghstate.core.parse import task_link_of
from ghstate.core.tasks import Existing, existing_children, unlisted
from ghstate.errors import NotFound, RemoteError
from ghstate.github.store import GitHubStore
from ghstate.github.transport import GitHubAPI

CREATE_BATCH = 20  # children created per request
LINK_BATCH = 50  # links made per request
DENIED = (403, 404)  # what GitHub answers a token without contents: write that writes Git objects


class RefsUnavailable(RemoteError):
    """The token cannot write Git refs (it lacks ``contents: write``): claims fall back to the child's body."""


class Untold(RemoteError):
    """A claim ref's move whose answer was lost, and whether it landed cannot be read now: only the command
    that asks again can tell (the service names it)."""


class ChildRead(NamedTuple):
    """One child as a claim reads it: the child (its claim from its ref, else from its body), its parent on
    GitHub (in this repository; None: none here), its node id, the parent it was split from (its marker's;
    None: no split made it), its labels, and whether its parent on GitHub is closed."""

    child: Child
    parent: int | None
    node_id: str
    repository_id: str
    split_from: int | None = None
    labels: frozenset[str] = frozenset()
    parent_closed: bool = False



class GitHubTasks:
    remote = True

    def __init__(self, store: GitHubStore) -> None:
        self.store = store
        self.api: GitHubAPI = store.api
        self._ids: dict[int, str] = {}  # issue number -> node id, as read or created in this command
        self._repository_id = ""
        self._read: dict[int, dict[str, Any] | None] = {}  # issues read on their own (None: not there)
        self._untold = False  # the last move's answer was lost and whether it landed could not be read
        self._pages: dict[int, tuple[Any, dict[str, Any], dict[str, Any]]] = {}  # claim refs listed, per read
        self.notices: list[str] = []  # what a command should say of what it did here (the store says them)

    def _names(self) -> dict[str, str]:
        owner, _, name = self.store.repo_name.partition("/")
        return {"owner": owner, "name": name}

    # ------------------------------------------------------------------------------ reading

    def family(self, parent: int) -> Family:
        """The children of ``parent`` as its last read carried them (``Checkpoint`` reads them along)."""
        node = self.store.node(parent)
        if node is None or "subIssues" not in node:
            self.store.get(parent)
            node = self.store.node(parent) or {}
        self._ids[parent] = node.get("id") or ""
        self._repository_id = (node.get("repository") or {}).get("id") or self._repository_id
        subs = [sub for sub in (node.get("subIssues") or {}).get("nodes") or () if sub and self._ours(sub)]
        refs = self._refs(parent, [sub["number"] for sub in subs if sub.get("state") == "OPEN"])
        children = [self._child(sub, refs.get(str(sub["number"])), parent) for sub in subs]
        summary = node.get("subIssuesSummary") or {}
        return Family(parent, tuple(children), Summary(summary.get("total") or 0, summary.get("completed") or 0))

    def has_children(self, number: int) -> bool:
        """Whether a checkpoint as the listing read it has sub-issues (the listing carries their count)."""
        node = self.store.node(number) or {}
        return bool((node.get("subIssuesSummary") or {}).get("total") or (node.get("subIssues") or {}).get("nodes"))

    def _refs(self, parent: int, wanted: list[int] | None = None) -> dict[str, dict[str, Any]]:
        """The claim refs the read of ``parent`` listed, by child number (none where GitHub does not list them).
        GitHub lists 100 a page, by name: while a child in ``wanted`` has none on the pages read and more are
        left, the next page is read (``ClaimRefs``, a request each; claim refs that hold nothing are deleted as
        they are found, see ``sweep``, so that it seldom comes to that)."""
        node = self.store.node(parent) or {}
        claims = (node.get("repository") or {}).get("claims") or {}
        if parent not in self._pages or self._pages[parent][0] is not claims:  # read again since: listed again
            found = {str(r.get("name")): r for r in claims.get("nodes") or () if r}
            self._pages[parent] = (claims, found, claims.get("pageInfo") or {})
        _, found, page = self._pages[parent]
        missing = {str(n) for n in wanted or ()} - set(found)
        while missing and page.get("hasNextPage") and page.get("endCursor"):
            data = self.api.graphql("claim_refs", {**self._names(), "after": page["endCursor"]},
                                    what="reading the claim refs past the first 100")
            more = (data.get("repository") or {}).get("claims") or {}
            listed = {str(r.get("name")): r for r in more.get("nodes") or () if r}
            found.update(listed)
            missing -= set(listed)
            page = more.get("pageInfo") or {}
            self._pages[parent] = (claims, found, page)
        return found

    def _here(self, node: dict[str, Any]) -> bool:
        """Whether an issue as read is of this repository (a sub-issue, a parent or a blocker may be another's,
        whose number means nothing here); one read without its repository is taken as this one's."""
        found = (node.get("repository") or {}).get("id")
        return not found or not self._repository_id or found == self._repository_id

    def _ours(self, sub: dict[str, Any]) -> bool:
        """Whether a sub-issue as read is a child task of ghstate's: of this repository, and made by ``split`` (its
        marker says which parent and phase) or carrying ghstate's label (a checkpoint a person put under a plan).
        A person's own sub-issue of their epic is theirs: never offered, claimed or closed."""
        labels = {(x or {}).get("name") for x in (sub.get("labels") or {}).get("nodes") or ()}
        made = task_link_of(sub.get("body") or "") is not None
        return self._here(sub) and (made or self.store.policy.label in labels)

    def _child(self, sub: dict[str, Any], ref: dict[str, Any] | None, parent: int = 0) -> Child:
        """A child as read; its phase is the one its marker names when ``parent`` is the one it was split from."""
        self._ids[sub["number"]] = sub.get("id") or ""
        target = (ref or {}).get("target") or {}
        shown = mirror_in(sub.get("body") or "")
        claim = _claim_of(target) if ref else shown
        waiting = [b for b in ((sub.get("blockedBy") or {}).get("nodes") or ()) if b and b.get("state") == "OPEN"]
        blockers = tuple(b["number"] for b in waiting if self._here(b))
        elsewhere = tuple(f"{(b.get('repository') or {}).get('nameWithOwner') or '?'}#{b['number']}" for b in waiting
                          if not self._here(b))
        link = task_link_of(sub.get("body") or "")
        phase = link.phase if link is not None and parent and link.parent == parent else ""
        return Child(sub["number"], sub.get("title") or "", sub.get("state") == "OPEN", blockers, claim, phase,
                     url=sub.get("url") or "", version=target.get("oid") or "", shown=shown, from_ref=ref is not None,
                     blocked_elsewhere=elsewhere)

    def elsewhere(self, parent: int, numbers: tuple[int, ...]) -> tuple[Child, ...]:
        """The children ``parent``'s phase lines link that are not among its sub-issues, as moved, with where
        each is now: one request for all of them (none when there are none, or each was read already). An
        issue whose marker does not say it was split from ``parent`` is no child of it (a person's ``(#N)``)."""
        unread = tuple(n for n in dict.fromkeys(numbers) if n not in self._read)
        if unread:
            self._read.update(self._issues(unread))
        out = []
        for number in numbers:
            node = self._read.get(number)
            link = task_link_of((node or {}).get("body") or "")
            if node and link is not None and link.parent == parent:
                child = self._child(node, self._refs(parent).get(str(number)), parent)
                now = (node.get("parent") or {}).get("number") or 0 if self._here(node.get("parent") or {}) else 0
                out.append(child._replace(moved=now != parent, moved_to=now))
        return tuple(out)

    def _issues(self, numbers: tuple[int, ...]) -> dict[int, dict[str, Any] | None]:
        variables = {**self._names(), **{f"number_{i}": n for i, n in enumerate(numbers)}}
        try:
            answer = self.api.graphql("children_elsewhere", variables, partial=True, count=len(numbers),
                                      what=f"reading {', '.join(f'#{n}' for n in numbers)}")
        except NotFound:  # none of them is there
            return dict.fromkeys(numbers)
        repository = (answer.get("data") or {}).get("repository") or {}
        self._repository_id = repository.get("id") or self._repository_id
        return {n: repository.get(f"child_{i}") for i, n in enumerate(numbers)}

    def existing(self, parent: int, phases: tuple[Phase, ...]) -> Existing:
        """What a split of ``parent`` finds made already: its sub-issues, and the children its phase lines link
        that a person moved elsewhere (they still count for their phase), each at its phase (see
        ``existing_children``); their links; GitHub's counts."""
        node = self.store.node(parent) or {}
        here = self.family(parent).children
        moved = self.elsewhere(parent, unlisted(phases, here))
        nodes = [s for s in (node.get("subIssues") or {}).get("nodes") or () if s and self._ours(s)] + \
            [self._read[c.number] for c in moved if self._read.get(c.number)]
        links = frozenset((s["number"], b["number"]) for s in nodes
                          for b in (s.get("blockedBy") or {}).get("nodes") or () if b and self._here(b))
        degrees = {s["number"]: (((s.get("blockedBy") or {}).get("totalCount") or 0),
                                 ((s.get("blocking") or {}).get("totalCount") or 0)) for s in nodes}
        closed = frozenset(c.number for c in (*here, *moved) if not c.open)
        count = (node.get("subIssues") or {}).get("totalCount") or len(here)
        return Existing(existing_children(phases, (*here, *moved)), links, count, degrees, closed)

    def read_child(self, number: int) -> ChildRead:
        """One request: the child, its parent, and the ref that holds its claim (``ClaimState``)."""
        data = self.api.graphql("claim_state", {**self._names(), "number": number, "ref": claim_ref(number)},
                                number=number, what=f"reading the claim of #{number}")
        repository = data.get("repository") or {}
        node = repository.get("issue")
        if not node:
            raise NotFound(f"no issue #{number} in {self.store.repo_name}, or the token cannot see it")
        self._ids[number] = node["id"]
        self._repository_id = repository.get("id") or ""
        ref = repository.get("ref")
        link = task_link_of(node.get("body") or "")
        child = self._child(node, {"name": str(number), **ref} if ref else None, link.parent if link else 0)
        self._read[number] = node  # what a read of the family it was split from would ask again
        parent = node.get("parent") or {}
        labels = frozenset(x.get("name") or "" for x in (node.get("labels") or {}).get("nodes") or () if x)
        return ChildRead(child, parent.get("number") if parent and self._here(parent) else None, node["id"],
                         self._repository_id, link.parent if link else None, labels,
                         parent.get("state") == "CLOSED" and self._here(parent))

    def held_as_read(self, number: int) -> Held | None:
        """The claim on ``number`` as the last read of that issue listed its ref, at no request; None when the
        listing did not have it (no ref, or a GitHub that lists no refs outside heads/ and tags/)."""
        ref = self._refs(number).get(str(number))
        if ref is None:
            return None
        self._repository_id = ((self.store.node(number) or {}).get("repository") or {}).get("id") or self._repository_id
        target = ref.get("target") or {}
        return Held(target.get("oid") or "", _claim_of(target))

    def held(self, number: int) -> Held:
        """The claim on ``number`` as its ref holds it now (``RefState``)."""
        data = self.api.graphql("ref_state", {**self._names(), "ref": claim_ref(number)},
                                what=f"reading the claim of #{number}")
        repository = data.get("repository") or {}
        self._repository_id = repository.get("id") or self._repository_id
        target = (repository.get("ref") or {}).get("target") or {}
        if not target:
            return Held("", None)
        return Held(target.get("oid") or "", _claim_of(target))

    # ------------------------------------------------------------------------------ children

    def create_children(self, parent: int, drafts: list[tuple[str, str]], label: str,
                        project: str | None = None) -> list[int]:
        """Create each (title, body) as a checkpoint issue and sub-issue of ``parent``, a batch of
        aliased ``createIssue`` per request; their numbers, in order. ``project``: a project's id, of which each
        is made an item as it is made (``projectV2Ids``); a batch GitHub refuses so is made again without it,
        and said (``self.notices``). Children that could not be made are named in the error (those made stay: a
        split again finds them)."""
        node = self.store.node(parent) or {}
        label_ids = [x["id"] for x in (node.get("labels") or {}).get("nodes") or () if x and x.get("name") == label]
        repository = (node.get("repository") or {}).get("id") or self._repository_id
        numbers: list[int] = []
        for start in range(0, len(drafts), CREATE_BATCH):
            chunk = [{"repositoryId": repository, "title": title, "parentIssueId": node["id"], "body": body,
                      "labelIds": label_ids} for title, body in drafts[start:start + CREATE_BATCH]]
            made, answer = self._create(chunk, project)
            if project and len(made) < len(chunk):  # the project refused them: made without it, and said
                self.notices.append(f"the children of #{parent} were made without joining the project "
                                    f"({_first_error(answer)}); each joins it at its first write")
                again, answer = self._create([c for i, c in enumerate(chunk) if i not in made], None)
                rest = [i for i in range(len(chunk)) if i not in made]
                made.update({rest[j]: n for j, n in again.items()})
            numbers += [made[i] for i in sorted(made)]
            if len(made) < len(chunk):
                raise RemoteError(f"{len(chunk) - len(made)} of the {len(drafts)} children of #{parent} could not be "
                                  f"created ({_first_error(answer)}); those created are its sub-issues: run 'ghstate "
                                  f"split {parent}' again to make the rest")
        if not label_ids:
            for number in numbers:
                self.api.add_label(number, label)
        return numbers

    def _create(self, inputs: list[dict[str, Any]], project: str | None) -> tuple[dict[int, int], dict[str, Any]]:
        """One request: each input's issue made (index → number) and GitHub's answer."""
        variables = {f"child_{i}": {**given, **({"projectV2Ids": [project]} if project else {})}
                     for i, given in enumerate(inputs)}
        try:
            answer = self.api.graphql("create_children", variables, partial=True, what="creating children",
                                      count=len(variables))
        except NotFound as exc:  # every item refused the same way (a project this token cannot add to, say)
            if not project:
                raise RemoteError(f"creating children failed: {exc}") from None
            answer = {"errors": [{"type": "NOT_FOUND", "message": str(exc)}]}
        made = {}
        for i in range(len(inputs)):
            issue = ((answer.get("data") or {}).get(f"child_{i}") or {}).get("issue")
            if issue:
                self._ids[issue["number"]] = issue["id"]
                made[i] = issue["number"]
        return made, answer

    def add_links(self, links: list[tuple[int, int]]) -> None:
        """Each (waiting, awaited) child as a blocked-by link, a batch of ``addBlockedBy`` per request."""
        for start in range(0, len(links), LINK_BATCH):
            chunk = links[start:start + LINK_BATCH]
            variables = {f"link_{i}": {"issueId": self._ids[a], "blockingIssueId": self._ids[b]}
                         for i, (a, b) in enumerate(chunk)}
            answer = self._batch("add_blocked_by", variables, "linking children")
            failed = [f"#{a} after #{b}" for i, (a, b) in enumerate(chunk)
                      if not (answer.get("data") or {}).get(f"link_{i}")]
            if failed:
                raise RemoteError(f"{len(failed)} blocked-by links could not be made ({', '.join(failed[:5])}: "
                                  f"{_first_error(answer)}); run 'ghstate split' again to make them")

    def _batch(self, name: str, variables: dict[str, Any], what: str) -> dict[str, Any]:
        try:
            return self.api.graphql(name, variables, partial=True, what=what, count=len(variables))
        except NotFound as exc:  # every item refused the same way
            raise RemoteError(f"{what} failed: {exc}") from None

    def close(self, number: int) -> None:
        if number not in self._ids:
            self.read_child(number)
        self.api.graphql("close_issue", {"input": {"issueId": self._ids[number], "stateReason": "COMPLETED"}},
                         number=number, what=f"closing #{number}")

    # ------------------------------------------------------------------------------ claims

    def swap(self, number: int, seen: Held, claim: Claim | None, by: str = "") -> Held | None:
        """Make ``claim`` (None: released) child ``number``'s, only if its ref still holds what ``seen``
        says: None when this call did; else what the ref holds now (another agent moved it first)."""
        if claim is None and not seen.version:
            return None  # no ref: nothing to release
        for _, found, _ in self._pages.values():  # what the listing said of it is no longer what it holds
            found.pop(str(number), None)
        after = ZERO if claim is None else self._commit(claim, seen)
        if not self._repository_id:
            self.held(number)
        update = {"name": claim_ref(number), "afterOid": after, "beforeOid": seen.version or ZERO}
        self._untold = False
        try:
            answer = self.api.graphql("update_refs", {"input": {"repositoryId": self._repository_id,
                                                                "refUpdates": [update]}}, partial=True,
                                      what=f"moving the claim of #{number}", landed=lambda: self._landed(number, after))
        except NotFound as exc:
            answer = {"errors": [{"type": "NOT_FOUND", "message": str(exc)}]}
        except RemoteError as exc:
            if self._untold:  # the answer was lost and the reads that would tell failed too
                raise Untold(str(exc), retryable=True) from None
            raise
        if not answer.get("errors"):
            return None
        now = self.held(number)
        if now.version == (after if after != ZERO else ""):
            return None  # it moved as asked (the error was about something else)
        if now.version != seen.version:
            return now  # another agent moved it first
        kinds = {e.get("type") for e in answer["errors"] if isinstance(e, dict)}
        if kinds & {"FORBIDDEN", "INSUFFICIENT_SCOPES"}:
            raise RefsUnavailable(f"the token cannot write Git refs ({_first_error(answer)})", status=403)
        raise RemoteError(f"moving {claim_ref(number)} failed: {_first_error(answer)}")

    def sweep(self, now: datetime, closed: frozenset[int] = frozenset()) -> int:
        """Delete the claim refs this command's reads listed that hold nothing any more: a claim that ended (or is
        dated in the future: no claim), or the claim of a child that is closed (``closed``). One ``updateRefs``
        for all of them, each from the value read (a ref moved since is a claim someone made: the request is
        refused whole, and the next reading sweeps). How many went; none when nothing was found (no request)."""
        stale: dict[str, str] = {}
        for _, found, _ in self._pages.values():
            for name, ref in found.items():
                target = ref.get("target") or {}
                claim = _claim_of(target)
                ended = claim is not None and not claim.live(now)
                if target.get("oid") and (ended or (name.isdigit() and int(name) in closed)):
                    stale[claim_ref(int(name)) if name.isdigit() else CLAIMS_PREFIX + name] = target["oid"]
        if not stale or not self._repository_id:
            return 0
        updates = [{"name": name, "afterOid": ZERO, "beforeOid": oid} for name, oid in sorted(stale.items())]
        try:
            answer = self.api.graphql("update_refs", {"input": {"repositoryId": self._repository_id,
                                                                "refUpdates": updates}}, partial=True,
                                      what="deleting claim refs that hold nothing", landed=lambda: None)
        except RemoteError:
            return 0  # left for the next reading: nothing depends on it
        if answer.get("errors"):
            return 0
        for _, found, _ in self._pages.values():
            for name in [n for n in found if CLAIMS_PREFIX + n in stale]:
                del found[name]
        return len(stale)

    def _landed(self, number: int, after: str) -> dict[str, Any] | None:
        """Whether an update whose answer was lost moved the ref: it did if the ref holds our commit."""
        from ghstate.github.transport import CannotTell, checking

        try:
            held = checking(lambda: self.held(number))
        except CannotTell:
            self._untold = True
            raise
        return {"updateRefs": {}} if held.version == (after if after != ZERO else "") else None

    def _commit(self, claim: Claim, seen: Held) -> str:
        record = {"claim": claim.to_data(), "nonce": os.urandom(8).hex()}  # a commit of its own, whoever races
        try:
            return self.api.create_commit(claim.message(), {"claim.json": json.dumps(record, sort_keys=True) + "\n"},
                                          [seen.version] if seen.version else [])
        except RemoteError as exc:
            if exc.status in DENIED:
                raise RefsUnavailable(f"the token cannot write Git objects ({exc})", status=exc.status) from None
            raise


def _claim_of(target: dict[str, Any]) -> Claim | None:
    """The claim the commit a claim ref points at records, dated as GitHub dated that commit (its lease is
    measured from there, whatever the clock of the machine that wrote it said)."""
    claim = Claim.from_message(target.get("message") or "")
    dated = str(target.get("committedDate") or "")
    return claim._replace(dated=stamp(when)) if claim is not None and (when := _iso(dated)) is not None else claim


def _iso(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _first_error(answer: dict[str, Any]) -> str:
    errors = [e for e in answer.get("errors") or () if isinstance(e, dict)]
    if not errors:
        return "GitHub's answer holds no result"
    first = errors[0]
    return " ".join(f"{first.get('type') or ''} {first.get('message') or ''}".split())
