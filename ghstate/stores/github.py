"""The GitHub store: checkpoint issues through PyGithub. The only module that imports ``github``.

Request budget (asserted in the tests): resume ≤ 2, create ≤ 4, update ≤ 4 with the history comment.
The write log (``ghstate.writelog``) lives in the issue's comments: each revision comment carries its
write's intent in a hidden line, and only comments by trusted authors, unedited, count.

PyGithub's own throttle (0.25 s between requests, 1 s between writes) and its urllib3 retry are both
off on purpose: a checkpoint makes two to four requests, so the throttle would only add seconds, and
the stock retry resends POSTs, which can create a second issue or comment when the first attempt
reached GitHub but its answer did not reach us. Retrying is done here instead: transient 5xx,
timeouts and secondary rate limits are retried with exponential backoff (honouring Retry-After)
within a total budget under a minute, and before a POST is resent, GitHub is asked whether the
first one landed.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException
from github.Issue import Issue

from ghstate import __version__
from ghstate.config import Policy, Settings
from ghstate.errors import NotFound, RemoteError
from ghstate.model import Revision
from ghstate.stores import Changed, Note, Partial, Stored, StoreKind, editlog
from ghstate.writelog import LogEntry

T = TypeVar("T")
TIMEOUT = 10  # seconds per request
TOTAL = 45.0  # seconds for one operation, retries included
ATTEMPTS = 5
LOG_MARKER = re.compile(r"<!--\s*ghstate:log\s+(\{.*?\})\s*-->", re.DOTALL)
PROMPT_MARKER = "<!-- ghstate:prompt -->"
CI_MARKER = "<!-- ghstate:ci -->"  # the comment of a CI result a person should act on
NOTICE_MARKER = "<!-- ghstate:notice -->"  # a comment ghstate posts for people to look at (a kept concurrent edit)
TRANSIENT = {500, 502, 503, 504}
MAX_PAGES = 10  # open checkpoints looked through for a branch: 1,000 is more than any repository keeps
LOG_PAGES = 3  # kept for the protocol's signature; GraphQL reads the newest 100 comments at once
EDITS = 10  # newest versions of the body read with a checkpoint: a write lacking more is read further
COMMENTS = 20  # newest comments read with a checkpoint (what people said since; an older ghstate's log)
LIST_COMMENTS = 5  # newest comments read with each open checkpoint of a listing
ACTIONS_BOT = "github-actions[bot]"  # ghstate ci's comments come from it; only GitHub can post as it


class _CannotTell(Exception):
    """Whether a request whose answer was lost reached GitHub cannot be checked now."""


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


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
    log_in_body = True  # the write log is the body's own edit history (ghstate.stores.editlog)

    def __init__(self, client: Github, repo: str, policy: Policy, *, api_url: str = "https://api.github.com",
                 sleep: Callable[[float], None] | None = None, clock: Callable[[], float] | None = None,
                 total: float = TOTAL) -> None:
        self.client = client
        self.repo_name = repo
        self.policy = policy
        self.api_url = api_url
        self.sleep = sleep or (lambda seconds: _sleep(seconds))
        self.clock = clock or (lambda: time.monotonic())
        self.total = total
        self._repo = client.get_repo(repo)  # lazy: no request until something is asked of it
        self._started: float | None = None  # the budget is for the whole command, not each call
        self._waited = 0.0  # counted apart from the clock, so that a budget holds whatever sleeping does
        self._nodes: dict[int, dict[str, Any]] = {}  # the last GraphQL answer for each issue read
        self._label_ids: dict[str, str] = {}  # label name -> node id, for updateIssue's labelIds
        self._created: dict[int, Issue] = {}
        self.notices: list[str] = []  # problems after a write landed: warnings, not failures

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to hold: GitHub has no lock; the write log keeps concurrent writers' changes."""
        return contextlib.nullcontext()

    @classmethod
    def connect(cls, settings: Settings, timeout: int = TIMEOUT, **kwargs: Any) -> GitHubStore:
        client = Github(
            auth=Auth.Token(settings.token),
            base_url=settings.api_url,
            timeout=timeout,
            user_agent=f"ghstate/{__version__}",
            per_page=100,
            retry=None,  # retried in _call, where a POST is never blindly resent
            seconds_between_requests=None,  # no 0.25 s throttle: a command makes at most a handful
            seconds_between_writes=None,  # no 1 s throttle between writes
            lazy=True,
        )
        assert settings.repo is not None
        return cls(client, settings.repo, settings.policy, api_url=settings.api_url, **kwargs)

    # ------------------------------------------------------------------------------ requests

    def _call(self, what: str, fn: Callable[[], T], *, landed: Callable[[], T | None] | None = None,
              number: int | None = None) -> T:
        """Run one API call with bounded retries. ``landed`` (for POSTs) says whether an attempt whose
        answer was lost did reach GitHub, and returns what it created."""
        if self._started is None:
            self._started = self.clock()
        attempt = 0
        while True:
            uncertain = False
            asked = 0.0
            try:
                return fn()
            except GithubException as exc:
                wait = self._retry_wait(exc, attempt)
                if wait is None:
                    raise self._error(exc, what, number) from None
                headers = {k.lower() for k in (exc.headers or {})}
                limited = exc.status in (403, 429)
                reason = f"GitHub's secondary rate limit ({exc.status})" if limited else f"GitHub answered {exc.status}"
                asked = wait if limited and "retry-after" in headers else 0.0
                uncertain = exc.status in TRANSIENT
            except requests.exceptions.ConnectionError as exc:
                wait = self._backoff(attempt)
                reason = f"cannot reach {self.api_url} ({_connection_problem(exc)})"
                # refused or unresolvable: the request never left; anything else may have arrived
                uncertain = not isinstance(exc, requests.exceptions.ConnectTimeout) and not _never_sent(exc)
                if not uncertain and attempt >= 1:  # offline or no such host: one more try is enough
                    raise RemoteError(f"{what} failed: {reason}, after {attempt + 1} attempts",
                                      retryable=True) from None
            except requests.exceptions.Timeout as exc:
                wait = self._backoff(attempt)
                reason = f"no answer from {self.api_url} in time ({_short(exc)})"
                uncertain = not isinstance(exc, requests.exceptions.ConnectTimeout)
            except requests.exceptions.RequestException as exc:  # a broken answer: chunking, decoding, …
                wait = self._backoff(attempt)
                reason = f"the answer from {self.api_url} broke off ({type(exc).__name__})"
                uncertain = True
            except (TypeError, KeyError, AttributeError, ValueError) as exc:
                raise RemoteError(f"{what} failed: the answer from {self.api_url} is not what GitHub sends "
                                  f"({type(exc).__name__}); check GITHUB_API_URL", retryable=True) from exc
            attempt += 1
            spent = max(self.clock() - self._started, self._waited)  # real sleeps move the clock, fakes do not
            if attempt >= ATTEMPTS or spent + wait > self.total:
                pause = f"; GitHub asked for a pause of {asked:.0f} s: try again after it" if asked else ""
                raise RemoteError(f"{what} failed: {reason}, after {attempt} attempt{'s' if attempt > 1 else ''} "
                                  f"and {spent:.0f} s{pause}", retryable=True)
            self.sleep(wait)
            self._waited += wait
            if landed is not None and uncertain:
                try:
                    found = landed()
                except _CannotTell:  # resending could make a second one: stop; the write is kept
                    raise RemoteError(f"{what} failed: {reason}, and whether it reached GitHub cannot be "
                                      "checked now, so it was not sent again", retryable=True) from None
                if found is not None:
                    return found

    def graphql(self, name: str, variables: dict[str, Any], *, number: int | None = None,
                landed: Callable[[], dict[str, Any] | None] | None = None,
                partial: bool = False, what: str = "") -> dict[str, Any]:
        """One GraphQL request: the document ``ghstate/graphql/NAME.graphql`` with ``variables``, sent
        through PyGithub's requester (same token, timeout and GHES base: ``/api/graphql``), retried as
        any call (``what`` names it in errors). Answers the ``data``; with ``partial``, the whole answer
        (``data`` and ``errors``) even when GitHub reports errors beside data. A mutation is resent after
        a lost answer only when ``landed`` says it did not land."""
        from ghstate import graphql as documents

        query = documents.document(name)
        if landed is None and query.lstrip().startswith("mutation"):
            def landed() -> dict[str, Any] | None:
                raise _CannotTell

        def send() -> dict[str, Any]:
            try:
                _, answer = self.client.requester.graphql_query(query, variables)
            except GithubException as exc:
                data = exc.data if isinstance(exc.data, dict) else {}
                if partial and exc.status == 400 and isinstance(data.get("errors"), list):
                    return data
                raise
            return answer if partial else answer["data"]

        return self._call(what or f"GraphQL {name}", send, landed=landed, number=number)

    def _backoff(self, attempt: int) -> float:
        return min(16.0, 1.0 * 2**attempt) * (0.75 + random.random() / 2)

    def _retry_wait(self, exc: GithubException, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when retrying cannot help."""
        status = exc.status
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        if status in TRANSIENT:
            return self._backoff(attempt)
        if status in (403, 429):
            message = str(exc.data.get("message", "") if isinstance(exc.data, dict) else "").lower()
            if headers.get("x-ratelimit-remaining") == "0" and "secondary" not in message:
                return None  # the primary limit: it resets in up to an hour, not seconds
            if "retry-after" in headers:
                try:
                    return max(1.0, float(headers["retry-after"]))
                except ValueError:
                    return self._backoff(attempt + 2)
            if "secondary rate limit" in message or status == 429:
                return self._backoff(attempt + 2)  # 4, 8, 16 s: GitHub asks for a pause, not a hammering
        return None

    def _error(self, exc: GithubException, what: str, number: int | None) -> Exception:
        status = exc.status
        data = exc.data if isinstance(exc.data, dict) else {}
        message = str(data.get("message") or "").strip()
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        repo = self.repo_name
        if status == 401:
            return RemoteError(f"{what} failed: GitHub rejected the token (401 {message or 'Bad credentials'}); "
                               "set a valid GH_TOKEN or GITHUB_TOKEN, or run 'gh auth login'", status=401)
        if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
            reset = headers.get("x-ratelimit-reset", "")
            when = ""
            if str(reset).isdigit():
                at = datetime.fromtimestamp(int(reset), timezone.utc)
                minutes = max(0, int((at - datetime.now(timezone.utc)).total_seconds() // 60) + 1)
                when = f"; it resets at {at:%H:%M} UTC (in about {minutes} min)"
            return RemoteError(f"{what} failed: the GitHub API rate limit is used up{when}; wait, or use a token "
                               "with a higher limit", status=status, retryable=True)
        if status in (403, 429):
            return RemoteError(f"{what} failed: GitHub refused access to {repo} ({status} {message or 'Forbidden'}); "
                               "the token needs Issues: write on this repository (or the 'repo' scope)", status=status)
        if status == 404:
            if number is not None:
                return NotFound(f"no issue #{number} in {repo}, or the token cannot see {repo} (404)")
            return RemoteError(f"{what} failed: {repo} not found, or the token cannot see it (404); check -R/--repo "
                               "and the token's access", status=404)
        if status == 410:
            target = f"issue #{number} was deleted or issues are disabled" if number else "issues are disabled"
            return RemoteError(f"{what} failed: {target} in {repo} (410 Gone); enable Issues in the repository "
                               "settings, or use --store local", status=410)
        if status == 422:
            errors = "; ".join(str(e.get("message") or e.get("code") or e) for e in data.get("errors", [])
                               if isinstance(e, dict))
            return RemoteError(f"{what} failed: GitHub rejected the request (422 {message}"
                               f"{': ' + errors if errors else ''})", status=422)
        if status in TRANSIENT:
            return RemoteError(f"{what} failed: GitHub answered {status}", status=status, retryable=True)
        return RemoteError(f"{what} failed: GitHub answered {status} {message}".strip(), status=status)

    # ----------------------------------------------------------------------------- helpers

    def _variables(self, **more: Any) -> dict[str, Any]:
        owner, _, name = self.repo_name.partition("/")
        return {"owner": owner, "name": name, "labels": self.policy.label, **more}

    def _from_node(self, node: dict[str, Any]) -> Stored:
        """A checkpoint as GraphQL answers it; the body without its log line (a reader's body)."""
        body, _ = editlog.split(node.get("body") or "")
        edits = node.get("userContentEdits") or {}
        return Stored(
            number=node["number"], title=node.get("title") or "", body=body, location=node.get("url") or "",
            labels=tuple(x["name"] for x in (node.get("labels") or {}).get("nodes") or ()),
            state=str(node.get("state") or "OPEN").lower(), version=node.get("updatedAt") or "",
            comments=(node.get("comments") or {}).get("totalCount") or 0,
            # the original version is the first entry of the log whether or not GitHub lists it yet
            edits=(edits.get("totalCount") or 0) + (0 if node.get("includesCreatedEdit") else 1),
        )

    def _keep(self, node: dict[str, Any]) -> Stored:
        self._nodes[node["number"]] = node
        for label in (node.get("labels") or {}).get("nodes") or ():
            self._label_ids[label["name"]] = label["id"]
        return self._from_node(node)

    def _keep_labels(self, repository: dict[str, Any] | None) -> None:
        for label in ((repository or {}).get("labels") or {}).get("nodes") or ():
            self._label_ids[label["name"]] = label["id"]

    def _read(self, number: int, *, edits: int = EDITS, comments: int = COMMENTS) -> dict[str, Any]:
        """One request: the issue with its newest edits and comments (query ``checkpoint``)."""
        data = self.graphql("checkpoint", self._variables(number=number, edits=edits, comments=comments),
                            number=number, what=f"reading issue #{number} of {self.repo_name}")
        repository = data.get("repository") or {}
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
        newest = self._repo.get_issues(state="open", sort="created", direction="desc")
        for issue in self._call(f"listing the newest issues of {self.repo_name}", lambda: newest.get_page(0)):
            if not _is_pull_request(issue) and unique in (issue.body or ""):
                return self._stored_rest(issue)
        return None

    def _stored_rest(self, issue: Issue) -> Stored:
        body, _ = editlog.split(issue.body or "")
        return Stored(number=issue.number, title=issue.title or "", body=body, location=issue.html_url,
                      labels=tuple(label.name for label in issue.labels), state=issue.state,
                      version=issue.updated_at.isoformat() if issue.updated_at else "",
                      comments=issue.comments or 0, edits=1)

    def create(self, title: str, body: str, unique: str = "", entry: LogEntry | None = None) -> Stored:
        """Open a checkpoint issue, its first write's log entry in its body. ``unique`` is text only this
        body contains; it finds an issue whose creation reached GitHub although the answer was lost, so
        a retry cannot make a second one."""
        text = editlog.embed(body, entry) if entry is not None else body

        def post() -> Stored:
            issue = self._repo.create_issue(title=title, body=text, labels=[self.policy.label])
            self._created[issue.number] = issue
            return self._stored_rest(issue)

        def landed() -> Stored | None:
            try:
                return self.find_open(unique) if unique else None
            except (RemoteError, GithubException, requests.exceptions.RequestException):
                raise _CannotTell() from None

        stored = self._call(f"creating a checkpoint issue in {self.repo_name}", post, landed=landed)
        if self.policy.label not in stored.labels:  # labels are dropped silently without push access
            issue = self._created.get(stored.number) or self._repo.get_issue(stored.number)
            try:
                self._call(f"labelling issue #{stored.number}", lambda: issue.add_to_labels(self.policy.label))
                stored = stored._replace(labels=(*stored.labels, self.policy.label))
            except (RemoteError, NotFound) as exc:  # the issue exists: a missing label must not lose it
                self.notices.append(f"issue #{stored.number} was created without the {self.policy.label!r} label "
                                    f"({exc}); add it by hand so that ghstate finds the checkpoint")
        return stored

    def reread(self, stored: Stored) -> Stored | None:
        """Re-read right before a write (one GraphQL request). Returns None when the checkpoint is as it was."""
        fresh = self.get(stored.number)
        if (fresh.body, fresh.title, fresh.labels) == (stored.body, stored.title, stored.labels):
            return None
        return fresh

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: LogEntry | None = None) -> Stored:
        """Write the body (its log entry in its last line), and the title and labels when they change.
        One request: GraphQL's ``updateIssue``, whose answer holds the edit history as it is after the
        write. A label the repository does not have yet goes through REST (which creates it), and the
        history is then read with a second request."""
        number = stored.number
        text = editlog.embed(body, entry) if entry is not None else body
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
            try:
                fresh_node = self._read(number)
            except (RemoteError, NotFound, GithubException, requests.exceptions.RequestException):
                raise _CannotTell() from None
            if fresh_node.get("body") == text:
                return {"updateIssue": {"issue": fresh_node}}
            fresh = self._from_node(fresh_node)
            if (fresh.body, fresh.title, fresh.labels) != (stored.body, stored.title, stored.labels):
                self._keep(fresh_node)
                raise Changed(fresh)  # someone wrote in the wait: build on it, do not resend over it
            return None

        try:
            data = self.graphql("update_checkpoint", {"input": payload, "edits": EDITS}, number=number,
                                landed=landed, what=f"updating issue #{number}")
        except NotFound as exc:  # it was there a moment ago: access lost, or moved; keep the write
            raise RemoteError(str(exc), status=404) from None
        answer = (data.get("updateIssue") or {}).get("issue")
        if not answer:
            raise RemoteError(f"updating issue #{number} failed: GitHub's answer holds no issue", retryable=True)
        return self._keep(answer)

    def _update_rest(self, stored: Stored, text: str, title: str | None,
                     labels: tuple[str, ...] | None) -> Stored:
        number = stored.number
        issue = self._repo.get_issue(number)  # lazy: no request
        changes: dict[str, Any] = {"body": text}
        if title:
            changes["title"] = title
        if labels is not None:
            changes["labels"] = list(labels)
        sent = False

        def patch() -> None:
            nonlocal sent
            if sent:  # a resend: the first may have landed, or someone may have edited in the wait
                fresh_node = self._read(number)
                if fresh_node.get("body") == text:
                    return
                fresh = self._from_node(fresh_node)
                if (fresh.body, fresh.title, fresh.labels) != (stored.body, stored.title, stored.labels):
                    self._keep(fresh_node)
                    raise Changed(fresh)
            sent = True
            issue.edit(**changes)

        try:
            self._call(f"updating issue #{number}", patch, number=number)
        except NotFound as exc:
            raise RemoteError(str(exc), status=404) from None
        return self.get(number)  # the edit history after the write

    # ------------------------------------------------------------------------------- the logs

    def add_revision(self, stored: Stored, entry: LogEntry, summary: str) -> None:
        """Not used on GitHub (``log_in_body``): a write's entry travels in its body. Kept for the
        protocol: it posts the entry as a revision comment, as ghstate before 0.19 did."""
        data = json.dumps(entry.to_data(), ensure_ascii=False, separators=(",", ":"))
        data = data.replace("<", "\\u003c").replace(">", "\\u003e")  # the comment cannot be closed early
        self.post_comment(stored, f"{summary}\n<!-- ghstate:log {data} -->", allow_secrets=True)

    def log(self, stored: Stored, after: int, pages: int = LOG_PAGES, via: str = "comments") -> list[LogEntry]:
        """The write log after position ``after``: the body's edit history (``via="edits"``), or the
        revision comments of a checkpoint written by an older ghstate. Entries that are not a trusted
        write come back with no intent (so that positions show what was read), or with a ``problem``."""
        if via == "edits":
            return self._edit_log(stored, after)
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
        number = stored.number
        if stored.edits <= after:
            return []
        node = self._nodes.get(number)
        want = stored.edits - after
        nodes = ((node or {}).get("userContentEdits") or {}).get("nodes")
        if node is None or nodes is None or self._from_node(node).edits != stored.edits or \
                (len(nodes) < min(want, stored.edits) and stored.edits > 1):
            node = self._read(number, edits=min(100, max(want, EDITS)))
            self._nodes[number] = node
            nodes = (node.get("userContentEdits") or {}).get("nodes") or []
        length = self._from_node(node).edits
        versions = [(length - i, n.get("diff") if not n.get("deletedAt") else None, n.get("editor"))
                    for i, n in enumerate(nodes)]
        if length - len(nodes) > after and length > 1 and len(nodes) >= 100:
            versions += self._older_edits(number, length, len(nodes), after)
        if length == 1 and not nodes:  # never edited: the body is the original, GitHub lists no version yet
            versions = [(1, node.get("body") or "", node.get("author"))]
        out = []
        for position, text, editor in sorted(versions, key=lambda v: v[0]):
            if position > after:
                login = _login(editor)
                out.append(editlog.entry_of(text, position, editor=login,
                                            trusted=self._edit_trusted(login, node)))
        return out

    def _older_edits(self, number: int, length: int, skip: int, after: int) -> list[tuple[int, Any, Any]]:
        """Versions older than the newest ``skip``, down to position ``after`` (query ``history``)."""
        out: list[tuple[int, Any, Any]] = []
        cursor: str | None = None
        index = 0
        while True:
            owner, _, name = self.repo_name.partition("/")
            data = self.graphql("history", {"owner": owner, "name": name, "number": number, "after": cursor},
                                number=number, what=f"reading the edit history of issue #{number}")
            edits = (((data.get("repository") or {}).get("issue") or {}).get("userContentEdits") or {})
            for n in edits.get("nodes") or ():
                position = length - index
                index += 1
                if index > skip and position > after:
                    out.append((position, n.get("diff") if not n.get("deletedAt") else None, n.get("editor")))
            info = edits.get("pageInfo") or {}
            if not info.get("hasNextPage") or length - index <= after:
                return out
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
            from ghstate.errors import SecretFound
            from ghstate.secrets import scan

            found = scan(text)
            if found:
                raise SecretFound(f"refusing to post to GitHub: {found[0].describe()}")
        issue = self._repo.get_issue(stored.number)  # lazy: no request
        # GitHub's own clock, not ours: the issue's last update as GitHub reported it, a minute earlier
        updated = _parse_time(stored.version.replace("+00:00", "Z")) or datetime.now(timezone.utc)
        since = updated - timedelta(minutes=1)

        def post() -> str:
            return issue.create_comment(text).html_url

        def landed() -> str | None:
            try:
                for comment in issue.get_comments(since=since):
                    if comment.body == text:
                        return comment.html_url
            except (GithubException, requests.exceptions.RequestException):
                raise _CannotTell() from None
            return None

        try:
            return self._call(f"commenting on issue #{stored.number}", post, landed=landed, number=stored.number)
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
        after = _parse_time(since)
        notes: list[Note] = []
        skipped = 0
        for comment in (node.get("comments") or {}).get("nodes") or ():
            created = _parse_time(comment.get("createdAt") or "")
            edited = _parse_time(comment.get("lastEditedAt") or "") or created
            if after and edited and edited < after:
                continue
            login = _login(comment.get("author"))
            if not self._trusted(comment.get("authorAssociation") or "", login):
                skipped += 1  # never read further, whatever it holds
                continue
            body = comment.get("body") or ""
            if read_log_marker(body) is not None or any(m in body for m in (PROMPT_MARKER, CI_MARKER, NOTICE_MARKER)):
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
        length = self._from_node(node).edits
        if length == 1:
            versions = [(1, node.get("body") or "", node.get("author"))]
        else:
            versions = self._older_edits(number, length, 0, 0)
        seen = {e.write for e in entries if e.write}
        for position, text, editor in sorted(versions, key=lambda v: v[0]):
            login = _login(editor)
            entry = editlog.entry_of(text, position, editor=login, trusted=self._edit_trusted(login, node))
            if entry.revision.revision and not entry.problem and (not entry.write or entry.write not in seen):
                seen.add(entry.write)
                out.append(entry.revision)
        return out

    def ensure_labels(self, labels: list[tuple[str, str, str]]) -> list[str]:
        """Create labels that do not exist (``ghstate init``); returns the ones created."""
        created = []
        for name, color, description in labels:
            def make(name: str = name, color: str = color, description: str = description) -> bool:
                try:
                    self._repo.create_label(name, color, description)
                    return True
                except GithubException as exc:
                    if exc.status == 422:
                        return False
                    raise

            if self._call(f"creating the label {name!r}", make):
                created.append(name)
        return created


def _is_pull_request(issue: Issue) -> bool:
    # Not `issue.pull_request`: a plain issue lacks that key, and asking a lazy PyGithub object for a
    # missing attribute costs a request to complete it.
    return "/pull/" in (issue.html_url or "")


def _login(actor: dict[str, Any] | None) -> str:
    """An actor's login as REST names it: GraphQL calls a GitHub App's bot ``slug``, REST ``slug[bot]``."""
    if not actor or not actor.get("login"):
        return ""
    login = str(actor["login"])
    if actor.get("__typename") == "Bot" and not login.endswith("[bot]"):
        login += "[bot]"
    return login


def _parse_time(value: str) -> datetime | None:
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return None


def _clip(text: str, limit: int = 600) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(exc: BaseException) -> str:
    text = str(exc)
    text = re.sub(r"\s+", " ", text)
    return text[:160]


def _connection_problem(exc: BaseException) -> str:
    text = str(exc)
    for marker, words in (("Connection refused", "connection refused"), ("NameResolution", "the name does not resolve"),
                          ("Name or service not known", "the name does not resolve"),
                          ("Failed to resolve", "the name does not resolve"),
                          ("Network is unreachable", "the network is unreachable"),
                          ("timed out", "timed out"), ("Connection aborted", "the connection was dropped"),
                          ("Connection reset", "the connection was reset")):
        if marker in text:
            return words
    return _short(exc)


def _never_sent(exc: requests.exceptions.ConnectionError) -> bool:
    text = str(exc)
    return any(marker in text for marker in ("NewConnectionError", "Name or service not known", "Connection refused",
                                              "nodename nor servname", "Failed to resolve", "NameResolutionError"))
