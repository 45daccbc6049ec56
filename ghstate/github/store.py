"""The GitHub store: checkpoint issues, their write log and comments, through GitHub's transport
(``ghstate.github.transport``, the only module that speaks to PyGithub).

Request budget (asserted in the tests): resume 1, create 2, update 3, a write that changes nothing 1.
The write log is the body's own edit history (``ghstate.github.history``): each version's marker carries
the entry of the write that saved it, and only versions saved by trusted editors count. Checkpoints
written by an older ghstate (the write log in revision comments) are still read from their comments.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from ghstate.config import Policy, Settings
from ghstate.core.marker import LogState
from ghstate.core.model import Revision, github_time
from ghstate.core.writelog import DELETED, LogEntry
from ghstate.errors import NotFound, RemoteError
from ghstate.github import history
from ghstate.github.transport import TIMEOUT, GitHubAPI, GraphQLFailure, GraphQLNotFound, checking
from ghstate.store import Changed, Memory, Note, Partial, Stored, StoreKind

LOG_MARKER = re.compile(r"<!--\s*ghstate:log\s+(\{.*?\})\s*-->", re.DOTALL)
PROMPT_MARKER = "<!-- ghstate:prompt -->"
CI_MARKER = "<!-- ghstate:ci -->"  # the comment of a CI result a person should act on
NOTICE_MARKER = "<!-- ghstate:notice -->"  # a comment ghstate posts for people to look at (a kept concurrent edit)
MAX_PAGES = 10  # open checkpoints looked through for a branch: 1,000 is more than any repository keeps
LOG_PAGES = 3  # kept for the protocol's signature; GraphQL reads the newest 100 comments at once
SETTLE_SECONDS = 120  # after a write, how long a save by its editor could still be merged with it
MISSING_AFTER = 2_000_000  # a reported write the history lost is replayed after every position of the log
PAST_LISTINGS = 5  # issue numbers read after the newest listed one, when a lost create is looked for
HISTORY_READS = 3  # reads of an edit history that did not hold still before it is said
RECENT_EDITS = 20  # versions of a body of the comment log read for writes an older page's save dropped
EDITS_AFTER_COMMENTS = 1_000_000  # edit-log positions come after every comment-log position
EDITS = 10  # newest versions of the body read with a checkpoint: a write lacking more is read further
COMMENTS = 20  # newest comments read with a checkpoint (what people said since; an older ghstate's log)
LIST_COMMENTS = 5  # newest comments read with each open checkpoint of a listing
ACTIONS_BOT = "github-actions[bot]"  # ghstate ci's comments come from it; only GitHub can post as it


def read_log_marker(text: str) -> dict[str, Any] | None:
    match = LOG_MARKER.search(text or "")
    if not match:
        return None
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError):  # not ours, or built to break a reader
        return None
    return data if isinstance(data, dict) else None


class GitHubStore:
    kind: StoreKind = "github"
    remote = True
    log_via = "edits"  # the write log is the body's own edit history (ghstate.github.history)

    def __init__(self, api: GitHubAPI, policy: Policy) -> None:
        self.api = api
        self.repo_name = api.repo_name
        self.policy = policy
        self._nodes: dict[int, dict[str, Any]] = {}  # the last GraphQL answer for each issue read
        self._label_ids: dict[str, str] = {}  # label name -> node id, for updateIssue's labelIds
        self.notices: list[str] = []  # problems after a write landed: warnings, not failures
        self.memory: Memory | None = None  # the writes this machine reported, until a read finds them
        self.clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        # Waits for a write's turn among this machine's writes to GitHub (``ghstate.local.pace``); None: none
        self.before_write: Callable[[], float] | None = None

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to hold: GitHub has no lock; the write log keeps concurrent writers' changes."""
        return contextlib.nullcontext()

    @classmethod
    def connect(cls, settings: Settings, timeout: int = TIMEOUT, **kwargs: Any) -> GitHubStore:
        return cls(GitHubAPI.connect(settings, timeout, **kwargs), settings.policy)

    # ------------------------------------------------------------------------------ requests

    def graphql(self, name: str, variables: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """One GraphQL request through the transport (``ghstate.github.transport.GitHubAPI.graphql``)."""
        return self.api.graphql(name, variables, **kwargs)

    # ----------------------------------------------------------------------------- helpers

    def _variables(self, **more: Any) -> dict[str, Any]:
        owner, _, name = self.repo_name.partition("/")
        return {"owner": owner, "name": name, "labels": self.policy.label, **more}

    def _from_node(self, node: dict[str, Any]) -> Stored:
        """A checkpoint as GraphQL answers it; the body without its log line (a reader's body)."""
        body, _ = history.split(node.get("body") or "")
        edits = node.get("userContentEdits") or {}
        return Stored(
            number=node["number"], title=node.get("title") or "", body=body, location=node.get("url") or "",
            labels=tuple(x["name"] for x in (node.get("labels") or {}).get("nodes") or ()),
            state=str(node.get("state") or "OPEN").lower(), version=node.get("updatedAt") or "",
            comments=(node.get("comments") or {}).get("totalCount") or 0,
            # the original version is the first entry of the log whether or not GitHub lists it yet
            edits=(edits.get("totalCount") or 0) + (0 if node.get("includesCreatedEdit") else 1),
        )

    def node(self, number: int) -> dict[str, Any] | None:
        """The last GraphQL answer for issue ``number`` read in this command (what else it carried: its
        children and claims, ``ghstate.github.tasks``), or None."""
        return self._nodes.get(number)

    def _fresh(self, number: int, edits: int) -> dict[str, Any]:
        """The issue read again with its ``edits`` newest versions, kept as the last answer about it."""
        node = self._read(number, edits=edits)
        self._keep(node)
        return node

    def _keep(self, node: dict[str, Any]) -> Stored:
        self._nodes[node["number"]] = node
        for label in (node.get("labels") or {}).get("nodes") or ():
            self._label_ids[label["name"]] = label["id"]
        return self._from_node(node)

    def _issues_enabled(self, repository: dict[str, Any]) -> None:
        """A repository with its issues turned off has no checkpoint to read: said as such, not as "no issue"."""
        if repository.get("hasIssuesEnabled") is False:
            raise NotFound(f"issues are disabled in {self.repo_name}: turn them on in its settings (General, "
                           "Features, Issues), or keep checkpoints in the local store (--store local)")

    def _keep_labels(self, repository: dict[str, Any] | None) -> None:
        for label in ((repository or {}).get("labels") or {}).get("nodes") or ():
            self._label_ids[label["name"]] = label["id"]

    def _read(self, number: int, *, edits: int = EDITS, comments: int = COMMENTS) -> dict[str, Any]:
        """One request: the issue with its newest edits and comments (query ``checkpoint``), and whether
        the repository has issues at all."""
        try:
            data = self.graphql("checkpoint", self._variables(number=number, edits=edits, comments=comments),
                                number=number, what=f"reading issue #{number} of {self.repo_name}")
        except GraphQLNotFound as exc:  # with its issues turned off, none of them is found: say why
            self._issues_enabled((exc.data or {}).get("repository") or {})
            raise
        repository = data.get("repository") or {}
        self._issues_enabled(repository)
        node = repository.get("issue")
        if not node:
            raise NotFound(f"no issue #{number} in {self.repo_name}, or the token cannot see it")
        if node.get("__typename") == "PullRequest":
            raise NotFound(f"#{number} in {self.repo_name} is a pull request, not a checkpoint issue")
        self._keep_labels(repository)
        return node

    # ---------------------------------------------------------------------------- checkpoints

    def get(self, number: int) -> Stored:
        """The checkpoint with everything a reader needs, in one GraphQL request."""
        return self._keep(self._read(number))

    def list_open(self) -> list[Stored]:
        found: list[Stored] = []
        try:
            found.extend(self.iter_open())
        except Partial as exc:
            self.notices.append(f"{self.repo_name} has more open checkpoints than were read ({exc}); close "
                                "finished ones")
        return found

    def iter_open(self) -> Iterator[Stored]:
        """Open checkpoints, most recently updated first, a page (100) per GraphQL request as they are
        needed, at most MAX_PAGES pages. Each comes with its newest comments and how long its edit log
        is, so that reading the one found needs no further request unless its body lacks a write."""
        after: str | None = None
        for _ in range(MAX_PAGES):
            data = self.graphql("open_checkpoints", self._variables(label=self.policy.label, after=after,
                                                                     comments=LIST_COMMENTS),
                                what=f"listing checkpoints of {self.repo_name}")
            repository = data.get("repository") or {}
            self._issues_enabled(repository)
            self._keep_labels(repository)
            page = repository.get("issues") or {}
            for node in page.get("nodes") or ():
                if node:
                    yield self._keep(node)
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")
        raise Partial(MAX_PAGES * 100)

    def find_open(self, unique: str) -> Stored | None:
        """The open checkpoint whose body holds ``unique`` (a marker id): one that was created although
        the answer to its creation was lost. Also among the newest issues without the label: GitHub
        drops labels silently when the token may not set them."""
        try:
            found = next((s for s in self.iter_open() if unique in s.body), None)
        except Partial:
            found = None  # not among the newest: the newest issues are looked at below
        if found is not None:
            return found
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
                node = self._read(number)
            except NotFound as exc:
                if "pull request" in str(exc):
                    continue  # pull requests share the numbers
                return None
            if unique in (node.get("body") or ""):
                return self._keep(node)
        return None

    def _stored_rest(self, issue: dict[str, Any]) -> Stored:
        """A checkpoint as REST answered it (``ghstate.github.transport``'s plain form)."""
        body, _ = history.split(issue["body"])
        return Stored(number=issue["number"], title=issue["title"], body=body, location=issue["url"],
                      labels=tuple(issue["labels"]), state=issue["state"], version=issue["updatedAt"],
                      comments=issue["comments"], edits=1)

    def create(self, title: str, body: str, unique: str = "", entry: LogEntry | None = None) -> Stored:
        """Open a checkpoint issue, its first write's log entry in its body. ``unique`` is text only this
        body contains; it finds an issue whose creation reached GitHub although the answer was lost, so
        a retry cannot make a second one."""
        text = history.embed(body, entry) if entry is not None else body

        def landed() -> dict[str, Any] | None:
            found = checking(lambda: self.find_open(unique)) if unique else None
            return None if found is None else {"number": found.number, "title": found.title, "body": found.body,
                                               "url": found.location, "labels": list(found.labels),
                                               "state": found.state, "updatedAt": found.version,
                                               "comments": found.comments}

        self._pace()
        stored = self._stored_rest(self.api.create_issue(title, text, [self.policy.label], landed))
        self._remember(stored.number, entry)
        if self.policy.label not in stored.labels:  # labels are dropped silently without push access
            try:
                self.api.add_label(stored.number, self.policy.label)
                stored = stored._replace(labels=(*stored.labels, self.policy.label))
            except (RemoteError, NotFound) as exc:  # the issue exists: a missing label must not lose it
                self.notices.append(f"issue #{stored.number} was created without the {self.policy.label!r} label "
                                    f"({exc}); add it by hand so that ghstate finds the checkpoint")
        return stored

    def reread(self, stored: Stored) -> Stored | None:
        """Nothing is asked before a write: ``updateIssue``'s answer holds the edit history, so a version
        saved between the read and the write is seen afterwards (``version``) and built on then."""
        return None

    def version(self, stored: Stored, position: int) -> Stored | None:
        """The body as the version at ``position`` of its edit history held it (from the history the last
        answer about it held, or one more read); None when it is not there or was deleted."""
        for at, text, _ in self._versions(stored, position - 1):
            if at == position:
                return None if text is None else stored._replace(body=history.split(text)[0])
        return None

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: LogEntry | None = None) -> Stored:
        """Write the body (its log entry its marker's last key), and the title and labels when they change.
        One request: GraphQL's ``updateIssue``, whose answer holds the edit history as it is after the
        write. A label the repository does not have yet goes through REST (which creates it), and the
        history is then read with a second request. A write that landed is remembered on this machine
        until a read finds it (``memory``)."""
        written = self._update(stored, body, title, labels, entry)
        self._remember(written.number, entry)
        return written

    def _pace(self) -> None:
        if self.before_write is not None:
            self.before_write()

    def _remember(self, number: int, entry: LogEntry | None) -> None:
        if self.memory is not None and entry is not None:
            self.memory.remember(self.repo_name, number, entry)

    def _update(self, stored: Stored, body: str, title: str | None, labels: tuple[str, ...] | None,
                entry: LogEntry | None) -> Stored:
        number = stored.number
        text = history.embed(body, entry) if entry is not None else body
        node = self._nodes.get(number)
        if node is None or "id" not in node:
            node = self._read(number)
            self._keep(node)
        change_labels = labels is not None and set(labels) != set(stored.labels)
        ids = [self._label_ids.get(name) for name in labels or ()]
        if change_labels and not all(ids):
            return self._update_rest(stored, text, title, labels)
        payload: dict[str, Any] = {"id": node["id"], "body": text}
        if title:
            payload["title"] = title
        if change_labels:
            payload["labelIds"] = ids

        def landed() -> dict[str, Any] | None:
            fresh_node = checking(lambda: self._read(number))
            if fresh_node.get("body") == text:
                return {"updateIssue": {"issue": fresh_node}}
            fresh = self._from_node(fresh_node)
            if (fresh.body, fresh.title, fresh.labels) != (stored.body, stored.title, stored.labels):
                self._keep(fresh_node)
                raise Changed(fresh)  # someone wrote in the wait: build on it, do not resend over it
            return None

        self._pace()
        try:
            data = self.graphql("update_checkpoint", {"input": payload, "edits": EDITS}, number=number,
                                landed=landed, what=f"updating issue #{number}")
        except GraphQLFailure as exc:
            return self._landed_despite(exc, number)
        except NotFound as exc:  # it was there a moment ago: access lost, or moved; keep the write
            raise RemoteError(str(exc), status=404) from None
        answer = (data.get("updateIssue") or {}).get("issue")
        if not answer:
            raise RemoteError(f"updating issue #{number} failed: GitHub's answer holds no issue", retryable=True)
        return self._keep(answer)

    def close(self, stored: Stored) -> Stored:
        """Close the issue as completed (GraphQL ``closeIssue``, state reason COMPLETED); closing one that is
        closed already changes nothing."""
        number = stored.number
        node = self._nodes.get(number)
        if node is None or "id" not in node:
            node = self._read(number)
        data = self.graphql("close_checkpoint", {"input": {"issueId": node["id"], "stateReason": "COMPLETED"}},
                            number=number, what=f"closing issue #{number}",
                            landed=lambda: None)  # closing twice is closing once: a lost answer is resent
        answer = (data.get("closeIssue") or {}).get("issue") or {}
        return stored._replace(state=str(answer.get("state") or "CLOSED").lower(),
                               location=answer.get("url") or stored.location)

    def _landed_despite(self, exc: GraphQLFailure, number: int) -> Stored:
        """``updateIssue`` answered with errors: when its issue is not null the write landed (a field of the
        answer failed, not the mutation), and the errors are a warning; else the failure stands. The
        answer's issue may lack what failed, so the issue is read again when it can be."""
        answer = ((exc.data or {}).get("updateIssue") or {}).get("issue")
        if not isinstance(answer, dict) or not answer.get("number"):
            if isinstance(exc, NotFound):  # it was there a moment ago: access lost, or moved; keep the write
                raise RemoteError(str(exc), status=404) from None
            raise exc
        self.notices.append(f"issue #{number} was written, but GitHub's answer also held errors ({exc.said}); "
                            "the write stands")
        try:
            answer = self._read(number)
        except (RemoteError, NotFound):
            pass  # what the answer holds is what there is
        return self._keep(answer)

    def _update_rest(self, stored: Stored, text: str, title: str | None,
                     labels: tuple[str, ...] | None) -> Stored:
        number = stored.number
        changes: dict[str, Any] = {"body": text}
        if title:
            changes["title"] = title
        if labels is not None:
            changes["labels"] = list(labels)

        def resend() -> bool:  # the first may have landed, or someone may have edited in the wait
            fresh_node = self._read(number)
            if fresh_node.get("body") == text:
                return False
            fresh = self._from_node(fresh_node)
            if (fresh.body, fresh.title, fresh.labels) != (stored.body, stored.title, stored.labels):
                self._keep(fresh_node)
                raise Changed(fresh)
            return True

        self._pace()
        try:
            self.api.edit_issue(number, changes, resend)
        except NotFound as exc:
            raise RemoteError(str(exc), status=404) from None
        return self.get(number)  # the edit history after the write

    # ------------------------------------------------------------------------------- the logs

    def stored_size(self, body: str, entry: LogEntry | None) -> int:
        """The body as GitHub keeps it: with the write's log entry as its marker's last key."""
        return len(history.embed(body, entry)) if entry is not None else len(body)

    def log_length(self, stored: Stored, state: LogState) -> int:
        """The body's versions (its edit log), or for a body of an older ghstate its comments."""
        return stored.edits if state.via == "edits" else stored.comments

    def lacking(self, stored: Stored, state: LogState) -> bool:
        """A body of an older ghstate's comment log may also lack writes of its edit history: a person saved
        a page opened before them (counts cannot tell, so any version after the first may be one). A write
        this machine reported and no read has found yet is looked for."""
        length = self.log_length(stored, state)
        return (length > state.seen and not state.complete(length)) or (state.via != "edits" and stored.edits > 1) \
            or any(entry.write not in state.applied for entry, _ in self._remembered(stored.number))

    def _remembered(self, number: int) -> list[Any]:
        return self.memory.remembered(self.repo_name, number) if self.memory is not None else []

    def log(self, stored: Stored, state: LogState, after: int, pages: int = LOG_PAGES) -> list[LogEntry]:
        """The write log after position ``after``: the body's edit history, or the revision comments of a
        checkpoint written by an older ghstate followed by the body's newest versions (ordered after every
        comment). Entries that are not a trusted write come back with no intent (so that positions show
        what was read), or with a ``problem``."""
        if state.via == "edits":
            entries = self._edit_log(stored, after)
            return entries + self._unfound(stored, state, entries)
        entries = self._comment_log(stored, after)
        if stored.edits > 1:
            newest = self._edit_log(stored, max(0, stored.edits - RECENT_EDITS))
            entries += [e._replace(position=e.position + EDITS_AFTER_COMMENTS) for e in newest]
        return entries

    def _comment_log(self, stored: Stored, after: int) -> list[LogEntry]:
        if stored.comments <= after:
            return []
        node = self._nodes.get(stored.number)
        nodes = ((node or {}).get("comments") or {}).get("nodes")
        total = ((node or {}).get("comments") or {}).get("totalCount")
        if nodes is None or total != stored.comments or total - len(nodes) > after:
            node = self._read(stored.number, edits=1, comments=100)
            nodes = (node.get("comments") or {}).get("nodes") or []
            total = (node.get("comments") or {}).get("totalCount") or 0
        first = total - len(nodes)  # positions before this one were not read
        if first > after:
            self.notices.append(f"issue #{stored.number} has {first - after} comments since its body was written "
                                "that were not read; only the newest were checked for writes it lacks")
        return [self._comment_entry(c, first + i + 1) for i, c in enumerate(nodes) if first + i + 1 > after]

    def _edit_log(self, stored: Stored, after: int) -> list[LogEntry]:
        node = self._nodes.get(stored.number) or {}
        out = []
        for position, text, edit in self._versions(stored, after):
            login = _login(edit.get("editor"))
            out.append(history.entry_of(text, position, editor=login, trusted=self._edit_trusted(login, node),
                                        at=str(edit.get("editedAt") or "")))
        return out

    def _unfound(self, stored: Stored, state: LogState, entries: list[LogEntry]) -> list[LogEntry]:
        """The writes this machine reported for the checkpoint that its history does not show: each is
        replayed after every entry of the log (it has its intent) and said once, by whom and when. A write
        is found when the body holds it, or when the history shows it under a later version (a newest
        version could still be merged with the next save of its editor, so it stays remembered)."""
        if self.memory is None:
            return []
        number = stored.number
        newest = max((e.position for e in entries), default=0)
        deleted = any(e.problem == DELETED for e in entries)
        out: list[LogEntry] = []
        for i, (entry, said) in enumerate(self.memory.remembered(self.repo_name, number)):
            positions = [e.position for e in entries if e.write == entry.write and e.replayable]
            if entry.write in state.applied:
                if self._settled(entry):  # held, and past the moment a quick save could merge over it
                    self.memory.forget(self.repo_name, number, entry.write)
            elif positions and min(positions) < newest:
                self.memory.forget(self.repo_name, number, entry.write)
            elif positions:
                continue
            elif deleted or self._in_history(stored, entry.write):  # a version's text a person deleted is
                self.memory.forget(self.repo_name, number, entry.write)  # theirs to delete: named, not restored
            else:
                out.append(entry._replace(position=MISSING_AFTER + i))
                if not said:
                    self.notices.append(f"a write reported as made on #{number} is missing from its edit history "
                                        f"({_described(entry)}); it is applied again from this machine's record")
                    self.memory.said(self.repo_name, number, entry)
        return out

    def log_since(self, stored: Stored, when: str) -> list[LogEntry]:
        """The newest hundred versions as log entries (one read at most): a write kept since ``when`` was
        made hours at most before its ``push``, and what was logged after it is among them. GitHub's clock
        is not compared with the writers': the entries' own times and write ids are."""
        node = self._nodes.get(stored.number) or self._fresh(stored.number, EDITS)
        node_now = self._nodes.get(stored.number) or node
        out = []
        for position, text, edit in self._versions(stored, max(0, self._from_node(node).edits - 100)):
            login = _login(edit.get("editor"))
            out.append(history.entry_of(text, position, editor=login, trusted=self._edit_trusted(login, node_now),
                                        at=str(edit.get("editedAt") or "")))
        return out

    def _settled(self, entry: LogEntry) -> bool:
        """A write the body holds is settled once SETTLE_SECONDS have passed since it was made: a save by
        its editor before then might still be kept as the same version as it (no GitHub document rules
        that out), after it a save is a version of its own."""
        made = github_time(entry.revision.at)
        return made is None or (self.clock() - made).total_seconds() >= SETTLE_SECONDS

    def _in_history(self, stored: Stored, write: str) -> bool:
        """Whether one of the newest 100 versions of the body is the write ``write`` (older ones were held
        by a body long since)."""
        try:
            versions = self._versions(stored, max(0, self._from_node(self._nodes[stored.number]).edits - 100))
        except (RemoteError, KeyError):
            return True  # cannot tell now: nothing is applied twice on a guess
        node = self._nodes.get(stored.number) or {}
        for position, text, edit in versions:
            login = _login(edit.get("editor"))
            found = history.entry_of(text, position, editor=login, trusted=self._edit_trusted(login, node))
            if found.write == write and found.replayable:
                return True
        return False

    def _versions(self, stored: Stored, after: int) -> list[tuple[int, str | None, dict[str, Any]]]:
        """The versions of the body after position ``after``, oldest first: (position, text, the edit), the
        text None where it was deleted from the history. Positions count from the oldest version (the
        creation is 1), so a version saved later never moves one read before. A history is trusted only
        when its newest listed version is the body of the same answer and, read in pages, when every page
        counts what the first did; otherwise it is read again, and after HISTORY_READS reads it is said
        (a RemoteError: the caller claims no more than it could check)."""
        number = stored.number
        for attempt in range(HISTORY_READS):
            node = self._nodes.get(number)
            if attempt or node is None or self._from_node(node).edits != stored.edits:
                node = self._fresh(number, EDITS)
            length = self._from_node(node).edits
            if length <= after:
                return []
            listed = (node.get("userContentEdits") or {}).get("nodes") or []
            if len(listed) < min(length - after, length) and length > 1:
                if length - after > 100:
                    versions = self._paged(number, length, after)
                    if versions is not None:
                        return versions
                    continue
                node = self._fresh(number, length - after)
                listed = (node.get("userContentEdits") or {}).get("nodes") or []
                length = self._from_node(node).edits
            if not _current(node, listed):
                continue
            if length == 1 and not listed:  # never edited: the body is the original, GitHub lists no version yet
                return [(1, node.get("body") or "", {"editor": node.get("author"), "editedAt": node.get("createdAt")})]
            return [(length - i, _text(n), n) for i, n in reversed(list(enumerate(listed))) if length - i > after]
        raise RemoteError(f"the edit history of issue #{number} did not hold still or does not show its body "
                          f"({HISTORY_READS} reads); try again in a moment", retryable=True)

    def _paged(self, number: int, length: int, after: int) -> list[tuple[int, str | None, dict[str, Any]]] | None:
        """Versions after ``after``, read a page of 100 at a time from the newest (query ``history``); None
        when the history moved while it was read (a page counted otherwise than the first, or its newest
        version was not the body)."""
        out: list[tuple[int, str | None, dict[str, Any]]] = []
        cursor: str | None = None
        index = 0
        owner, _, name = self.repo_name.partition("/")
        while True:
            data = self.graphql("history", {"owner": owner, "name": name, "number": number, "after": cursor},
                                number=number, what=f"reading the edit history of issue #{number}")
            issue = (data.get("repository") or {}).get("issue") or {}
            edits = issue.get("userContentEdits") or {}
            nodes = edits.get("nodes") or []
            if self._from_node({**issue, "number": number}).edits != length or (cursor is None and
                                                                               not _current(issue, nodes)):
                return None
            for n in nodes:
                if length - index > after:
                    out.append((length - index, _text(n), n))
                index += 1
            info = edits.get("pageInfo") or {}
            if not info.get("hasNextPage") or length - index <= after:
                return sorted(out, key=lambda v: v[0])
            cursor = info.get("endCursor")

    def _edit_trusted(self, login: str, node: dict[str, Any]) -> bool:
        """Whether a version saved by ``login`` may count as a write. Only the issue's author and people
        with write access can edit an issue body: an editor other than the author had that access; the
        author is judged by their association with the repository, as a comment's author is."""
        if not login:
            return False  # a deleted account: nobody can vouch for its edit
        if login == ACTIONS_BOT or login in self.policy.trusted_authors:
            return True
        if login != _login(node.get("author")):
            return True
        return self._trusted(node.get("authorAssociation") or "", login)

    def _comment_entry(self, comment: dict[str, Any], position: int) -> LogEntry:
        body = comment.get("body") or ""
        login = _login(comment.get("author"))
        if "ghstate:log" not in body:
            return LogEntry(Revision(0), position=position)  # a person's comment
        if not (self._trusted(comment.get("authorAssociation") or "", login) or login == ACTIONS_BOT):
            return LogEntry(Revision(0), position=position,
                            problem=f"posted by {login or 'an unknown author'}, who is not trusted")
        data = read_log_marker(body)
        if data is None:
            return LogEntry(Revision(0), position=position, problem="its log line cannot be read")
        problem = "edited after it was posted" if comment.get("lastEditedAt") else ""
        return LogEntry.from_data(data, position=position, author=login, problem=problem)

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

    def _trusted(self, association: str, login: str) -> bool:
        return association in self.policy.trusted_associations or login in self.policy.trusted_authors

    def notes_since(self, stored: Stored, since: str) -> tuple[list[Note], int]:
        """Comments people left since the checkpoint was written: those by authors with write access
        (or listed as trusted), and how many others were left out. ghstate's own comments are skipped.
        No request when the checkpoint was read in this command (its newest comments came with it)."""
        if not stored.comments:
            return [], 0
        node = self._nodes.get(stored.number)
        if node is None or (node.get("comments") or {}).get("nodes") is None:
            node = self._read(stored.number)
        after = github_time(since)
        notes: list[Note] = []
        skipped = 0
        for comment in (node.get("comments") or {}).get("nodes") or ():
            created = github_time(comment.get("createdAt") or "")
            edited = github_time(comment.get("lastEditedAt") or "") or created
            if after and edited and edited < after:
                continue
            login = _login(comment.get("author"))
            if not self._trusted(comment.get("authorAssociation") or "", login):
                skipped += 1  # never read further, whatever it holds
                continue
            body = comment.get("body") or ""
            if read_log_marker(body) is not None or any(m in body for m in (PROMPT_MARKER, CI_MARKER, NOTICE_MARKER)) \
                    or _posted_prompt(body):
                continue
            when = created.strftime("%Y-%m-%d %H:%M") if created else ""
            notes.append(Note(login, comment.get("authorAssociation") or "", when, _clip(body),
                              comment.get("url") or ""))
        return notes[-5:], skipped + max(0, len(notes) - 5)

    def revisions(self, number: int) -> list[Revision]:
        """The history: revision comments of an older ghstate, then every version of the body, oldest
        first; only trusted writes count."""
        node = self._read(number, edits=1, comments=100)
        comments = (node.get("comments") or {}).get("nodes") or []
        first = ((node.get("comments") or {}).get("totalCount") or 0) - len(comments)
        entries = [self._comment_entry(c, first + i + 1) for i, c in enumerate(comments)]
        out = [e.revision for e in entries if e.revision.revision and not e.problem]
        versions = self._versions(self._keep(node), 0)
        seen = {e.write for e in entries if e.write}
        for position, text, edit in versions:
            login = _login(edit.get("editor"))
            entry = history.entry_of(text, position, editor=login, trusted=self._edit_trusted(login, node))
            if entry.revision.revision and not entry.problem and (not entry.write or entry.write not in seen):
                seen.add(entry.write)
                out.append(entry.revision)
        return out

    def ensure_labels(self, labels: list[tuple[str, str, str]]) -> list[str]:
        """Create labels that do not exist (``ghstate init``); returns the ones created."""
        return [name for name, color, description in labels if self.api.create_label(name, color, description)]


