"""GitHub's transport: the HTTP session, retries, GraphQL sending and what GitHub's errors mean. The only
module that imports ``github`` (PyGithub) or ``requests``; the store (``ghstate.github.store``) and the project
sync (``ghstate.github.project_sync``) speak to GitHub through it, in plain dicts.

GraphQL and the Git objects a chain's commit needs go over one ``requests`` session of its own (the token, the
user agent, the timeout, GHES's ``/api/graphql``, as PyGithub's requester sends them): what an agent waits for
(``resume``, the hooks, a write) never imports PyGithub, whose import alone took longer than a whole ``resume``
by number (issue 56). PyGithub serves the REST calls that are its own (an issue opened, labelled, edited or
commented on, a label made), imported when the first of them is made; its errors are read as the session's
(``HTTPFailure``).

PyGithub's own throttle (0.25 s between requests, 1 s between writes) and its urllib3 retry are both
off on purpose: a command makes a handful of requests, so the throttle would only add seconds, and
the stock retry resends POSTs, which can create a second issue or comment when the first attempt
reached GitHub but its answer did not reach us. Retrying is done here instead, within one budget per
command (``TOTAL``): transient 5xx, timeouts and dropped answers with exponential backoff; rate limits
for as long as GitHub asks (docs, "Rate limits for the REST API" and "Rate limits and query limits for
the GraphQL API", "Exceeding the rate limit"): the primary limit until ``x-ratelimit-reset``, a
secondary limit for ``Retry-After`` (else a minute). A wait past the budget is not waited: the error
says when to try again. Before a POST (or a mutation) is resent, GitHub is asked whether the first one
landed (``landed``); when that cannot be told, it is not resent.

GraphQL answers its errors with HTTP 200 (``{"data": …, "errors": [{"type", "path", "message"}]}``),
which PyGithub's ``graphql_query`` turns into a bare "400". Here the answer is read as GitHub wrote it:
RATE_LIMITED, a secondary limit and GitHub's timeout are waited out as above; any other error ends the
call with GitHub's own words (``TYPE: message``) in one line, as a ``GraphQLErrors`` (or
``GraphQLNotFound``) that carries the whole answer, so that a caller can tell from ``data`` what was
done despite the errors.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import requests

from ghstate import __version__, progress
from ghstate.config import Settings
from ghstate.errors import GhstateError, NotFound, RemoteError

T = TypeVar("T")
TIMEOUT = 10  # seconds per request
TOTAL = 45.0  # seconds for one operation, retries included
ATTEMPTS = 5
TRANSIENT = {500, 502, 503, 504}
LIMIT_TYPES = ("RATE_LIMITED", "RATE_LIMIT")  # GraphQL's primary limit: the documented type, and one seen since
PAUSE = 60.0  # seconds GitHub asks for after a secondary limit that names no time ("at least one minute")
TOKEN_NEEDS = "the token needs Issues: write on {repo} (a fine-grained token or GitHub App), or the 'repo' scope"


class CannotTell(Exception):
    """Whether a request whose answer was lost reached GitHub cannot be checked now."""


class AnswerLost(RemoteError):
    """A mutation's answer was lost (a timeout, a dropped connection, a 5xx): it may or may not have
    landed, and the transport does not know the mutation well enough to tell. Raised to a caller that asked
    for it (``graphql(..., lost=True)``), which looks at GitHub and resends itself when nothing landed
    (``resend``: this send's attempts count on; ``unchecked``: the failure to report when the look fails)."""

    def __init__(self, what: str, reason: str, attempt: int) -> None:
        super().__init__(f"{what} failed: {reason}", retryable=True)
        self.what, self.reason, self.attempt = what, reason, attempt

    def unchecked(self) -> RemoteError:
        return RemoteError(f"{self.what} failed: {self.reason}, and whether it reached GitHub cannot be checked now, "
                           "so it was not sent again", retryable=True)


class GraphQLFailure(GhstateError):
    """GitHub answered a GraphQL request (HTTP 200) with errors that retrying cannot mend, and the whole
    answer comes with the failure: ``data`` (what GitHub answered beside the errors: partial, or None)
    and ``errors`` (GitHub's error objects: ``type``, ``path``, ``message``). A caller that knows its
    operation can tell from ``data`` whether a mutation did its work despite them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.data: dict[str, Any] | None = None
        self.errors: list[dict[str, Any]] = []

    @property
    def said(self) -> str:
        """GitHub's own words: each error as ``TYPE: message``, each once."""
        return describe_errors(self.errors)


class GraphQLErrors(RemoteError, GraphQLFailure):
    """A GraphQL answer with errors: GitHub refused a field (FORBIDDEN, …) or the request."""


class GraphQLNotFound(NotFound, GraphQLFailure):
    """A GraphQL answer whose every error is NOT_FOUND."""


def _answered(exc: GraphQLFailure, answer: dict[str, Any]) -> GraphQLFailure:
    data = answer.get("data")
    exc.data = data if isinstance(data, dict) else None
    exc.errors = errors_of(answer)
    return exc


class HTTPFailure(Exception):
    """An HTTP error status from GitHub (REST, or GraphQL's 401, 403 and gateway answers), from the session or
    from PyGithub (``GithubException``, read as one of these): ``status``, the body as GitHub sent it
    (``data``: its JSON, or its text) and the answer's ``headers``."""

    def __init__(self, status: int, data: Any, headers: dict[str, Any] | None) -> None:
        super().__init__(f"{status}")
        self.status, self.data, self.headers = status, data, dict(headers or {})


def _pygithub(fn: Callable[[], T]) -> T:
    """Run a call of PyGithub's, its ``GithubException`` raised as an ``HTTPFailure``."""
    from github import GithubException

    try:
        return fn()
    except GithubException as exc:
        raise HTTPFailure(exc.status, exc.data, exc.headers) from exc


class _Answer(Exception):
    """A GraphQL answer with errors, on its way from the request to ``GitHubAPI.call``'s judgement."""

    def __init__(self, headers: dict[str, Any], answer: dict[str, Any]) -> None:
        super().__init__("GraphQL errors")
        self.headers = {str(k).lower(): v for k, v in (headers or {}).items()}
        self.answer = answer


@dataclass(frozen=True)
class _Retry:
    """What a failed attempt calls for: a wait, and what to say if the wait does not fit the budget."""

    wait: float  # seconds before the next attempt
    reason: str  # what went wrong, in GitHub's words where it gave any
    uncertain: bool = False  # the request may have reached GitHub: a POST is not resent blindly
    until: float | None = None  # GitHub named the time to try again (epoch seconds): said past the bound
    limit: bool = False  # the primary limit: said as when it resets


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _now() -> float:
    """The wall clock, in epoch seconds: GitHub's ``x-ratelimit-reset`` is in them."""
    return time.time()


def checking(fn: Callable[[], T]) -> T:
    """Run ``fn``, a look at GitHub made to tell whether a lost request landed: any failure of it means
    that cannot be told now (``CannotTell``)."""
    try:
        return fn()
    except (RemoteError, HTTPFailure, requests.exceptions.RequestException):
        raise CannotTell() from None


def describe_errors(errors: list[dict[str, Any]], limit: int = 3) -> str:
    """GraphQL errors in GitHub's words, each distinct one once: ``FORBIDDEN: Resource not accessible by
    integration``; after ``limit`` of them, how many more."""
    said = list(dict.fromkeys(_said(e) for e in errors))
    more = f"; and {len(said) - limit} more" if len(said) > limit else ""
    return "; ".join(said[:limit]) + more


def _said(error: dict[str, Any]) -> str:
    message = _clip(error.get("message") or "no message")
    kind = error.get("type")
    return f"{_clip(kind, 40)}: {message}" if kind else message


def _clip(text: Any, limit: int = 240) -> str:
    """GitHub's text on one line, short, without control characters (it is printed to a terminal)."""
    text = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def errors_of(answer: Any) -> list[dict[str, Any]]:
    found = answer.get("errors") if isinstance(answer, dict) else None
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def _secondary(message: str) -> bool:
    """Whether GitHub's words say a secondary limit: its documented message, or the content-creation
    limit's ("was submitted too quickly")."""
    lowered = message.lower()
    return "secondary rate limit" in lowered or "submitted too quickly" in lowered


def _issue(issue: Any) -> dict[str, Any]:
    """A REST issue as plain data, in GraphQL's names (what the store reads)."""
    return {"number": issue.number, "title": issue.title or "", "body": issue.body or "", "url": issue.html_url,
            "labels": [label.name for label in issue.labels], "state": issue.state,
            "updatedAt": issue.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ") if issue.updated_at else "",
            "comments": issue.comments or 0, "pullRequest": "/pull/" in (issue.html_url or "")}


class GitHubAPI:
    """One repository's API: every request goes through ``call`` (bounded retries, errors that say what
    to do)."""

    def __init__(self, token: str, repo: str, *, api_url: str = "https://api.github.com",
                 sleep: Callable[[float], None] | None = None, clock: Callable[[], float] | None = None,
                 total: float = TOTAL, now: Callable[[], float] | None = None, timeout: float = TIMEOUT,
                 deadline: bool = False) -> None:
        self._token = token  # never printed, never stored: the session's and PyGithub's Authorization
        self._client: Any = None  # PyGithub's, made at the first REST call of its own (``client``)
        self._session: requests.Session | None = None
        self.repo_name = repo
        self.api_url = api_url
        self.sleep = sleep or (lambda seconds: _sleep(seconds))
        self.clock = clock or (lambda: time.monotonic())
        self.now = now or (lambda: _now())  # the wall clock: GitHub's limits reset at an epoch second
        self.total = total
        # ``deadline``: the budget is a deadline for the whole command (a hook, a read that falls back to what
        # this machine last saw): no attempt starts that could end past it (each may take ``timeout``), and once
        # GitHub did not answer, no later call of the command asks it again
        self.timeout = timeout
        self.deadline = deadline
        self.unanswered: RemoteError | None = None
        self._repo_url = f"{api_url.rstrip('/')}/repos/{repo}"
        self._started: float | None = None  # the budget is for the whole command, not each call
        self._waited = 0.0  # counted apart from the clock, so that a budget holds whatever sleeping does
        self._date: tuple[datetime, float] | None = None  # GitHub's clock: its latest answer's Date, and when it came

    @classmethod
    def connect(cls, settings: Settings, timeout: int = TIMEOUT, **kwargs: Any) -> GitHubAPI:
        assert settings.repo is not None
        return cls(settings.token, settings.repo, api_url=settings.api_url, timeout=timeout, **kwargs)

    def __repr__(self) -> str:
        return f"GitHubAPI({self.repo_name!r}, api_url={self.api_url!r})"  # the token is never shown

    @property
    def session(self) -> requests.Session:
        """The HTTP session GraphQL and Git objects go over (made at its first request): the token as PyGithub
        sends it (``Authorization: token …``), ghstate's user agent, JSON."""
        if self._session is None:
            self._session = requests.Session()
            self._session.headers.update({"Authorization": f"token {self._token}",
                                          "User-Agent": f"ghstate/{__version__}"})
        return self._session

    @property
    def client(self) -> Any:
        """PyGithub's client (imported and made at the first REST call of its own): no throttle, no retry of
        its own (retried in ``call``, where a POST is never blindly resent)."""
        if self._client is None:
            from github import Auth, Github

            self._client = Github(auth=Auth.Token(self._token), base_url=self.api_url, timeout=self.timeout,
                                  user_agent=f"ghstate/{__version__}", per_page=100, retry=None,
                                  seconds_between_requests=None, seconds_between_writes=None, lazy=True)
        return self._client

    @property
    def _repo(self) -> Any:
        """PyGithub's repository, lazy: no request until something is asked of it."""
        return self.client.get_repo(self.repo_name)

    @property
    def graphql_url(self) -> str:
        """Where GraphQL is: ``/graphql`` beside the REST base (GHES's ``/api/v3``: ``/api/graphql``), as PyGithub
        reads it."""
        from urllib.parse import urlparse, urlunparse

        found = urlparse(self.api_url)
        path = (found.path or "").rstrip("/")
        return urlunparse(found._replace(path=path.removesuffix("/v3") + "/graphql"))

    def post(self, url: str, body: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """POST ``body`` as JSON: the answer's headers (its ``Date`` kept: ``heard``) and its JSON; an error status
        is an ``HTTPFailure``."""
        answer = self.session.post(url, json=body, timeout=self.timeout)
        headers = dict(answer.headers)
        self.heard(headers)
        if answer.status_code >= 400:
            try:
                data: Any = answer.json()
            except ValueError:
                data = answer.text
            raise HTTPFailure(answer.status_code, data, headers)
        return headers, answer.json()

    # ------------------------------------------------------------------------------ GitHub's clock

    def heard(self, headers: dict[str, Any] | None) -> None:
        """Keep the ``Date`` of an answer: GitHub's clock, which claims' leases are measured by."""
        found = {str(k).lower(): v for k, v in (headers or {}).items()}
        when = _http_date(found.get("date"))
        if when is not None:
            self._date = (when, self.clock())

    def server_now(self) -> datetime | None:
        """GitHub's clock now: its latest answer's ``Date`` and the time since (this machine's steady clock, which
        no setting of the wall clock moves); None before GitHub answered this command."""
        if self._date is None:
            return None
        when, at = self._date
        return when + timedelta(seconds=max(0.0, self.clock() - at))

    # ------------------------------------------------------------------------------ requests

    def call(self, what: str, fn: Callable[[], T], *, landed: Callable[[], T | None] | None = None,
             number: int | None = None, lost: bool = False, resending: AnswerLost | None = None) -> T:
        """Run one API call with bounded retries: transient failures and rate limits are waited out
        while the command's budget lasts (``total``). ``landed`` (for POSTs) says whether an attempt
        whose answer was lost did reach GitHub, and returns what it created; with ``lost``, such an attempt
        raises ``AnswerLost`` after its wait instead (the caller looks; ``resending``: the one it resends
        after, whose attempts count on)."""
        if self._started is None:
            self._started = self.clock()
        if self.unanswered is not None:  # a deadline's command, whose GitHub did not answer: not asked again
            raise RemoteError(f"{what} was not sent: {self.unanswered}", retryable=True, unreachable=True)
        progress.stage(f"{what} on GitHub")
        attempt = resending.attempt if resending is not None else 0
        while True:
            try:
                return fn()
            except (HTTPFailure, _Answer, requests.exceptions.RequestException) as exc:
                if self.deadline and _timed_out(exc):  # that attempt took its whole timeout, whatever a clock says
                    self._waited += self.timeout
                retry = self._attempt_failed(exc, what, number, attempt)
            except (TypeError, KeyError, AttributeError, ValueError) as exc:
                raise RemoteError(f"{what} failed: the answer from {self.api_url} is not what GitHub sends "
                                  f"({type(exc).__name__}); check GITHUB_API_URL", retryable=True) from exc
            attempt += 1
            spent = max(self.clock() - self._started, self._waited)  # real sleeps move the clock, fakes do not
            if attempt >= ATTEMPTS or spent + retry.wait + (self.timeout if self.deadline else 0) > self.total:
                raise self._unanswered(self._gave_up(what, retry, attempt, spent))
            progress.stage(f"{what}: {retry.reason}; trying again in {retry.wait:.0f} s")
            self.sleep(retry.wait)
            self._waited += retry.wait
            if lost and retry.uncertain:
                raise AnswerLost(what, retry.reason, attempt)
            if landed is not None and retry.uncertain:
                try:
                    found = landed()
                except CannotTell:  # resending could make a second one: stop; the write is kept
                    raise RemoteError(f"{what} failed: {retry.reason}, and whether it reached GitHub cannot be "
                                      "checked now, so it was not sent again", retryable=True) from None
                if found is not None:
                    return found

    def graphql(self, name: str, variables: dict[str, Any], *, number: int | None = None,
                landed: Callable[[], dict[str, Any] | None] | None = None,
                partial: bool = False, what: str = "", count: int = 0,
                tolerate: tuple[str, ...] = (), lost: bool = False,
                resending: AnswerLost | None = None) -> dict[str, Any]:
        """One GraphQL request: the document ``ghstate/graphql/NAME.graphql`` with ``variables``, sent
        over the session (``post``: the token, the timeout, GHES's ``/api/graphql``), retried as
        any call (``what`` names it in errors); rate limits and GitHub's timeouts, which GitHub answers
        with HTTP 200, are waited out as any others. Answers the ``data``; an answer with other errors
        raises ``GraphQLErrors`` (``GraphQLNotFound`` when all are NOT_FOUND), which carries the whole
        answer. With ``partial``, the whole answer (``data`` and ``errors``) is returned instead. A
        mutation is resent after a lost answer only when ``landed`` says it did not land. ``count``: a batched
        document for that many items (``graphql.batch``). ``tolerate``: fields (by name or alias) whose errors
        leave the rest of the answer good (a part the token may not read): when every error is on one of
        them, the whole answer is returned, as with ``partial``. ``lost``: a lost answer raises ``AnswerLost``
        (``call``), for a caller that looks and resends itself."""
        from ghstate.github import graphql as documents

        query = documents.batch(name, count) if count else documents.document(name)
        if landed is None and not lost and query.lstrip().startswith("mutation"):
            def landed() -> dict[str, Any] | None:
                raise CannotTell

        def send() -> dict[str, Any]:
            headers, answer = self.post(self.graphql_url, {"query": query, "variables": variables})
            errors = errors_of(answer)
            if errors and (self._passing(answer) is not None or not (partial or _on(errors, tolerate))):
                raise _Answer(headers, answer)
            return answer if partial or (errors and tolerate) else answer["data"]

        return self.call(what or f"GraphQL {name}", send, landed=landed, number=number, lost=lost, resending=resending)

    # ------------------------------------------------------------------------------ judgement

    def _attempt_failed(self, exc: Exception, what: str, number: int | None, attempt: int) -> _Retry:
        """``_judge``, with a failure that says GitHub did not answer remembered under a deadline."""
        try:
            return self._judge(exc, what, number, attempt)
        except RemoteError as failed:
            raise self._unanswered(failed) from None

    def _unanswered(self, failed: RemoteError) -> RemoteError:
        if failed.unreachable and self.deadline:
            self.unanswered = failed
        return failed

    def _judge(self, exc: Exception, what: str, number: int | None, attempt: int) -> _Retry:
        """What a failed attempt calls for; raises the failure to report when waiting cannot help."""
        if isinstance(exc, HTTPFailure):
            retry = self._judge_status(exc, attempt)
            if retry is None:
                raise self._error(exc, what, number) from None
            return retry
        if isinstance(exc, _Answer):
            retry = self._passing(exc.answer, exc.headers, attempt)
            if retry is None:
                raise self._graphql_error(exc.answer, what, number) from None
            return retry
        if isinstance(exc, requests.exceptions.ConnectionError):
            reason = f"cannot reach {self.api_url} ({_connection_problem(exc)})"
            # refused or unresolvable: the request never left; anything else may have arrived
            uncertain = not isinstance(exc, requests.exceptions.ConnectTimeout) and not _never_sent(exc)
            if not uncertain and attempt >= 1:  # offline or no such host: one more try is enough
                raise RemoteError(f"{what} failed: {reason}, after {attempt + 1} attempts", retryable=True,
                                  unreachable=True) from None
            return _Retry(self._backoff(attempt), reason, uncertain)
        if isinstance(exc, requests.exceptions.Timeout):
            return _Retry(self._backoff(attempt), f"no answer from {self.api_url} in time ({_short(exc)})",
                          not isinstance(exc, requests.exceptions.ConnectTimeout))
        # a broken answer: chunking, decoding, …
        return _Retry(self._backoff(attempt), f"the answer from {self.api_url} broke off ({type(exc).__name__})",
                      True)

    def _judge_status(self, exc: HTTPFailure, attempt: int) -> _Retry | None:
        """An HTTP error status (REST, or GraphQL's 401, 403 and gateway answers): the wait it calls
        for, or None when retrying cannot help."""
        status = exc.status
        headers = {str(k).lower(): v for k, v in (exc.headers or {}).items()}
        message = _message_of(exc.data)
        if status in TRANSIENT:
            return _Retry(self._backoff(attempt), f"GitHub answered {status}" + (f" ({message})" if message else ""),
                          uncertain=True)
        if status not in (403, 429):
            return None
        said = f"{status}: {message}" if message else str(status)
        if headers.get("x-ratelimit-remaining") == "0" and not _secondary(message):
            return self._until_reset(headers, f"the GitHub API rate limit is used up ({said})")
        if "retry-after" in headers or _secondary(message) or status == 429:
            return self._secondary_wait(headers, f"GitHub's secondary rate limit ({said})")
        return None

    def _passing(self, answer: dict[str, Any], headers: dict[str, Any] | None = None,
                 attempt: int = 0) -> _Retry | None:
        """A GraphQL answer whose errors a wait can mend (HTTP 200 all): the primary limit
        (RATE_LIMITED), a secondary limit said in the message, GitHub's timeout. None for others."""
        errors = errors_of(answer)
        said = describe_errors(errors)
        headers = headers or {}
        if any(e.get("type") in LIMIT_TYPES for e in errors):
            return self._until_reset(headers, f"GitHub's GraphQL rate limit is used up ({said})")
        if any(_secondary(str(e.get("message") or "")) for e in errors):
            return self._secondary_wait(headers, f"GitHub's secondary rate limit ({said})")
        if any(str(e.get("message") or "").startswith("Something went wrong while executing your query")
               for e in errors):
            return _Retry(self._backoff(attempt), f"GitHub's query timed out ({said})", uncertain=True)
        return None

    def _until_reset(self, headers: dict[str, Any], reason: str) -> _Retry:
        """The primary limit: no request until ``x-ratelimit-reset`` (docs: "Exceeding the rate limit")."""
        reset = _number(headers.get("x-ratelimit-reset"))
        if reset is None:
            return _Retry(PAUSE, reason, until=self.now() + PAUSE, limit=True)
        return _Retry(max(1.0, reset - self.now() + 1), reason, until=reset, limit=True)

    def _secondary_wait(self, headers: dict[str, Any], reason: str) -> _Retry:
        """A secondary limit: ``retry-after`` seconds, else until ``x-ratelimit-reset`` when no request
        remains, else at least a minute (docs: "Exceeding the rate limit")."""
        after = _number(headers.get("retry-after"))
        if after is not None:
            wait = max(1.0, after)
            return _Retry(wait, reason, until=self.now() + wait)
        if headers.get("x-ratelimit-remaining") == "0" and _number(headers.get("x-ratelimit-reset")) is not None:
            return replace(self._until_reset(headers, reason), limit=False)
        return _Retry(PAUSE, reason, until=self.now() + PAUSE)

    def _gave_up(self, what: str, retry: _Retry, attempt: int, spent: float) -> RemoteError:
        """The failure once the budget or the attempts are spent; a limit says when to try again."""
        tried = f"after {attempt} attempt{'s' if attempt > 1 else ''} and {spent:.0f} s"
        if retry.until is None:
            return RemoteError(f"{what} failed: {retry.reason}, {tried}", retryable=True, unreachable=True)
        at = datetime.fromtimestamp(retry.until, timezone.utc)
        minutes = max(1, math.ceil((retry.until - self.now()) / 60))
        when = f"{at:%H:%M} UTC (in about {minutes} min)"
        if retry.limit:
            return RemoteError(f"{what} failed: {retry.reason}; it resets at {when}: try again then, or use a "
                               "token with a higher limit", retryable=True, status=429, unreachable=True)
        pause = f" of {retry.wait:.0f} s" if retry.wait else ""
        return RemoteError(f"{what} failed: {retry.reason}, {tried}; GitHub asked for a pause{pause}: try again "
                           f"after {when}", retryable=True, status=429, unreachable=True)

    def failure(self, answer: dict[str, Any], what: str, number: int | None = None) -> GraphQLFailure:
        """GitHub's refusal in an answer a caller took whole (``partial``), as ``graphql`` would raise it."""
        return self._graphql_error(answer, what, number)

    def _graphql_error(self, answer: dict[str, Any], what: str, number: int | None) -> GraphQLFailure:
        """GitHub's refusal in its words (``TYPE: message``), with the whole answer for the caller."""
        errors = errors_of(answer)
        said = describe_errors(errors)
        kinds = {e.get("type") for e in errors}
        repo = self.repo_name
        if kinds == {"NOT_FOUND"}:
            if number is not None:
                return _answered(GraphQLNotFound(f"no issue #{number} in {repo}, or the token cannot see it "
                                                 f"({said})"), answer)
            return _answered(GraphQLErrors(f"{what} failed: {repo} not found, or the token cannot see it ({said}); "
                                           "check -R/--repo and the token's access", status=404), answer)
        if kinds & {"FORBIDDEN", "INSUFFICIENT_SCOPES"}:
            return _answered(GraphQLErrors(f"{what} failed: GitHub refused it ({said}); "
                                           f"{TOKEN_NEEDS.format(repo=repo)}", status=403), answer)
        status = 422 if "UNPROCESSABLE" in kinds else None
        return _answered(GraphQLErrors(f"{what} failed: GitHub answered with errors ({said})", status=status), answer)

    def _backoff(self, attempt: int) -> float:
        return min(16.0, 1.0 * 2**attempt) * (0.75 + random.random() / 2)

    def _error(self, exc: HTTPFailure, what: str, number: int | None) -> Exception:
        status = exc.status
        data = exc.data if isinstance(exc.data, dict) else {}
        message = _message_of(data)
        repo = self.repo_name
        if status == 401:
            return RemoteError(f"{what} failed: GitHub rejected the token (401 {message or 'Bad credentials'}); "
                               "set a valid GH_TOKEN or GITHUB_TOKEN, or run 'gh auth login'", status=401)
        if status in (403, 429):
            return RemoteError(f"{what} failed: GitHub refused access to {repo} ({status} {message or 'Forbidden'}); "
                               f"the token needs {_needed(exc.headers)} on this repository (or the 'repo' scope)",
                               status=status)
        if status == 404:
            if number is not None:
                return NotFound(f"no issue #{number} in {repo}, or the token cannot see it (404)")
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
        return RemoteError(f"{what} failed: GitHub answered {status} {message}".strip(), status=status)

    # ------------------------------------------------------------------------------ REST

    def newest_issues(self) -> list[dict[str, Any]]:
        """The newest open issues (a page), pull requests left out."""
        page = self.call(f"listing the newest issues of {self.repo_name}", lambda: _pygithub(
            lambda: self._repo.get_issues(state="open", sort="created", direction="desc").get_page(0)))
        return [i for i in map(_issue, page) if not i["pullRequest"]]

    def create_issue(self, title: str, body: str, labels: list[str],
                     landed: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
        """Open an issue; ``landed`` finds it when the answer was lost (raising CannotTell when it cannot)."""
        def post() -> dict[str, Any]:
            return _issue(_pygithub(lambda: self._repo.create_issue(title=title, body=body, labels=labels)))

        return self.call(f"creating a checkpoint issue in {self.repo_name}", post, landed=landed)

    def add_label(self, number: int, label: str) -> None:
        self.call(f"labelling issue #{number}",
                  lambda: _pygithub(lambda: self._repo.get_issue(number).add_to_labels(label)))  # (lazy: one request)

    def edit_issue(self, number: int, changes: dict[str, Any], resend: Callable[[], bool]) -> None:
        """PATCH an issue with ``changes``. Before a resend (the first attempt may have landed, or someone
        may have edited in the wait) ``resend`` is asked whether to send it again."""
        sent = False

        def patch() -> None:
            nonlocal sent
            if sent and not resend():
                return
            sent = True
            _pygithub(lambda: self._repo.get_issue(number).edit(**changes))  # (lazy: one request)

        self.call(f"updating issue #{number}", patch, number=number)

    def create_comment(self, number: int, text: str, since: datetime) -> str:
        """Post a comment; when the answer is lost, the comments since ``since`` tell whether it landed."""
        def post() -> str:
            return _pygithub(lambda: self._repo.get_issue(number).create_comment(text).html_url)  # (lazy)

        def landed() -> str | None:
            def look() -> str | None:
                return _pygithub(lambda: next((c.html_url for c in self._repo.get_issue(number).get_comments(
                    since=since) if c.body == text), None))
            return checking(look)

        return self.call(f"commenting on issue #{number}", post, landed=landed, number=number)

    def create_commit(self, message: str, files: dict[str, str], parents: list[str]) -> str:
        """A commit of ``files`` (path → text) on ``parents`` with ``message``, on no branch: what a claim ref
        points at. Two requests (the tree, then the commit); Git objects are named by their content, so a
        resend makes nothing twice that matters."""
        return self.commit(message, self.tree(files), parents)

    def commit(self, message: str, tree: str, parents: list[str]) -> str:
        """A commit with ``message`` on ``parents`` naming the tree ``tree`` (which must exist), on no
        branch: one request. Resent after a lost answer (a second commit object no ref points at is
        harmless)."""
        return self._git_object("commit", {"message": message, "tree": tree, "parents": parents})

    def tree(self, files: dict[str, str]) -> str:
        """A tree of ``files`` (path → text): one request; its id is its content's, the same every time."""
        return self._git_object("tree", {"tree": [{"path": path, "mode": "100644", "type": "blob", "content": text}
                                                  for path, text in files.items()]})

    def _git_object(self, kind: str, body: dict[str, Any]) -> str:
        _, made = self.call(f"writing a Git {kind} in {self.repo_name}",
                            lambda: self.post(f"{self._repo_url}/git/{kind}s", body))
        return str(made["sha"])

    def create_label(self, name: str, color: str, description: str) -> bool:
        """Create a label; False when it exists."""
        def make() -> bool:
            try:
                _pygithub(lambda: self._repo.create_label(name, color, description))
                return True
            except HTTPFailure as exc:
                if exc.status == 422:
                    return False
                raise

        return self.call(f"creating the label {name!r}", make)


def _http_date(value: Any) -> datetime | None:
    """An HTTP ``Date`` header (``Sun, 22 Nov 2026 08:00:00 GMT``) as a time in UTC; None when it is none."""
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(str(value)) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    return when.astimezone(timezone.utc) if when is not None and when.tzinfo is not None else None


def _needed(headers: Any) -> str:
    """The permission a refused request needed, as GitHub names it in ``X-Accepted-GitHub-Permissions``
    (``contents=write``: "Contents: write"); Issues: write when it names none."""
    found = {str(k).lower(): v for k, v in (headers or {}).items()}.get("x-accepted-github-permissions") or ""
    wanted = [p.strip() for p in str(found).replace(",", ";").split(";") if "=" in p]
    if not wanted:
        return "Issues: write"
    return " or ".join(f"{name.strip().replace('_', ' ').capitalize()}: {level.strip()}"
                       for name, level in (p.split("=", 1) for p in wanted))


def _on(errors: list[dict[str, Any]], fields: tuple[str, ...]) -> bool:
    """Whether every error is on one of ``fields`` (a name or alias in its path)."""
    return bool(fields) and all(any(part in fields for part in e.get("path") or ()) for e in errors)


def _message_of(data: Any) -> str:
    """GitHub's message in an HTTP error's body: REST's ``message``, or a GraphQL body's first error."""
    if not isinstance(data, dict):
        return ""
    errors = errors_of(data)
    return _clip(data.get("message") or (errors[0].get("message") if errors else "") or "")


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


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


def _timed_out(exc: BaseException) -> bool:
    """Whether a request ended at its timeout (no answer in time), however requests wraps it."""
    return isinstance(exc, requests.exceptions.Timeout) or (
        isinstance(exc, requests.exceptions.ConnectionError) and "timed out" in str(exc))


def _never_sent(exc: requests.exceptions.ConnectionError) -> bool:
    text = str(exc)
    return any(marker in text for marker in ("NewConnectionError", "Name or service not known", "Connection refused",
                                              "nodename nor servname", "Failed to resolve", "NameResolutionError"))
