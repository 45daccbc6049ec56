"""A checkpoint issue's body on GitHub: the body written alone (``UpdateCheckpoint``), and its edit history
paged by time, to find the people's saves a write replaced (the rule is ``ghstate.core.saves``'), and the
saves an edited body as read is made of (one request, on a read that finds the body edited).

A body has no compare-and-set: a write may land over a person's save made after the writer read. GitHub
keeps every version of the body (``userContentEdits``, newest first, each whole, with its editor and
``editedAt``); a write's answer lists the newest EDITS of them. They are read further, a page at a time and
back to the read, only when the versions listed do not reach the read and the oldest of them is a render
(which may have replaced a save below it). A history that does not list the write's own version yet (an
index behind its body) is read again after a short wait, HISTORY_READS times at most; if it never shows
it, that is said, and the rule runs on what was listed.
"""

from __future__ import annotations

from typing import Any

from ghstate.core.chain import as_written, ref_name
from ghstate.core.saves import Version, reaches, replaced_saves, same, saves_in, shows
from ghstate.errors import NotFound, RemoteError
from ghstate.github.transport import AnswerLost
from ghstate.store import BodyVersion, Stored, Unchecked

EDITS = 3  # newest versions of a body a write's answer holds: its own, the one it wrote over, and one saved on top
HISTORY_READS = 3  # reads of an edit history that does not show a write yet (an index behind its body)
HISTORY_WAIT = 1.0  # seconds before a history is read again (GitHub's index catches up in time, not in reads)
HISTORY_PAGE = 10  # versions a page holds when the history is read back to the read
HISTORY_PAGES = 10  # pages read at most (other writes may have come on top of it meanwhile)


def versions(issue: dict[str, Any]) -> list[dict[str, Any]]:
    """The versions of a body an answer lists (``userContentEdits``), newest first."""
    return [n for n in ((issue.get("userContentEdits") or {}).get("nodes") or ()) if n]


def version_text(edit: dict[str, Any]) -> str | None:
    """A version's whole text (GitHub's ``diff``); None when it was deleted from the history."""
    return None if edit.get("deletedAt") or edit.get("diff") is None else str(edit["diff"])


def login(actor: dict[str, Any] | None) -> str:
    """An actor's login as REST names it: GraphQL calls a GitHub App's bot ``slug``, REST ``slug[bot]``."""
    if not actor or not actor.get("login"):
        return ""
    name = str(actor["login"])
    if actor.get("__typename") == "Bot" and not name.endswith("[bot]"):
        name += "[bot]"
    return name


def _listed(issue: dict[str, Any]) -> list[Version]:
    return [Version(version_text(n), login(n.get("editor")), str(n.get("editedAt") or "")) for n in versions(issue)]


def _together(first: list[Version], then: list[Version]) -> list[Version]:
    """A history read again (``then``; empty: the read failed, ``first`` stands), with the texts of versions
    deleted from it since ``first`` listed them (a person may delete a version while a write reads: what was
    read of it is still what it held)."""
    if not then:
        return first
    texts = {(v.at, v.editor): v.text for v in first if v.text is not None}
    return [v._replace(text=texts.get((v.at, v.editor))) if v.text is None else v for v in then]


def _merged_of(stored: Stored) -> frozenset[str]:
    """The digests of people's bodies the chain held as ``stored`` was read."""
    link = stored.head.link if stored.head is not None else None
    return frozenset(link.merged) if link is not None else frozenset()


