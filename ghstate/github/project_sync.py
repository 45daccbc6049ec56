"""A GitHub Project (v2) kept current from checkpoints, and the board read from it: through ``store.graphql``.

What to set is decided in ``ghstate.github.projects`` (pure); this module asks GitHub and sends the changes:

- ``project_resolve`` (a query): the project's id and fields (once per command), the issue's node id and
  the project items it is in, with their values;
- ``project_prepare`` (only when something is missing): add the issue to the project and create the
  missing fields, in one document;
- ``project_update_item``: every value that differs, one aliased mutation per field, in one document
  (nothing is sent when every value is right already).

So a write costs 2 more requests (1 when the item is current), the first write of an issue 3, and the
first write to a project without ghstate's fields 3 as well. A project that cannot be updated never fails
the write: it is one warning, and the next write (or ``push``) sets every field again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ghstate.config import ProjectRef, parse_ref
from ghstate.core.markup import printable
from ghstate.core.model import Checkpoint
from ghstate.core.parse import ParseError, parse
from ghstate.errors import GhstateError, NotFound, RemoteError
from ghstate.github import projects
from ghstate.github.projects import FIELDS, Field, Row, Update, Wanted

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.config import Settings
    from ghstate.github.store import GitHubStore
    from ghstate.store import Store

# Aliases of the documents' mutations, by the field ghstate keeps.
ALIAS = {"Next phase": "nextPhase", "Progress": "progress", "CI": "ci", "Last writer": "lastWriter",
         "Checkpointed": "checkpointed", "Status": "status"}
NAMES = {alias: name for name, alias in ALIAS.items()} | {"item": "the item"}
BOARD_PAGES = 20  # pages of 100 items `board` reads at most
TOKEN_HINT = ("a project needs a token with the project scope (classic), or Projects: read and write (a GitHub "
              "App or fine-grained token); a repository's GITHUB_TOKEN cannot reach one")
DENIED = ("FORBIDDEN", "INSUFFICIENT_SCOPES", "NOT_FOUND")


class ProjectError(GhstateError):
    """The project could not be read or updated; ``denied``: GitHub said no, or that it is not there."""

    def __init__(self, message: str, denied: bool = False) -> None:
        super().__init__(message)
        self.denied = denied


def _clean(text: Any, limit: int = 300) -> str:
    text = " ".join(printable(str(text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _errors(answer: dict[str, Any]) -> list[dict[str, Any]]:
    found = answer.get("errors")
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def _describe(errors: list[dict[str, Any]]) -> tuple[str, bool]:
    """GitHub's errors as one short text (each message once, with the fields it was about), and whether
    any of them says no (refused, or not there)."""
    about: dict[str, list[str]] = {}
    for error in errors:
        path = error.get("path") if isinstance(error.get("path"), list) else []
        said = _clean(error.get("message") or error.get("type"), 160)
        kind = _clean(error.get("type") or "", 40)
        fields = about.setdefault(f"{kind}: {said}" if kind and kind != said else said, [])
        name = NAMES.get(str(path[0])) if path else None
        if name and name not in fields:
            fields.append(name)
    parts = [f"{message}{' (' + ', '.join(fields) + ')' if fields else ''}" for message, fields in about.items()]
    more = f"; and {len(parts) - 3} more" if len(parts) > 3 else ""
    denied = any(str(e.get("type")) in DENIED for e in errors)
    return "; ".join(parts[:3]) + more, denied


def _why(exc: GhstateError) -> tuple[str, bool]:
    if isinstance(exc, ProjectError):
        return str(exc), exc.denied
    status = getattr(exc, "status", None)
    if isinstance(exc, NotFound) or status == 404:
        return "GitHub answered NOT_FOUND: the project, one of its fields or the issue is gone, or the token " \
               "cannot see it", True
    return _clean(exc, 400), status in (401, 403)


class ProjectSync:
    """One command's link to its project: ids resolved once, each notice said once."""

    def __init__(self, store: GitHubStore, ref: ProjectRef) -> None:
        self.store = store
        self.ref = ref
        self.project_id = ""
        self.fields: tuple[Field, ...] | None = None
        self.said: set[str] = set()
        self.unread = 0  # items of the project the board left unread (past BOARD_PAGES pages)

    # ---------------------------------------------------------------------------------- writes

    def for_new_issues(self) -> tuple[str | None, str]:
        """The project's id for issues made with this token to join as they are made (``createIssue``'s
        ``projectV2Ids``: no request of their own), asked once per command (one request); None and why not
        when it cannot be (closed, not to be updated with this token, not there), never a failure."""
        try:
            data, why, denied = self._call("project_id", {"login": self.ref.login, "number": self.ref.number,
                                                          "org": self.ref.is_org, "user": not self.ref.is_org})
        except GhstateError as exc:
            return None, _why(exc)[0]
        holder = data.get("organization" if self.ref.is_org else "user") or {}
        project = holder.get("projectV2") if isinstance(holder, dict) else None
        if not isinstance(project, dict) or not project.get("id"):
            return None, why or "GitHub does not know it, or the token cannot see it"
        if project.get("closed"):
            return None, "it is closed"
        if not project.get("viewerCanUpdate"):
            return None, f"the token may not add items to it ({TOKEN_HINT})"
        self.project_id = project["id"]
        return project["id"], ""

    def keep(self, repo: str, number: int, cp: Checkpoint) -> list[str]:
        """Keep the item of ``repo#number`` current with ``cp``: the notices not said yet in this
        command. Never raises for GitHub's sake: a failure is one notice."""
        try:
            notices = self._keep(repo, number, cp)
        except GhstateError as exc:
            why, denied = _why(exc)
            hint = f"; {TOKEN_HINT}" if denied else ""
            notices = [f"project {self.ref} was not updated for #{number} ({why}){hint}; the checkpoint is "
                       "written, and the next write or 'ghstate push' brings the project up to date"]
        fresh = [n for n in notices if n not in self.said]
        self.said.update(fresh)
        return fresh

    def _call(self, name: str, variables: dict[str, Any], *,
              landed: Callable[[], dict[str, Any] | None] | None = None) -> tuple[dict[str, Any], str, bool]:
        graphql = self.store.graphql
        answer = graphql(name, variables, partial=True, **({"landed": landed} if landed else {}))
        data = answer.get("data") if isinstance(answer, dict) else None
        why, denied = _describe(_errors(answer if isinstance(answer, dict) else {}))
        return data if isinstance(data, dict) else {}, why, denied

    def _keep(self, repo: str, number: int, cp: Checkpoint) -> list[str]:
        owner, name = repo.split("/", 1)
        need = self.fields is None
        data, why, denied = self._call("project_resolve", {
            "login": self.ref.login, "number": self.ref.number, "org": need and self.ref.is_org,
            "user": need and not self.ref.is_org, "owner": owner, "name": name, "issue": number})
        if need:
            holder = data.get("organization" if self.ref.is_org else "user") or {}
            project = holder.get("projectV2") if isinstance(holder, dict) else None
            if not isinstance(project, dict) or not project.get("id"):
                raise ProjectError(why or "GitHub does not know it, or the token cannot see it", denied or not why)
            if project.get("closed"):
                return [f"project {self.ref} is closed: its items are left as they are"]
            self.project_id = project["id"]
            self.fields = projects.fields_of((project.get("fields") or {}).get("nodes"))
        assert self.fields is not None
        issue = (data.get("repository") or {}).get("issue")
        if not isinstance(issue, dict) or not issue.get("id"):
            raise ProjectError(why or f"issue #{number} of {repo} cannot be read", denied)
        items = (issue.get("projectItems") or {}).get("nodes") or []
        item = next((i for i in items if isinstance(i, dict) and (i.get("project") or {}).get("id") == self.project_id),
                    None)
        current = projects.values_of(((item or {}).get("fieldValues") or {}).get("nodes"))
        item_id = item["id"] if item else ""
        plan = projects.plan(cp, self.fields, current, str(self.ref))
        if plan.create or not item_id:
            item_id = self._prepare(issue["id"], item_id, plan.create)
            plan = projects.plan(cp, self.fields, current, str(self.ref))
        if plan.updates:
            self._update(item_id, plan.updates)
        return list(plan.notices)

    def _prepare(self, content_id: str, item_id: str, create: tuple[Wanted, ...]) -> str:
        """Add the issue to the project and create the missing fields: one request. The item's id."""
        missing = {w.name for w in create}
        variables: dict[str, Any] = {"withItem": not item_id,
                                     "item": {"projectId": self.project_id, "contentId": content_id}}
        for want in projects.wanted(Checkpoint()):
            chosen = next((w for w in create if w.name == want.name), want)
            variables[ALIAS[want.name]] = want.name in missing
            variables[ALIAS[want.name] + "Field"] = projects.create_input(chosen, self.project_id)
        # adding an item is idempotent (GitHub answers the item that is there), creating a field is not:
        # an answer lost after a create is not resent (the next write finds the field)
        landed = (lambda: None) if not missing else (lambda: {})
        data, why, denied = self._call("project_prepare", variables, landed=landed)
        created = [projects.fields_of([(data.get(ALIAS[name]) or {}).get("projectV2Field")]) for name in FIELDS
                   if name in missing]
        assert self.fields is not None
        self.fields = (*self.fields, *(f for found in created for f in found))
        if not item_id:
            item_id = ((data.get("item") or {}).get("item") or {}).get("id") or ""
        if not item_id or why:
            raise ProjectError(why or "GitHub's answer was lost", denied)
        return item_id

    def _update(self, item_id: str, updates: tuple[Update, ...]) -> None:
        """Set every value that differs: one request, one aliased mutation per field."""
        variables: dict[str, Any] = {}
        for name, alias in ALIAS.items():
            update = next((u for u in updates if u.name == name), None)
            variables[alias] = update is not None
            variables[alias + "Value"] = {"projectId": self.project_id, "itemId": item_id,
                                          "fieldId": update.field_id if update else "",
                                          "value": update.value if update else {}}
        # setting a value again is harmless: an answer lost is resent
        _, why, denied = self._call("project_update_item", variables, landed=lambda: None)
        if why:
            raise ProjectError(f"some fields were not set: {why}", denied)

    # ----------------------------------------------------------------------------------- board

    def board(self, *, label: str, now: datetime, stale_days: float) -> tuple[list[Row], int, int]:
        """Rows of the project's open checkpoints; how many requests it took, and how many items could
        not be read (hidden from the token, or not checkpoints at all are not counted). Past ``BOARD_PAGES``
        pages the rest is left unread: ``self.unread`` says how many items."""
        rows: list[Row] = []
        hidden = 0
        after: str | None = None
        for page in range(1, BOARD_PAGES + 1):
            try:
                data, why, denied = self._call("project_board", {
                    "login": self.ref.login, "number": self.ref.number, "org": self.ref.is_org,
                    "user": not self.ref.is_org, "after": after})
            except RemoteError as exc:
                reason, denied = _why(exc)
                raise ProjectError(f"cannot read project {self.ref}: {reason}{'; ' + TOKEN_HINT if denied else ''}",
                                   denied) from None
            holder = data.get("organization" if self.ref.is_org else "user") or {}
            project = holder.get("projectV2") if isinstance(holder, dict) else None
            if not isinstance(project, dict):
                raise ProjectError(f"cannot read project {self.ref}: "
                                   f"{why or 'GitHub does not know it, or the token cannot see it'}; {TOKEN_HINT}",
                                   True)
            items = project.get("items") or {}
            for node in items.get("nodes") or []:
                content = (node or {}).get("content") if isinstance(node, dict) else None
                if content is None:
                    hidden += 1  # an item of a repository the token cannot see
                    continue
                found = _row(content, label=label, now=now, stale_days=stale_days)
                if found is not None and not node.get("isArchived"):
                    rows.append(found)
            info = items.get("pageInfo") or {}
            if not info.get("hasNextPage") or not info.get("endCursor"):
                return projects.sort_rows(rows), page, hidden
            after = info["endCursor"]
            self.unread = max(int(items.get("totalCount") or 0) - page * 100, 1)
        return projects.sort_rows(rows), BOARD_PAGES, hidden


