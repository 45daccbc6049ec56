"""Markdown mechanics shared by parse and render: the block tree, list items, and text escaping.

Parsing works on markdown-it's block tokens and their source line maps, and cuts text out of the
source lines, so what a person wrote comes back exactly (code spans, links, ``|``, nested lists).

Free text (the goal, the resume instruction, unknown sections) is placed at the top level of a
body. A line in it that markdown would read as a heading, or a fence or HTML block that never closes,
would end the section early or swallow the ones after it. ``escape_text`` puts one backslash in front
of such a line; ``unescape_text`` takes exactly one away from every line that starts with backslashes
and one of the characters involved, so the pair is a bijection and ``unescape(escape(s)) == s``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

SHOWN_COMMIT = 7  # characters of a commit hash shown to people and agents (as GitHub shows them)
KEPT_COMMIT = 12  # characters of a commit hash kept in the marker (provenance, the CI ledger): unique enough


def short_commit(sha: str) -> str:
    """A commit hash as people and agents see it."""
    return sha[:SHOWN_COMMIT]



class lazy_pattern:  # noqa: N801 - it stands where re.compile stood
    """``re.compile(pattern, flags)``, done at its first use: this module holds many patterns and most
    commands use few of them, so its import stays cheap. After the first use its methods are the
    compiled pattern's own."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._source)
        for attr in ("search", "match", "fullmatch", "sub", "subn", "split", "finditer", "findall", "pattern",
                     "flags", "groups", "groupindex"):
            self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)


if TYPE_CHECKING:  # pragma: no cover
    from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # CommonMark with raw HTML, as GitHub reads issue bodies. Reference definitions are read as
    # paragraphs so that every non-blank source line belongs to some token.
    return MarkdownIt("commonmark").disable(["reference"])


class Block:
    """A block-level node: its token type, source lines [start, end), and child blocks."""

    __slots__ = ("type", "start", "end", "level", "tag", "markup", "content", "children")

    def __init__(self, type: str, start: int, end: int, level: int, tag: str = "", markup: str = "",
                 content: str = "") -> None:
        self.type = type
        self.start = start
        self.end = end
        self.level = level
        self.tag = tag
        self.markup = markup
        self.content = content  # inline source for headings and paragraphs
        self.children: list[Block] = []


def blocks(text: str) -> list[Block]:
    """The top-level blocks of ``text`` (which must use ``\\n`` line endings), as a tree."""
    tokens: list = []
    md = _markdown()
    md.block.parse(text, md, {}, tokens)
    root: list[Block] = []
    stack: list[Block] = []
    for tok in tokens:
        if tok.nesting == 1:
            start, end = tok.map or (0, 0)
            node = Block(tok.type[: -len("_open")], start, end, tok.level, tok.tag, tok.markup)
            (stack[-1].children if stack else root).append(node)
            stack.append(node)
        elif tok.nesting == -1:
            stack.pop()
        elif tok.type == "inline":
            if stack:
                stack[-1].content = tok.content
        else:
            start, end = tok.map or (0, 0)
            node = Block(tok.type, start, end, tok.level, tok.tag, tok.markup, tok.content)
            (stack[-1].children if stack else root).append(node)
    return root


def _columns(prefix: str) -> int:
    col = 0
    for ch in prefix:
        col = col + 4 - col % 4 if ch == "\t" else col + 1
    return col


def dedent(line: str, width: int) -> str:
    """Remove up to ``width`` columns of leading whitespace, counting tabs to the next stop of 4."""
    col = 0
    i = 0
    while i < len(line) and col < width and line[i] in " \t":
        nxt = col + 4 - col % 4 if line[i] == "\t" else col + 1
        if nxt > width:  # a tab straddles the boundary: keep the rest as spaces
            return " " * (nxt - width) + line[i + 1 :]
        col = nxt
        i += 1
    return line[i:]


_MARKER = lazy_pattern(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]*)")


def item_layout(lines: list[str], item: Block) -> tuple[str, int]:
    """The first line of a list item without its marker, and the indentation of its content."""
    first = lines[item.start]
    m = _MARKER.match(first)
    if not m:  # pragma: no cover - markdown-it only opens items on marker lines
        return first.strip(), 0
    marker_end = _columns(m.group(1)) + len(m.group(2))
    rest = first[m.end() :]
    gap = _columns(first[: m.end()]) - marker_end
    if not rest:  # marker alone on its line: content starts on the next line
        return "", marker_end + 1
    if gap > 4:  # five or more spaces: the content is indented code, one space belongs to the marker
        return dedent(first[m.end(2) :], 1), marker_end + 1
    return rest, marker_end + gap


