"""Which saves of a body a write replaced: the one rule, on plain lists (pure: the GitHub store pages the
edit history, ``ghstate.github.body``; the writer merges what this finds).

A body has no compare-and-set, so a write (a mirror of the chain, or a body written alone) may replace a
person's save made after the writer read the body. GitHub keeps every version in the issue's edit history,
newest first, each with its editor and time. The rule: **every version since the read (the read included)
that a ghstate render directly replaced and that is not itself a render, less those already merged** (their
digest is on the chain, or in what the write wrote), each its own save. A save under such a one that a
person went on from (two people saving in turn before the render) went from view with it: it is found too,
so that each person's change is theirs alone; but not the read itself under such saves (they hold it).

A render is a body ``chain.as_written`` recognises: ghstate's own text, no person's edit in it. A body
written alone beside a chain (where the chain cannot be written) is ghstate's text but no part of the
chain: it is a save to merge too (``is_save``). The write's own version, when the history does not list it
yet, counts as a render above all that are listed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from ghstate.core.chain import as_written, digest, split


class Version(NamedTuple):
    """One version of a body as the edit history lists it: its whole text (None: deleted from the history),
    who saved it and when (GitHub's ``editedAt``)."""

    text: str | None
    editor: str = ""
    at: str = ""


def body_digest(text: str) -> str:
    """The digest the chain records a merged body by (its text without the chain's key)."""
    return digest(split(text)[0])


def replaced_saves(listed: Sequence[Version], written: str, read: Version,
                   merged: Collection[str] = ()) -> tuple[Version, ...]:
    """The rule (see the module's docstring) over ``listed`` (newest first), for a write of ``written`` that
    read the body ``read`` (its text, and when it was saved: "" when never edited, and then only its text
    tells it): the saves it or another render replaced, oldest first, each once (the write's own version, a
    body written alone that another write replaced, is the writer's to make again, not a save)."""
    found: dict[str, Version] = {}
    # the write's own version, when not listed yet, above all those listed
    versions = [*listed] if shows(listed, written) else [Version(written), *listed]
    replaced = False  # under a render: the saves down to the next render went from view together
    for newer, older in zip(versions, versions[1:], strict=False):
        if read.at and older.at and older.at < read.at:
            break  # older than the read: not this write's business
        direct = newer.text is not None and as_written(newer.text)
        replaced = replaced or direct
        if not replaced or not _to_merge(older, written):
            replaced = replaced and older.text is None  # a deleted version keeps the run going
            continue
        the_read = _is_read(older, read)
        if the_read and not direct:
            break  # the read, under people's saves that went on from it: theirs carries it
        key = body_digest(older.text)
        if key not in merged:
            found.setdefault(key, older)
        if the_read:
            break
    return tuple(reversed(found.values()))


def saves_in(listed: Sequence[Version], body: Version, merged: Collection[str] = (),
             complete: bool = False) -> tuple[tuple[Version, bool], ...]:
    """The people's saves an edited ``body`` (as read: its text, last editor and time) is made of, oldest first,
    from ``listed`` (the edit history, newest first; ``complete``: all of it): the saves since the last render
    (or a body already merged), each its own. With each, whether it may hold others' changes too: the oldest,
    when the history does not reach a render or the start (off, too short, or a version deleted from it), is
    the rest taken together under its editor. Versions newer than the read are not its business."""
    versions = [v for v in listed if not (body.at and v.at and v.at > body.at)]
    if versions and same(versions[0].text, body.text):
        versions[0] = versions[0]._replace(text=body.text)  # the body as read (its digest is what is merged)
    else:
        versions = [body, *versions]  # the body as read, not listed (yet): its last editor's save
    found: list[Version] = []
    whole = complete and all(v.text is not None for v in versions)  # the history's start is a person's: whole
    for version in versions:
        if version.text is None:  # deleted from the history: what it held went into the save after it
            whole = False
            break
        if not is_save(version.text) or body_digest(version.text) in merged:
            whole = True
            break
        found.append(version)
    return tuple((v, not whole and i == 0) for i, v in enumerate(reversed(found)))


def _to_merge(version: Version, written: str) -> bool:
    """A version to merge, if a render replaced it: a save (``is_save``), not deleted, not the write's own."""
    return version.text is not None and is_save(version.text) and not same(version.text, written)


def _is_read(version: Version, read: Version) -> bool:
    """Whether ``version`` is the body the write read: saved when it was, or (never edited) alike."""
    return version.at == read.at if read.at else same(version.text, read.text)


def is_save(text: str) -> bool:
    """Whether a version is one to merge: a person's save, or a body ghstate wrote alone beside a chain (its
    key names the head it was built on, without the digest of a mirror: what it holds beyond that head is an
    edit the chain does not have)."""
    key = split(text)[1]
    return (key is not None and not key.digest) or not as_written(text)


def reaches(listed: Sequence[Version], read_at: str) -> bool:
    """Whether ``listed`` (newest first) goes back to the read: its oldest version is no newer than it."""
    return bool(listed) and bool(read_at) and bool(listed[-1].at) and listed[-1].at <= read_at


def shows(listed: Sequence[Version], written: str) -> bool:
    """Whether the write's own version is among ``listed`` (alike but for spacing and line endings)."""
    return any(same(v.text, written) for v in listed)


def same(a: str | None, b: str | None) -> bool:
    """Two versions of a body alike but for spacing and line endings (the web editor sends CRLF)."""
    return a is not None and b is not None and " ".join(a.split()) == " ".join(b.split())
