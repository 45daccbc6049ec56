"""What a checkpoint store is: the protocol the local store (``ghstate.local.store``) and the GitHub store
(``ghstate.github.store``) both keep, and the values they hand back.

Both stores speak in raw bodies and never parse them: what a body means is ``ghstate.core``'s business.
"""


from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, get_args

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.marker import LogState
    from ghstate.core.model import Revision
    from ghstate.core.writelog import LogEntry

StoreKind = Literal["local", "github"]
STORE_KINDS: tuple[StoreKind, ...] = get_args(StoreKind)


class Stored(NamedTuple):
    """A checkpoint as a store holds it."""

    number: int
    title: str
    body: str
    location: str  # the issue URL, or the file path
    labels: tuple[str, ...] = ()
    state: str = "open"
    version: str = ""  # what tells a re-read whether it changed (ETag, file stamp)
    comments: int = 0  # the comments (GitHub), the lines of its log (local): the log's length
    edits: int = 0  # versions of the body in its edit history, the first included (GitHub's edit log)


class Changed(Exception):
    """The checkpoint changed while a write was being resent: merge with ``fresh`` and write again."""

    def __init__(self, fresh: Stored) -> None:
        super().__init__(f"#{fresh.number} changed meanwhile")
        self.fresh = fresh


class Partial(Exception):
    """A listing that stopped before the end (too many open checkpoints to read them all)."""

    def __init__(self, read: int) -> None:
        super().__init__(f"only the {read:,} most recently updated open checkpoints were read")
        self.read = read


class Note(NamedTuple):
    """A comment on a checkpoint that a resume may show."""

    author: str
    association: str
    created_at: str
    body: str
    url: str = ""


class Memory(Protocol):
    """The writes this machine reported as made (``ghstate.local.reported``), for a store whose log could
    lose one: remembered until a read finds them."""

    def remember(self, repo: str, number: int, entry: "LogEntry") -> None: ...

    def remembered(self, repo: str, number: int) -> list[Any]: ...  # ``Remembered``: (entry, said)

    def forget(self, repo: str, number: int, write: str) -> None: ...

    def said(self, repo: str, number: int, entry: "LogEntry") -> None: ...


class Store(Protocol):
    """A place where checkpoints live. Every write adds one entry to the store's write log, logged with
    the write itself (``create``/``update`` take it as ``entry``): how and where is the store's own
    business (GitHub: in the body it saves, read back from the body's edit history; the local store: a
    line of ``log/N.jsonl`` before the body). A body's marker (``LogState``) says which log it speaks of
    (``log_via``) and how far it holds it; the store answers for that log, an older one included."""

    kind: StoreKind
    remote: bool  # what it holds leaves this machine (size limits, the secret scan, kept writes apply)
    log_via: str  # the log this store's writes keep ("edits" or "comments", as a marker's LogState names it)
    notices: list[str]  # problems worth a warning that did not stop the command

    def lock(self) -> AbstractContextManager[None]: ...  # writers on this machine, one at a time

    def get(self, number: int) -> Stored: ...

    def list_open(self) -> list[Stored]: ...

    def iter_open(self) -> Iterator[Stored]: ...  # most recent first, lazily

    def create(self, title: str, body: str, unique: str = "", entry: "LogEntry | None" = None) -> Stored: ...

    # The checkpoint again right before a write when it changed since ``stored`` was read (None: as it was,
    # or the store cannot tell before the write: then the write's answer tells, through ``version``).
    def reread(self, stored: Stored) -> Stored | None: ...

    def update(self, stored: Stored, body: str, title: str | None = None,
               labels: tuple[str, ...] | None = None, entry: "LogEntry | None" = None) -> Stored: ...

    # A finished checkpoint, closed: no longer open (``list``, a branch's lookup), still readable by number.
    def close(self, stored: Stored) -> Stored: ...

    # How long ``body`` is as the store keeps it with ``entry`` (GitHub: the entry is in the body it saves).
    def stored_size(self, body: str, entry: "LogEntry | None") -> int: ...

    # How many entries the log that ``state`` speaks of holds (each write adds one), as ``stored`` was read.
    def log_length(self, stored: Stored, state: "LogState") -> int: ...

    # Whether that log may hold a write a body with ``state`` lacks (from the counts alone, nothing read).
    def lacking(self, stored: Stored, state: "LogState") -> bool: ...

    # The entries after position ``after`` of the log ``state`` speaks of; for a body of an older log than
    # the store's own, the store's own newest entries too, ordered after every position of the older one.
    def log(self, stored: Stored, state: "LogState", after: int, pages: int = ...) -> list["LogEntry"]: ...

    # The body as the version at ``position`` of the store's log held it (GitHub keeps every version of a
    # body); None where the log's entries are not versions of the body (a log apart from it).
    def version(self, stored: Stored, position: int) -> Stored | None: ...

    # The log's entries that may have been written since ``when`` (a time as ghstate writes them), newest
    # included, for a write kept while the store was out of reach: was it made after all, and what did later
    # writes set.
    def log_since(self, stored: Stored, when: str) -> list["LogEntry"]: ...

    def revisions(self, number: int) -> list["Revision"]: ...

    # Tell the people who follow the checkpoint something they should act on (GitHub: one comment, which
    # notifies them); the URL of what was posted, or "" where there is no one to tell.
    def notify(self, stored: Stored, text: str) -> str: ...