def _posted_prompt(body: str) -> bool:
    """A rehydration prompt that an earlier ghstate posted without its marker (``resume --post``)."""
    return body.lstrip().startswith("Resuming a task from ") and "\n<checkpoint>\n" in body.replace("\r\n", "\n")


def _login(actor: dict[str, Any] | None) -> str:
    """An actor's login as REST names it: GraphQL calls a GitHub App's bot ``slug``, REST ``slug[bot]``."""
    if not actor or not actor.get("login"):
        return ""
    login = str(actor["login"])
    if actor.get("__typename") == "Bot" and not login.endswith("[bot]"):
        login += "[bot]"
    return login



def _described(entry: LogEntry) -> str:
    """A write as a warning names it: its revision, who made it, when and what it changed."""
    r = entry.revision
    who = r.agent or "ghstate"
    changes = "; ".join(r.changes[:3]) or "no change listed"
    return f"revision {r.revision} by {who}{f' at {r.at}' if r.at else ''}: {changes}"


def _text(edit: dict[str, Any]) -> str | None:
    """A version's whole text (GitHub's ``diff``); None when it was deleted from the history."""
    return None if edit.get("deletedAt") or edit.get("diff") is None else str(edit["diff"])


def _current(issue: dict[str, Any], listed: list[dict[str, Any]]) -> bool:
    """Whether the newest version listed in an answer is the body of the same answer: a history index
    behind its body (or an answer that mixes two moments) is not trusted."""
    if not listed:
        return not (issue.get("userContentEdits") or {}).get("totalCount")
    newest = _text(listed[0])
    if newest is None:  # deleted from the history: nothing to compare; the count still places it
        return True
    return " ".join(newest.split()) == " ".join((issue.get("body") or "").split())


def _clip(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
