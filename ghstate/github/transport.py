"""GitHub's transport: the PyGithub client, retries, GraphQL sending and what GitHub's errors mean. The
only module that imports ``github`` (PyGithub); the store (``ghstate.github.store``) and the project sync
(``ghstate.github.project_sync``) speak to GitHub through it, in plain dicts.

PyGithub's own throttle (0.25 s between requests, 1 s between writes) and its urllib3 retry are both
off on purpose: a checkpoint makes one to three requests, so the throttle would only add seconds, and
the stock retry resends POSTs, which can create a second issue or comment when the first attempt
reached GitHub but its answer did not reach us. Retrying is done here instead: transient 5xx,
timeouts and secondary rate limits are retried with exponential backoff (honouring Retry-After)
within a total budget under a minute, and before a POST (or a mutation) is resent, GitHub is asked
whether the first one landed (``landed``); when that cannot be told, it is not resent.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException

from ghstate import __version__, progress
from ghstate.config import Settings
from ghstate.errors import NotFound, RemoteError

T = TypeVar("T")
TIMEOUT = 10  # seconds per request
TOTAL = 45.0  # seconds for one operation, retries included
ATTEMPTS = 5
TRANSIENT = {500, 502, 503, 504}


class CannotTell(Exception):
    """Whether a request whose answer was lost reached GitHub cannot be checked now."""


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def checking(fn: Callable[[], T]) -> T:
    """Run ``fn``, a look at GitHub made to tell whether a lost request landed: any failure of it means
    that cannot be told now (``CannotTell``)."""
    try:
        return fn()
    except (RemoteError, GithubException, requests.exceptions.RequestException):
        raise CannotTell() from None


def _issue(issue: Any) -> dict[str, Any]:
    """A REST issue as plain data, in GraphQL's names (what the store reads)."""
    return {"number": issue.number, "title": issue.title or "", "body": issue.body or "", "url": issue.html_url,
            "labels": [label.name for label in issue.labels], "state": issue.state,
            "updatedAt": issue.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ") if issue.updated_at else "",
            "comments": issue.comments or 0, "pullRequest": "/pull/" in (issue.html_url or "")}


