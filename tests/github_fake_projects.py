"""GitHub Projects (v2) behind the fake GitHub's GraphQL side: projects, fields, options, items, values.

``FakeProjects(fake).install()`` registers ``organization``, ``user``, ``search``, a ``repository`` that
also answers other repositories' issues (with ``id`` and ``projectItems``), and the mutations
``addProjectV2ItemById``, ``createProjectV2Field``, ``updateProjectV2ItemFieldValue`` and
``clearProjectV2ItemFieldValue`` into ``fake.graphql_root``. Issues of the fake's own repository are
read from its REST state (so that what a write did is what a project sees); other repositories' issues
live here. Failures GitHub gives are injected: ``denied`` (every project request refused with FORBIDDEN or
INSUFFICIENT_SCOPES), ``deny_writes`` (reads allowed, mutations FORBIDDEN), a field deleted meanwhile
(``delete_field``), repositories the token cannot see (``hidden_repos``).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from github_fake import GraphQLTypedError as GraphQLTyped

BUILT_IN = (("Title", "TITLE"), ("Assignees", "ASSIGNEES"), ("Labels", "LABELS"), ("Repository", "REPOSITORY"))
STATUS_OPTIONS = ("Todo", "In Progress", "Done")


class FakeProjects:
    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.projects: dict[tuple[str, str, int], dict] = {}  # (orgs|users, login, number) -> project
        self.issues: dict[tuple[str, int], dict] = {}  # (owner/name, number) -> issue, other repositories
        self.hidden_repos: set[str] = set()
        self.denied: str | None = None  # "FORBIDDEN" or "INSUFFICIENT_SCOPES": every project field refused
        self.deny_writes = False
        self.mutations: list[tuple[str, dict]] = []  # (mutation, input) as executed, in order
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------------------ set up

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def add_project(self, login: str = "ACME", number: int = 7, kind: str = "orgs",
                    status: tuple[str, ...] | None = STATUS_OPTIONS) -> dict:
        project = {"id": self._id("PVT"), "number": number, "login": login, "kind": kind, "closed": False,
                   "title": f"{login} board", "fields": [], "items": []}
        for name, data_type in BUILT_IN:
            project["fields"].append({"id": self._id("PVTF"), "name": name, "dataType": data_type, "options": []})
        if status is not None:
            self.add_field(project, "Status", "SINGLE_SELECT", status)
        self.projects[(kind, login.lower(), number)] = project
        return project

    def add_field(self, project: dict, name: str, data_type: str, options: tuple[str, ...] = ()) -> dict:
        field = {"id": self._id("PVTF"), "name": name, "dataType": data_type,
                 "options": [{"id": self._id("OPT"), "name": o, "color": "GRAY", "description": ""} for o in options]}
        project["fields"].append(field)
        return field

    def delete_field(self, project: dict, name: str) -> None:
        field = self.field(project, name)
        project["fields"].remove(field)
        for item in project["items"]:
            item["values"].pop(field["id"], None)

    def add_issue(self, repo: str, number: int, body: str, *, state: str = "OPEN", labels=("ghstate",),
                  updated_at: str = "2026-11-22T08:00:00Z", title: str = "Checkpoint") -> dict:
        issue = {"number": number, "body": body, "state": state, "labels": list(labels), "updatedAt": updated_at,
                 "title": title}
        self.issues[(repo, number)] = issue
        return issue

    def add_item(self, project: dict, repo: str, number: int) -> dict:
        item = {"id": self._id("PVTI"), "content": (repo, number), "values": {}, "archived": False}
        project["items"].append(item)
        return item

    # ------------------------------------------------------------------------------ reading back

    def project(self, login: str = "ACME", number: int = 7, kind: str = "orgs") -> dict:
        return self.projects[(kind, login.lower(), number)]

    def field(self, project: dict, name: str) -> dict:
        return next(f for f in project["fields"] if f["name"] == name)

    def item(self, project: dict, repo: str, number: int) -> dict | None:
        return next((i for i in project["items"] if i["content"] == (repo, number)), None)

    def values(self, project: dict, repo: str, number: int) -> dict[str, Any]:
        """An item's values by field name, as a person reads them on the board (an option by its name)."""
        item = self.item(project, repo, number)
        assert item is not None, f"{repo}#{number} is not an item of the project"
        shown: dict[str, Any] = {}
        for field in project["fields"]:
            value = item["values"].get(field["id"])
            if value is None:
                continue
            if "singleSelectOptionId" in value:
                shown[field["name"]] = next(o["name"] for o in field["options"]
                                            if o["id"] == value["singleSelectOptionId"])
            else:
                shown[field["name"]] = next(iter(value.values()))
        return shown

    # ------------------------------------------------------------------------------ GraphQL

    def install(self) -> FakeProjects:
        root = self.fake.graphql_root
        original = root.get("repository")

        def repository(info: Any, owner: str, name: str, **kwargs: Any) -> dict:
            full = f"{owner}/{name}"
            if full.lower() == self.fake.repo.lower() and original is not None:
                found = original(info, owner=owner, name=name, **kwargs)
                inner = found["issue"]

                def issue(info: Any, number: int, **kw: Any) -> dict:
                    return {**inner(info, number=number, **kw), **self._issue_extra(self.fake.repo, number)}

                return {**found, "issue": issue}
            if full in self.hidden_repos or not any(r == full for r, _ in self.issues):
                raise GraphQLTyped(f"Could not resolve to a Repository with the name '{full}'.", "NOT_FOUND")
            return {"__typename": "Repository", "nameWithOwner": full, "id": f"R_{full}",
                    "issue": lambda info, number, **_: self._issue(full, number, strict=True)}

        self.fake.projects = self  # createIssue(projectV2Ids:) adds the new issue here (github_fake_tasks)
        root.update({
            "repository": repository,
            "organization": lambda info, login, **_: self._owner("orgs", login),
            "user": lambda info, login, **_: self._owner("users", login),
            "search": self._search,
            "addProjectV2ItemById": self._add_item,
            "createProjectV2Field": self._create_field,
            "updateProjectV2ItemFieldValue": self._update_value,
            "clearProjectV2ItemFieldValue": self._clear_value,
        })
        return self

    def _owner(self, kind: str, login: str) -> dict:
        typename = "Organization" if kind == "orgs" else "User"

        def project(info: Any, number: int, **_: Any) -> dict:
            if self.denied:
                raise GraphQLTyped("Resource not accessible by integration" if self.denied == "FORBIDDEN" else
                                   "Your token has not been granted the required scopes to execute this query. "
                                   "The 'projectV2' field requires one of the following scopes: ['read:project']",
                                   self.denied)
            found = self.projects.get((kind, login.lower(), number))
            if found is None:
                raise GraphQLTyped(f"Could not resolve to a ProjectV2 with the number {number}.", "NOT_FOUND")
            return self._project(found)

        return {"__typename": typename, "login": login, "id": f"{typename}_{login}", "projectV2": project}

    def _project(self, project: dict) -> dict:
        kind = project["kind"]
        return {"__typename": "ProjectV2", "id": project["id"], "number": project["number"],
                "title": project["title"], "closed": project["closed"], "viewerCanUpdate": not self.deny_writes,
                "url": f"https://github.com/{kind}/{project['login']}/projects/{project['number']}",
                "fields": lambda info, first=None, after=None, **_: self._page(
                    [self._field(f) for f in project["fields"]], first, after),
                "items": lambda info, first=None, after=None, **_: self._page(
                    [self._item(project, i) for i in project["items"] if not i["archived"]], first, after)}

    def _page(self, nodes: list, first: int | None, after: str | None) -> dict:
        if first is not None and first > 100:
            raise GraphQLTyped("Requesting more than 100 records on the connection is not allowed.", "INVALID")
        start = int(after) if after else 0
        end = start + (first or 100)
        chunk = nodes[start:end]
        return {"totalCount": len(nodes), "nodes": chunk,
                "pageInfo": {"hasNextPage": end < len(nodes), "endCursor": str(end) if chunk else None,
                             "hasPreviousPage": start > 0, "startCursor": str(start)}}

    def _field(self, field: dict) -> dict:
        single = field["dataType"] == "SINGLE_SELECT"
        return {"__typename": "ProjectV2SingleSelectField" if single else "ProjectV2Field",
                "id": field["id"], "name": field["name"], "dataType": field["dataType"],
                "createdAt": "2026-11-01T00:00:00Z", "updatedAt": "2026-11-01T00:00:00Z",
                **({"options": lambda info, **_: [{**o, "nameHTML": o["name"], "descriptionHTML": ""}
                                                  for o in field["options"]]} if single else {})}

    def _item(self, project: dict, item: dict) -> dict:
        repo, number = item["content"]

        def values(info: Any, first: int | None = None, after: str | None = None, **_: Any) -> dict:
            nodes = []
            for field in project["fields"]:
                value = item["values"].get(field["id"])
                if value is None:
                    continue
                shown = self._field(field)
                if "text" in value:
                    nodes.append({"__typename": "ProjectV2ItemFieldTextValue", "text": value["text"], "field": shown})
                elif "number" in value:
                    nodes.append({"__typename": "ProjectV2ItemFieldNumberValue", "number": value["number"],
                                  "field": shown})
                elif "date" in value:
                    nodes.append({"__typename": "ProjectV2ItemFieldDateValue", "date": value["date"], "field": shown})
                else:
                    option = next(o for o in field["options"] if o["id"] == value["singleSelectOptionId"])
                    nodes.append({"__typename": "ProjectV2ItemFieldSingleSelectValue", "optionId": option["id"],
                                  "name": option["name"], "field": shown})
            return self._page(nodes, first, after)

        return {"__typename": "ProjectV2Item", "id": item["id"], "isArchived": item["archived"], "type": "ISSUE",
                "project": lambda info, **_: self._project(project),
                "content": lambda info, **_: self._issue(repo, number),
                "fieldValues": values}

    def _issue_id(self, repo: str, number: int) -> str:
        """The issue's global node id: the fake's own for its repository's issues, one of its own else."""
        if repo.lower() == self.fake.repo.lower() and number in self.fake.issues:
            return self.fake.issues[number]["node_id"]
        return f"I_{repo.replace('/', '_')}_{number}"

    def _issue_extra(self, repo: str, number: int) -> dict:
        return {"id": self._issue_id(repo, number),
                "repository": {"__typename": "Repository", "nameWithOwner": repo, "id": f"R_{repo}"},
                "projectItems": lambda info, first=None, after=None, **_: self._page(
                    [self._item(p, i) for p in self.projects.values() for i in p["items"]
                     if i["content"] == (repo, number)], first, after)}

    def _issue(self, repo: str, number: int, strict: bool = False) -> dict | None:
        """An issue as GraphQL content; None (what GitHub answers for an item the token cannot see)."""
        if repo in self.hidden_repos:
            return None
        if repo.lower() == self.fake.repo.lower():
            rest = self.fake.issues.get(number)
            if rest is None:
                if strict:
                    raise GraphQLTyped(f"Could not resolve to an Issue with the number of {number}.", "NOT_FOUND")
                return None
            issue = {"number": number, "title": rest["title"], "body": rest["body"] or "",
                     "state": rest["state"].upper(), "updatedAt": rest["updated_at"],
                     "labels": [x["name"] for x in rest["labels"]]}
        else:
            issue = self.issues.get((repo, number))
            if issue is None:
                if strict:
                    raise GraphQLTyped(f"Could not resolve to an Issue with the number of {number}.", "NOT_FOUND")
                return None
        return {"__typename": "Issue", "number": number, "title": issue["title"], "body": issue["body"],
                "state": issue["state"], "updatedAt": issue["updatedAt"],
                "url": f"https://github.com/{repo}/issues/{number}",
                "labels": lambda info, **_: {"nodes": [{"name": n} for n in issue["labels"]],
                                             "totalCount": len(issue["labels"])},
                **(self.fake.tasks.parent_field(number) if repo.lower() == self.fake.repo.lower() else {}),
                **self._issue_extra(repo, number)}

    def _search(self, info: Any, query: str, type: str, first: int | None = None, after: str | None = None,
                **_: Any) -> dict:
        words = query.split()
        org = next((w[4:] for w in words if w.startswith("org:")), "")
        label = next((w[6:].strip('"') for w in words if w.startswith("label:")), "")
        repos = {self.fake.repo, *(r for r, _ in self.issues)}
        nodes = []
        for repo in sorted(repos):
            if repo.split("/")[0].lower() != org.lower() or repo in self.hidden_repos:
                continue
            numbers = self.fake.issues if repo == self.fake.repo else [n for r, n in self.issues if r == repo]
            for number in sorted(numbers):
                issue = self._issue(repo, number)
                if issue and issue["state"] == "OPEN" and label in [n["name"] for n in issue["labels"](info)["nodes"]]:
                    nodes.append(issue)
        page = self._page(nodes, first, after)
        return {**page, "issueCount": len(nodes)}

    # ------------------------------------------------------------------------------ mutations

    def _by_id(self, project_id: str) -> dict:
        if self.denied or self.deny_writes:
            raise GraphQLTyped("Resource not accessible by integration", "FORBIDDEN")
        found = next((p for p in self.projects.values() if p["id"] == project_id), None)
        if found is None:
            raise GraphQLTyped(f"Could not resolve to a node with the global id of '{project_id}'", "NOT_FOUND")
        return found

    def add_new_issue(self, project_id: str, number: int) -> None:
        """An issue created with ``projectV2Ids`` naming ``project_id`` is its item (createIssue's input)."""
        self.mutations.append(("createIssue.projectV2Ids", {"projectId": project_id, "number": number}))
        project = self._by_id(project_id)
        self.item(project, self.fake.repo, number) or self.add_item(project, self.fake.repo, number)

    def _add_item(self, info: Any, input: dict, **_: Any) -> dict:
        self.mutations.append(("addProjectV2ItemById", copy.deepcopy(input)))
        project = self._by_id(input["projectId"])
        content = next(((r, n) for r, n in [*((self.fake.repo, n) for n in self.fake.issues), *self.issues]
                        if self._issue_id(r, n) == input["contentId"]), None)
        if content is None:
            raise GraphQLTyped(f"Could not resolve to a node with the global id of '{input['contentId']}'",
                               "NOT_FOUND")
        item = self.item(project, *content) or self.add_item(project, *content)  # GitHub answers the one there
        return {"item": self._item(project, item)}

    def _create_field(self, info: Any, input: dict, **_: Any) -> dict:
        self.mutations.append(("createProjectV2Field", copy.deepcopy(input)))
        project = self._by_id(input["projectId"])
        if any(f["name"].lower() == input["name"].lower() for f in project["fields"]):
            raise GraphQLTyped("Name has already been taken", "UNPROCESSABLE")
        kind = input["dataType"]
        options = tuple(o["name"] for o in input.get("singleSelectOptions") or ())
        if kind == "SINGLE_SELECT" and not options:
            raise GraphQLTyped("At least one option is required", "UNPROCESSABLE")
        return {"projectV2Field": self._field(self.add_field(project, input["name"], kind, options))}

    def _locate(self, input: dict) -> tuple[dict, dict, dict]:
        project = self._by_id(input["projectId"])
        item = next((i for i in project["items"] if i["id"] == input["itemId"]), None)
        field = next((f for f in project["fields"] if f["id"] == input["fieldId"]), None)
        if item is None or field is None:
            missing = input["itemId"] if item is None else input["fieldId"]
            raise GraphQLTyped(f"Could not resolve to a node with the global id of '{missing}'", "NOT_FOUND")
        return project, item, field

    def _update_value(self, info: Any, input: dict, **_: Any) -> dict:
        self.mutations.append(("updateProjectV2ItemFieldValue", copy.deepcopy(input)))
        project, item, field = self._locate(input)
        value = {k: v for k, v in input["value"].items() if v is not None}
        kinds = {"TEXT": "text", "NUMBER": "number", "DATE": "date", "SINGLE_SELECT": "singleSelectOptionId"}
        key = kinds.get(field["dataType"])
        if key is None or list(value) != [key]:
            raise GraphQLTyped(f"The field {field['name']} cannot take the value {value}", "UNPROCESSABLE")
        if key == "singleSelectOptionId" and value[key] not in [o["id"] for o in field["options"]]:
            raise GraphQLTyped(f"The option {value[key]} is not an option of {field['name']}", "UNPROCESSABLE")
        item["values"][field["id"]] = value
        return {"projectV2Item": self._item(project, item)}

    def _clear_value(self, info: Any, input: dict, **_: Any) -> dict:
        self.mutations.append(("clearProjectV2ItemFieldValue", copy.deepcopy(input)))
        project, item, field = self._locate(input)
        item["values"].pop(field["id"], None)
        return {"projectV2Item": self._item(project, item)}
