"""``ghstate doctor --github``: each behaviour of GitHub that the write log (a chain of commits on a ref per
checkpoint, ``ghstate.core.chain``) and claims rely on, checked on the configured repository with one
throwaway issue (labelled ``ghstate-doctor``, closed when done) and one throwaway ref under
``refs/ghstate/doctor/`` (deleted when done).

What the chain relies on: Git objects can be written (a tree, commits whose message holds a whole
checkpoint, read back whole), a ref can be made by ``updateRefs`` from "none", a move from a value the ref
no longer holds is refused and one from the value it holds is taken (the compare-and-swap), and GitHub's
answer to a write that batches the ref's move with the body's write (the body's write after a refused move
runs or not: both are handled, the row says which). What is still read from the body's edit history: a
write's answer holds its own version and the one before it (a person's save it wrote over is merged from
it), and a save by one token right after another is a version of its own. Then errors in GraphQL's typed
shape, and whether GitHub lists refs outside branches and tags (a listing then shows the chains' heads).
Last, GitHub's issue search, which finds a checkpoint the branch index does not hold: how long its index takes
to hold a body just written, and whether it searches the text of a hidden marker (an HTML comment).

Each row is (name, ok or not or not checked, what was seen), and says what it saw whatever its verdict. A
row that fails does not hide the rows after it; a GitHub that does not answer is said once, and the rows
after it are not checked. An issue with a revision deleted on github.com is read with ``issue_probe``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ghstate.config import DOCTOR_LABEL
from ghstate.core.chain import TREE_FILES, ZERO
from ghstate.errors import GhstateError, RemoteError
from ghstate.github.body import version_text, versions
from ghstate.github.transport import GitHubAPI

LABEL = DOCTOR_LABEL
TITLE = "ghstate doctor: a probe of what ghstate's write log relies on (safe to delete)"
EDITS = 5  # newest versions read back
BIG = 61_000  # characters of a commit message read back whole: more than a checkpoint's bound
CONTENTS = "the token needs Contents: write on {repo} (beside Issues: write)"
SEARCH_WAIT = 60.0  # seconds the search probe waits for GitHub's index to hold a body just written
SEARCH_EVERY = 5.0  # seconds between its searches (GitHub limits searches to 30 a minute)
_sleep = time.sleep  # the probe's waits, and its clock (the tests' fake GitHub keeps time of its own)
_clock = time.monotonic


class Probe(NamedTuple):
    """One check of ``ghstate doctor --github``: what was checked, whether it held (None: not checked),
    and what was seen."""

    name: str
    ok: bool | None
    detail: str


class _Unanswered(Exception):
    """GitHub did not answer at all (unreachable, timed out): the rows after it are not checked."""


class _Session:
    """The probes' shared state: the API, the throwaway issue and ref, and what was made so far."""

    def __init__(self, api: GitHubAPI) -> None:
        self.api = api
        self.owner, _, self.name = api.repo_name.partition("/")
        self.token = os.urandom(3).hex()
        self.ref = f"refs/ghstate/doctor/{self.token}"
        self.repository = ""
        self.issue: dict[str, Any] = {}
        self.tree = ""
        self.commits: list[str] = []

    def graphql(self, document: str, variables: dict[str, Any], what: str, **kwargs: Any) -> dict[str, Any]:
        return self.api.graphql(document, {"owner": self.owner, "name": self.name, **variables}, what=what, **kwargs)

    def mutate(self, document: str, data: dict[str, Any], what: str) -> dict[str, Any]:
        """A mutation's whole answer (data and errors)."""
        return self.api.graphql(document, {"input": data}, partial=True, what=what)

    def ref_now(self) -> str:
        data = self.graphql("ref_state", {"ref": self.ref}, "reading the probe's ref")
        repository = data.get("repository") or {}
        self.repository = repository.get("id") or self.repository
        return ((repository.get("ref") or {}).get("target") or {}).get("oid") or ""

    def move(self, before: str, after: str) -> dict[str, Any]:
        return self.mutate("update_refs", {"repositoryId": self.repository, "refUpdates": [
            {"name": self.ref, "beforeOid": before, "afterOid": after}]}, f"moving {self.ref}")


