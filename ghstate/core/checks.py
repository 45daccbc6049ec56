"""What a body must pass before it is written: pure checks, each raising the error a user acts on."""

from __future__ import annotations

import re

from ghstate.core import marker, render
from ghstate.core.markup import unescape_literal
from ghstate.core.model import GITHUB_LIMIT, Checkpoint
from ghstate.core.parse import MARKER_LINE, parse
from ghstate.core.secrets import new_lines, scan
from ghstate.core.splice import same_state
from ghstate.errors import InputError, SecretFound


def fit_size(body: str, cp: Checkpoint, limit: int, reserve: int = 0) -> tuple[str, str]:
    """``body`` within ``limit`` characters as stored (``reserve``: what the store adds to it, a write's
    log entry), and what of ghstate's own metadata was left out of its marker to get there ("" when
    nothing was). A body over the limit with its metadata shed is refused, naming the person's text that
    is over: ghstate's metadata is never why a person's text is refused."""
    if len(body) + reserve <= limit:
        return body, ""
    lightest = body
    for meta, shed in marker.lighter(cp.meta):
        lightest = render.replace_marker(body, cp._replace(meta=meta))
        if len(lightest) + reserve <= limit:
            return lightest, shed
    text = MARKER_LINE.sub("", lightest)
    sizes = sorted(((len(part), part.split("\n", 1)[0].strip()) for part in re.split(r"\n(?=#{1,4} )", text)
                    if part.lstrip().startswith("#")), reverse=True)[:3]
    largest = ", ".join(f"{heading} ({size:,})" for size, heading in sizes)
    entry = f", {reserve:,} of this write's log entry" if reserve else ""
    raise InputError(f"the checkpoint would be {len(lightest) + reserve:,} characters even without ghstate's "
                     f"optional metadata ({len(text):,} of text, {len(lightest) - len(text):,} of the hidden "
                     f"marker's required part: revision, place, log, CI's result{entry}); the limit is {limit:,} "
                     f"(GitHub accepts "
                     f"{GITHUB_LIMIT:,}){'; the largest sections: ' + largest if largest else ''}: compact finished "
                     "phases and long items, then try again")


def check_secrets(before_body: str, before: Checkpoint, body: str, cp: Checkpoint, where: str = "to GitHub") -> None:
    """Refuse credentials in what this write adds: new lines of the body, and the fields of the hidden
    marker that changed (the marker line itself changes on every write, so scanning it whole would let
    one value allowed once block every later write). Each line is scanned as GitHub shows it: literal text's
    escapes (``&#45;----BEGIN``) hide nothing."""
    added = new_lines(MARKER_LINE.sub("", before_body), MARKER_LINE.sub("", body))
    found = scan("\n".join(unescape_literal(line) for line in added.split("\n")))  # as a reader sees it
    if found:  # named by its section: a line number of the lines a write adds means nothing to who wrote them
        found = [found[0].located(_section_of(added.split("\n")[found[0].line - 1], body))]
    if not found:
        for name, old, new in (("title", before.title, cp.title), ("branch", before.meta.branch, cp.meta.branch)):
            found = [s.located(f"the hidden marker's {name}") for s in scan(new)][:1] if new != old else []
            if found:
                break
        else:
            known = set(before.executions)
            added = " ".join(f"{e.agent} {e.role} {e.session} {e.transcript}" for e in cp.executions if e not in known)
            found = [s.located("the hidden marker's executions") for s in scan(added)][:1]
    if found:
        raise SecretFound(f"refusing to write {where}: {found[0].describe()}; remove it, "
                          "or pass --allow-secrets if it is not a secret")


def _section_of(line: str, body: str) -> str:
    """Where a line a write adds stands, in words: "a line of 'Decisions locked'" (the heading above it)."""
    lines = body.split("\n")
    at = next((i for i, text in enumerate(lines) if text == line), -1)
    heading = next((text.lstrip("#").strip() for text in reversed(lines[:at]) if text.startswith("#")), "") \
        if at >= 0 else ""
    return f"a line of {heading!r}" if heading else "a line"


def check_template(body: str, reference: str, template: str) -> None:
    """A repository's own template must write a body that reads back as the shipped one's does."""
    if not same_state(parse(body).checkpoint, parse(reference).checkpoint):
        raise InputError(f"the template {template} writes a body that does not read back as the checkpoint "
                         "(sections or the marker are lost); nothing was written: fix it, or remove it to use "
                         "the built-in one")