class Body:
    """One repository's checkpoint bodies, through the store's GraphQL (``GitHubStore.graphql``)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def write(self, stored: Stored, payload: dict[str, Any], resending: AnswerLost | None = None) -> dict[str, Any]:
        """``updateIssue`` with ``payload`` (the body, and the title and labels when they change): GitHub's whole
        answer (the issue as written, the newest versions of its body, the chain's head now). A lost answer
        raises ``AnswerLost``: the caller looks and resends."""
        number = stored.number
        try:
            return self.store.graphql("update_checkpoint", {"input": payload, "edits": EDITS, "ref": ref_name(number)},
                                      partial=True, number=number, lost=True, resending=resending,
                                      what=f"updating issue #{number}")
        except NotFound as exc:  # it was there a moment ago: access lost, or moved; keep the write
            raise RemoteError(str(exc), status=404) from None

    def replaced(self, stored: Stored, written: str, answer: dict[str, Any] | None,
                 merged: frozenset[str]) -> tuple[BodyVersion, ...]:
        """People's saves the write of ``written`` over the body read as ``stored`` replaced, oldest first
        (``ghstate.core.saves``' rule; ``merged``: digests already merged). From the write's ``answer`` (its
        issue; None: the answer was lost, the history is paged instead), read further as the module says."""
        if answer is None:  # the answer was lost: the history read back to the read (said when it cannot be)
            since = self._since(stored)
            listed = self._shown(stored, written, since) if since is not None else self._unread(stored, written)
        else:
            listed = self._until_shown(stored, written, answer)
        return tuple(BodyVersion(str(v.text), v.editor, v.at)
                     for v in replaced_saves(listed, written, Version(stored.body, stored.editor, stored.edited_at),
                                             merged))

    def look_back(self, stored: Stored, look: Unchecked) -> tuple[BodyVersion, ...] | None:
        """The people's saves the body ``look.written`` replaced since the body the write read (``look``: one
        whose history did not show it), looked for now; None while the history still does not show it."""
        read = Stored(look.number, stored.title, look.read, stored.location, edited_at=look.read_at)
        listed = self._since(read)
        if listed is None or not shows(listed, look.written):
            return None
        return tuple(BodyVersion(str(v.text), v.editor, v.at)
                     for v in replaced_saves(listed, look.written, Version(look.read, "", look.read_at),
                                             _merged_of(stored)))

    def saves(self, stored: Stored, merged: frozenset[str]) -> tuple[BodyVersion, ...]:
        """The people's saves the edited body read as ``stored`` is made of, oldest first, each its own (one
        request: the newest HISTORY_PAGE versions; ``ghstate.core.saves.saves_in``); where the history cannot
        tell them apart (off, deleted versions, more saves than a page), the oldest is ``mixed``."""
        issue = self._edits(stored.number, HISTORY_PAGE, None) or {}
        edits = issue.get("userContentEdits") or {}
        read = Version(stored.body, stored.editor, stored.edited_at)
        complete = bool(edits) and not (edits.get("pageInfo") or {}).get("hasNextPage")
        return tuple(BodyVersion(str(v.text), v.editor, v.at, mixed)
                     for v, mixed in saves_in(_listed(issue), read, merged, complete))

    def _until_shown(self, stored: Stored, written: str, answer: dict[str, Any]) -> list[Version]:
        """The versions the write's answer lists, read further back when they stop above the read at a render,
        and read again after a wait while they do not show the write's own version (said when they never do)."""
        listed = _listed(answer)
        if len(listed) < ((answer.get("userContentEdits") or {}).get("totalCount") or 0) \
                and shows(listed, written) and self._short(listed, stored):
            listed = _together(listed, self._since(stored) or [])
        return self._shown(stored, written, listed)

    def _shown(self, stored: Stored, written: str, listed: list[Version]) -> list[Version]:
        """``listed`` read again after a wait while it does not show the write's own version (an index behind its
        body: the saves just before it are not listed either), HISTORY_READS reads in all; a write whose answer
        was lost reads the same way. One never shown is said, and kept for a later look
        (``GitHubStore.unchecked``): a person's save it wrote over is merged once the index shows it."""
        for attempt in range(1, HISTORY_READS):
            if not listed or shows(listed, written):  # never edited, or the write is there
                return listed
            self.store.api.sleep(HISTORY_WAIT * attempt)  # an index behind its body: it catches up in time
            listed = _together(listed, self._since(stored) or [])
        if listed and not shows(listed, written):
            self._unchecked(stored, written, f"did not show this write after {HISTORY_READS} reads")
        return listed

    def _unread(self, stored: Stored, written: str) -> list[Version]:
        """A lost answer's look whose history could not be read at all: said, and kept for a later look."""
        self._unchecked(stored, written, "could not be read")
        return []

    def _unchecked(self, stored: Stored, written: str, why: str) -> None:
        """Whether the body ``written`` wrote over a person's save could not be checked: said, and kept for the
        next command that reaches GitHub to look again (``Store.unchecked``)."""
        self.store.notices.append(
            f"GitHub's edit history of #{stored.number} {why}, so whether this write wrote over a person's save "
            "just before it could not be checked yet; it is looked for again by the next command that reaches "
            "GitHub (GitHub keeps every version under \"edited\" on the issue)")
        self.store.unchecked.append(Unchecked(stored.number, stored.body, stored.edited_at, written))

    @staticmethod
    def _short(listed: list[Version], stored: Stored) -> bool:
        """Whether the versions listed stop above the read at a render (which may have replaced a save)."""
        return bool(listed) and not reaches(listed, stored.edited_at) and not same(listed[-1].text, stored.body) \
            and listed[-1].text is not None and as_written(listed[-1].text)

    def _since(self, stored: Stored) -> list[Version] | None:
        """The body's versions back to the read (the body the write read, or one older than the read), newest
        first, read a page at a time, at most HISTORY_PAGES pages; None when not even the first could be read."""
        listed: list[Version] = []
        after = None
        for page in range(HISTORY_PAGES):
            answer = self._edits(stored.number, HISTORY_PAGE, after)
            if answer is None and not page:
                return None
            issue = answer or {}
            listed += _listed(issue)
            info = (issue.get("userContentEdits") or {}).get("pageInfo") or {}
            after = info.get("endCursor") if info.get("hasNextPage") else None
            if not after or reaches(listed, stored.edited_at) or any(same(v.text, stored.body) for v in listed):
                break
        return listed

    def _edits(self, number: int, count: int, after: str | None) -> dict[str, Any] | None:
        try:
            data = self.store.graphql("body_edits", self.store.variables(number=number, edits=count, after=after),
                                      number=number, what=f"reading the edit history of #{number}")
        except (RemoteError, NotFound):
            return None
        return (data.get("repository") or {}).get("issue")