def board_of_org(store: GitHubStore, org: str, *, label: str, now: datetime,
                 stale_days: float) -> tuple[list[Row], int, int]:
    """Rows of the open checkpoints of an organization's repositories (GitHub's search, 100 a request), how many
    requests it took, and how many issues the search counted that it did not read (past ``BOARD_PAGES`` pages,
    or past the 1,000 results GitHub's search gives)."""
    rows: list[Row] = []
    after: str | None = None
    query = f'org:{org} is:issue is:open label:"{label}"'
    graphql = store.graphql
    read = counted = 0
    for page in range(1, BOARD_PAGES + 1):
        try:
            answer = graphql("project_board_search", {"query": query, "after": after}, partial=True)
        except RemoteError as exc:
            raise ProjectError(f"cannot search the checkpoints of {org}: {_why(exc)[0]}") from None
        search = (answer.get("data") or {}).get("search") if isinstance(answer, dict) else None
        if not isinstance(search, dict):
            raise ProjectError(f"cannot search the checkpoints of {org}: {_describe(_errors(answer))[0]}")
        nodes = search.get("nodes") or []
        read, counted = read + len(nodes), int(search.get("issueCount") or 0)
        rows += [r for node in nodes if isinstance(node, dict)
                 and (r := _row(node, label=label, now=now, stale_days=stale_days)) is not None]
        info = search.get("pageInfo") or {}
        if not info.get("hasNextPage") or not info.get("endCursor"):
            return projects.sort_rows(rows), page, max(counted - read, 0)
        after = info["endCursor"]
    return projects.sort_rows(rows), BOARD_PAGES, max(counted - read, 1)