def github_probes(api: GitHubAPI) -> list[Probe]:
    """Every row, in order; the throwaway issue is closed and the ref deleted at the end, whatever happened."""
    s = _Session(api)
    rows: list[Probe] = []
    steps: list[tuple[str, Callable[[_Session], tuple[bool | None, str]]]] = [
        ("a throwaway issue can be created (Issues: write)", _create_issue),
        ("Git objects can be written (Contents: write)", _objects),
        ("a commit's message is read back whole", _message),
        ("a ref in refs/ghstate/ can be made from none", _make_ref),
        ("a move from a value the ref no longer holds is refused", _stale_move),
        ("a move from the value the ref holds is made (compare-and-swap)", _current_move),
        ("a write's answer holds its version and the one before", _answer),
        ("a body's write after a refused move in one request", _batched),
        ("refs outside branches and tags are listed (else one read more)", _listed_refs),
        ("two quick saves by one token are two versions", _quick_saves),
        ("errors come typed, beside what could be answered", _errors),
        ("issue search finds a body's words, and a hidden marker's (else by title)", _search),
    ]
    unanswered = ""
    for name, step in steps:
        if unanswered:
            rows.append(Probe(name, None, f"not checked: {unanswered}"))
            continue
        try:
            ok, detail = step(s)
        except _Unanswered as exc:
            unanswered = f"GitHub did not answer ({exc})"
            rows.append(Probe(name, False, unanswered))
            continue
        except GhstateError as exc:
            ok, detail = False, " ".join(str(exc).split())
        rows.append(Probe(name, ok, detail))
    rows.extend(_clean_up(s, unanswered))
    return rows


def _call(fn: Callable[[], Any]) -> Any:
    """A probe's request; GitHub not answering at all becomes ``_Unanswered`` (said once)."""
    try:
        return fn()
    except RemoteError as exc:
        text = str(exc)
        if any(words in text for words in ("cannot reach", "no answer from", "timed out", "broke off")):
            raise _Unanswered(" ".join(text.split())) from None
        raise


def _said(answer: dict[str, Any]) -> str:
    from ghstate.github.transport import describe_errors

    errors = [e for e in answer.get("errors") or () if isinstance(e, dict)]
    return describe_errors(errors) if errors else ""


def _create_issue(s: _Session) -> tuple[bool | None, str]:
    body = f"ghstate doctor {s.token}: version 1\n\nline two of version 1\n"
    created = _call(lambda: s.api.create_issue(TITLE, body, [LABEL], landed=lambda: None))
    data = _call(lambda: s.graphql("checkpoint", {"number": created["number"], "comments": 1, "labels": LABEL,
                                                  "ref": s.ref}, f"reading #{created['number']}"))
    s.issue = {**((data.get("repository") or {}).get("issue") or {}), "body": body}
    s.repository = (data.get("repository") or {}).get("id") or ""
    return True, f"#{created['number']}"


def _objects(s: _Session) -> tuple[bool | None, str]:
    try:
        s.tree = _call(lambda: s.api.tree(TREE_FILES))
        first = _call(lambda: s.api.commit(f"ghstate doctor {s.token}: a probe of the write log", s.tree, []))
    except RemoteError as exc:
        if exc.status in (403, 404):
            return False, f"{' '.join(str(exc).split())}; {CONTENTS.format(repo=s.api.repo_name)}"
        raise
    s.commits.append(first)
    return True, f"tree {s.tree[:7]}, commit {first[:7]}"


def _message(s: _Session) -> tuple[bool | None, str]:
    if not s.tree:
        return None, "not checked: no Git object could be written"
    message = f"ghstate doctor {s.token}: a large message\n\n" + json.dumps({"body": "x" * BIG})
    oid = _call(lambda: s.api.commit(message, s.tree, [s.commits[0]]))
    s.commits.append(oid)
    data = _call(lambda: s.graphql("chain_commit", {"oid": oid}, "reading the probe's commit"))
    back = ((data.get("repository") or {}).get("commit") or {}).get("message") or ""
    same = back.rstrip("\n") == message.rstrip("\n")
    return same, f"{len(message):,} characters written, {len(back):,} read back" + ("" if same else ", not the same")


def _make_ref(s: _Session) -> tuple[bool | None, str]:
    if not s.commits:
        return None, "not checked: no commit could be written"
    answer = _call(lambda: s.move(ZERO, s.commits[0]))
    now = _call(s.ref_now)
    error = _said(answer)
    ok = not error and now == s.commits[0]
    hint = f"; {CONTENTS.format(repo=s.api.repo_name)}" if "FORBIDDEN" in error else ""
    return ok, f"{error or 'made'}{hint}; the ref is {'at ' + now[:7] if now else 'not there'}"