def item_text(lines: list[str], item: Block) -> str:
    """The content of a list item as markdown: marker removed, continuation lines de-indented."""
    head, width = item_layout(lines, item)
    body = [dedent(line, width) if line.strip() else "" for line in lines[item.start + 1 : item.end]]
    return "\n".join([head, *body]).strip()


def indent(text: str, prefix: str) -> str:
    """Indent every non-blank line after the first (list item continuation)."""
    first, *rest = text.split("\n")
    return "\n".join([first, *((prefix + line) if line else "" for line in rest)])


# --------------------------------------------------------------------------------------- escaping

_ESCAPABLE = lazy_pattern(r"^([ \t]*)(\\*)([#=\-`~<].*)$", re.DOTALL)
CODE_INDENT = lazy_pattern(r"^(?: {4}|[ ]{0,3}\t)")  # a first line indented like this is code
_ATX = lazy_pattern(r"^[ \t]*#{1,4}(?:[ \t]|$)")  # levels 5 and 6 never start a section: no escape needed
_SETEXT = lazy_pattern(r"^[ \t]*(?:=+|-+)[ \t]*$")
_FENCE = lazy_pattern(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HTML_OPEN = (
    (re.compile(r"^ {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|$)", re.IGNORECASE),
     re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE)),
    (re.compile(r"^ {0,3}<!--"), re.compile(r"-->")),
    (re.compile(r"^ {0,3}<\?"), re.compile(r"\?>")),
    (re.compile(r"^ {0,3}<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"^ {0,3}<!\[CDATA\["), re.compile(r"\]\]>")),
)
_RISKY_START = lazy_pattern(r"^[ \t]*\\*[#=\-`~<]", re.MULTILINE)


def _fence_open(line: str) -> tuple[str, int] | None:
    m = _FENCE.match(line)
    if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    return m.group(2)[0], len(m.group(2))


def _fence_closes(line: str, fence: tuple[str, int]) -> bool:
    stripped = line.strip(" \t")
    return (len(line) - len(line.lstrip(" ")) <= 3 and len(stripped) >= fence[1]
            and stripped == fence[0] * len(stripped))


def _closed_fences(lines: list[str]) -> set[int]:
    """Indices of lines inside (or opening/closing) fences that do close, read top to bottom."""
    inside: set[int] = set()
    i = 0
    while i < len(lines):
        fence = _fence_open(lines[i])
        if fence:
            for j in range(i + 1, len(lines)):
                if _fence_closes(lines[j], fence):
                    inside.update(range(i, j + 1))
                    i = j
                    break
        i += 1
    return inside


class _Closers:
    """For each HTML block's closer, the last line that holds one: "does a closer follow line i?"
    in constant time (closers never span lines), where a search of the rest of the text would make
    escaping a body of many HTML comments quadratic."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.last: dict[re.Pattern[str], int] = {}

    def after(self, closer: re.Pattern[str], i: int) -> bool:
        if closer not in self.last:
            self.last[closer] = next((j for j in range(len(self.lines) - 1, -1, -1)
                                      if closer.search(self.lines[j])), -1)
        return self.last[closer] >= i


def _dangerous(lines: list[str], i: int, line: str, escaped: bool, closers: _Closers | None = None) -> bool:
    """Would ``line`` (at position i, leading backslashes removed) end or swallow its section?

    For a line that had no backslash this reads the context (a fence or HTML block that never
    closes); for one that had, only the line itself, so that escaping other lines cannot change
    the answer and unescape_text inverts escape_text exactly.
    """
    if _ATX.match(line):
        return True
    if _SETEXT.match(line) and i > 0 and lines[i - 1].strip():
        return True
    if _fence_open(line):
        return True  # unescaped, it is only asked about fences that do not close
    for opener, closer in _HTML_OPEN:
        if opener.match(line):
            if escaped:
                return True
            # the opener line itself counts from where the opener ends: "<!-- x -->" closes at once
            return not (closer.search(line) or (closers or _Closers(lines)).after(closer, i + 1))
    return False


_WRAP = lazy_pattern(r"^(~{3,}) ghstate-text\n(.*)\n\1$", re.DOTALL)


def wrap_text(text: str) -> str:
    """The fallback for text the line escapes cannot make safe: a fence markdown cannot leave early."""
    longest = max((len(m) for m in re.findall(r"^[ \t]*(~+)", text, re.MULTILINE)), default=0)
    fence = "~" * max(3, longest + 1)
    return f"{fence} ghstate-text\n{text}\n{fence}"


def escape_text(text: str) -> str:
    """Make free text safe to place at the top level of a body (see the module docstring)."""
    if not _RISKY_START.search(text):
        return text
    lines = text.split("\n")
    fenced = _closed_fences(lines)
    closers = _Closers(lines)
    out = []
    for i, line in enumerate(lines):
        m = _ESCAPABLE.match(line)
        if m and i not in fenced and _dangerous(lines, i, m.group(1) + m.group(3), bool(m.group(2)), closers):
            line = f"{m.group(1)}\\{m.group(2)}{m.group(3)}"
        out.append(line)
    escaped = "\n".join(out)
    if _WRAP.match(escaped) or not _stays_inside(escaped):
        return wrap_text(text)
    return escaped


def unescape_text(text: str) -> str:
    wrapped = _WRAP.match(text)
    if wrapped:
        return wrapped.group(2)
    if "\\" not in text:
        return text
    lines = text.split("\n")
    fenced = _closed_fences(lines)
    out = []
    for i, line in enumerate(lines):
        m = _ESCAPABLE.match(line)
        if m and m.group(2) and i not in fenced and _dangerous(lines, i, m.group(1) + m.group(3), True):
            line = m.group(1) + m.group(2)[1:] + m.group(3)
        out.append(line)
    return "\n".join(out)


def _stays_inside(text: str) -> bool:
    """True when ``text`` placed before a following heading leaves that heading a section heading."""
    probe = text + "\n\n## ghstate-sentinel\n"
    tree = blocks(probe)
    headings = [b for b in tree if b.type == "heading" and b.tag in ("h1", "h2", "h3", "h4")]
    return len(headings) == 1 and headings[0].content == "ghstate-sentinel"


# A list item whose first line is only dashes would render as "- ---", a thematic break.
_ITEM_HR = lazy_pattern(r"^(\\*)(-[-\s]*)$")
_ITEM_HR_ESCAPED = lazy_pattern(r"^\\(\\*-[-\s]*)$")
# A plain (non-checkbox) step must not start like a checkbox.
_CHECKBOX_LIKE = lazy_pattern(r"^(\\*)(\[[ xX]\](?:[ \t]|$).*)$", re.DOTALL)
_CHECKBOX_ESCAPED = lazy_pattern(r"^\\(\\*\[[ xX]\](?:[ \t]|$).*)$", re.DOTALL)
CHECKBOX = lazy_pattern(r"^\[([ xX])\](?:[ \t]+|$)")


def escape_item(text: str, plain_step: bool = False) -> str:
    first, sep, rest = text.partition("\n")
    m = _ITEM_HR.match(first)
    if m:
        first = "\\" + first
    elif plain_step and _CHECKBOX_LIKE.match(text):
        first = "\\" + first
    return first + sep + rest


def unescape_item(text: str, plain_step: bool = False) -> str:
    first, sep, rest = text.partition("\n")
    m = _ITEM_HR_ESCAPED.match(first)
    if m:
        first = m.group(1)
    elif plain_step and _CHECKBOX_ESCAPED.match(text):
        first = first[1:]
    return first + sep + rest


# ---------------------------------------------------------------------------------- literal text
#
# Text that ghstate takes from flags and from a JSON state is literal: a person reading the issue on
# GitHub must see exactly what was typed, except code spans, which stay code. ``escape_literal`` turns
# such text into the markdown that GitHub (cmark-gfm with its extensions) shows as that text;
# ``unescape_literal`` reads it back. Only ASCII punctuation is backslash-escaped and only numeric
# character references are added, so ``unescape_literal`` (CommonMark's own reading of escapes and
# references) inverts ``escape_literal`` exactly, for every text: the pair is a bijection between
# literal text and its image. Markdown outside the image (a person's ``**bold**``) is not ghstate's.
#
# The first character of a line is written as a character reference (``&#35;``) when it could open a
# block (heading, list, quote, fence, HTML, setext underline, indented code), so that no line of the
# result starts like the lines ``escape_text`` and ``escape_item`` guard: their escapes never touch
# literal text, and what ghstate escaped is never escaped twice.

# The one control-character rule. ``cc``: C0 controls but tab and newline (and the CR of a CRLF), DEL
# and C1 (U+0080-U+009F), and surrogates (no character: a byte that was not UTF-8, as Python reads argv and
# files, or a JSON \ud800 alone): refused in what people give (``control_at``, ``not_text``). ``invisible``:
# characters that change how text reads without being seen (zero-width characters and marks, line and
# paragraph separators, bidirectional embeddings, overrides and isolates, the byte-order mark): a person may
# write them in their own text, but machine text (CI reports, hook input) never writes them, nor a
# control, raw: ``visible`` shows each as ``\uXXXX``.
CONTROL = lazy_pattern(r"(?P<cc>[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\r(?!\n))"
                     r"|(?P<invisible>[\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff])")
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_LINE_START_REF = frozenset(" \t#-=`<[\\")  # written as &#NN; at the start of a line
_ENTITY_LIKE = lazy_pattern(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});")
_ORDERED = lazy_pattern(r"[0-9]{1,9}[.)]")
# Every place an autolink could start (overlapping: one may start inside another's run of text).
# It runs up to ASCII white space or "<" (cmark-gfm's autolink extension), not to other white space.
_AUTOLINK = lazy_pattern(r"(?=((?:https?|ftp)(:)//[^ \t\n\r\x0b\x0c<]*|www(\.)[^ \t\n\r\x0b\x0c<]*))", re.IGNORECASE)
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": "\u00a0"}


def control_at(text: str) -> int:
    """The index of the first control character that is not text (tab, newline, CR of a CRLF), or -1."""
    for m in CONTROL.finditer(text):
        if m.lastgroup == "cc":
            return m.start()
    return -1


def visible(text: str) -> str:
    """Machine text with every control and invisible character (``CONTROL``) shown as ``\\uXXXX``."""
    return CONTROL.sub(lambda m: "".join(f"\\u{ord(ch):04x}" for ch in m.group()), text)


def printable(text: str) -> str:
    """Text for a terminal or a prompt: control characters (terminal escapes among them) removed, a
    CR of a CRLF too, and invisible ones shown as ``\\uXXXX``."""
    return CONTROL.sub(lambda m: "" if m.lastgroup == "cc" else f"\\u{ord(m.group()):04x}",
                       text.replace("\r\n", "\n"))


def describe_control(text: str, index: int) -> str:
    """``U+001B at line 2, column 5``: where a control character stands, for an error message."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"U+{ord(text[index]):04X} at line {line}, column {column}"


def not_text(text: str, index: int, advice: str) -> str:
    """What ``control_at`` found at ``index``, as an error says it, with what to do: a control character (and
    ``advice``), a byte that was not UTF-8 (Python reads one as U+DC80-U+DCFF), or a lone surrogate."""
    code = ord(text[index])
    where = describe_control(text, index)
    if not 0xD800 <= code <= 0xDFFF:
        return f"a control character ({where}); {advice}"
    where = where.split(" at ", 1)[1]
    if 0xDC80 <= code <= 0xDCFF:
        return f"a byte that is not UTF-8 (0x{code - 0xDC00:02X} at {where}): give the text in UTF-8"
    return f"a lone surrogate (U+{code:04X} at {where}), which is no character: remove it"


def _literal_code_spans(text: str) -> dict[int, int]:
    """Code spans of literal text, start -> end: a backtick run and the next run of the same length,
    on the same line (a span across lines would be cut by the block structure first)."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    spans: dict[int, int] = {}
    i = 0
    while i < len(runs):
        start, end = runs[i]
        closer = next((j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None)
        if closer is not None and "\n" not in text[end : runs[closer][0]]:
            spans[start] = runs[closer][1]
            i = closer + 1
        else:
            i += 1
    return spans


def _inline(text: str, i: int, tildes: bool, last_close: int = -2) -> str | None:
    """The markdown for the character at ``i`` (not at a line start, not in a code span), or None
    when it stands for itself."""
    c = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if c == "\\":  # doubled where it would escape what follows: punctuation, a line end, a reference
        trailing_blank = nxt in (" ", "\t") and text[i + 2 : i + 3] in ("", "\n")
        return "\\\\" if nxt in _PUNCT or nxt in ("", "\n") or trailing_blank else None
    if c in "*|`":
        return "\\" + c
    if c == "_":
        prev = text[i - 1] if i else ""
        return None if prev.isalnum() and nxt.isalnum() else "\\_"  # inside a word, _ is inert
    if c == "~":
        return "\\~" if tildes else None  # one tilde alone strikes nothing through
    if c == "<":
        return "\\<" if nxt and nxt.isascii() and (nxt.isalpha() or nxt in "/!?") else None
    if c == "&":
        return "\\&" if _ENTITY_LIKE.match(text, i) else None
    if c == "[":
        if last_close == -2:
            last_close = text.rfind("]")
        return "\\[" if last_close > i else None
    if c in " \t" and nxt in ("\n", ""):
        return f"&#{ord(c)};"  # trailing blanks would be dropped, or make a hard break
    return None


def _line_start(text: str, i: int) -> str | None:
    c = text[i]
    if c in _LINE_START_REF or text.startswith("~~~", i):
        return f"&#{ord(c)};"
    if c in "+>":
        return "\\" + c
    if c == ":" and text[i + 1 : i + 2] == "-":
        return "\\:"  # ":-" is a table's delimiter row
    m = _ORDERED.match(text, i)
    if m:
        return text[i : m.end() - 1] + "\\" + text[m.end() - 1]
    return None


def escape_literal(text: str) -> str:
    """The markdown GitHub shows as ``text`` (see above). ``text`` has LF newlines."""
    spans = _literal_code_spans(text)
    in_span = [False] * len(text)
    for start, end in spans.items():
        in_span[start:end] = [True] * (end - start)
    tildes = sum(1 for i, c in enumerate(text) if c == "~" and not in_span[i]) >= 2
    last_close = text.rfind("]")
    # An autolink (https://…, www.…) shows its characters raw, escapes included: where one would need
    # an escape, its trigger is escaped too, so that it stays text (not a link, but exactly as typed).
    breaks: set[int] = set()
    if "://" in text or "www." in text.lower():
        next_escape = [len(text)] * (len(text) + 1)  # the first position at or after i that is escaped
        for i in range(len(text) - 1, -1, -1):
            next_escape[i] = i if in_span[i] or _inline(text, i, tildes, last_close) else next_escape[i + 1]
        for m in _AUTOLINK.finditer(text):
            # (the character that ends it counts: a backslash before it would be the link's last character)
            if next_escape[m.start()] < min(m.end(1) + 1, len(text)):
                breaks.add(m.start(2) if m.group(2) else m.start(3))
    out: list[str] = []
    i = 0
    line_start = True
    while i < len(text):
        if i in spans:
            out.append(text[i : spans[i]])
            i = spans[i]
            line_start = False
            continue
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        piece = _line_start(text, i) if line_start else None
        ordered = _ORDERED.match(text, i) if piece is not None else None
        if piece is not None and ordered:
            out.append(piece)
            i = ordered.end()
            line_start = False
            continue
        line_start = False
        if piece is None:
            piece = "\\" + c if i in breaks else _inline(text, i, tildes, last_close)
        out.append(c if piece is None else piece)
        i += 1
    return "".join(out)


def unescape_literal(markdown: str) -> str:
    """The text GitHub shows for ``markdown``'s inline content, as far as escapes, character
    references and code spans go: the exact inverse of ``escape_literal`` on its image."""
    if not any(c in markdown for c in "\\&`"):
        return markdown
    out: list[str] = []
    i = 0
    n = len(markdown)
    while i < n:
        c = markdown[i]
        if c == "\\" and i + 1 < n and markdown[i + 1] in _PUNCT:
            out.append(markdown[i + 1])
            i += 2
        elif c == "&" and (m := _ENTITY_LIKE.match(markdown, i)):
            out.append(_reference(m.group(0)))
            i = m.end()
        elif c == "`":
            run = re.compile(r"`+").match(markdown, i)
            assert run is not None
            k = run.end() - i
            closer = next((r for r in re.finditer(r"`+", markdown[run.end() :]) if len(r.group(0)) == k), None)
            end = run.end() + closer.end() if closer else run.end()
            out.append(markdown[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _reference(ref: str) -> str:
    body = ref[1:-1]
    if body.startswith(("#x", "#X")):
        code = int(body[2:], 16)
    elif body.startswith("#"):
        code = int(body[1:])
    else:
        return _NAMED.get(body, ref)
    try:
        return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else "\ufffd"
    except ValueError:  # pragma: no cover
        return "\ufffd"


def code_span(text: str) -> str:
    """``text`` as one inline code span that GitHub shows exactly, on one line (a path, a test's name):
    the fence is longer than any run of backticks inside, and padded where CommonMark would otherwise
    take a backtick or the spaces at its ends for part of the fence."""
    text = " ".join(str(text).split("\n")) if text else ""
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip()) else ""
    return f"{fence}{pad}{text}{pad}{fence}"
