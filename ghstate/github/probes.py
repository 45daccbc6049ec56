"""``ghstate doctor --github``: each behaviour of GitHub that the write log relies on, checked on the
configured repository with one throwaway issue (labelled ``ghstate-doctor``, closed when done).

The write log is the body's own edit history (``ghstate.github.history``): it is only as good as GitHub's
history is. What GitHub documents and what the log takes for granted is checked here as it is on this
GitHub (github.com, or a GHES version): versions listed newest first with the creation among them, one
version for every save (two quick saves by one token included), a version's text whole, the answer to
a write holding the version it made, and errors in GraphQL's typed shape. Each check is one row:
(name, ok or not or not checked, what was seen). GitHub's API offers no way to delete a revision; an
issue whose history has one deleted on github.com is checked with ``issue``.
"""

from __future__ import annotations

import os
from typing import Any

from ghstate.errors import GhstateError, RemoteError
from ghstate.github.tasks import Probe
from ghstate.github.transport import GitHubAPI

LABEL = "ghstate-doctor"
TITLE = "ghstate doctor: a probe of this repository's edit history (safe to delete)"
PROBE_EDITS = 5  # newest versions read back


def history_probes(api: GitHubAPI) -> list[Probe]:
    """Every row, on a new throwaway issue; it is closed at the end whatever happened."""
    token = os.urandom(3).hex()
    versions = [f"ghstate doctor {token}: version {i}\n\nline two of version {i}\n" for i in range(1, 5)]
    try:
        created = api.create_issue(TITLE, versions[0], [LABEL], landed=lambda: None)
    except GhstateError as exc:
        return [Probe("a throwaway issue can be created (issues: write)", False, str(exc))]
    number = created["number"]
    rows = [Probe("a throwaway issue can be created (issues: write)", True, f"#{number}")]
    try:
        rows.extend(_edits(api, number, versions))
        rows.append(_errors(api))
    except GhstateError as exc:
        rows.append(Probe("the edit history can be read and written", False, str(exc)))
    finally:
        rows.append(_close(api, number))
    rows.append(Probe("a revision deleted from the history reads as no text", None,
                      "not probed: GitHub's API cannot delete a revision; delete one from "
                      f"#{number}'s edit history on github.com, then run 'ghstate doctor --github --issue {number}'"))
    return rows


def _read(api: GitHubAPI, number: int) -> dict[str, Any]:
    owner, _, name = api.repo_name.partition("/")
    data = api.graphql("checkpoint", {"owner": owner, "name": name, "number": number, "edits": PROBE_EDITS,
                                      "comments": 1, "labels": LABEL}, number=number, what=f"reading #{number}")
    return ((data.get("repository") or {}).get("issue")) or {}


def _write(api: GitHubAPI, node_id: str, number: int, body: str) -> dict[str, Any]:
    data = api.graphql("update_checkpoint", {"input": {"id": node_id, "body": body}, "edits": PROBE_EDITS},
                       number=number, what=f"editing #{number}")
    return (data.get("updateIssue") or {}).get("issue") or {}


def _listed(issue: dict[str, Any]) -> list[str | None]:
    """The versions an answer lists, newest first (None: a deleted one)."""
    edits = (issue.get("userContentEdits") or {}).get("nodes") or []
    return [None if e.get("deletedAt") else e.get("diff") for e in edits]


def _edits(api: GitHubAPI, number: int, versions: list[str]) -> list[Probe]:
    node_id = _read(api, number).get("id") or ""
    answer = _write(api, node_id, number, versions[1])
    listed = _listed(answer)
    rows = [Probe("a write's answer holds the version it made", bool(listed) and listed[0] == versions[1],
                  f"newest listed: {_short(listed[0] if listed else None)}")]
    read = _read(api, number)
    listed = _listed(read)
    rows.append(Probe("versions are listed newest first, the creation among them",
                      listed[:2] == [versions[1], versions[0]] and bool(read.get("includesCreatedEdit")),
                      f"{len(listed)} listed, newest {_short(listed[0] if listed else None)}, includesCreatedEdit "
                      f"{read.get('includesCreatedEdit')}"))
    rows.append(Probe("a version's text is the whole body, not a difference", listed[:1] == [versions[1]],
                      f"the newest version's text is {len(listed[0] or '') if listed else 0} characters, the body "
                      f"{len(versions[1])}"))
    _write(api, node_id, number, versions[2])
    _write(api, node_id, number, versions[3])  # right after the one before, by the same token
    listed = _listed(_read(api, number))
    count = ((_read(api, number).get("userContentEdits") or {}).get("totalCount")) or 0
    rows.append(Probe("every save is a version, two quick saves by one token too",
                      listed[:4] == [versions[3], versions[2], versions[1], versions[0]] and count == 4,
                      f"{count} versions for 4 saves" + ("" if count == 4 else ": quick saves by one editor were "
                                                         "kept as one; see 'What the write log relies on'")))
    return rows


def _errors(api: GitHubAPI) -> Probe:
    """A GraphQL error comes as GitHub documents it: HTTP 200, ``errors`` with a ``type``."""
    owner, _, name = api.repo_name.partition("/")
    try:
        answer = api.graphql("checkpoint", {"owner": owner, "name": name, "number": 2_000_000_000, "edits": 1,
                                            "comments": 1, "labels": LABEL}, partial=True, what="asking for no issue")
    except RemoteError as exc:
        return Probe("errors come typed, beside what could be answered", False, str(exc))
    errors = answer.get("errors") or []
    types = [e.get("type") for e in errors if isinstance(e, dict)]
    return Probe("errors come typed, beside what could be answered", "NOT_FOUND" in types and "data" in answer,
                 f"error types {types or 'none'}")


def _close(api: GitHubAPI, number: int) -> Probe:
    try:
        node_id = _read(api, number).get("id") or ""
        api.graphql("close_issue", {"input": {"issueId": node_id, "stateReason": "NOT_PLANNED"}}, number=number,
                    what=f"closing #{number}")
    except GhstateError as exc:
        return Probe("the throwaway issue is closed", False, f"#{number} is still open ({exc}); close it by hand")
    return Probe("the throwaway issue is closed", True, f"#{number}, labelled {LABEL}")


def issue_probe(api: GitHubAPI, number: int) -> list[Probe]:
    """An existing issue's edit history read as the log reads it: every version placed, a deleted one as
    no text."""
    issue = _read(api, number)
    listed = _listed(issue)
    count = (issue.get("userContentEdits") or {}).get("totalCount") or 0
    deleted = sum(1 for text in listed if text is None)
    ok = len(listed) == min(count, PROBE_EDITS) and (not listed or listed[0] is None or
                                                     " ".join((listed[0] or "").split()) ==
                                                     " ".join((issue.get("body") or "").split()))
    return [Probe(f"#{number}'s history reads as the write log reads it", ok,
                  f"{count} versions, {deleted} of the newest {len(listed)} deleted (read as no text)")]


def _short(text: str | None) -> str:
    if text is None:
        return "none (deleted or missing)"
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 40 else flat[:39] + "…")
