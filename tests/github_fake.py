"""A small stateful GitHub behind ``responses``: issues, comments and labels of one repository, over REST
and GraphQL, answering and failing in GitHub's own shapes.

Payloads start from GitHub's own examples in GitHub's REST API description, kept with the tests in
``tests/fixtures/github-api/`` (``openapi-subset.json``). Every request is recorded, and every recorded
request is checked against that description with its ``check_request.py``; every GraphQL document is
judged by GitHub's schema (``github_schema``) and executed against it over the same state as the REST
side.

What it models, each with the page it comes from in ``tests/test_github_fake.py``: distinct global node
ids for every issue, comment, label and repository, and ``updateIssue`` changing exactly the issue its
``id`` names; GraphQL errors as GitHub sends them (HTTP 200, ``data`` with the failed field null, each
error with ``type``, ``path``, ``locations`` and ``message``); REST errors as ``{"message",
"documentation_url", "status"}``; the primary rate limit (``use_up``: REST 403 with
``x-ratelimit-remaining: 0``, GraphQL 200 with ``RATE_LIMITED``, both until the reset); secondary
limits (403 with ``Retry-After``); GraphQL timeouts (200, or a 502/504 gateway answer); deleted
revisions of a body; listings that lag behind a create (``lag``); conditional headers refused on writes.

Faults (``fail``, ``fail_op``, ``Fault``) and concurrent edits (``on``, ``on_op``) are injected per
request. A fault aimed at GraphQL must be one GitHub gives (see ``Fault``), so that no test of ghstate
learns to handle an answer GitHub never sends.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
import responses
from github_schema import judged
from graphql import GraphQLError, default_field_resolver, execute_sync

API_DIR = Path(__file__).resolve().parent / "fixtures" / "github-api"  # GitHub's REST API description
SPEC_FILE = API_DIR / "openapi-subset.json"

# GitHub's own words, as it sends them (sources in tests/test_github_fake.py)
NOT_ACCESSIBLE = "Resource not accessible by integration"
SECONDARY_LIMIT = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If "
                   "you reach out to GitHub Support for help, please include the request ID 9C31:8954C:60104B:C1D441.")
QUERY_TIMEOUT = ("Something went wrong while executing your query. This may be the result of a timeout, or it could "
                 "be a GitHub bug. Please include `8FF2:721B:31D84D5:6EF58BD:5BCF3079` when reporting this issue.")
GATEWAY_TIMEOUT = ("We couldn't respond to your request in time. Sorry about that. Please try resubmitting your "
                   "request and contact us if the problem persists.")
CONDITIONAL_REFUSED = "Conditional request headers are not allowed in unsafe requests unless supported by the endpoint"
REST_DOCS = "https://docs.github.com/rest"
LIMIT_DOCS = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
RATE_LIMIT_TYPES = ("RATE_LIMITED", "RATE_LIMIT")  # the documented type, and one observed since (githubkit#271)
GRAPHQL_STATUSES = (200, 401, 403, 502, 504)  # what GitHub answers a GraphQL request with, errors included
REPO_ID = 1296269  # the database id of the repository (the API description's example repository)
USER_ID = 583231  # the viewer's (octocat's) database id

@functools.cache
def _examples() -> tuple[dict, dict, dict]:
    """GitHub's example issue, comment and label, the payloads every fake object starts from (read once: each
    object is a deep copy of one)."""
    spec = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    ops = {o["operationId"]: o for o in spec["operations"]}

    def first(op: str) -> Any:
        return next(iter(ops[op]["success"]["examples"].values()))["value"]

    issue = first("issues/get")
    issue.pop("pull_request", None)  # the example is an issue that links a PR; a checkpoint is a plain issue
    comment = first("issues/get-comment") if "issues/get-comment" in ops else first("issues/create-comment")
    label = first("issues/create-label")
    return issue, comment, label


def checker() -> Callable[[str, str, Any], list[str]]:
    """``check_request(method, url, body)`` of tests/fixtures/github-api: what GitHub's REST API
    description says is wrong with one request."""
    if str(API_DIR) not in sys.path:
        sys.path.insert(0, str(API_DIR))
    from check_request import check_request

    return check_request


def node_id(prefix: str, *ids: int) -> str:
    """A global node id as GitHub has minted them since 2021: the type's prefix, ``_``, then URL-safe
    base64 of a MessagePack array ``[0, *ids]`` (an issue's is ``[0, repository id, issue id]``, whence
    the familiar ``I_kwDO…``). Opaque to clients; distinct for every object."""
    packed = bytes([0x90 + len(ids) + 1, 0x00])
    for value in ids:
        packed += b"\xce" + value.to_bytes(4, "big")
    return f"{prefix}_{base64.urlsafe_b64encode(packed).decode().rstrip('=')}"


class GraphQLTypedError(Exception):
    """An error GitHub reports beside the data, with its ``type`` (NOT_FOUND, FORBIDDEN, …): raised by a
    resolver, it becomes one entry of the answer's ``errors`` and its field is null in ``data``."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.type = kind
        self.extensions = {"type": kind}