def _stale_move(s: _Session) -> tuple[bool | None, str]:
    if len(s.commits) < 2 or _call(s.ref_now) != s.commits[0]:
        return None, "not checked: the ref is not there"
    answer = _call(lambda: s.move(s.commits[1], s.commits[1]))  # from a value it does not hold
    now = _call(s.ref_now)
    refused = bool(_said(answer)) and now == s.commits[0]
    return refused, (f"refused ({_said(answer)})" if refused else "taken: updateRefs does not compare") + \
        f"; the ref is at {now[:7]}"


def _current_move(s: _Session) -> tuple[bool | None, str]:
    if len(s.commits) < 2 or _call(s.ref_now) != s.commits[0]:
        return None, "not checked: the ref is not where the probe put it"
    answer = _call(lambda: s.move(s.commits[0], s.commits[1]))
    now = _call(s.ref_now)
    return not _said(answer) and now == s.commits[1], f"{_said(answer) or 'made'}; the ref is at {now[:7]}"


def _batched(s: _Session) -> tuple[bool | None, str]:
    """A refused move and a body's write in one request (``AppendCheckpoint``): whether GitHub runs the body's
    write after the refused move. ghstate handles both; the row says which this GitHub does."""
    if len(s.commits) < 2 or not s.issue.get("id"):
        return None, "not checked: no ref or no issue"
    body = f"ghstate doctor {s.token}: version 3\n\nline two of version 3\n"
    answer = _call(lambda: s.api.graphql("append_checkpoint", {
        "refs": {"repositoryId": s.repository, "refUpdates": [{"name": s.ref, "beforeOid": s.commits[0],
                                                              "afterOid": s.commits[0]}]},
        "issue": {"id": s.issue["id"], "body": body}, "edits": EDITS, "ref": s.ref},
        partial=True, what="a refused move and a body's write"))
    data = answer.get("data") or {}
    moved = data.get("updateRefs") is not None
    written = bool((data.get("updateIssue") or {}).get("issue"))
    if written:
        s.issue["body"] = body
    if moved:
        return False, "the move was made although the ref no longer held its value"
    return True, ("the body's write ran after the refused move" if written else
                  "the body's write did not run after the refused move") + " (ghstate handles both)"


def _listed_refs(s: _Session) -> tuple[bool | None, str]:
    if not _call(s.ref_now):
        return None, "not checked: the ref is not there"
    data = _call(lambda: s.graphql("list_refs", {"prefix": "refs/ghstate/doctor/"}, "listing the probe's refs"))
    names = [r.get("name") for r in (((data.get("repository") or {}).get("refs") or {}).get("nodes") or ()) if r]
    if s.token in names:
        return True, "the probe's ref is listed"
    return None, "the probe's ref is not listed: a write found by its branch reads its checkpoint once more"


def _answer(s: _Session) -> tuple[bool | None, str]:
    if not s.issue.get("id"):
        return None, "not checked: no issue"
    before = s.issue["body"]
    body = f"ghstate doctor {s.token}: version 2\n\nline two of version 2\n"
    issue = _write(s, body)
    listed = _listed(issue)
    ok = listed[:2] == [body, before]
    seen = ", ".join(_short(t) for t in listed[:2]) or "no version"
    return ok, f"newest listed: {seen}" + ("" if ok else "; expected this write's, then the one it wrote over")


def _quick_saves(s: _Session) -> tuple[bool | None, str]:
    if not s.issue.get("id"):
        return None, "not checked: no issue"
    bodies = [f"ghstate doctor {s.token}: version {i}\n\nline two of version {i}\n" for i in (4, 5)]
    _write(s, bodies[0])
    issue = _write(s, bodies[1])  # right after the one before, by the same token
    listed = _listed(issue)
    ok = listed[:2] == [bodies[1], bodies[0]]
    return ok, ("two versions" if ok else f"newest listed: {', '.join(_short(t) for t in listed[:2])}: quick saves "
                "by one token were kept as one")


def _write(s: _Session, body: str) -> dict[str, Any]:
    data = _call(lambda: s.api.graphql("update_checkpoint", {"input": {"id": s.issue["id"], "body": body},
                                                             "edits": EDITS, "ref": s.ref},
                                       what=f"editing #{s.issue.get('number')}"))
    s.issue["body"] = body
    return (data.get("updateIssue") or {}).get("issue") or {}


