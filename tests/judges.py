"""The real programs that read what ghstate writes, as test judges, independent of ghstate's code.

- ``github_html``: GitHub's markdown renderer, cmark-gfm (the ``cmarkgfm`` package), with the
  extensions github.com turns on for issue bodies (table, strikethrough, autolink, tagfilter,
  tasklist), raw HTML let through as on github.com (``UNSAFE``: HTML comments stay comments, which a
  browser does not show) and newlines as line breaks, as in issues and comments.
- ``visible``: what a person sees of that HTML, read with the standard library's ``html.parser``:
  text nodes, a line break for ``<br>`` and between blocks, nothing of comments; ``<code>`` comes
  back wrapped in backticks so that a code span can be compared with the backticks that made it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

GITHUB_OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_HARDBREAKS
_BLOCKS = {"p", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "tr",
           "div", "hr", "thead", "tbody"}


def github_html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=GITHUB_OPTIONS)


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.after_break = False
        self.code = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "br":
            self.parts.append("\n")
            self.after_break = True
        elif tag in _BLOCKS:
            self.parts.append("\n\n")
            self.after_break = True
        elif tag == "code":
            self.code += 1
            self.parts.append("`")

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n\n")
            self.after_break = True
        elif tag == "code":
            self.code -= 1
            self.parts.append("`")

    def handle_data(self, data: str) -> None:
        if self.after_break and not self.code:
            data = data.lstrip("\n")  # the source newline after <br />, not text
        self.after_break = False
        self.parts.append(data)


def visible(html: str) -> str:
    """The text a person sees, blocks separated by one blank line, lines by one newline."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return _one_blank_line("".join(parser.parts))


def same_text(typed: str) -> str:
    """What a person can see of typed text: lines as typed, a run of blank lines as one, and a code
    span (a run of backticks and the next run as long, on one line) as its code between single
    backticks, as ``visible`` gives ``<code>``: one space each side dropped when both are there."""
    def code(m: re.Match) -> str:
        content = m.group(2)
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        return f"`{content}`"

    return _one_blank_line(_CODE_SPAN.sub(code, typed))


def _one_blank_line(text: str) -> str:
    return re.sub(r"\n(?:[ \t]*\n)+", "\n\n", text).strip("\n")


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser
