"""A credential scan over text about to be written: every store's bodies, and comments posted to GitHub.

It reports the line and the kind of secret with the value cut short, so that the report itself does
not leak what it found.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)")),
    ("an API key", re.compile(r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{16,}"
                              r"|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})")),
)
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:([^/\s@]{4,})@")
_KEYLIKE = r"(?:password|passwd|pwd|pass|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|" \
           r"auth[_-]?token|access[_-]?token|token|credential|client[_-]?secret|private[_-]?key)"
_ASSIGNMENT = re.compile(
    r"(?i)\b([\w.-]*" + _KEYLIKE + r")\b[\"']?\s*(?:=|:|=>)\s*[\"']?([^\s\"'`,;]{6,})"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[\w.-]+\}?|%\(?\w+\)?s?|\{\{.*\}\}|x+|\*+|\.+|changeme|example\w*|dummy\w*|"
    r"placeholder|redacted|none|null|true|false|secret|password|your[\w-]*|env\[.*|os\.environ.*|"
    r"process\.env.*|getenv.*|required|optional|string|str|int|\w+\(\))$"
)


@dataclass(frozen=True)
class Secret:
    line: int  # 1-based
    kind: str
    excerpt: str  # the start of the value, cut short
    context: str = ""  # the line it is on, with the value cut short

    where: str = ""  # instead of "line N", when the text is not a line of the body

    def describe(self) -> str:
        quoted = f": {self.context!r}" if self.context else f" ({self.excerpt})"
        return f"{self.where or f'line {self.line}'} looks like {self.kind}{quoted}"

    def located(self, where: str) -> Secret:
        from dataclasses import replace

        return replace(self, where=where)


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _cut(value: str) -> str:
    return value[:4] + "…" if len(value) > 4 else "…"


def _found(number: int, line: str, kind: str, value: str) -> Secret:
    context = " ".join(line.replace(value, _cut(value)).split())
    return Secret(number, kind, _cut(value), context if len(context) <= 100 else context[:99] + "…")


def scan(text: str) -> list[Secret]:
    found: list[Secret] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for kind, pattern in _PATTERNS:
            m = pattern.search(line)
            if m:
                found.append(_found(number, line, kind, m.group(1) if pattern.groups else m.group(0)))
                break
        else:
            m = _URL_PASSWORD.search(line)
            if m and not _PLACEHOLDER.match(m.group(1)):
                found.append(_found(number, line, "a password in a URL", m.group(1)))
                continue
            for m in _ASSIGNMENT.finditer(line):
                value = m.group(2)
                if _PLACEHOLDER.match(value):
                    continue
                name = m.group(1).lower()
                strong = any(w in name for w in ("password", "passwd", "secret", "private"))
                if strong or (len(value) >= 16 and entropy(value) >= 3.5):
                    found.append(_found(number, line, f"a credential assigned to {m.group(1)!r}", value))
                    break
    return found


def new_lines(before: str, after: str) -> str:
    """The lines of ``after`` that ``before`` does not have, blanking the rest (numbers stay right).

    Only what is new is scanned: a false alarm already on GitHub must not block every later write.
    """
    old = set(before.replace("\r\n", "\n").split("\n"))
    return "\n".join(line if line not in old else "" for line in after.split("\n"))


def redact(text: str) -> str:
    """``text`` with every value ``scan`` would refuse cut short: for what CI quotes from test output,
    which must be recorded, never block the record."""
    if not text:
        return text
    lines = text.split("\n")
    for secret in scan(text):
        line = lines[secret.line - 1]
        for _, pattern in _PATTERNS:
            line = pattern.sub(lambda m: m.group(0).replace(m.group(1), _cut(m.group(1))) if m.re.groups
                               else _cut(m.group(0)), line)
        line = _URL_PASSWORD.sub(lambda m: m.group(0).replace(m.group(1), "…"), line)
        line = _ASSIGNMENT.sub(lambda m: m.group(0).replace(m.group(2), _cut(m.group(2))), line)
        lines[secret.line - 1] = line
    return "\n".join(lines)