class GraphQLNotFound(GraphQLTypedError):
    """GitHub's NOT_FOUND error of a GraphQL field."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "NOT_FOUND")


@dataclass
class Fault:
    """One injected failure, in a shape GitHub gives.

    REST: ``status`` with GitHub's error body (``{"message", "documentation_url", "status"}``) and
    ``headers``; ``status=None`` drops the connection (``exception``, default ``ConnectionError``).

    GraphQL: ``type`` (FORBIDDEN, NOT_FOUND, UNPROCESSABLE, …) answers 200: the failing ``field`` (by
    name or alias; default: the operation's root fields) is null in ``data`` and the rest executes, so a
    nested field can fail after a mutation did its work. ``type`` RATE_LIMITED refuses the whole request
    (no ``data``, ``x-ratelimit-remaining: 0``). ``status=200`` without a type is a request-level error
    (``{"data": null, "errors": [{"message"}]}``: GitHub's timeout, ``QUERY_TIMEOUT``). Otherwise only
    what GitHub answers a GraphQL request with: 401, 403 for a secondary limit (REST-shaped body, as
    documented), 502 and 504 (gateway timeouts). ``payload`` replaces the body whatever the status (an
    answer that is not GitHub's at all). ``after``: do the work, then answer the failure."""

    method: str
    path: re.Pattern
    status: int | None = 500  # None: the connection drops
    times: int = 1
    after: bool = False
    headers: dict | None = None
    message: str = "Server Error"
    exception: type[Exception] | None = None
    payload: str | None = None  # the answer's body, instead of GitHub's
    type: str | None = None  # GraphQL: the error's type; the answer is a 200
    field: str | None = None  # GraphQL: the field that fails (default: the root fields)

    def __post_init__(self) -> None:
        if self.type is not None:
            self.status = 200

    def check_graphql(self) -> None:
        """Refuse a GraphQL failure GitHub does not give (a REST error body for a refused field, say)."""
        if self.payload is not None or self.status is None or self.type is not None:
            return
        secondary = self.status == 403 and "secondary rate limit" in self.message
        if self.status not in GRAPHQL_STATUSES or (self.status == 403 and not secondary) or \
                (self.status == 200 and self.message == "Server Error"):
            raise ValueError(f"GitHub does not answer a GraphQL request with {self.status} {self.message!r}: a "
                             "refused or missing field is a 200 with errors (type=FORBIDDEN, NOT_FOUND, …), the "
                             "primary limit type=RATE_LIMITED, a timeout status=200 with QUERY_TIMEOUT, 502 or 504")


class FakeGitHub:
    def __init__(self, mock: responses.RequestsMock | None, repo: str = "octo/hello",
                 base: str = "https://api.github.com", web: str = "https://github.com", lag: int = 0) -> None:
        self.mock = mock
        self.repo = repo
        self.base = base.rstrip("/")
        self.web = web
        self.lag = lag  # a created issue shows in the open-issue listings only after this many later requests
        self.issues: dict[int, dict] = {}
        self.history: dict[int, list[str]] = {}  # every body an issue had, as GitHub's edit history keeps it
        # who saved each of those bodies, and when: {login, typename, at, deleted, deleted_by}
        self.editors: dict[int, list[dict[str, Any]]] = {}
        self.viewer = "octocat"  # whose token the requests carry: the editor of what they write
        self.viewer_type = "User"
        # The association GitHub gives the viewer with this repository, on what it opens: octocat is a collaborator
        # of octo/hello; an app's bot is none of the repository's ("NONE": GitHub does not document it, and
        # "CONTRIBUTOR" is as plausible: tests that depend on it run under both)
        self.viewer_association = "COLLABORATOR"
        self.comments: dict[int, list[dict]] = {}
        self.labels: set[str] = {"bug"}
        self.calls: list[tuple[str, str, Any]] = []
        self.faults: list[Fault] = []
        self.before: list[tuple[str, re.Pattern, Callable[[], None], list[int]]] = []
        self.drop_labels_on_create = False
        self.issues_enabled = True  # a repository may have its issues turned off (Settings › Features)
        self.visibility = "PRIVATE"  # PUBLIC, PRIVATE or INTERNAL (Repository.visibility)
        # What GitHub does not document about the edit history, each a variant tests can turn on:
        self.coalesce_seconds: int | None = None  # keep a save as the previous version when its editor saved
        #   that one at most this many seconds before (agents sharing one token are one editor)
        self.history_lag = 0  # reads whose edit history leaves out the newest version (an index behind its body)
        self.cursors = "offset"  # a History cursor counts from the newest ("offset": new versions shift it)
        #   or names a version ("version": stable while versions are added)
        # What GitHub does not document about its issue search (``search``), each a variant too:
        self.search_lag = 0  # seconds (GitHub's clock) before a created or changed issue is searched as it is
        self.search_match = "phrase"  # a quoted phrase matches its words in a row ("phrase") or anywhere ("words")
        self.search_comments = True  # the text of HTML comments in a body (a hidden marker) is searched
        # The knobs above and the Git ref variant's fields (``github_fake_tasks.Variant``) whose other value
        # would have answered a request otherwise, or kept another state, at some point of this fake's life:
        # a knob not in here changed nothing (tests/test_write_log.py runs a case only under the variants
        # that can change it, and checks it with this)
        self.reached: set[str] = set()
        self.clock = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
        self.reset_at: dict[str, int] = {}  # resource ("core", "graphql") -> when its used-up limit resets
        self._limit_status = 403  # REST's answer to a used-up limit: 403 or 429
        self._visible_from: dict[int, int] = {}  # issue -> the request count from which listings show it
        self._label_ids: dict[str, int] = {}  # label name -> its database id, given at first sight
        self._issue_tpl, self._comment_tpl, self._label_tpl = _examples()
        self._next_comment = 100
        self.repo_node_id = node_id("R", REPO_ID)
        scheme, host = urlsplit(self.base).scheme, re.escape(urlsplit(self.base).netloc)
        prefix = re.escape(urlsplit(self.base).path)
        port = "(:443)?" if scheme == "https" else ""
        self.root = rf"{scheme}://{host}{port}{prefix}/repos/{re.escape(repo)}"
        # GraphQL is at /graphql on github.com, at /api/graphql on GHES (whose REST base ends in /api/v3)
        self.graphql_url = rf"{scheme}://{host}{port}{re.escape(prefix.removesuffix('/v3'))}/graphql"
        # The GraphQL side: root fields (queries and mutations alike) over the same state as the REST
        # side. Each is called as ``fn(info, **arguments)`` and answers plain dicts, whose callables are
        # resolved the same way; abstract types are told by a "__typename" key.
        self.graphql_root: dict[str, Callable[..., Any]] = {"repository": self._gql_repository,
                                                            "updateIssue": self._gql_update_issue,
                                                            "closeIssue": self._gql_close_issue,
                                                            "deleteLabel": self._gql_delete_label,
                                                            "search": self._gql_search,
                                                            "viewer": lambda info, **_: {
                                                                "__typename": "User", "login": self.viewer
                                                                + ("[bot]" if self.viewer_type == "Bot" else "")}}
        self.graphql_problems: list[str] = []  # documents GitHub's schema refused
        from github_fake_tasks import FakeTasks  # sub-issues, dependencies, closeIssue, Git refs: a module of its own

        self.tasks = FakeTasks(self).install()
        if mock is not None:  # else something else (the loopback server of github_http) calls route() itself
            mock.add_callback("POST", re.compile(self.graphql_url + "$"), callback=self.route)
            for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
                mock.add_callback(method, re.compile(rf"{scheme}://{host}{port}{prefix}/repos/.*"),
                                  callback=self.route)

    # ------------------------------------------------------------------------------ set up

    def now(self) -> str:
        self.clock += timedelta(seconds=1)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def advance(self, seconds: float) -> None:
        """Time passes on GitHub's side (a client slept): limits reset when the clock reaches them."""
        self.clock += timedelta(seconds=seconds)

    def timestamp(self) -> float:
        """GitHub's clock in epoch seconds, the unit of ``x-ratelimit-reset``."""
        return self.clock.timestamp()

    def viewer_login(self) -> str:
        """The token's own user as REST names it (``slug[bot]`` for an app)."""
        return self.viewer + ("[bot]" if self.viewer_type == "Bot" else "")

    def add_issue(self, number: int, body: str, title: str = "Checkpoint", labels=("ghstate",), state="open",
                  pull_request: bool = False, author: str = "octocat", association: str = "COLLABORATOR") -> dict:
        """An issue as GitHub holds it, opened by ``author`` (a REST login: ``slug[bot]`` for an app) whose
        association with the repository is ``association`` (a stranger on a public repository: ``NONE``)."""
        issue = copy.deepcopy(self._issue_tpl)
        api = f"{self.base}/repos/{self.repo}/issues/{number}"
        database_id = 1000 + number
        kind = "PR" if pull_request else "I"
        issue.update(number=number, id=database_id, node_id=node_id(kind, REPO_ID, database_id),
                     body=body, title=title, state=state,
                     url=api, html_url=f"{self.web}/{self.repo}/issues/{number}", comments_url=f"{api}/comments",
                     labels=[self._label(n) for n in labels], comments=0, created_at=self.now(),
                     updated_at=self.now(), repository_url=f"{self.base}/repos/{self.repo}")
        issue["user"] = {**issue["user"], "login": author, "type": "Bot" if author.endswith("[bot]") else "User"}
        issue["author_association"] = association
        if pull_request:
            issue["pull_request"] = {"url": f"{self.base}/repos/{self.repo}/pulls/{number}"}
            issue["html_url"] = f"{self.web}/{self.repo}/pull/{number}"
        self.labels.update(labels)
        self.issues[number] = issue
        self._record(number, body, issue["user"]["login"], issue["user"].get("type") or "User")
        self.comments.setdefault(number, [])
        return issue

    def _record(self, number: int, body: str, login: str | None, typename: str = "User") -> None:
        """GitHub's edit history of a body: every version, with who saved it and when (with
        ``coalesce_seconds``, a quick second save by one editor replaces that editor's last version)."""
        last = (self.editors.get(number) or [None])[-1]
        if last is not None and len(self.history[number]) > 1 and last["login"] == login and not last["deleted"]:
            self.reached.add("coalesce_seconds")  # a second save by one editor: some window merges it
        if self.coalesce_seconds is not None and last is not None and len(self.history[number]) > 1 and \
                last["login"] == login and not last["deleted"] and \
                (self.clock - datetime.strptime(last["at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
                 ).total_seconds() <= self.coalesce_seconds:
            self.history[number][-1] = body
            last["at"] = self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")
            return
        self.history.setdefault(number, []).append(body)
        self.editors.setdefault(number, []).append({"login": login, "typename": typename,
                                                    "at": self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                                    "deleted": False, "deleted_by": None})

    def add_comment(self, number: int, body: str, login: str = "octocat", association: str = "OWNER") -> dict:
        comment = copy.deepcopy(self._comment_tpl)
        self._next_comment += 1
        cid = self._next_comment
        comment.update(id=cid, node_id=node_id("IC", REPO_ID, cid), body=body, created_at=self.now(),
                       updated_at=self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       url=f"{self.base}/repos/{self.repo}/issues/comments/{cid}",
                       html_url=f"{self.web}/{self.repo}/issues/{number}#issuecomment-{cid}",
                       issue_url=f"{self.base}/repos/{self.repo}/issues/{number}", author_association=association)
        comment["user"] = {**comment.get("user", {}), "login": login}
        self.comments.setdefault(number, []).append(comment)
        self.issues[number]["comments"] = len(self.comments[number])
        return comment

    def edit(self, number: int, body: str, login: str = "mona") -> None:
        """A person edits the body in the web UI (which sends CRLF line endings)."""
        self.issues[number]["body"] = body
        self.issues[number]["updated_at"] = self.now()
        self._record(number, body, login)

    def delete_revision(self, number: int, index: int, by: str = "mona") -> None:
        """A person deletes a version of the body from its edit history (``index`` 0 is the original):
        GitHub keeps who saved it and when, and counts it, but its text is gone."""
        saved = self.editors[number][index]
        saved.update(deleted=True, deleted_by=by, deleted_at=self.now())

    def use_up(self, resource: str = "graphql", resets_in: int = 60, status: int = 403) -> None:
        """The primary rate limit of ``resource`` ("graphql", or "core": REST) is used up until GitHub's
        clock is ``resets_in`` seconds further: until then every such request is refused as GitHub does
        (REST: ``status`` 403 or 429; GraphQL: 200 with RATE_LIMITED), with ``x-ratelimit-remaining: 0``."""
        self.reset_at[resource] = int(self.timestamp()) + resets_in
        self._limit_status = status

    def fail(self, method: str, path: str, status: int | None = 500, **kwargs: Any) -> None:
        """Fail the requests whose method is ``method`` ("*": any) and whose path matches ``path``: a REST
        path after the repository ("/issues/7"), or "/graphql NAME" for a GraphQL operation. A fault that
        can reach GraphQL must be one GitHub gives (``Fault.check_graphql``)."""
        fault = Fault(method, re.compile(path), status, **kwargs)
        if "graphql" in path or fault.path.search("/graphql "):
            fault.check_graphql()
        self.faults.append(fault)

    def fail_op(self, operation: str, status: int | None = 502, **kwargs: Any) -> None:
        """Fail the GraphQL operation ``operation`` ("Checkpoint", "UpdateCheckpoint", …): with ``type``
        (and ``message``, ``field``) as GitHub refuses a field, else as ``Fault`` says."""
        self.fail("POST", rf"^/graphql {operation}$", status, **kwargs)

    def on_op(self, operation: str, action: Callable[[], None], skip: int = 0) -> None:
        """Run ``action`` once, just before the GraphQL operation ``operation`` is answered."""
        self.on("POST", rf"^/graphql {operation}$", action, skip)

    def on(self, method: str, path: str, action: Callable[[], None], skip: int = 0) -> None:
        """Run ``action`` once, just before the matching request after ``skip`` others is answered."""
        self.before.append((method, re.compile(path), action, [skip]))

    def _label(self, name: str) -> dict:
        label = copy.deepcopy(self._label_tpl)
        database_id = self._label_id(name)
        label.update(name=name, id=database_id, node_id=node_id("LA", REPO_ID, database_id),
                     url=f"{self.base}/repos/{self.repo}/labels/{name}")
        return label

    def _label_id(self, name: str) -> int:
        return self._label_ids.setdefault(name, 208045946 + len(self._label_ids))

    def label_node_id(self, name: str) -> str:
        return node_id("LA", REPO_ID, self._label_id(name))

    def _visible(self, issue: dict) -> bool:
        """Whether a listing shows the issue yet (``lag``: GitHub's listings catch up with a create)."""
        return len(self.calls) > self._visible_from.get(issue["number"], 0)

    # ------------------------------------------------------------------------------ checks

    def count(self, method: str | None = None, path: str | None = None) -> int:
        return sum(1 for m, u, _ in self.calls if (method is None or m == method)
                   and (path is None or re.search(path, urlsplit(u).path)))

    def operations(self) -> list[str]:
        """The GraphQL operations requested, by name, in order."""
        out = []
        for _, url, body in self.calls:
            if re.fullmatch(self.graphql_url, url):
                out.append(_operation((body or {}).get("query") or ""))
        return out

    def count_op(self, operation: str) -> int:
        return self.operations().count(operation)

    def problems(self) -> list[str]:
        """What GitHub's own descriptions say is wrong with the requests made: REST calls against its
        REST API description (tests/fixtures/github-api), GraphQL documents against its schema."""
        out = list(self.graphql_problems)
        check = checker()
        for method, url, body in self.calls:
            if not re.fullmatch(self.graphql_url, url):
                out.extend(f"{method} {url}: {p}" for p in check(method, url, body))
        return out

    # ------------------------------------------------------------------------------ GraphQL

    def _graphql(self, body: Any, failing: Fault | None = None):
        """Answer a GraphQL request as GitHub does: the document is judged by GitHub's schema, then
        executed against it over this fake's state; errors, when any, beside the data, status 200.
        ``failing``: a typed fault whose field raises it."""
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return 400, {}, json.dumps({"message": "Problems parsing JSON", "documentation_url": REST_DOCS,
                                        "status": "400"})
        document, found = judged(body["query"])  # parsed and judged once per distinct document
        if found:  # refused before anything runs: errors, no data
            self.graphql_problems.extend(f"GraphQL: {p}" for p in found)
            return self._json(200, {"errors": [{"message": p} for p in found]}, resource="graphql")

        def resolve(source: Any, info: Any, **args: Any) -> Any:
            if failing is not None and _aimed_at(failing, info):
                raise GraphQLTypedError(failing.message, failing.type or "INTERNAL")
            return default_field_resolver(source, info, **args)

        result = execute_sync(_schema(), document, root_value=self.graphql_root,
                              variable_values=body.get("variables") or {}, field_resolver=resolve)
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [_error_json(e) for e in result.errors]
            if result.data is None:
                del answer["data"]  # a document or its variables refused: nothing was executed
        return self._json(200, answer, resource="graphql")

    def _gql_repository(self, info: Any, owner: str, name: str, **_: Any) -> dict | None:
        if f"{owner}/{name}".lower() != self.repo.lower():
            raise GraphQLNotFound(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        issue, issue_or_pr, issues = self._gql_issue, self._gql_issue_or_pr, self._gql_issues
        if not self.issues_enabled:  # none of its issues can be read, as if there were none
            def issue(number: int) -> None:
                raise GraphQLNotFound(f"Could not resolve to an issue or pull request with the number of {number}.")

            issue_or_pr = issue
            issues = lambda info, **_: {"nodes": [], "totalCount": 0,  # noqa: E731
                                        "pageInfo": {"hasNextPage": False, "endCursor": None}}
        return {"__typename": "Repository", "nameWithOwner": self.repo, "id": self.repo_node_id,
                "hasIssuesEnabled": self.issues_enabled, "visibility": self.visibility,
                "isPrivate": self.visibility != "PUBLIC",
                "issue": lambda info, number, **_: issue(number),
                "issueOrPullRequest": lambda info, number, **_: issue_or_pr(number),
                "issues": issues, "labels": self._gql_labels,
                "label": lambda info, name, **_: ({"id": self.label_node_id(name), "name": name}
                                                  if name in self.labels else None)}

    def _gql_labels(self, info: Any, first: int | None = None, query: str | None = None, **_: Any) -> dict:
        names = sorted(n for n in self.labels if not query or query.lower() in n.lower())[: first or 100]
        return {"nodes": [{"id": self.label_node_id(n), "name": n} for n in names], "totalCount": len(names)}

    def _gql_issues(self, info: Any, labels: list[str] | None = None, states: list[str] | None = None,
                    first: int | None = None, after: str | None = None, orderBy: dict | None = None,
                    **_: Any) -> dict:
        found = [i for i in self.issues.values() if "pull_request" not in i and self._visible(i)
                 and (not states or i["state"].upper() in states)
                 and set(labels or ()) <= {x["name"] for x in i["labels"]}]
        field = {"UPDATED_AT": "updated_at", "CREATED_AT": "created_at"}.get((orderBy or {}).get("field"), "created_at")
        found.sort(key=lambda i: (i[field], i["number"]), reverse=(orderBy or {}).get("direction") == "DESC")
        start = int(after) if after else 0
        chunk = found[start: start + (first or 100)]
        more = start + len(chunk) < len(found)
        return {"nodes": [self._gql_issue(i["number"]) for i in chunk], "totalCount": len(found),
                "pageInfo": {"hasNextPage": more, "endCursor": str(start + len(chunk)) if chunk else None,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    def _gql_issue_or_pr(self, number: int) -> dict | None:
        issue = self.issues.get(number)
        if issue is not None and "pull_request" in issue:
            return {"__typename": "PullRequest", "id": issue["node_id"], "number": number, "url": issue["html_url"]}
        if issue is None:
            raise GraphQLNotFound(f"Could not resolve to an issue or pull request with the number of {number}.")
        return self._gql_issue(number)

    def _gql_issue(self, number: int) -> dict | None:
        issue = self.issues.get(number)
        if issue is None or "pull_request" in issue:
            raise GraphQLNotFound(f"Could not resolve to an Issue with the number of {number}.")
        user = issue.get("user") or {}
        bot = user.get("type") == "Bot"  # GraphQL names an app's bot by its slug alone, REST as slug[bot]
        author = {"__typename": "Bot" if bot else "User",
                  "login": str(user.get("login") or "").removesuffix("[bot]") if bot else user.get("login")}
        return {"__typename": "Issue", "id": issue["node_id"], "number": number,
                "title": issue["title"], "body": issue["body"] or "", "url": issue["html_url"],
                "state": issue["state"].upper(), "updatedAt": issue["updated_at"],
                "createdAt": issue["created_at"], "author": author,
                "authorAssociation": issue.get("author_association") or "NONE",
                "labels": lambda info, **_: {"nodes": [{"id": x["node_id"], "name": x["name"]}
                                                       for x in issue["labels"]],
                                             "totalCount": len(issue["labels"])},
                "comments": lambda info, first=None, last=None, **_: self._gql_comments(number, first, last),
                "includesCreatedEdit": len(self.history.get(number, [])) > 1,
                **self._last_edit(number),
                "userContentEdits": lambda info, first=None, after=None, **_: self._gql_edits(number, first, after)}

    def _last_edit(self, number: int) -> dict:
        """Who last edited an issue's body, and when (``editor``, ``lastEditedAt``): null until it is edited."""
        editors = self.editors.get(number, [])
        if len(editors) < 2:
            return {"editor": None, "lastEditedAt": None}
        last = editors[-1]
        return {"editor": {"__typename": last["typename"], "login": last["login"]} if last["login"] else None,
                "lastEditedAt": last["at"]}

    def _gql_comments(self, number: int, first: int | None, last: int | None) -> dict:
        comments = self.comments.get(number, [])
        chosen = comments[:first] if first is not None else comments[len(comments) - last:] if last else []
        return {"totalCount": len(comments), "nodes": [{
            "id": c["node_id"],
            "author": {"__typename": "Bot" if c["user"]["login"].endswith("[bot]") else "User",
                       "login": c["user"]["login"].removesuffix("[bot]")},
            "authorAssociation": c.get("author_association") or "NONE", "body": c["body"],
            "createdAt": c["created_at"], "url": c["html_url"],
            "lastEditedAt": None if c["updated_at"] == c["created_at"] else c["updated_at"]} for c in chosen]}

    def _gql_edits(self, number: int, first: int | None, after: str | None) -> dict:
        """GitHub's edit history: nothing until the body is first edited; then every version, the
        original included, newest first, each in full (``diff``), with who saved it. A deleted version
        keeps its place, its editor and its time, and loses its text."""
        bodies = self.history.get(number, [])
        editors = self.editors.get(number, [])
        versions = list(enumerate(zip(bodies, editors, strict=True)))[::-1] if len(bodies) > 1 else []
        if len(versions) > 1:
            self.reached.add("history_lag")
        if self.history_lag > 0 and len(versions) > 1:  # the index behind the body: its newest version not listed
            self.history_lag -= 1
            versions = versions[1:]
        if self.cursors == "version" and after:  # the versions older than the one the cursor names
            start = next((i for i, (index, _) in enumerate(versions) if index < int(after)), len(versions))
        else:
            start = int(after) if after else 0
        chunk = versions[start: start + (first or 100)]
        if after or chunk:
            self.reached.add("cursors")  # a cursor read, or one given out
        nodes = [{"id": node_id("UCE", REPO_ID, 1000 + number, index), "diff": None if e["deleted"] else b,
                  "editedAt": e["at"], "createdAt": e["at"], "updatedAt": e.get("deleted_at") or e["at"],
                  "deletedAt": e.get("deleted_at") if e["deleted"] else None,
                  "deletedBy": {"__typename": "User", "login": e["deleted_by"]} if e["deleted"] else None,
                  "editor": {"__typename": e["typename"], "login": e["login"]} if e["login"] else None}
                 for index, (b, e) in chunk]
        end = str(chunk[-1][0] if self.cursors == "version" else start + len(chunk)) if chunk else None
        return {"totalCount": len(versions), "nodes": nodes,
                "pageInfo": {"hasNextPage": start + len(chunk) < len(versions), "endCursor": end,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    def _gql_search(self, info: Any, query: str, type: str, first: int | None = None, after: str | None = None,
                    **_: Any) -> dict:
        """GitHub's issue search (``search(type: ISSUE)``), over an index that is ``search_lag`` seconds behind
        the issues: the qualifiers ghstate sends (``repo:``, ``is:issue``/``is:open``/``is:closed``,
        ``label:``, ``in:title,body``, ``sort:updated-desc``) and quoted phrases, matched word by word
        (punctuation and case ignored: ``feature/x`` is the words ``feature x``). A qualifier it does not know
        is refused, so that no test of ghstate relies on one the fake ignores."""
        if type != "ISSUE":
            raise GraphQLTypedError(f"the fake GitHub searches issues only, not {type}", "INTERNAL")
        terms = _search_terms(query)
        sort = terms.pop("sort", ["best-match"])[-1]
        found = []
        for number in self.issues:
            seen = self._searched_as(number)
            if seen is not None and _search_hit(seen, terms, self.search_match):
                found.append((seen["updated_at"] if sort == "updated-desc" else "", number))
        found.sort(reverse=True)
        start = int(after) if after else 0
        chunk = [n for _, n in found[start: start + (first or 10)]]
        more = start + len(chunk) < len(found)
        return {"issueCount": len(found), "nodes": [self._gql_issue(n) for n in chunk],
                "pageInfo": {"hasNextPage": more, "endCursor": str(start + len(chunk)) if chunk else None,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    def _searched_as(self, number: int) -> dict | None:
        """Issue ``number`` as the search index holds it: as it was ``search_lag`` seconds ago (None: not there
        yet), its body without HTML comments unless ``search_comments``."""
        issue = self.issues[number]
        cutoff = (self.clock - timedelta(seconds=self.search_lag)).strftime("%Y-%m-%dT%H:%M:%SZ")
        if issue["created_at"] > cutoff:
            return None
        bodies = [b for b, e in zip(self.history.get(number, []), self.editors.get(number, []), strict=False)
                  if e["at"] <= cutoff] or [issue["body"] or ""]
        closed = issue["state"] == "closed" and (issue.get("closed_at") or "") <= cutoff
        body = bodies[-1] or ""
        if not self.search_comments:
            body = re.sub(r"<!--.*?-->", " ", body, flags=re.DOTALL)
        return {"number": number, "title": issue["title"], "body": body, "state": "closed" if closed else "open",
                "labels": {x["name"].lower() for x in issue["labels"]}, "pull": "pull_request" in issue,
                "updated_at": issue["updated_at"], "repo": self.repo}

    def _gql_close_issue(self, info: Any, input: dict, **_: Any) -> dict:
        """The ``closeIssue`` mutation: closed, with its reason (GitHub's default: COMPLETED)."""
        number = next((n for n, i in self.issues.items() if i["node_id"] == input["issueId"]
                       and "pull_request" not in i), None)
        if number is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['issueId']}'.")
        issue = self.issues[number]
        issue.update(state="closed", state_reason=(input.get("stateReason") or "COMPLETED").lower(),
                     closed_at=self.now(), updated_at=self.now())
        return {"issue": {**self._gql_issue(number), "stateReason": input.get("stateReason") or "COMPLETED"},
                "clientMutationId": input.get("clientMutationId")}

    def _gql_delete_label(self, info: Any, input: dict, **_: Any) -> dict:
        """GitHub takes a deleted label off every issue that had it."""
        name = next((n for n in self.labels if self.label_node_id(n) == input["id"]), None)
        if name is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['id']}'")
        self.labels.discard(name)
        for issue in self.issues.values():
            issue["labels"] = [x for x in issue["labels"] if x["name"] != name]
        return {"clientMutationId": input.get("clientMutationId")}

    def _gql_update_issue(self, info: Any, input: dict, **_: Any) -> dict:
        """The ``updateIssue`` mutation: the same change as a PATCH of the issue whose node id is
        ``input.id``, and of no other."""
        number = next((n for n, i in self.issues.items() if i["node_id"] == input["id"]
                       and "pull_request" not in i), None)
        if number is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['id']}'.")
        names = None
        if input.get("labelIds") is not None:
            by_id = {self.label_node_id(n): n for n in self.labels}
            unknown = [x for x in input["labelIds"] if x not in by_id]
            if unknown:
                raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{unknown[0]}'.")
            names = [by_id[x] for x in input["labelIds"]]
        issue = self.issues[number]
        for key in ("title", "body"):
            if input.get(key) is not None:
                issue[key] = input[key]
        if input.get("state"):
            issue["state"] = input["state"].lower()
        if names is not None:
            issue["labels"] = [self._label(n) for n in names]
        issue["updated_at"] = self.now()
        if input.get("body") is not None:
            self._record(number, input["body"], self.viewer, self.viewer_type)
        return {"issue": lambda info, **_: self._gql_issue(number), "clientMutationId": input.get("clientMutationId")}

    # ------------------------------------------------------------------------------ serving

    def _dispatch(self, request: requests.PreparedRequest, graphql: bool = False):
        body = json.loads(request.body) if request.body else None
        self.calls.append((request.method, request.url, body))
        parts = urlsplit(request.url)
        if graphql:  # "/graphql NAME": faults and hooks can aim at one operation (``Checkpoint``, …)
            path = "/graphql " + _operation((body or {}).get("query") or "")
        else:
            path = re.sub(r"^.*/repos/" + re.escape(self.repo), "", parts.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self._run_hooks(request.method, path)
        limited = self._limited("graphql" if graphql else "core")
        if limited is not None:
            return limited
        fault = next((f for f in self.faults if f.method in ("*", request.method) and f.path.search(path)), None)
        if fault is not None:
            fault.times -= 1
            if fault.times <= 0:
                self.faults.remove(fault)
            return self._fault(fault, request, path, query, body, graphql)
        if graphql:
            return self._graphql(body)
        return self._handle(request, path, query, body)

    def _run_hooks(self, method: str, path: str) -> None:
        for i, (wanted, pattern, action, skip) in enumerate(self.before):
            if wanted in ("*", method) and pattern.search(path):
                if skip[0] > 0:
                    skip[0] -= 1
                    break
                del self.before[i]
                action()
                break

    def _fault(self, fault: Fault, request: Any, path: str, query: dict, body: Any, graphql: bool):
        if graphql and fault.type is not None and fault.type not in RATE_LIMIT_TYPES:
            return self._graphql(body, failing=fault)  # the field fails; everything else executes
        if fault.after:
            self._graphql(body) if graphql else self._handle(request, path, query, body)
        if fault.status is None:
            raise (fault.exception or requests.exceptions.ConnectionError)("Connection aborted.")
        if fault.payload is not None:
            return fault.status, dict(fault.headers or {}), fault.payload
        if graphql:
            return self._graphql_failure(fault)
        headers = dict(fault.headers or {})
        if fault.status == 403 and fault.message == NOT_ACCESSIBLE:  # the permission the endpoint wants
            headers.setdefault("X-Accepted-GitHub-Permissions", "issues=write; pull_requests=write")
        return self._rest_error(fault.status, fault.message, headers)

    def _graphql_failure(self, fault: Fault):
        """A GraphQL request refused whole, as GitHub refuses one."""
        headers = dict(fault.headers or {})
        if fault.type in RATE_LIMIT_TYPES:
            message = fault.message if fault.message != "Server Error" else \
                f"API rate limit exceeded for user ID {USER_ID}."
            limit = {"X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                     "X-RateLimit-Reset": str(int(self.timestamp()) + 60)}
            return self._json(200, {"errors": [{"type": fault.type, "message": message}]},
                              extra={**limit, **headers}, resource="graphql")
        if fault.status == 200:  # a request-level error: GitHub's timeout, or a secondary limit said at 200
            return self._json(200, {"data": None, "errors": [{"message": fault.message}]}, extra=headers,
                              resource="graphql")
        if fault.status in (502, 504):
            message = fault.message if fault.message != "Server Error" else GATEWAY_TIMEOUT
            return fault.status, headers, json.dumps({"message": message})
        if fault.status == 401:
            return self._rest_error(401, "Bad credentials", headers, docs="https://docs.github.com/graphql")
        return self._rest_error(fault.status or 500, fault.message, headers, docs=LIMIT_DOCS)

    def _limited(self, resource: str):
        """GitHub's answer while the primary rate limit of ``resource`` is used up, or None."""
        reset = self.reset_at.get(resource)
        if reset is None or self.timestamp() >= reset:
            return None
        headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                   "X-RateLimit-Reset": str(reset), "X-RateLimit-Resource": resource}
        message = f"API rate limit exceeded for user ID {USER_ID}."
        if resource == "graphql":
            return 200, {"Content-Type": "application/json; charset=utf-8", **headers}, json.dumps(
                {"errors": [{"type": "RATE_LIMITED", "message": message}]})
        return self._rest_error(self._limit_status, message + " If you reach out to GitHub Support for help, "
                                "please include the request ID 9C31:8954C:60104B:C1D441.", headers,
                                docs=LIMIT_DOCS + "#exceeding-the-rate-limit")

    def route(self, request: requests.PreparedRequest):
        """Every answer, with GitHub's ``Date``: the fake's clock, which a test may set apart from the machine's
        (a machine whose clock is skewed, as claims' leases must not mind)."""
        status, headers, text = self._route(request)
        return status, {"Date": format_datetime(self.clock.astimezone(timezone.utc), usegmt=True), **headers}, text

    def _route(self, request: requests.PreparedRequest):
        if request.method == "POST" and re.fullmatch(self.graphql_url, request.url):
            return self._dispatch(request, graphql=True)
        if re.match(self.root + r"(/.*)?(\?.*)?$", request.url):
            return self._dispatch(request)
        # any other repository: GitHub's answer for one that does not exist or cannot be seen
        self.calls.append((request.method, request.url, json.loads(request.body) if request.body else None))
        return self._missing()

    def _etag(self, data: Any) -> str:
        return '"' + hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest() + '"'

    def _json(self, status: int, data: Any, extra: dict | None = None, resource: str = "core"):
        headers = {"Content-Type": "application/json; charset=utf-8", "ETag": self._etag(data),
                   "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999", "X-RateLimit-Used": "1",
                   "X-RateLimit-Reset": str(int(self.timestamp()) + 3600), "X-RateLimit-Resource": resource}
        headers.update(extra or {})
        return status, headers, json.dumps(data)

    def _rest_error(self, status: int, message: str, headers: dict | None = None, docs: str = REST_DOCS,
                    **more: Any):
        """REST's error body: ``basic-error`` of GitHub's API description, with ``status`` as a string."""
        body = {"message": message, **more, "documentation_url": docs, "status": str(status)}
        return status, {"Content-Type": "application/json; charset=utf-8", **(headers or {})}, json.dumps(body)

    def _page(self, request, query: dict, items: list):
        """One page of a list, with GitHub's ``Link`` header pointing at the next one."""
        per_page = int(query.get("per_page", 30))
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        extra = {}
        if page * per_page < len(items):
            parts = urlsplit(request.url)
            following = "&".join(f"{k}={v}" for k, v in {**query, "page": page + 1}.items())
            host = parts.netloc.removesuffix(":443")  # GitHub's links name no port
            extra["Link"] = f'<{parts.scheme}://{host}{parts.path}?{following}>; rel="next"'
        return self._json(200, chunk, extra)

    def _missing(self):
        return self._rest_error(404, "Not Found", docs="https://docs.github.com/rest/issues/issues#get-an-issue")

    def _handle(self, request, path: str, query: dict, body: Any):
        method = request.method
        if method != "GET" and any(request.headers.get(h) for h in ("If-Match", "If-None-Match",
                                                                     "If-Unmodified-Since")):
            return self._rest_error(400, "Bad Request", errors=[CONDITIONAL_REFUSED])
        m = re.fullmatch(r"/issues/(\d+)", path)
        if m:
            return self._issue_request(request, int(m.group(1)), body)
        if path == "/issues":
            return self._issues_request(request, query, body)
        m = re.fullmatch(r"/issues/(\d+)/comments", path)
        if m:
            number = int(m.group(1))
            if number not in self.issues:
                return self._missing()
            if method == "GET":
                comments = self.comments.get(number, [])
                if "since" in query:
                    comments = [c for c in comments if c["updated_at"] >= query["since"]]
                return self._page(request, query, comments)
            if method == "POST":
                return self._json(201, self.add_comment(number, body["body"]))
        m = re.fullmatch(r"/issues/(\d+)/labels", path)
        if m and method == "POST":
            number = int(m.group(1))
            names = body if isinstance(body, list) else body.get("labels", [])
            current = {x["name"] for x in self.issues[number]["labels"]}
            self.issues[number]["labels"] += [self._label(n) for n in names if n not in current]
            self.labels.update(names)
            return self._json(200, self.issues[number]["labels"])
        if path == "/labels" and method == "POST":
            if body["name"] in self.labels:
                return self._rest_error(422, "Validation Failed", errors=[
                    {"resource": "Label", "code": "already_exists", "field": "name"}],
                    docs="https://docs.github.com/rest/issues/labels#create-a-label")
            self.labels.add(body["name"])
            return self._json(201, self._label(body["name"]))
        return self._missing()

    def _issue_request(self, request, number: int, body: Any):
        issue = self.issues.get(number)
        if issue is None:
            return self._missing()
        if request.method == "GET":
            if request.headers.get("If-None-Match") == self._etag(issue):
                return 304, {"ETag": self._etag(issue)}, ""
            return self._json(200, issue)
        if request.method == "PATCH":
            for key in ("title", "body", "state"):
                if key in body:
                    issue[key] = body[key]
            if "body" in body:
                self._record(number, body["body"], self.viewer, self.viewer_type)  # GitHub's "edited" history
            if "labels" in body:
                names = [x if isinstance(x, str) else x["name"] for x in body["labels"]]
                self.labels.update(names)
                issue["labels"] = [self._label(n) for n in names]
            issue["updated_at"] = self.now()
            return self._json(200, issue)
        return self._missing()

    def _issues_request(self, request, query: dict, body: Any):
        if request.method == "GET":
            wanted = set(filter(None, query.get("labels", "").split(",")))
            state = query.get("state", "open")
            found = [i for i in self.issues.values() if self._visible(i)
                     and (state == "all" or i["state"] == state) and wanted <= {x["name"] for x in i["labels"]}]
            key = "updated_at" if query.get("sort") == "updated" else "created_at"  # GitHub's default: created
            found.sort(key=lambda i: (i[key], i["number"]), reverse=query.get("direction", "desc") == "desc")
            return self._page(request, query, found)
        if request.method == "POST":
            number = max(self.issues, default=0) + 1
            labels = [] if self.drop_labels_on_create else body.get("labels", [])
            issue = self.add_issue(number, body.get("body", ""), body["title"], labels=labels,
                                   author=self.viewer_login(),
                                   association=self.viewer_association)
            self._visible_from[number] = len(self.calls) + self.lag
            return self._json(201, issue)
        return self._missing()


def _operation(query: str) -> str:
    named = re.search(r"^\s*(?:query|mutation)\s+(\w+)", query, re.MULTILINE)
    return named.group(1) if named else ""


def _aimed_at(fault: Fault, info: Any) -> bool:
    """Whether a typed GraphQL fault fails this field: the one it names (by name or alias), else any
    root field of the operation."""
    if fault.field is None:
        return info.path.prev is None
    return fault.field in (info.field_name, info.path.key)


def _error_json(error: GraphQLError) -> dict[str, Any]:
    """One entry of a GraphQL answer's ``errors`` as GitHub writes it: type, path, locations, message.
    An exception of the fake itself (not an error GitHub reports) is raised, not answered."""
    original = error.original_error
    if original is not None and not isinstance(original, GraphQLTypedError):
        raise original
    out: dict[str, Any] = {}
    if isinstance(original, GraphQLTypedError) and original.type:  # GitHub's generic errors have no type
        out["type"] = original.type
    if error.path:
        out["path"] = list(error.path)
    if error.locations:
        out["locations"] = [{"line": at.line, "column": at.column} for at in error.locations]
    out["message"] = error.message
    return out


_SEARCH_TERM = re.compile(r'(\w+):"([^"]*)"|(\w+):(\S+)|"([^"]*)"|(\S+)')
_SEARCH_QUALIFIERS = {"repo", "is", "label", "in", "sort"}


def _search_terms(query: str) -> dict[str, list[str]]:
    """A search string as its terms: qualifiers by name ("repo", "is", …), phrases and bare words under ""."""
    terms: dict[str, list[str]] = {}
    for quoted_key, quoted, key, value, phrase, word in _SEARCH_TERM.findall(query):
        name = quoted_key or key
        if name and name not in _SEARCH_QUALIFIERS:
            raise GraphQLTypedError(f"the fake GitHub does not model the search qualifier {name}:", "INTERNAL")
        terms.setdefault(name, []).append(quoted if quoted_key else value if key else phrase or word)
    return terms


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def _search_hit(seen: dict, terms: dict[str, list[str]], match: str) -> bool:
    """Whether an issue as the index holds it answers the terms."""
    for value in terms.get("is", []):
        if value in ("issue", "pr") and seen["pull"] != (value == "pr"):
            return False
        if value in ("open", "closed") and seen["state"] != value:
            return False
    if not {v.lower() for v in terms.get("label", [])} <= seen["labels"]:
        return False
    if any(v.lower() != seen["repo"].lower() for v in terms.get("repo", [])):
        return False
    where = {w for v in terms.get("in", ["title,body"]) for w in v.split(",")}
    text = _words(" ".join(seen[w] for w in ("title", "body") if w in where))
    for phrase in terms.get("", []):
        wanted = _words(phrase)
        if match == "words" or len(wanted) < 2:
            if not set(wanted) <= set(text):
                return False
        elif not any(text[i: i + len(wanted)] == wanted for i in range(len(text) - len(wanted) + 1)):
            return False
    return True


def _schema():
    from github_schema import github_schema

    return github_schema()