def _errors(s: _Session) -> tuple[bool | None, str]:
    """A GraphQL error comes as GitHub documents it: HTTP 200, ``errors`` with a ``type``."""
    answer = _call(lambda: s.graphql("checkpoint", {"number": 2_000_000_000, "comments": 1, "labels": LABEL,
                                                    "ref": s.ref}, "asking for no issue", partial=True))
    types = [e.get("type") for e in answer.get("errors") or [] if isinstance(e, dict)]
    return "NOT_FOUND" in types and "data" in answer, f"error types {types or 'none'}"


def _search(s: _Session) -> tuple[bool | None, str]:
    """A body written now, with a word in sight and one in a hidden marker: searched for until the index holds
    it (``SEARCH_WAIT``), then the hidden word. Never fails: what it saw says what ghstate does with it."""
    if not s.issue.get("id"):
        return None, "not checked: no issue"
    shown, hidden = f"{s.token}shown", f"{s.token}hidden"
    _write(s, f"<!-- ghstate:doctor {hidden} -->\nghstate doctor {s.token}: searched for as {shown}\n")
    started = _clock()
    while not _found(s, shown):
        if _clock() - started >= SEARCH_WAIT:
            return None, (f"not found in {SEARCH_WAIT:.0f} s: a checkpoint the branch index does not hold (the "
                          "issue form's, a person's) is found by its branch only once the search has it; give its "
                          "number until then")
        _sleep(SEARCH_EVERY)
    after = f"found {_clock() - started:.0f} s after the write"
    if _found(s, hidden):
        return True, f"{after}; a hidden marker's words too"
    return True, (f"{after}; a hidden marker's words not: a checkpoint an older ghstate made is found by its "
                  "title (Checkpoint: BRANCH) or its body's text")


def _found(s: _Session, word: str) -> bool:
    query = f"repo:{s.api.repo_name} is:issue label:{LABEL} in:body {word}"
    data = _call(lambda: s.api.graphql("doctor_search", {"query": query}, what="searching issues"))
    return bool((data.get("search") or {}).get("issueCount"))


def _clean_up(s: _Session, unanswered: str) -> list[Probe]:
    """The ref deleted, the issue closed: rows of their own (a failure says what to remove by hand)."""
    rows = []
    if s.commits and not unanswered:
        try:
            now = _call(s.ref_now)
            if now:
                answer = _call(lambda: s.move(now, ZERO))
                if _said(answer) or _call(s.ref_now):
                    raise RemoteError(_said(answer) or "it is still there")
            rows.append(Probe("the probe's ref is deleted", True, s.ref))
        except (GhstateError, _Unanswered) as exc:
            rows.append(Probe("the probe's ref is deleted", False, f"{s.ref} may be left ({exc}); delete it by hand"))
    if s.issue.get("id"):
        try:
            _call(lambda: s.api.graphql("close_issue", {"input": {"issueId": s.issue["id"],
                                                                  "stateReason": "NOT_PLANNED"}},
                                        number=s.issue.get("number"), what="closing the probe's issue"))
            rows.append(Probe("the throwaway issue is closed", True, f"#{s.issue.get('number')}, labelled {LABEL}"))
        except (GhstateError, _Unanswered) as exc:
            rows.append(Probe("the throwaway issue is closed", False,
                              f"#{s.issue.get('number')} is still open ({exc}); close it by hand"))
    return rows


def _listed(issue: dict[str, Any]) -> list[str | None]:
    """The versions an answer lists, newest first (None: a deleted one)."""
    return [version_text(e) for e in versions(issue)]


def issue_probe(api: GitHubAPI, number: int) -> list[Probe]:
    """An existing issue's newest versions read as a write's answer is read: each placed, a deleted one as
    no text (``doctor --github --issue N``, after deleting a revision on github.com)."""
    owner, _, name = api.repo_name.partition("/")
    data = api.graphql("body_edits", {"owner": owner, "name": name, "number": number, "edits": EDITS},
                       number=number, what=f"reading #{number}'s edit history")
    issue = (data.get("repository") or {}).get("issue") or {}
    listed = _listed(issue)
    count = (issue.get("userContentEdits") or {}).get("totalCount") or 0
    deleted = sum(1 for text in listed if text is None)
    ok = len(listed) == min(count, EDITS) and (not listed or listed[0] is None or
                                               " ".join((listed[0] or "").split()) ==
                                               " ".join((issue.get("body") or "").split()))
    return [Probe(f"#{number}'s newest versions read as a write reads them", ok,
                  f"{count} versions, {deleted} of the newest {len(listed)} deleted (read as no text)")]


def _short(text: str | None) -> str:
    if text is None:
        return "none (deleted or missing)"
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 40 else flat[:39] + "…")