def _row(content: dict[str, Any], *, label: str, now: datetime, stale_days: float) -> Row | None:
    """A board row for an issue that is an open checkpoint (its label, or ghstate's marker), else None.
    The body is untrusted: it is only parsed, and what is shown of it is made printable."""
    if content.get("__typename") != "Issue" or content.get("state") != "OPEN":
        return None
    body = content.get("body") if isinstance(content.get("body"), str) else ""
    labels = {(n or {}).get("name") for n in (content.get("labels") or {}).get("nodes") or [] if isinstance(n, dict)}
    if label not in labels and "ghstate:v1" not in body:
        return None
    try:
        cp = parse(body).checkpoint
    except (ParseError, RecursionError, ValueError):
        return None
    repo = str((content.get("repository") or {}).get("nameWithOwner") or "")
    number = content.get("number")
    if not isinstance(number, int):
        return None
    parent = content.get("parent") if isinstance(content.get("parent"), dict) else {}
    parent_repo = str((parent.get("repository") or {}).get("nameWithOwner") or repo)
    parent_key = f"{_clean(parent_repo, 140)}#{parent['number']}" if isinstance(parent.get("number"), int) else ""
    return projects.row(cp, repo=_clean(repo, 140), number=number, url=_clean(content.get("url") or "", 300),
                        updated_at=str(content.get("updatedAt") or ""), now=now, stale_days=stale_days,
                        parent=parent_key)


def connect(settings: Settings, store: Store) -> ProjectSync | None:
    """The command's project, when one is configured and checkpoints live on GitHub. A separate token for
    the project (GHSTATE_PROJECT_TOKEN) gets its own connection; the checkpoint's token is used otherwise."""
    if not settings.project or not store.remote:
        return None
    ref = parse_ref(settings.project)
    if ref is None:  # checked when the settings were built
        return None
    from ghstate.github.store import GitHubStore

    if settings.project_token:
        return ProjectSync(GitHubStore.connect(settings._replace(token=settings.project_token)), ref)
    return ProjectSync(store, ref) if isinstance(store, GitHubStore) else None