class GitHubAPI:
    """One repository's API: every request goes through ``call`` (bounded retries, errors that say what
    to do)."""

    def __init__(self, client: Github, repo: str, *, api_url: str = "https://api.github.com",
                 sleep: Callable[[float], None] | None = None, clock: Callable[[], float] | None = None,
                 total: float = TOTAL) -> None:
        self.client = client
        self.repo_name = repo
        self.api_url = api_url
        self.sleep = sleep or (lambda seconds: _sleep(seconds))
        self.clock = clock or (lambda: time.monotonic())
        self.total = total
        self._repo = client.get_repo(repo)  # lazy: no request until something is asked of it
        self._started: float | None = None  # the budget is for the whole command, not each call
        self._waited = 0.0  # counted apart from the clock, so that a budget holds whatever sleeping does

    @classmethod
    def connect(cls, settings: Settings, timeout: int = TIMEOUT, **kwargs: Any) -> GitHubAPI:
        client = Github(
            auth=Auth.Token(settings.token),
            base_url=settings.api_url,
            timeout=timeout,
            user_agent=f"ghstate/{__version__}",
            per_page=100,
            retry=None,  # retried in call, where a POST is never blindly resent
            seconds_between_requests=None,  # no 0.25 s throttle: a command makes at most a handful
            seconds_between_writes=None,  # no 1 s throttle between writes
            lazy=True,
        )
        assert settings.repo is not None
        return cls(client, settings.repo, api_url=settings.api_url, **kwargs)

    # ------------------------------------------------------------------------------ requests

    def call(self, what: str, fn: Callable[[], T], *, landed: Callable[[], T | None] | None = None,
              number: int | None = None) -> T:
        """Run one API call with bounded retries. ``landed`` (for POSTs) says whether an attempt whose
        answer was lost did reach GitHub, and returns what it created."""
        if self._started is None:
            self._started = self.clock()
        progress.stage(f"{what} on GitHub")
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
            progress.stage(f"{what}: {reason}; trying again in {wait:.0f} s")
            self.sleep(wait)
            self._waited += wait
            if landed is not None and uncertain:
                try:
                    found = landed()
                except CannotTell:  # resending could make a second one: stop; the write is kept
                    raise RemoteError(f"{what} failed: {reason}, and whether it reached GitHub cannot be "
                                      "checked now, so it was not sent again", retryable=True) from None
                if found is not None:
                    return found

    def graphql(self, name: str, variables: dict[str, Any], *, number: int | None = None,
                landed: Callable[[], dict[str, Any] | None] | None = None,
                partial: bool = False, what: str = "", missing_ok: bool = False) -> dict[str, Any]:
        """One GraphQL request: the document ``ghstate/graphql/NAME.graphql`` with ``variables``, sent
        through PyGithub's requester (same token, timeout and GHES base: ``/api/graphql``), retried as
        any call (``what`` names it in errors). Answers the ``data``; with ``partial``, the whole answer
        (``data`` and ``errors``) even when GitHub reports errors beside data; with ``missing_ok``, that
        too when the one error is that something was not found. A mutation is resent after
        a lost answer only when ``landed`` says it did not land."""
        from ghstate.github import graphql as documents

        query = documents.document(name)
        if landed is None and query.lstrip().startswith("mutation"):
            def landed() -> dict[str, Any] | None:
                raise CannotTell

        def send() -> dict[str, Any]:
            try:
                _, answer = self.client.requester.graphql_query(query, variables)
            except GithubException as exc:
                data = exc.data if isinstance(exc.data, dict) else {}
                if (partial and exc.status == 400 or missing_ok and exc.status == 404) and \
                        isinstance(data.get("errors"), list):
                    return data  # 404: PyGithub's word for a lone NOT_FOUND error, beside the data read
                raise
            return answer if (partial or missing_ok) and "data" in answer else answer["data"]

        return self.call(what or f"GraphQL {name}", send, landed=landed, number=number)

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

    # ------------------------------------------------------------------------------ REST

    def newest_issues(self) -> list[dict[str, Any]]:
        """The newest open issues (a page), pull requests left out."""
        newest = self._repo.get_issues(state="open", sort="created", direction="desc")
        page = self.call(f"listing the newest issues of {self.repo_name}", lambda: newest.get_page(0))
        return [i for i in map(_issue, page) if not i["pullRequest"]]

    def create_issue(self, title: str, body: str, labels: list[str],
                     landed: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
        """Open an issue; ``landed`` finds it when the answer was lost (raising CannotTell when it cannot)."""
        def post() -> dict[str, Any]:
            return _issue(self._repo.create_issue(title=title, body=body, labels=labels))

        return self.call(f"creating a checkpoint issue in {self.repo_name}", post, landed=landed)

    def add_label(self, number: int, label: str) -> None:
        issue = self._repo.get_issue(number)  # lazy: no request
        self.call(f"labelling issue #{number}", lambda: issue.add_to_labels(label))

    def edit_issue(self, number: int, changes: dict[str, Any], resend: Callable[[], bool]) -> None:
        """PATCH an issue with ``changes``. Before a resend (the first attempt may have landed, or someone
        may have edited in the wait) ``resend`` is asked whether to send it again."""
        issue = self._repo.get_issue(number)  # lazy: no request
        sent = False

        def patch() -> None:
            nonlocal sent
            if sent and not resend():
                return
            sent = True
            issue.edit(**changes)

        self.call(f"updating issue #{number}", patch, number=number)

    def create_comment(self, number: int, text: str, since: datetime) -> str:
        """Post a comment; when the answer is lost, the comments since ``since`` tell whether it landed."""
        issue = self._repo.get_issue(number)  # lazy: no request

        def post() -> str:
            return issue.create_comment(text).html_url

        def landed() -> str | None:
            def look() -> str | None:
                return next((c.html_url for c in issue.get_comments(since=since) if c.body == text), None)
            return checking(look)

        return self.call(f"commenting on issue #{number}", post, landed=landed, number=number)

    def create_label(self, name: str, color: str, description: str) -> bool:
        """Create a label; False when it exists."""
        def make() -> bool:
            try:
                self._repo.create_label(name, color, description)
                return True
            except GithubException as exc:
                if exc.status == 422:
                    return False
                raise

        return self.call(f"creating the label {name!r}", make)


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
