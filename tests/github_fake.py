"""A small stateful GitHub behind ``responses``: issues, comments and labels of one repository.

Payloads start from GitHub's own examples in ../shared/github-api/openapi-subset.json (a minimal
built-in copy when that folder is absent). Every request is recorded, and every recorded request can be
checked against GitHub's API description with ``check_request.py``. Faults (5xx, rate limits, dropped
connections, answers lost after the write happened) and concurrent edits are injected per request.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
import responses
from github_schema import problems as schema_problems
from graphql import graphql_sync

API_DIR = Path(__file__).resolve().parents[2] / "shared" / "github-api"
SPEC_FILE = API_DIR / "openapi-subset.json"

_MINIMAL_ISSUE = {
    "id": 1, "node_id": "I_1", "url": "", "repository_url": "", "labels_url": "", "comments_url": "",
    "events_url": "", "html_url": "", "number": 1, "state": "open", "title": "", "body": "",
    "user": {"login": "octocat", "id": 1, "type": "User"}, "labels": [], "assignee": None, "assignees": [],
    "milestone": None, "locked": False, "comments": 0, "closed_at": None,
    "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z", "author_association": "OWNER",
}
_MINIMAL_COMMENT = {
    "id": 1, "node_id": "IC_1", "url": "", "html_url": "", "body": "", "user": {"login": "octocat", "id": 1},
    "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z", "issue_url": "",
    "author_association": "OWNER",
}


def _examples() -> tuple[dict, dict, dict]:
    if not SPEC_FILE.is_file():
        return copy.deepcopy(_MINIMAL_ISSUE), copy.deepcopy(_MINIMAL_COMMENT), {"name": "", "color": "ffffff"}
    spec = json.loads(SPEC_FILE.read_text())
    ops = {o["operationId"]: o for o in spec["operations"]}

    def first(op: str) -> Any:
        return next(iter(ops[op]["success"]["examples"].values()))["value"]

    issue = first("issues/get")
    issue.pop("pull_request", None)  # the example is an issue that links a PR; a checkpoint is a plain issue
    comment = first("issues/get-comment") if "issues/get-comment" in ops else first("issues/create-comment")
    label = first("issues/create-label")
    return issue, comment, label


def checker() -> Callable[[str, str, Any], list[str]] | None:
    if not (API_DIR / "check_request.py").is_file():
        return None
    if str(API_DIR) not in sys.path:
        sys.path.insert(0, str(API_DIR))
    from check_request import check_request

    return check_request


@dataclass
class Fault:
    method: str
    path: re.Pattern
    status: int | None = 500  # None: the connection drops (requests.ConnectionError)
    times: int = 1
    after: bool = False  # do the work, then lose the answer
    headers: dict | None = None
    message: str = "Server Error"
    exception: type[Exception] | None = None
    payload: str | None = None  # the answer's body, instead of GitHub's error message


class FakeGitHub:
    def __init__(self, mock: responses.RequestsMock | None, repo: str = "octo/hello",
                 base: str = "https://api.github.com", web: str = "https://github.com") -> None:
        self.mock = mock
        self.repo = repo
        self.base = base.rstrip("/")
        self.web = web
        self.issues: dict[int, dict] = {}
        self.history: dict[int, list[str]] = {}  # every body an issue had, as GitHub's edit history keeps it
        # who saved each of those bodies, and when: (login, typename, time, deleted)
        self.editors: dict[int, list[dict[str, Any]]] = {}
        self.viewer = "octocat"  # whose token the requests carry: the editor of what they write
        self.viewer_type = "User"
        self.comments: dict[int, list[dict]] = {}
        self.labels: set[str] = {"bug"}
        self.calls: list[tuple[str, str, Any]] = []
        self.faults: list[Fault] = []
        self.before: list[tuple[str, re.Pattern, Callable[[], None], list[int]]] = []
        self.drop_labels_on_create = False
        self.issues_enabled = True  # a repository may have its issues turned off (Settings › Features)
        self.clock = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
        self._issue_tpl, self._comment_tpl, self._label_tpl = _examples()
        self._next_comment = 100
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
                                                            "closeIssue": self._gql_close_issue}
        self.graphql_problems: list[str] = []  # documents GitHub's schema refused
        if mock is not None:  # else something else (benchmarks' HTTP stub) calls route() itself
            mock.add_callback("POST", re.compile(self.graphql_url + "$"), callback=self.route)
            for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
                mock.add_callback(method, re.compile(rf"{scheme}://{host}{port}{prefix}/repos/.*"),
                                  callback=self.route)

    # ------------------------------------------------------------------------------ set up

    def now(self) -> str:
        self.clock += timedelta(seconds=1)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_issue(self, number: int, body: str, title: str = "Checkpoint", labels=("ghstate",), state="open",
                  pull_request: bool = False) -> dict:
        issue = copy.deepcopy(self._issue_tpl)
        api = f"{self.base}/repos/{self.repo}/issues/{number}"
        issue.update(number=number, id=1000 + number, body=body, title=title, state=state,
                     url=api, html_url=f"{self.web}/{self.repo}/issues/{number}", comments_url=f"{api}/comments",
                     labels=[self._label(n) for n in labels], comments=0, created_at=self.now(),
                     updated_at=self.now(), repository_url=f"{self.base}/repos/{self.repo}")
        if pull_request:
            issue["pull_request"] = {"url": f"{self.base}/repos/{self.repo}/pulls/{number}"}
            issue["html_url"] = f"{self.web}/{self.repo}/pull/{number}"
        self.labels.update(labels)
        self.issues[number] = issue
        self._record(number, body, issue["user"]["login"], issue["user"].get("type") or "User")
        self.comments.setdefault(number, [])
        return issue

    def _record(self, number: int, body: str, login: str | None, typename: str = "User") -> None:
        """GitHub's edit history of a body: every version, with who saved it and when."""
        self.history.setdefault(number, []).append(body)
        self.editors.setdefault(number, []).append({"login": login, "typename": typename,
                                                    "at": self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                                    "deleted": False})

    def add_comment(self, number: int, body: str, login: str = "octocat", association: str = "OWNER") -> dict:
        comment = copy.deepcopy(self._comment_tpl)
        self._next_comment += 1
        cid = self._next_comment
        comment.update(id=cid, body=body, created_at=self.now(), updated_at=self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"),
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

    def fail(self, method: str, path: str, status: int | None = 500, **kwargs: Any) -> None:
        """Fail the requests whose method is ``method`` ("*": any) and whose path matches ``path``: a REST
        path after the repository ("/issues/7"), or "/graphql NAME" for a GraphQL operation."""
        self.faults.append(Fault(method, re.compile(path), status, **kwargs))

    def fail_op(self, operation: str, status: int | None = 500, **kwargs: Any) -> None:
        """Fail the GraphQL operation ``operation`` ("Checkpoint", "UpdateCheckpoint", …)."""
        self.fail("POST", rf"^/graphql {operation}$", status, **kwargs)

    def on_op(self, operation: str, action: Callable[[], None], skip: int = 0) -> None:
        """Run ``action`` once, just before the GraphQL operation ``operation`` is answered."""
        self.on("POST", rf"^/graphql {operation}$", action, skip)

    def on(self, method: str, path: str, action: Callable[[], None], skip: int = 0) -> None:
        """Run ``action`` once, just before the matching request after ``skip`` others is answered."""
        self.before.append((method, re.compile(path), action, [skip]))

    def _label(self, name: str) -> dict:
        label = copy.deepcopy(self._label_tpl)
        label.update(name=name, url=f"{self.base}/repos/{self.repo}/labels/{name}")
        return label

    # ------------------------------------------------------------------------------ checks

    def count(self, method: str | None = None, path: str | None = None) -> int:
        return sum(1 for m, u, _ in self.calls if (method is None or m == method)
                   and (path is None or re.search(path, urlsplit(u).path)))

    def operations(self) -> list[str]:
        """The GraphQL operations requested, by name, in order."""
        out = []
        for _, url, body in self.calls:
            if re.fullmatch(self.graphql_url, url):
                named = re.search(r"^\s*(?:query|mutation)\s+(\w+)", (body or {}).get("query") or "", re.MULTILINE)
                out.append(named.group(1) if named else "")
        return out

    def count_op(self, operation: str) -> int:
        return self.operations().count(operation)

    def problems(self) -> list[str]:
        """What GitHub's own descriptions say is wrong with the requests made: REST calls against
        ../shared/github-api/, GraphQL documents against GitHub's published schema."""
        out = list(self.graphql_problems)
        check = checker()
        if check is None:
            return out
        for method, url, body in self.calls:
            if not re.fullmatch(self.graphql_url, url):
                out.extend(f"{method} {url}: {p}" for p in check(method, url, body))
        return out

    # ------------------------------------------------------------------------------ GraphQL

    def _graphql(self, body: Any):
        """Answer a GraphQL request as GitHub does: the document is judged by GitHub's schema, then
        executed against it over this fake's state (errors, when any, beside the data, status 200)."""
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return 400, {}, json.dumps({"message": "Problems parsing JSON"})
        found = schema_problems(body["query"])
        if found:
            self.graphql_problems.extend(f"GraphQL: {p}" for p in found)
            return self._json(200, {"errors": [{"message": p} for p in found]})
        result = graphql_sync(_schema(), body["query"], root_value=self.graphql_root,
                              variable_values=body.get("variables") or {})
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [{"message": e.message, "path": e.path,
                                 **({"type": e.extensions["type"]} if e.extensions and "type" in e.extensions
                                    else {})} for e in result.errors]
        return self._json(200, answer)

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
        return {"__typename": "Repository", "nameWithOwner": self.repo, "id": f"R_{self.repo}",
                "hasIssuesEnabled": self.issues_enabled,
                "issue": lambda info, number, **_: issue(number),
                "issueOrPullRequest": lambda info, number, **_: issue_or_pr(number),
                "issues": issues, "labels": self._gql_labels}

    def _gql_labels(self, info: Any, first: int | None = None, query: str | None = None, **_: Any) -> dict:
        names = sorted(n for n in self.labels if not query or query.lower() in n.lower())[: first or 100]
        return {"nodes": [{"id": f"LA_{n}", "name": n} for n in names], "totalCount": len(names)}

    def _gql_issues(self, info: Any, labels: list[str] | None = None, states: list[str] | None = None,
                    first: int | None = None, after: str | None = None, orderBy: dict | None = None,
                    **_: Any) -> dict:
        found = [i for i in self.issues.values() if "pull_request" not in i
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
            return {"__typename": "PullRequest", "id": f"PR_{number}", "number": number, "url": issue["html_url"]}
        if issue is None:
            raise GraphQLNotFound(f"Could not resolve to an issue or pull request with the number of {number}.")
        return self._gql_issue(number)

    def _gql_issue(self, number: int) -> dict | None:
        issue = self.issues.get(number)
        if issue is None or "pull_request" in issue:
            raise GraphQLNotFound(f"Could not resolve to an Issue with the number of {number}.")
        user = issue.get("user") or {}
        author = {"__typename": "Bot" if user.get("type") == "Bot" else "User", "login": user.get("login")}
        return {"__typename": "Issue", "id": issue.get("node_id") or f"I_{number}", "number": number,
                "title": issue["title"], "body": issue["body"] or "", "url": issue["html_url"],
                "state": issue["state"].upper(), "updatedAt": issue["updated_at"],
                "createdAt": issue["created_at"], "author": author,
                "authorAssociation": issue.get("author_association") or "NONE",
                "labels": lambda info, **_: {"nodes": [{"id": f"LA_{x['name']}", "name": x["name"]}
                                                       for x in issue["labels"]],
                                             "totalCount": len(issue["labels"])},
                "comments": lambda info, first=None, last=None, **_: self._gql_comments(number, first, last),
                "includesCreatedEdit": len(self.history.get(number, [])) > 1,
                "userContentEdits": lambda info, first=None, after=None, **_: self._gql_edits(number, first, after)}

    def _gql_comments(self, number: int, first: int | None, last: int | None) -> dict:
        comments = self.comments.get(number, [])
        chosen = comments[:first] if first is not None else comments[len(comments) - last:] if last else []
        return {"totalCount": len(comments), "nodes": [{
            "author": {"__typename": "Bot" if c["user"]["login"].endswith("[bot]") else "User",
                       "login": c["user"]["login"].removesuffix("[bot]")},
            "authorAssociation": c.get("author_association") or "NONE", "body": c["body"],
            "createdAt": c["created_at"], "url": c["html_url"],
            "lastEditedAt": None if c["updated_at"] == c["created_at"] else c["updated_at"]} for c in chosen]}

    def _gql_edits(self, number: int, first: int | None, after: str | None) -> dict:
        """GitHub's edit history: nothing until the body is first edited; then every version, the
        original included, newest first, each in full (``diff``), with who saved it."""
        bodies = self.history.get(number, [])
        editors = self.editors.get(number, [])
        versions = list(zip(bodies, editors, strict=True))[::-1] if len(bodies) > 1 else []
        start = int(after) if after else 0
        chunk = versions[start: start + (first or 100)]
        nodes = [{"diff": None if e["deleted"] else b, "editedAt": e["at"],
                  "deletedAt": e["at"] if e["deleted"] else None,
                  "editor": {"__typename": e["typename"], "login": e["login"]} if e["login"] else None}
                 for b, e in chunk]
        return {"totalCount": len(versions), "nodes": nodes,
                "pageInfo": {"hasNextPage": start + len(chunk) < len(versions),
                             "endCursor": str(start + len(chunk)) if chunk else None,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    def _gql_close_issue(self, info: Any, input: dict, **_: Any) -> dict:
        """The ``closeIssue`` mutation: closed, with its reason (GitHub's default: COMPLETED)."""
        number = next((n for n, i in self.issues.items() if (i.get("node_id") or f"I_{n}") == input["issueId"]), None)
        if number is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['issueId']}'.")
        issue = self.issues[number]
        issue.update(state="closed", state_reason=(input.get("stateReason") or "COMPLETED").lower(),
                     closed_at=self.now(), updated_at=self.now())
        return {"issue": {**self._gql_issue(number), "stateReason": input.get("stateReason") or "COMPLETED"},
                "clientMutationId": input.get("clientMutationId")}

    def _gql_update_issue(self, info: Any, input: dict, **_: Any) -> dict:
        """The ``updateIssue`` mutation: the same change as a PATCH of the issue."""
        number = next((n for n, i in self.issues.items() if (i.get("node_id") or f"I_{n}") == input["id"]), None)
        if number is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['id']}'.")
        issue = self.issues[number]
        for key in ("title", "body"):
            if input.get(key) is not None:
                issue[key] = input[key]
        if input.get("state"):
            issue["state"] = input["state"].lower()
        if input.get("labelIds") is not None:
            names = [x.removeprefix("LA_") for x in input["labelIds"]]
            unknown = [n for n in names if n not in self.labels]
            if unknown:
                raise GraphQLNotFound(f"Could not resolve to a node with the global id of 'LA_{unknown[0]}'.")
            issue["labels"] = [self._label(n) for n in names]
        issue["updated_at"] = self.now()
        if input.get("body") is not None:
            self._record(number, input["body"], self.viewer, self.viewer_type)
        return {"issue": self._gql_issue(number), "clientMutationId": input.get("clientMutationId")}


    # ------------------------------------------------------------------------------ serving

    def _dispatch(self, request: requests.PreparedRequest, graphql: bool = False):
        body = json.loads(request.body) if request.body else None
        self.calls.append((request.method, request.url, body))
        parts = urlsplit(request.url)
        if graphql:  # "/graphql NAME": faults and hooks can aim at one operation (``Checkpoint``, …)
            named = re.search(r"^\s*(?:query|mutation)\s+(\w+)", (body or {}).get("query") or "", re.MULTILINE)
            path = "/graphql " + (named.group(1) if named else "")
        else:
            path = re.sub(r"^.*/repos/" + re.escape(self.repo), "", parts.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        for i, (method, pattern, action, skip) in enumerate(self.before):
            if method in ("*", request.method) and pattern.search(path):
                if skip[0] > 0:
                    skip[0] -= 1
                    break
                del self.before[i]
                action()
                break
        fault = next((f for f in self.faults if f.method in ("*", request.method) and f.path.search(path)), None)
        if fault is not None:
            fault.times -= 1
            if fault.times <= 0:
                self.faults.remove(fault)
            if fault.after:
                self._graphql(body) if graphql else self._handle(request, path, query, body)
            if fault.status is None:
                raise (fault.exception or requests.exceptions.ConnectionError)("Connection aborted.")
            body = fault.payload if fault.payload is not None else json.dumps({"message": fault.message})
            return fault.status, dict(fault.headers or {}), body
        if graphql:
            return self._graphql(body)
        return self._handle(request, path, query, body)

    def route(self, request: requests.PreparedRequest):
        if request.method == "POST" and re.fullmatch(self.graphql_url, request.url):
            return self._dispatch(request, graphql=True)
        if re.match(self.root + r"(/.*)?(\?.*)?$", request.url):
            return self._dispatch(request)
        # any other repository: GitHub's answer for one that does not exist or cannot be seen
        self.calls.append((request.method, request.url, json.loads(request.body) if request.body else None))
        return self._missing()

    def _etag(self, data: Any) -> str:
        return '"' + hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest() + '"'

    def _json(self, status: int, data: Any, extra: dict | None = None):
        headers = {"Content-Type": "application/json; charset=utf-8", "ETag": self._etag(data),
                   "X-RateLimit-Remaining": "4999", "X-RateLimit-Limit": "5000"}
        headers.update(extra or {})
        return status, headers, json.dumps(data)

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
        return 404, {}, json.dumps({"message": "Not Found", "documentation_url": "https://docs.github.com"})

    def _handle(self, request, path: str, query: dict, body: Any):
        method = request.method
        m = re.fullmatch(r"/issues/(\d+)", path)
        if m:
            number = int(m.group(1))
            issue = self.issues.get(number)
            if issue is None:
                return self._missing()
            if method == "GET":
                if request.headers.get("If-None-Match") == self._etag(issue):
                    return 304, {"ETag": self._etag(issue)}, ""
                return self._json(200, issue)
            if method == "PATCH":
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
        if path == "/issues":
            if method == "GET":
                wanted = set(filter(None, query.get("labels", "").split(",")))
                state = query.get("state", "open")
                found = [i for i in self.issues.values()
                         if (state == "all" or i["state"] == state) and wanted <= {x["name"] for x in i["labels"]}]
                found.sort(key=lambda i: i["updated_at"], reverse=True)
                return self._page(request, query, found)
            if method == "POST":
                number = max(self.issues, default=0) + 1
                labels = [] if self.drop_labels_on_create else body.get("labels", [])
                issue = self.add_issue(number, body.get("body", ""), body["title"], labels=labels)
                return self._json(201, issue)
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
                return 422, {}, json.dumps({"message": "Validation Failed",
                                            "errors": [{"resource": "Label", "code": "already_exists"}]})
            self.labels.add(body["name"])
            return self._json(201, self._label(body["name"]))
        return self._missing()


class GraphQLNotFound(Exception):
    """GitHub's NOT_FOUND error of a GraphQL field (PyGithub turns a lone one into a 404)."""

    extensions = {"type": "NOT_FOUND"}


def _schema():
    from github_schema import github_schema

    return github_schema()
