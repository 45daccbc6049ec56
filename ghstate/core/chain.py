"""The write log as a chain of commits, and the body as its mirror. Pure: the stores read and write.

Each write to checkpoint N is one commit on N's chain (on GitHub the ref ``refs/ghstate/checkpoints/N``,
locally a generation file): its parent is the head the writer read, and it holds the whole checkpoint
(the body it renders, with the title) and the entries of the writes it records (who, as what, when, the
write's id, what changed). The chain moves only by compare-and-swap from the head a writer read, so of
any number of writers that read one head exactly one moves it; the others build on the new head.

The issue body (or ``N.md``) is the chain's mirror: the body of the head, with one key added last to its
hidden marker, ``"chain": {"head": OID, "body": DIGEST}``, naming the commit it renders and the digest
of the body without that key. A body is then one of:

- ``current``: the unedited mirror of the head;
- ``stale``: the unedited mirror of another commit (a mirror that landed after a later one, or of a
  commit that lost its race), or a person's save the chain has merged already: repaired by the next
  write, never read as an edit;
- ``edited``: a person's edit (its text is not what any writer rendered), made from the page of the
  commit its marker names (``base``; "" when the marker is gone): merged onto the head as that
  person's entry, three-way, so that what they changed or deleted stands;
- ``unchained``: there is no chain (yet): the body is the checkpoint, as before chains.

A commit's message is a headline a person can read in ``git log`` (with the write's id, so that a write
is found by it) and, after a blank line, one JSON object (``Link.to_message``).
"""


import hashlib
import json
import re
from typing import Any, NamedTuple

from ghstate.core.marker import MARKER_LINE, integer, texts
from ghstate.core.marker import text as _text
from ghstate.core.model import Checkpoint, Revision

FORMAT = "ghstate-chain/1"
KEY = "chain"  # the mirror's key, always the last of its marker
OLD_ENTRY = "entry"  # the key a body's write-log entry had before chains (read, and dropped)
MERGED_KEPT = 20  # digests of people's bodies a commit remembers as merged
REF_PREFIX = "refs/ghstate/checkpoints/"
ZERO = "0" * 40  # the object id a ref move names for "no such ref yet" (updateRefs' beforeOid) or "delete it"
_KEY = json.dumps(KEY)
_OLD = json.dumps(OLD_ENTRY)
_HEADLINE_WRITE = re.compile(r"\bw:([0-9a-f]{6,40})\b")


def ref_name(number: int) -> str:
    return f"{REF_PREFIX}{number}"


def digest(body: str) -> str:
    """The digest a mirror names its body by: line endings and trailing blank space do not count (the web
    editor sends CRLF)."""
    text = body.replace("\r\n", "\n").rstrip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Entry(NamedTuple):
    """One write as its commit records it: who, as what, when and what changed (``revision``), and the
    write's id ("" for a person's edit, which has none)."""

    revision: Revision
    write: str = ""

    def to_data(self) -> dict[str, Any]:
        return {**self.revision.as_dict(), **({"write": self.write} if self.write else {})}

    @classmethod
    def from_data(cls, data: Any) -> "Entry":
        return cls(Revision.from_dict(data), _text(data.get("write"))) if isinstance(data, dict) else cls(Revision(0))


