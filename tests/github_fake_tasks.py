"""Sub-issues, issue dependencies, closing an issue and Git refs behind the fake GitHub, executed against
GitHub's schema as the rest of its GraphQL side is.

``FakeTasks(fake).install()`` (done by every ``FakeGitHub``) adds to each Issue node ``parent``,
``subIssues``, ``subIssuesSummary``, ``blockedBy``, ``blocking``, ``issueDependenciesSummary``,
``repository``, ``closed`` and ``stateReason``; to the repository ``ref(qualifiedName:)`` and
``refs(refPrefix:)``; the mutations ``createIssue`` (``parentIssueId``), ``addSubIssue``,
``addBlockedBy``, ``closeIssue``, ``createRef`` and ``updateRefs``; and REST's ``POST git/trees``,
``POST git/commits`` and ``GET git/commits/{sha}`` (Git objects with real SHA-1s). ``updateRefs`` is a
compare-and-swap: every update's ``beforeOid`` is compared with the ref as it is, and if one is refused
no ref changes.

What GitHub's documentation leaves open is a ``Variant`` (tests of ghstate run under each): how a refused
compare-and-swap or a second create of a ref is reported, whether refs outside ``refs/heads/`` and
``refs/tags/`` are listed by ``refs(refPrefix:)``, whether ``blockedBy`` lists closed blockers, whether the
mutations after a failed one in a document run, and where a new sub-issue goes among its siblings. Faults:
``deny_refs`` (a token without ``contents: write``: ref writes FORBIDDEN, REST's Git objects 403).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from github_fake import NOT_ACCESSIBLE, GraphQLNotFound, GraphQLTypedError, node_id

ZERO = "0" * 40
MAX_SUB_ISSUES = 100  # https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues
MAX_DEPENDENCIES = 50  # issue 29's reading of GitHub's "Creating issue dependencies" page


@dataclass(frozen=True)
class Variant:
    """GitHub behaviour its documentation does not settle, one choice each (the defaults are what the
    documentation and the reports we know of suggest)."""

    name: str = "default"
    typed_ref_errors: bool = False  # a refused updateRefs/createRef: a generic error (community #213655) or typed
    lists_custom_refs: bool = True  # refs(refPrefix: "refs/ghstate/…") lists refs outside heads/ and tags/
    lists_closed_blockers: bool = True  # blockedBy lists blockers that are closed (the summary counts apart)
    stops_after_error: bool = False  # a mutation after a failed one in the same document does not run
    newest_sub_issue_first: bool = False  # a new sub-issue goes first among its siblings, not last


VARIANTS = (
    Variant(),
    Variant("typed-ref-errors", typed_ref_errors=True),
    Variant("custom-refs-unlisted", lists_custom_refs=False),
    Variant("closed-blockers-unlisted", lists_closed_blockers=False),
    Variant("stops-after-error", stops_after_error=True),
    Variant("newest-sub-issue-first", newest_sub_issue_first=True),
)


class FakeTasks:
    def __init__(self, fake: Any, variant: Variant | None = None) -> None:
        self.fake = fake
        self.variant = variant or Variant()
        self.parent: dict[int, int] = {}  # child -> parent
        self.children: dict[int, list[int]] = {}  # parent -> children, in GitHub's order
        self.blocked_by: dict[int, list[int]] = {}  # issue -> the issues it waits for, in the order added
        self.refs: dict[str, str] = {}  # refs/… -> oid
        self.objects: dict[str, dict[str, Any]] = {}  # sha -> {"type": "tree"|"commit", …}
        self.deny_refs = False
        self.ref_writes: list[dict[str, Any]] = []  # every updateRefs/createRef input, as executed
        self.pulls: list[dict[str, Any]] = []  # pull requests: number, head (its branch), state, cross (from a fork)
        # issues of other repositories, as sub-issues or blockers of this one's ((owner/name, number) -> its state):
        # GitHub links issues across repositories (a sub-issue or a blocker may be anyone's)
        self.foreign: dict[tuple[str, int], str] = {}
        self._failed = False  # a mutation of the current document failed

    # ------------------------------------------------------------------------------ set up

    def install(self) -> FakeTasks:
        fake = self.fake
        original_issue, original_handle, original_graphql = fake._gql_issue, fake._handle, fake._graphql
        fake._gql_issue = lambda number: {**original_issue(number), **self._issue_fields(number)}
        fake._handle = lambda request, path, query, body: (self._rest(request, path, body)
                                                           or original_handle(request, path, query, body))
        fake._graphql = lambda body, failing=None: (self._start(), original_graphql(body, failing))[1]
        root = fake.graphql_root
        repository = root["repository"]
        root["repository"] = lambda info, owner, name, **kw: {**repository(info, owner=owner, name=name, **kw),
                                                              **self._repository_fields()}
        update_issue = root["updateIssue"]
        root.update(createIssue=self._create_issue, addSubIssue=self._add_sub_issue,
                    addBlockedBy=self._add_blocked_by, closeIssue=self._close_issue, createRef=self._create_ref,
                    updateRefs=self._update_refs,
                    updateIssue=lambda info, **kw: self._mutation(lambda: update_issue(info, **kw)))
        return self

    def use(self, variant: Variant) -> None:
        self.variant = variant

    def link(self, parent: int, child: int) -> None:
        """``child`` becomes a sub-issue of ``parent`` (as a person adds one on github.com)."""
        self.parent[child] = parent
        siblings = self.children.setdefault(parent, [])
        if siblings:
            self.fake.reached.add("newest_sub_issue_first")
        siblings.insert(0, child) if self.variant.newest_sub_issue_first else siblings.append(child)

    def move(self, child: int, parent: int | None) -> None:
        """A person moves ``child`` to ``parent`` on github.com (removeSubIssue, then addSubIssue; None: only
        removed, it is no sub-issue any more)."""
        old = self.parent.pop(child, None)
        if old is not None:
            self.children[old].remove(child)
        if parent is not None:
            self.link(parent, child)

    def block(self, issue: int, blocker: Any) -> None:
        """``issue`` waits for ``blocker``: a number of this repository, or (owner/name, number) of another."""
        self.blocked_by.setdefault(issue, []).append(blocker)

    def add_foreign(self, repo: str, number: int, state: str = "open") -> tuple[str, int]:
        """An issue of another repository, to link as a sub-issue (``link``) or a blocker (``block``)."""
        self.foreign[(repo, number)] = state
        return (repo, number)

    def _node(self, number: Any) -> dict[str, Any]:
        """An issue as GraphQL's ``Issue``: this repository's, or another's (``foreign``)."""
        if not isinstance(number, tuple):
            return self.fake._gql_issue(number)
        repo, n = number
        empty = {"totalCount": 0, "nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None,
                                                            "hasPreviousPage": False, "startCursor": None}}
        return {"__typename": "Issue", "id": f"I_{repo.replace('/', '_')}_{n}", "number": n, "title": f"{repo}#{n}",
                "body": "", "url": f"{self.fake.web}/{repo}/issues/{n}", "state": self.foreign[number].upper(),
                "repository": {"__typename": "Repository", "id": f"R_{repo.replace('/', '_')}", "nameWithOwner": repo},
                "blockedBy": empty, "blocking": empty, "parent": None, "labels": {"nodes": [], "totalCount": 0}}

    def parent_field(self, number: int) -> dict[str, Any]:
        """An issue's ``parent``, for nodes built elsewhere (the project items of ``github_fake_projects``)."""
        parent = self.parent.get(number)
        return {"parent": (lambda info, **_: self.fake._gql_issue(parent)) if parent else None}

    def close(self, number: int, reason: str = "completed") -> None:
        self.fake.issues[number].update(state="closed", state_reason=reason, closed_at=self.fake.now(),
                                        updated_at=self.fake.now())

    def add_pull(self, number: int, head: str, state: str = "OPEN", cross: bool = False) -> dict[str, Any]:
        """A pull request from ``head`` (its number taken among the issues', as GitHub numbers both)."""
        self.fake.add_issue(number, "", title=f"PR from {head}", labels=(), pull_request=True)
        pull = {"number": number, "head": head, "state": state, "cross": cross,
                "url": f"{self.fake.web}/{self.fake.repo}/pull/{number}"}
        self.pulls.append(pull)
        return pull

    def _pull_requests(self, head: str | None, first: int | None, order: dict | None = None) -> dict[str, Any]:
        found = [p for p in self.pulls if head is None or p["head"] == head]
        if (order or {}).get("direction") == "DESC":
            found.reverse()  # newest first: added in the order they were created
        nodes = [{"number": p["number"], "url": p["url"], "state": p["state"], "isCrossRepository": p["cross"]}
                 for p in found[: first or 100]]
        return {"totalCount": len(found), "nodes": nodes,
                "pageInfo": {"hasNextPage": len(found) > len(nodes), "endCursor": None, "hasPreviousPage": False,
                             "startCursor": None}}

    def add_tree(self, files: dict[str, str]) -> str:
        """A tree already in the repository (as one a first write put there): its id."""
        entries = sorted((path, "100644", text) for path, text in files.items())
        sha = _tree_sha(entries)
        self.objects[sha] = {"type": "tree", "entries": entries}
        return sha

    def index(self, number: int, branch: str, flag: bool = True) -> str:
        """``branch``'s entry in ghstate's branch index names checkpoint ``number`` (as ghstate writes it when
        it creates one); ``flag``: refs/ghstate/indexed set too, as ghstate set it before issue 44 (no longer
        read: a repository that ran that version). The commit."""
        from ghstate.core.chain import TREE_FILES
        from ghstate.github import branches

        tree = self.add_tree(TREE_FILES)
        when = self.fake.now()
        message = branches.message(number, branch)
        sha = _git_sha("commit", json.dumps([message, tree, [], when]))
        self.objects[sha] = {"type": "commit", "message": message, "tree": tree, "parents": [], "at": when}
        self.refs[branches.ref_name(branch)] = sha
        if flag:
            self.refs.setdefault(branches.INDEXED, sha)
        return sha

    def branch_index(self) -> dict[str, int]:
        """The branch index as ghstate wrote it: ref name (without its prefix) -> the checkpoint it names."""
        from ghstate.github import branches

        return {name.removeprefix(branches.PREFIX): branches.number_of(self.objects[oid]["message"])
                for name, oid in self.refs.items() if name.startswith(branches.PREFIX)}

    def chain(self, number: int) -> list[dict[str, Any]]:
        """Checkpoint ``number``'s chain (``refs/ghstate/checkpoints/N``), oldest first: each commit's record
        (its message's JSON) with its ``oid``."""
        out, at = [], self.refs.get(f"refs/ghstate/checkpoints/{number}")
        while at:
            commit = self.objects[at]
            message = commit["message"]
            out.append({**json.loads(message[message.index("\n{") + 1:]), "oid": at})
            at = (commit.get("parents") or [None])[0]
        return out[::-1]

    def claim_of(self, child: int) -> dict[str, Any] | None:
        """The record in the commit ``refs/ghstate/claims/CHILD`` points at (None: no such ref)."""
        oid = self.refs.get(f"refs/ghstate/claims/{child}")
        if oid is None:
            return None
        message = self.objects[oid]["message"]
        return json.loads([line for line in message.splitlines() if line.startswith("{")][-1])

    # ------------------------------------------------------------------------------ reading

    def _issue(self, node: str) -> int:
        number = next((n for n, i in self.fake.issues.items() if i["node_id"] == node and "pull_request" not in i),
                      None)
        if number is None:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{node}'.")
        return number

    def _open(self, number: Any) -> bool:
        if isinstance(number, tuple):
            return self.foreign[number] == "open"
        return self.fake.issues[number]["state"] == "open"

    def _issue_fields(self, number: int) -> dict[str, Any]:
        issue = self.fake.issues[number]
        kids = self.children.get(number, [])
        done = sum(1 for k in kids if not self._open(k))
        blockers = self.blocked_by.get(number, [])
        blocking = [n for n, bs in self.blocked_by.items() if number in bs]
        parent = self.parent.get(number)
        return {
            "closed": issue["state"] == "closed",
            "stateReason": (issue.get("state_reason") or "completed").upper() if issue["state"] == "closed" else None,
            "parent": (lambda info, **_: self.fake._gql_issue(parent)) if parent else None,
            "subIssues": lambda info, first=None, **_: self._connection(kids, first),
            "subIssuesSummary": {"total": len(kids), "completed": done,
                                 "percentCompleted": done * 100 // len(kids) if kids else 0},
            "blockedBy": lambda info, first=None, **_: self._connection(self._blockers(blockers), first),
            "blocking": lambda info, first=None, **_: self._connection(blocking, first),
            "issueDependenciesSummary": {
                "blockedBy": sum(1 for b in blockers if self._open(b)), "totalBlockedBy": len(blockers),
                "blocking": sum(1 for b in blocking if self._open(b)), "totalBlocking": len(blocking)},
            "repository": lambda info, **_: self._repository_node(),
        }

    def _blockers(self, blockers: list[int]) -> list[int]:
        if not all(self._open(b) for b in blockers):
            self.fake.reached.add("lists_closed_blockers")
        return [b for b in blockers if self.variant.lists_closed_blockers or self._open(b)]

    def _connection(self, numbers: list[int], first: int | None) -> dict[str, Any]:
        chosen = numbers[: first or 100]
        return {"totalCount": len(numbers), "nodes": [self._node(n) for n in chosen],
                "pageInfo": {"hasNextPage": len(chosen) < len(numbers), "endCursor": str(len(chosen)),
                             "hasPreviousPage": False, "startCursor": "0"}}

    def _repository_node(self) -> dict[str, Any]:
        return {"__typename": "Repository", "id": self.fake.repo_node_id, "nameWithOwner": self.fake.repo,
                **self._repository_fields()}

    def _repository_fields(self) -> dict[str, Any]:
        return {"ref": lambda info, qualifiedName, **_: self._ref(qualifiedName),
                "refs": lambda info, refPrefix, first=None, orderBy=None, after=None, **_: self._refs(
                    refPrefix, first, orderBy, after),
                "object": lambda info, oid=None, expression=None, **_: self._commit_node(oid or ""),
                "pullRequests": lambda info, headRefName=None, first=None, orderBy=None, **_: self._pull_requests(
                    headRefName, first, orderBy)}

    def _ref(self, name: str) -> dict[str, Any] | None:
        oid = self.refs.get(name)
        if oid is None:
            return None
        prefix, _, short = name.rpartition("/")
        ref_id = node_id("REF", 7, int(hashlib.sha1(name.encode()).hexdigest()[:7], 16))
        return {"id": ref_id, "name": short, "prefix": prefix + "/", "target": self._commit_node(oid)}

    def _commit_node(self, oid: str) -> dict[str, Any] | None:
        """A commit as GraphQL's ``Commit``: its message (whole, and its first line), its tree, and its
        history (the commit and its ancestors, newest first, along first parents)."""
        commit = self.objects.get(oid)
        if commit is None or commit["type"] != "commit":
            return None
        return {"__typename": "Commit", "oid": oid, "message": commit["message"], "committedDate": commit.get("at"),
                "messageHeadline": commit["message"].split("\n", 1)[0],
                "tree": {"__typename": "Tree", "oid": commit["tree"]},
                "history": lambda info, first=None, **_: self._history(oid, first)}

    def _history(self, oid: str, first: int | None) -> dict[str, Any]:
        chain, at = [], oid
        while at and len(chain) < (first or 100):
            chain.append(at)
            parents = self.objects[at].get("parents") or ()
            at = parents[0] if parents else ""
        return {"totalCount": len(chain), "nodes": [self._commit_node(c) for c in chain],
                "pageInfo": {"hasNextPage": bool(at), "endCursor": None, "hasPreviousPage": False, "startCursor": None}}

    def _refs(self, prefix: str, first: int | None, order: dict | None = None,
              after: str | None = None) -> dict[str, Any]:
        listed = prefix.startswith(("refs/heads/", "refs/tags/")) or self.variant.lists_custom_refs
        if not prefix.startswith(("refs/heads/", "refs/tags/")) and any(n.startswith(prefix) for n in self.refs):
            self.fake.reached.add("lists_custom_refs")
        names = sorted(n for n in self.refs if n.startswith(prefix)) if listed else []
        if (order or {}).get("field") == "TAG_COMMIT_DATE":  # by the date of the commit each points at
            names.sort(key=lambda n: self.objects[self.refs[n]].get("at") or "",
                       reverse=(order or {}).get("direction") == "DESC")
        start = int(after) if after else 0
        nodes = [self._ref(n) for n in names[start: start + (first or 100)]]
        more = start + len(nodes) < len(names)
        return {"totalCount": len(names), "nodes": [{**n, "name": n["name"]} for n in nodes if n],
                "pageInfo": {"hasNextPage": more, "endCursor": str(start + len(nodes)) if more else None,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    # ------------------------------------------------------------------------------ mutations

    def _start(self) -> None:
        self._failed = False

    def _mutation(self, fn):
        """Run one mutation; after a failed one in the same document (``stops_after_error``) none runs."""
        if self._failed:
            self.fake.reached.add("stops_after_error")
        if self._failed and self.variant.stops_after_error:
            raise GraphQLTypedError("Not executed: an earlier mutation of this request failed.", "UNPROCESSABLE")
        try:
            return fn()
        except GraphQLTypedError:
            self._failed = True
            raise

    def _create_issue(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            fake = self.fake
            if input["repositoryId"] != fake.repo_node_id:
                raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{input['repositoryId']}'.")
            parent = self._issue(input["parentIssueId"]) if input.get("parentIssueId") else None
            if parent is not None and len(self.children.get(parent, [])) >= MAX_SUB_ISSUES:
                raise GraphQLTypedError(f"Parent cannot have more than {MAX_SUB_ISSUES} sub-issues.", "UNPROCESSABLE")
            by_id = {fake.label_node_id(n): n for n in fake.labels}
            unknown = [x for x in input.get("labelIds") or () if x not in by_id]
            if unknown:
                raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{unknown[0]}'.")
            projects = getattr(fake, "projects", None)
            for project in input.get("projectV2Ids") or ():  # the issue is made an item of each, or not made
                if projects is None or not any(p["id"] == project for p in projects.projects.values()):
                    raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{project}'.")
                projects._by_id(project)  # refused as addProjectV2ItemById would be
            number = max(fake.issues, default=0) + 1
            fake.add_issue(number, input.get("body") or "", input["title"],
                           labels=[by_id[x] for x in input.get("labelIds") or ()], author=fake.viewer_login(),
                           association=fake.viewer_association)
            fake._visible_from[number] = len(fake.calls) + fake.lag
            if parent is not None:
                self.link(parent, number)
            for project in input.get("projectV2Ids") or ():
                fake.projects.add_new_issue(project, number)
            return {"issue": lambda info, **_: fake._gql_issue(number), "clientMutationId": None}
        return self._mutation(run)

    def _add_sub_issue(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            parent, child = self._issue(input["issueId"]), self._issue(input["subIssueId"])
            if child in self.parent and not input.get("replaceParent"):
                raise GraphQLTypedError("Issue may not contain duplicate sub-issues and Sub issue may only have "
                                        "one parent", "UNPROCESSABLE")
            self.link(parent, child)
            return {"issue": lambda info, **_: self.fake._gql_issue(parent),
                    "subIssue": lambda info, **_: self.fake._gql_issue(child)}
        return self._mutation(run)

    def _add_blocked_by(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            issue, blocker = self._issue(input["issueId"]), self._issue(input["blockingIssueId"])
            if blocker in self.blocked_by.get(issue, []) or issue == blocker:
                raise GraphQLTypedError("The dependency already exists or is not allowed.", "UNPROCESSABLE")
            if len(self.blocked_by.get(issue, [])) >= MAX_DEPENDENCIES:
                raise GraphQLTypedError(f"An issue can be blocked by at most {MAX_DEPENDENCIES} issues.",
                                        "UNPROCESSABLE")
            self.block(issue, blocker)
            return {"issue": lambda info, **_: self.fake._gql_issue(issue),
                    "blockingIssue": lambda info, **_: self.fake._gql_issue(blocker)}
        return self._mutation(run)

    def _close_issue(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            number = self._issue(input["issueId"])
            self.close(number, (input.get("stateReason") or "COMPLETED").lower())
            return {"issue": lambda info, **_: self.fake._gql_issue(number)}
        return self._mutation(run)

    def _refused(self, message: str) -> Exception:
        self.fake.reached.add("typed_ref_errors")
        if self.variant.typed_ref_errors:
            return GraphQLTypedError(message, "UNPROCESSABLE")
        return GraphQLTypedError(message, "")  # GitHub's generic error: no type (community discussion #213655)

    def _check_write(self, repository: str) -> None:
        if repository != self.fake.repo_node_id:
            raise GraphQLNotFound(f"Could not resolve to a node with the global id of '{repository}'.")
        if self.deny_refs:
            raise GraphQLTypedError(NOT_ACCESSIBLE, "FORBIDDEN")

    def _create_ref(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            self._check_write(input["repositoryId"])
            self.ref_writes.append(dict(input))
            name = input["name"]
            if name in self.refs:
                raise self._refused(f"Reference already exists: {name}")
            if input["oid"] not in self.objects:
                raise self._refused(f"Object does not exist: {input['oid']}")
            self.refs[name] = input["oid"]
            return {"ref": self._ref(name), "clientMutationId": None}
        return self._mutation(run)

    def _update_refs(self, info: Any, input: dict, **_: Any) -> dict:
        def run() -> dict:
            self._check_write(input["repositoryId"])
            self.ref_writes.append(dict(input))
            for update in input["refUpdates"]:
                problem = self._refuse_update(update)
                if problem:  # one refused: none changes
                    raise self._refused(problem)
            for update in input["refUpdates"]:
                if update["afterOid"] == ZERO:
                    self.refs.pop(update["name"], None)
                else:
                    self.refs[update["name"]] = update["afterOid"]
            return {"clientMutationId": input.get("clientMutationId")}
        return self._mutation(run)

    def _refuse_update(self, update: dict) -> str:
        name, after = update["name"], update["afterOid"]
        now = self.refs.get(name, ZERO)
        before = update.get("beforeOid")
        if not name.startswith("refs/"):
            return f"{name} is not a fully qualified ref name"
        if before is not None and before != now:
            return f"Expected {name} to point to {before}, but it points to {now}."  # the fake's own words
        if after != ZERO and after not in self.objects:
            return f"Object does not exist: {after}"
        if now != ZERO and after != ZERO and not update.get("force") and not self._descends(after, now):
            return f"Update of {name} is not a fast forward."
        return ""

    def _descends(self, sha: str, ancestor: str) -> bool:
        seen, todo = set(), [sha]
        while todo:
            current = todo.pop()
            if current == ancestor:
                return True
            if current not in seen:
                seen.add(current)
                todo.extend(self.objects.get(current, {}).get("parents", ()))
        return False

    # ------------------------------------------------------------------------------ REST: Git objects

    def _rest(self, request: Any, path: str, body: Any):
        fake = self.fake
        method = request.method
        if path == "/git/trees" and method == "POST":
            if self.deny_refs:
                return fake._rest_error(403, NOT_ACCESSIBLE, {"X-Accepted-GitHub-Permissions": "contents=write"})
            entries = sorted((e["path"], e.get("mode", "100644"), e.get("content", "")) for e in body["tree"])
            sha = _tree_sha(entries)
            self.objects[sha] = {"type": "tree", "entries": entries}
            return fake._json(201, {"sha": sha, "url": f"{fake.base}/repos/{fake.repo}/git/trees/{sha}",
                                    "truncated": False, "tree": [
                                        {"path": p, "mode": m, "type": "blob", "sha": _git_sha("blob", c),
                                         "size": len(c.encode()), "url": ""} for p, m, c in entries]})
        if path == "/git/commits" and method == "POST":
            if self.deny_refs:
                return fake._rest_error(403, NOT_ACCESSIBLE, {"X-Accepted-GitHub-Permissions": "contents=write"})
            if body["tree"] not in self.objects or any(p not in self.objects for p in body.get("parents", ())):
                return fake._rest_error(422, "Tree SHA does not exist")
            when = fake.now()
            sha = _git_sha("commit", json.dumps([body["message"], body["tree"], body.get("parents", []), when]))
            self.objects[sha] = {"type": "commit", "message": body["message"], "tree": body["tree"],
                                 "parents": list(body.get("parents", [])), "at": when}
            return fake._json(201, self._commit_json(sha))
        m = re.fullmatch(r"/git/commits/([0-9a-f]{40})", path)
        if m and method == "GET":
            if m.group(1) not in self.objects:
                return fake._missing()
            return fake._json(200, self._commit_json(m.group(1)))
        return None

    def _commit_json(self, sha: str) -> dict[str, Any]:
        fake = self.fake
        commit = self.objects[sha]
        person = {"name": "octocat", "email": "octocat@github.com", "date": commit["at"]}
        return {"sha": sha, "node_id": node_id("C", 7, int(sha[:7], 16)),
                "url": f"{fake.base}/repos/{fake.repo}/git/commits/{sha}",
                "html_url": f"{fake.web}/{fake.repo}/commit/{sha}", "author": person, "committer": person,
                "message": commit["message"], "tree": {"sha": commit["tree"], "url": ""},
                "parents": [{"sha": p, "url": "", "html_url": ""} for p in commit["parents"]],
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                                 "verified_at": None}}


def _git_sha(kind: str, content: str) -> str:
    data = content.encode("utf-8")
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def _tree_sha(entries: list[tuple[str, str, str]]) -> str:
    """A tree's id as Git computes it (its blobs' ids, each entry ``MODE PATH\\0`` and the blob's 20 bytes)."""
    raw = b"".join(f"{mode} {path}".encode() + b"\0" + bytes.fromhex(_git_sha("blob", content))
                   for path, mode, content in entries)
    return hashlib.sha1(b"tree %d\0" % len(raw) + raw).hexdigest()


def with_variant(variant: Variant, **changes: Any) -> Variant:
    return replace(variant, **changes)
