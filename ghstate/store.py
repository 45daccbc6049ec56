"""What a checkpoint store is: the protocol the local store (``ghstate.local.store``) and the GitHub store
(``ghstate.github.store``) both keep, and the values they hand back.

Both keep a checkpoint's writes as a chain of commits moved only by compare-and-swap (``ghstate.core.chain``:
GitHub a ref, the local store generation files created exclusively) and the body people read as the
chain's mirror. Stores speak in raw bodies and commits; what a body means is ``ghstate.core``'s business,
which a store asks only to tell whether a body is one ghstate wrote (``chain.as_written``), which of the
versions a write replaced are people's saves (``saves.replaced_saves``) and which branch it names
(``parse.branch_match``).
"""


from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, get_args

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.chain import Head, Link
    from ghstate.core.marker import PullRequest
    from ghstate.core.model import Revision

StoreKind = Literal["local", "github"]
STORE_KINDS: tuple[StoreKind, ...] = get_args(StoreKind)


class Stored(NamedTuple):
    """A checkpoint as a store holds it: the issue (or file) and the head of its chain."""

    number: int
    title: str
    body: str
    location: str  # the issue URL, or the file path
    labels: tuple[str, ...] = ()
    state: str = "open"
    version: str = ""  # when it last changed (GitHub's updatedAt, a file stamp)
    comments: int = 0  # the comments (GitHub)
    head: "Head | None" = None  # the head of its chain; None: no chain (yet), or not readable
    chained: bool = True  # False: whether it has a chain is not known (the chain could not be read)
    editor: str = ""  # who last edited the body, when the store knows (a person's edit is named by it)
    edited_at: str = ""
    # Who opened it (GitHub): their login and association with the repository, and whether the policy trusts them
    # (``Policy.trusts``). Only a trusted author's issue is ever taken as a branch's checkpoint; another is read
    # by number alone, said as such. A store that keeps no authors (the local store: this machine's files) trusts.
    author: str = ""
    association: str = ""
    trusted: bool = True


class BodyVersion(NamedTuple):
    """A version of a body saved by a person: one a write's mirror wrote over (merged by the next round), or
    one of the saves an edited body as read is made of (``Store.saves``). ``mixed``: it may hold other
    people's saves too (no version history told them apart), under its last editor."""

    body: str
    editor: str = ""
    at: str = ""
    mixed: bool = False


class WriteOutcome(NamedTuple):
    """What became of a write's commit (``Store.append``). ``landed``: the chain moved to it. Otherwise
    ``stored`` is the checkpoint as it is now (another writer moved the head first: build on it). When it
    landed, ``stored`` is the checkpoint after its mirror; ``overwritten``: people's saves the mirror wrote
    over (theirs to merge next); ``moved``: the head moved past this commit while its mirror was written
    (the mirror may be older than the head)."""

    landed: bool
    stored: Stored
    overwritten: tuple[BodyVersion, ...] = ()
    moved: bool = False


def untrusted(author: str, association: str) -> str:
    """Where a checkpoint ghstate does not trust comes from (``Stored.trusted`` False), in the words every notice
    of it uses: "was opened by" whom (an issue), or, for a local checkpoint copied from a store the repository
    committed (``COMMITTED``), that."""
    if association == "COMMITTED":
        return f"came from {author} (anyone who could commit to it wrote it), and is not this machine's own"
    return (f"was opened by {author or 'someone'} ({association or 'no association'} with the repository), whom "
            "ghstate does not trust (trusted_associations, trusted_authors in the config)")


def passed_over(notices: list[str], number: int, author: str, association: str, branch: str,
                indexed: bool = False) -> None:
    """Say, once per command, that issue ``number`` names ``branch`` but is not taken as its checkpoint (or, with
    ``indexed``, not added to the branch index): who opened it is not trusted (``Stored.trusted``)."""
    what = "not added to the branch index" if indexed else "not taken as its checkpoint"
    where = f"branch {branch}" if branch else "no branch"
    said = f"#{number} names {where}, but it {untrusted(author, association)}: {what}"
    if said not in notices:
        notices.append(said)


class Unchecked(NamedTuple):
    """A body a write wrote whose edit history never showed it within its reads (an index seconds behind): a
    person's save just before it may have been written over, and could not be looked for. What a later look
    needs (``Store.look_back``): the checkpoint, the body the write read and when it was saved, the body it
    wrote."""

    number: int
    read: str
    read_at: str
    written: str


class Unindexed(NamedTuple):
    """What ``Store.find_branch`` answers when the store cannot tell from its index (a repository written by
    an older ghstate): the open checkpoints are looked through instead."""


UNINDEXED = Unindexed()


class Partial(Exception):
    """A listing that stopped before the end (too many open checkpoints to read them all)."""

    def __init__(self, read: int) -> None:
        super().__init__(f"only the {read:,} most recently updated open checkpoints were read")


class Unprotected(Exception):
    """The chain cannot be written here (a token without Contents: write, a GitHub without ``updateRefs``):
    its message says what and what fixes it. The ref did not move; the body's write sent in the same request
    may have run, and ``overwritten`` holds people's saves it was found to have written over (to merge). The
    writer then writes the body alone; concurrent writers are not protected."""

    def __init__(self, why: str, overwritten: "tuple[BodyVersion, ...]" = ()) -> None:
        super().__init__(why)
        self.overwritten = overwritten


class Note(NamedTuple):
    """A comment on a checkpoint that a resume may show."""

    author: str
    association: str
    created_at: str
    body: str
    url: str = ""


class Store(Protocol):
    """A place where checkpoints live, each with its chain of writes."""

    kind: StoreKind
    remote: bool  # what it holds leaves this machine (size limits and kept writes apply)
    notices: list[str]  # problems worth a warning that did not stop the command
    unchecked: list[Unchecked]  # bodies written whose history never showed them: a person's save to look for later

    def lock(self) -> AbstractContextManager[None]: ...  # writers on this machine, one at a time

    def get(self, number: int) -> Stored: ...

    # ``bodies``: False when no field the caller shows needs them (GitHub then reads 100 a page, not 10)
    def list_open(self, bodies: bool = True) -> list[Stored]: ...

    # most recent first, lazily; ``heads``: with what each chain's head holds where the store has it at no cost
    # (the local store; GitHub reads a head by number, ``with_head``)
    # ``page``: how many the caller reads before it stops (a store that reads in pages may read that many at once)
    def iter_open(self, heads: bool = False, bodies: bool = True, page: int = 0) -> Iterator[Stored]: ...

    # The checkpoint of ``branch``: the newest open one its marker names, else the newest closed one where the
    # store knows it; None when there is none; UNINDEXED when the store cannot tell (look through ``iter_open``).
    def find_branch(self, branch: str) -> "Stored | None | Unindexed": ...

    # The pull request of ``branch`` as the store read it with ``find_branch`` (no request of its own); None
    # when it has none or the store does not know.
    def pull_request(self, branch: str) -> "PullRequest | None": ...

    # ``branch``'s entry in the store's index made to name ``stored`` (``leaving``: the branch it moved from,
    # whose entry is dropped when it names it): the checkpoint the entry names afterwards, another one when
    # a concurrent creator's was indexed first. A store without an index answers ``stored.number``.
    def index_branch(self, stored: Stored, branch: str, leaving: str = "") -> int: ...

    # A new checkpoint with ``body`` (its chain starts at its first update); ``unique``: text only its body
    # holds, to find one whose creation landed although the answer was lost.
    def create(self, title: str, body: str, unique: str = "") -> Stored: ...

    # The people's saves an edited body (``stored.body``, a person's edit of its chain's mirror) is made of,
    # oldest first, each its own (who, when, its whole text); the last is the body as read. A store that keeps
    # no versions (the local store's file) answers the body alone.
    def saves(self, stored: Stored) -> "tuple[BodyVersion, ...]": ...

    # ``stored`` with its head's content (a listing may have read only the head's oid).
    def with_head(self, stored: Stored) -> Stored: ...

    # The commit ``oid`` of ``stored``'s chain (what a person's page was made from); None when it is gone.
    def link(self, stored: Stored, oid: str) -> "Link | None": ...

    # The newest ``count`` commits of the chain, newest first: (oid, link).
    def links(self, stored: Stored, count: int) -> "list[tuple[str, Link]]": ...

    # Whether the chain holds a commit of the write ``write`` (a write whose answer was lost, a kept write that
    # landed after all).
    def has_write(self, stored: Stored, write: str) -> bool: ...

    # The people's saves the body ``written`` replaced since the read (``Unchecked``), looked for again now that
    # the history may show it; None while it still does not (the local store keeps no history: none)
    def look_back(self, stored: Stored, look: Unchecked) -> "tuple[BodyVersion, ...] | None": ...

    # Make ``link`` the head of ``stored``'s chain, only if the head is still ``stored.head`` (none: the chain
    # starts), then write its mirror (``link.body`` naming the new commit) with ``title``/``labels`` when
    # given. Raises ``Unprotected`` where the chain cannot be written: the ref did not move, and the body's
    # write in the same request may have run (the writer then writes the body alone).
    def append(self, stored: Stored, link: "Link", title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome: ...

    # Write the body alone (a mirror repaired; a write where the chain cannot be written).
    def mirror(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None) -> WriteOutcome: ...

    # The label a checkpoint carries that ``stored`` lacks ("" when it has it, or the store has no labels).
    def missing_label(self, stored: Stored) -> str: ...

    # A finished checkpoint, closed: no longer open (``list``), still readable by number (and by its branch, as
    # closed). ``reason``: "completed" (done, or its pull request merged) or "not_planned" (abandoned, stale).
    def close(self, stored: Stored, reason: str = "completed") -> Stored: ...

    # ``branch`` is gone (deleted after its checkpoint closed): its entry in the store's index dropped when it
    # names ``stored``, closed; whether it was. A store without an index answers False.
    def retire_branch(self, branch: str, stored: Stored) -> bool: ...

    def revisions(self, number: int) -> "list[Revision]": ...

    # Tell the people who follow the checkpoint something they should act on (GitHub: one comment, which
    # notifies them); the URL of what was posted, or "" where there is no one to tell.
    def notify(self, stored: Stored, text: str) -> str: ...