class Link(NamedTuple):
    """What one commit of the chain holds: the checkpoint's number and title, the body it renders, the
    entries of the writes it records (one, or a person's edit and the write that merged it), and the
    digests of people's bodies merged into the chain so far (newest last), so that a body merged once is
    never merged again. The first commit also holds the body the chain began from (``adopted``: a page
    saved from before the chain is merged against it); each later one names the first (``root``)."""

    number: int
    body: str
    entries: tuple[Entry, ...] = ()
    title: str = ""
    merged: tuple[str, ...] = ()
    adopted: str = ""
    root: str = ""

    @property
    def revision(self) -> int:
        return max((e.revision.revision for e in self.entries), default=0)

    def headline(self) -> str:
        """The first line of its commit: checkpoint, revision, write id, who, what changed."""
        last = self.entries[-1] if self.entries else Entry(Revision(0))
        r = last.revision
        who = r.agent or r.author or ("a person" if r.event == "edit" else "ghstate")
        role = f" ({r.role})" if r.role else ""
        write = f" w:{last.write}" if last.write else ""
        changes = "; ".join(r.changes[:3]) or r.event
        line = f"ghstate #{self.number} r{self.revision}{write}: {who}{role}: {changes}"
        return " ".join(line.split())[:200]

    def to_data(self) -> dict[str, Any]:
        return {"format": FORMAT, "checkpoint": self.number, "title": self.title,
                "entries": [e.to_data() for e in self.entries], "merged": list(self.merged[-MERGED_KEPT:]),
                **({"adopted": self.adopted} if self.adopted else {}), **({"root": self.root} if self.root else {}),
                "body": self.body}

    @classmethod
    def from_data(cls, data: Any) -> "Link | None":
        """The link ``data`` holds; None when it is not one of ghstate's chain records."""
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("body"), str):
            return None
        entries = data.get("entries")
        return cls(integer(data.get("checkpoint")), data["body"], title=_text(data.get("title")),
                   entries=tuple(Entry.from_data(e) for e in entries) if isinstance(entries, list) else (),
                   merged=texts(data.get("merged")), adopted=_text(data.get("adopted")),
                   root=_text(data.get("root")))

    def to_message(self) -> str:
        return self.headline() + "\n\n" + json.dumps(self.to_data(), ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_message(cls, message: str) -> "Link | None":
        """The link a commit message holds; None when it is not one of ghstate's chain commits."""
        start = message.find("\n{")
        if start < 0:
            return None
        try:
            data = json.loads(message[start + 1:])
        except (ValueError, RecursionError):
            return None
        return cls.from_data(data)


def headline_write(headline: str) -> str:
    """The write id a commit's headline names ("" when none)."""
    found = _HEADLINE_WRITE.search(headline or "")
    return found.group(1) if found else ""


class Head(NamedTuple):
    """The head of a checkpoint's chain as read: its commit (``oid``), what it holds (None when only the
    oid was read), and the tree its commits share (GitHub; a commit names one). ``archived``: its ref is gone
    (a closed checkpoint's chain folded into the archive, GitHub): the head is the commit its body names, and
    the next write makes the ref again."""

    oid: str
    link: "Link | None" = None
    tree: str = ""
    archived: bool = False


class MirrorKey(NamedTuple):
    """What a body's marker says of the chain: the commit it renders, and the digest of its text then
    ("" for a body written without the chain's protection: what it holds beyond ``head`` is an edit)."""

    head: str
    digest: str = ""


def split(text: str) -> tuple[str, "MirrorKey | None"]:
    """A body as a reader sees it (its marker without the chain's key, and without the log entry bodies
    carried before chains), and the key (None when there is none, or it is not as ghstate writes it)."""
    text = text or ""
    match = MARKER_LINE.search(text)
    raw = match.group(1) if match else ""
    try:  # not ours, or built to break a reader: the body as it is
        data = json.loads(raw) if _KEY in raw or _OLD in raw else None
    except (ValueError, RecursionError):
        data = None
    if match is None or not isinstance(data, dict) or not data or (last := list(data)[-1]) not in (KEY, OLD_ENTRY):
        return text, None
    tail = json.dumps(last) + ":" + _dumps(data[last]) + "}"  # the key as written
    head = raw[: -len(tail)] if raw.endswith(tail) else ""
    if not head.endswith((",", "{")):
        return text, None
    body = text[: match.start(1)] + head.removesuffix(",") + "}" + text[match.end(1):]
    value = data[KEY] if last == KEY else None
    if not isinstance(value, dict) or not isinstance(value.get("head"), str):
        return body, None
    return body, MirrorKey(value["head"], _text(value.get("body")))


def embed(body: str, head: str, protected: bool = True) -> str:
    """``body`` as the mirror of commit ``head``: the key added last to its marker, with the body's
    digest when ``protected`` (the commit holds exactly this body), without it for a body written
    without the chain (what it holds beyond ``head`` is then an edit for the chain to merge). A body
    without ghstate's marker is returned as it is."""
    match = MARKER_LINE.search(body)
    if match is None:
        return body
    value = {"head": head, **({"body": digest(body)} if protected else {})}
    inner = match.group(1)[:-1].rstrip()
    marker = inner + ("" if inner.endswith("{") else ",") + _KEY + ":" + _dumps(value) + "}"
    return body[: match.start(1)] + marker + body[match.end(1):]


def as_written(text: str, parsed: Checkpoint | None = None) -> bool:
    """Whether ``text`` is a body as ghstate wrote it, no person's edit in it: a mirror's key names its own
    digest; a body written without the chain, its marker the digests of its own sections (``parsed``: the
    body as the caller parsed it already)."""
    body, key = split(text)
    if key is not None and key.digest:
        return key.digest == digest(body)
    from ghstate.core.model import section_digests

    if parsed is None:
        from ghstate.core.parse import parse

        parsed = parse(body).checkpoint
    return bool(parsed.meta.digests) and parsed.meta.digests == section_digests(parsed)


def _dumps(data: Any) -> str:
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return raw.replace("<", "\\u003c").replace(">", "\\u003e")  # the comment cannot be closed early


class Mirror(NamedTuple):
    """What a body is to the chain (see the module's docstring): ``kind`` and, for an edit, the commit
    whose page it was made from (``base``, "" when not known) and its digest."""

    kind: str  # "current" | "stale" | "edited" | "unchained"
    body: str  # the body without the chain's key
    base: str = ""
    digest: str = ""


def classify(text: str, head: Head | None) -> Mirror:
    """What the body ``text`` is to the chain whose head is ``head`` (None: no chain, or unreadable)."""
    body, key = split(text)
    own = digest(body)
    if head is None or not head.oid:
        return Mirror("unchained", body, key.head if key else "", own)
    if key is not None and key.digest and key.digest == own:
        return Mirror("current" if key.head == head.oid else "stale", body, key.head, own)
    if head.link is not None and (own in head.link.merged or own == digest(head.link.body)):
        return Mirror("stale" if key is None or key.head != head.oid else "current", body, head.oid, own)
    return Mirror("edited", body, key.head if key else "", own)


def prior_entries(cp: Checkpoint) -> tuple[Entry, ...]:
    """The writes a body records from before its checkpoint had a chain (its marker's executions, and its
    own revision): the first commit's entries before its own, so that ``log`` goes on from them and
    revision numbers continue. A body still at revision 1 is its creation, whose change it shows."""
    from ghstate.core.edits import describe

    made = tuple(describe(None, cp)) if cp.meta.revision == 1 else ("written before this checkpoint's log was a chain",)
    entries = [Entry(Revision(e.revision, at=e.at, agent=e.agent, role=e.role, session=e.session,
                              event=e.event or "checkpoint", changes=made if e.revision == 1 else made[-1:]))
               for e in cp.executions if 0 < e.revision <= cp.meta.revision]
    if cp.meta.revision and all(e.revision.revision != cp.meta.revision for e in entries):
        entries.append(Entry(Revision(cp.meta.revision, at=cp.meta.updated_at or cp.meta.created_at, changes=made)))
    return tuple(entries)


def merged_after(link: "Link | None", *digests: str) -> tuple[str, ...]:
    """The merged-bodies record of a commit built on ``link`` that merges the bodies of ``digests``."""
    before = link.merged if link is not None else ()
    return tuple(dict.fromkeys((*before, *(d for d in digests if d))))[-MERGED_KEPT:]


# The one file of the tree every chain commit names: what the ref is, for a person who finds it.
TREE_FILES = {"README.md": (
    "This commit is one write to a ghstate checkpoint: its message holds the checkpoint as written and who\n"
    "wrote it; the issue's body is its mirror. The ref it is on, refs/ghstate/checkpoints/N, is no branch\n"
    "and no tag: no clone fetches it and no workflow runs on it.\n")}


def tree_id(files: dict[str, str]) -> str:
    """The Git id of a tree holding ``files`` (path → text, no folders), as Git names it: known before it
    is written, so that a commit can name it without asking (and it is written only if it is not there)."""
    entries = b""
    for path in sorted(files):
        data = files[path].encode("utf-8")
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
        entries += b"100644 " + path.encode("utf-8") + b"\0" + blob
    return hashlib.sha1(b"tree %d\0" % len(entries) + entries).hexdigest()
