"""Reading a checkpoint: finding it in a store, and the state every reader must see.

The state is the head of the checkpoint's chain (``ghstate.core.chain``), with a person's edit of the
body merged onto it (three-way, against the commit whose page they edited): what a writer builds on and
what ``resume`` shows are the same. The read side of the pipeline (``writer`` is the write side, and
reads through ``view``): it reads through the store it is given, so it is not part of the pure core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ghstate.core.chain import Mirror, as_written, classify, digest, split
from ghstate.core.marker import MARKER_LINE
from ghstate.core.model import LIST_SECTIONS, Checkpoint, section_digests
from ghstate.core.parse import branch_match
from ghstate.errors import NotFound, RemoteError
from ghstate.local import parsecache
from ghstate.store import UNINDEXED, BodyVersion, Partial, Store, Stored, Unindexed, passed_over

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.chain import Link

BASE_SEARCH = 10  # commits looked through for the page a body without the marker line was edited from


def checkpoint_of(stored: Stored) -> Checkpoint:
    """The parsed body, as it is (from the parse cache when this body was read before; the chain's key
    left out of its marker); on GitHub the issue title is the title."""
    return body_checkpoint(split(stored.body)[0], stored.title)


def body_checkpoint(body: str, title: str = "") -> Checkpoint:
    cp = parsecache.checkpoint(body)
    return cp._replace(title=title) if title else cp


class Edit(NamedTuple):
    """A person's edit merged onto the head: who and when (as the store knows), the digest of their body
    (recorded, so that it is never merged twice), the sections both they and the chain changed, and the state
    just before and just after it was merged (what their save changed, apart from any other's)."""

    editor: str
    at: str
    digest: str
    conflicts: tuple[str, ...] = ()
    before: Checkpoint = Checkpoint()
    after: Checkpoint = Checkpoint()
    mixed: bool = False  # it may hold other people's saves too (no version history told them apart)


class View(NamedTuple):
    """A checkpoint as a writer reads it: as stored, and the state every reader sees."""

    stored: Stored
    checkpoint: Checkpoint  # the head's state, with people's edits merged
    over: str  # the body a new body is written over (a person's, when they edited it: their formatting stays)
    mirror: Mirror  # what the body was to the chain
    edits: tuple[Edit, ...] = ()  # people's edits merged into ``checkpoint``, oldest first
    head: Checkpoint | None = None  # the head's state alone (None: no chain)

    @property
    def link(self) -> Link | None:
        return self.stored.head.link if self.stored.head is not None else None


def current(store: Store, stored: Stored) -> Checkpoint:
    """The checkpoint as every reader must see it (``view``)."""
    return view(store, stored).checkpoint


def view(store: Store, stored: Stored, also: tuple[BodyVersion, ...] = (), whole: bool = False) -> View:
    """The checkpoint in ``stored``: its chain's head, with the body merged onto it when a person edited
    it, then each of ``also`` (people's saves a write wrote over) that is an edit the chain does not hold.
    A body that is the head's unedited mirror needs nothing more than the read that found it, unless
    ``whole`` (a write builds on what the head holds)."""
    mirror = classify(stored.body, stored.head)
    unread = stored.head is not None and stored.head.link is None or not stored.chained
    if (mirror.kind != "current" or also or whole) and unread:
        stored = store.with_head(stored)
        mirror = classify(stored.body, stored.head)
    head = stored.head.link if stored.head is not None else None
    if mirror.kind == "current" and not also:
        cp = checkpoint_of(stored)
        return View(stored, cp, mirror.body, mirror, head=cp)
    if mirror.kind == "unchained" or head is None:  # the body is the state
        return _unchained_view(stored, mirror, also)
    return _chained_view(store, stored, mirror, head, also)


def _unchained_view(stored: Stored, mirror: Mirror, also: tuple[BodyVersion, ...]) -> View:
    """A checkpoint without a chain: its body, with each of ``also`` (a person's save that a body written
    alone wrote over) merged onto it by what they changed, known against its marker's digests."""
    cp, edits = checkpoint_of(stored), []
    for saved in also:
        body = split(saved.body)[0]
        theirs = body_checkpoint(body, stored.title)
        if theirs.meta.digests and not as_written(saved.body, theirs):
            merged, conflicts = _by_sections(cp, theirs)
            edits.append(Edit(saved.editor, saved.at, digest(body), conflicts, cp, merged))
            cp = merged
    return View(stored, cp, mirror.body, mirror._replace(kind="unchained"), tuple(edits))


def _chained_view(store: Store, stored: Stored, mirror: Mirror, head: Link, also: tuple[BodyVersion, ...]) -> View:
    """The head of the chain with the body as read (a person's edit: each of the saves it is made of, one by
    one, ``Store.saves``), then each of ``also``, merged onto it where a person edited it (each once, in that
    order). A person's save made on the person's save before it (saved in turn: the marker of each names one
    commit's page) is merged against that save, so that what the later one changed of the earlier one (a
    line it added, deleted again; the resume instruction set again) stands as the person's. A body ghstate
    wrote alone (beside a chain it could not write) is nobody's page for the next save: it is merged against
    its commit, and the save after it too."""
    head_cp = body_checkpoint(head.body, stored.title or head.title)
    cp, over, edits = head_cp, head.body, []
    read = store.saves(stored) if mirror.kind == "edited" else (BodyVersion(stored.body),)
    before: Mirror | None = None  # the save merged last, which a save from the same page was made on
    for saved in (*read, *also):
        found = mirror if saved.body == stored.body else classify(saved.body, stored.head)
        if found.kind == "edited" and found.digest not in {e.digest for e in edits}:
            on = before.body if before is not None and before.base == found.base else None
            person = not as_written(saved.body)  # not a body of ghstate's written alone
            merged, conflicts = _merged(store, stored, found, cp, on if person else None)
            over = found.body  # written over the person's text: their formatting stays
            edits.append(Edit(saved.editor, saved.at, found.digest, conflicts, cp, merged, saved.mixed))
            cp, before = merged, found if person else None
    return View(stored, cp, over, mirror, tuple(edits), head_cp)


def _merged(store: Store, stored: Stored, edit: Mirror, onto: Checkpoint,
            previous: str | None = None) -> tuple[Checkpoint, tuple[str, ...]]:
    """A person's body (``edit``) merged onto ``onto``: three-way against the page it was made from (``previous``,
    the save it was made on, when it was saved in turn after one; else ``_base``); section by section against the
    digests its marker kept when that page cannot be read."""
    from ghstate.core.merge import merge3

    theirs = body_checkpoint(edit.body, stored.title)
    base = previous if previous is not None else _base(store, stored, edit, theirs)
    if base is None:
        return _by_sections(onto, theirs)
    merged, conflicts = merge3(body_checkpoint(base, stored.title), onto, theirs)
    if previous is None and not MARKER_LINE.search(edit.body):  # which page it was is a guess: what it kept is said
        for section, item in _kept_items(onto, theirs, merged):
            _say(store, f"#{stored.number}'s body was saved without its hidden ghstate marker line and without "
                        f"the {section} item \"{item}\", which the write log holds: it was kept, as such a page may "
                        "have been opened before it was written. To remove it for good, delete it with the marker "
                        f"line (<!-- ghstate ... -->) in place, or run 'ghstate checkpoint {stored.number} --file' "
                        "with a body without it")
    return merged, tuple(conflicts)


def _kept_items(onto: Checkpoint, theirs: Checkpoint, merged: Checkpoint) -> list[tuple[str, str]]:
    """Items the chain held (``onto``) that a person's page lacks and the merge kept: (section, item)."""
    def items(cp: Checkpoint) -> dict[str, tuple[str, ...]]:
        return {"phases": tuple(p.name for p in cp.phases), **{key: getattr(cp, key) for key in LIST_SECTIONS}}

    held, page, kept = items(onto), items(theirs), items(merged)
    return [(key.removesuffix("s"), item) for key, values in held.items() for item in values
            if item not in page[key] and item in kept[key]]


def _say(store: Store, notice: str) -> None:
    """A notice the command says as a warning, once however often the page is merged in one command."""
    if notice not in store.notices:
        store.notices.append(notice)


def _by_sections(onto: Checkpoint, theirs: Checkpoint) -> tuple[Checkpoint, tuple[str, ...]]:
    """A person's body merged section by section: what they changed since the digests its marker kept."""
    from ghstate.core.edits import apply_incoming
    from ghstate.core.model import SECTION_KEYS

    merged, found = apply_incoming(onto, theirs, frozenset(SECTION_KEYS), theirs.meta.digests)
    return merged, tuple(found)


def _base(store: Store, stored: Stored, edit: Mirror, theirs: Checkpoint) -> str | None:
    """The body a person's page showed: the commit its marker names; for ghstate's page from before the
    chain (the marker, without the chain's key), the body the chain began from (its first commit keeps
    it); for a body without the marker line, the recent commit it differs from least (the oldest of equals),
    the body the chain began from among them when the first commit is. None: not known."""
    try:
        if edit.base:
            found = store.link(stored, edit.base)
            return found.body if found is not None else None
        head = stored.head.link if stored.head is not None else None
        if MARKER_LINE.search(edit.body) and head is not None:
            root = head if not head.root else store.link(stored, head.root)
            return root.adopted if root is not None and root.adopted else None
        recent = store.links(stored, BASE_SEARCH)
    except RemoteError:
        return None
    # Of equal matches the oldest: what a later write added is then the chain's, kept, where the newest would
    # make the person the author of every difference (a write since their page read as their deletion).
    mine = section_digests(theirs)

    def differ(body: str) -> int:
        then = section_digests(body_checkpoint(body))
        return sum(mine.get(k) != then.get(k) for k in {*mine, *then})

    bodies = [link.body for _, link in recent]
    if recent and not recent[-1][1].root and recent[-1][1].adopted:  # the first commit is among them: the body
        bodies.append(recent[-1][1].adopted)  # the chain began from, older than any commit's (a page opened then)
    best = min(((differ(body), -age, body) for age, body in enumerate(bodies)), default=None)
    return best[2] if best else None


def locate(store: Store, number: int | None, branch: str, heads: bool = False, closed: bool = False) -> Stored | None:
    """ISSUE when given, else the branch's checkpoint: the most recent open one whose marker names ``branch``,
    child tasks aside (``closed``: a closed one when it has none open, where the store knows it). With no
    branch (outside git, a detached HEAD) that is the most recent one written without a branch. The store's
    index answers first (``Store.find_branch``); a store that cannot tell is looked through. ``heads``: with
    what its chain's head holds (a write builds on it)."""
    if number is not None:
        return store.get(number)
    found = store.find_branch(branch) if branch else UNINDEXED
    if not isinstance(found, Unindexed):
        return found if found is None or found.state == "open" or closed else None
    broken: Stored | None = None  # a marker broken by hand: by the branch its text names, or the title
    try:
        for stored in store.iter_open(heads=heads):
            match = branch_match(stored.body, stored.title, branch)
            if match and not stored.trusted:  # anyone may open an issue that names a branch: never the branch's
                passed_over(store.notices, stored.number, stored.author, stored.association, branch)
                continue
            if match == 2:
                return stored
            broken = broken or (stored if match else None)
    except Partial as exc:  # it may be among those not read: neither "none" nor a second one for the branch
        where = f"branch {branch}" if branch else "this folder"
        raise NotFound(f"no open checkpoint for {where} among the ones read ({exc}); give its ISSUE number, "
                       "or close finished checkpoints") from None
    return broken
