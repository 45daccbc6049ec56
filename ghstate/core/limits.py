"""What each agent host takes from ghstate, in one table: how much of a hook's context and of an MCP tool's answer
reaches the model whole, in the host's own unit, counted as the host counts it, and where that was found.

Past its limit a host does not hand the model the text: Claude Code and Codex save it to a file and give the
model a preview and the file's path ("Output too large (…). Full output saved to: …", "Full hook output saved
to: …"); Gemini CLI cuts an MCP answer to its head and tail ("Output too large. Showing first …"). So a prompt
ghstate gives a host is fitted under the host's limit (``fit``), never over it. Where a host lets a hook raise
its own limit (Codex's ``additionalContextLimit``), ``init`` and the plugins ask for the size ghstate fits to
(``asked``): never unbounded, never 0 (Codex's "no limit"). Checked against the hosts the tests run
(``tests/test_hosts_real.py``): Claude Code 2.1.330, Codex CLI 0.169.0, Gemini CLI 0.61.0.
"""

import re
from collections.abc import Callable
from typing import NamedTuple


def characters(text: str) -> int:
    """Characters as Python counts them (Unicode code points)."""
    return len(text)


def utf16_units(text: str) -> int:
    """Characters as JavaScript counts them (``String.length``: UTF-16 code units; a character past U+FFFF is
    two): how Claude Code and Gemini CLI measure text."""
    return len(text.encode("utf-16-le")) // 2


_WORD = re.compile(r"\w+")  # letters, digits and _, as Codex's lexical count reads a word
_OTHER = re.compile(r"[\w\s]+")  # what is not one token of its own there


def codex_tokens(text: str) -> int:
    """Codex's estimate of a text's tokens, taken at its larger reading: 0.169 counts a quarter of the UTF-8
    bytes, rounded up (``approx_token_count`` in codex-rs/utils/output-truncation); later versions count the
    larger of that and a lexical reading (each word a quarter of its bytes rounded up, each other character
    that is not white space one token). The larger of the two, so that a newer Codex never spills what ghstate
    fitted for it."""
    words = _WORD.findall(text)
    if not text.isascii():
        words = [w.encode("utf-8") for w in words]
    lexical = sum((len(w) + 3) // 4 for w in words) + len(_OTHER.sub("", text))
    return max((len(text.encode("utf-8")) + 3) // 4, lexical)


class Limit(NamedTuple):
    """How much of one kind of text a host takes whole: ``size`` in ``unit`` (the words a prompt's closing line
    uses), counted by ``count`` as the host counts; ``source`` says where the figure comes from. ``asked``:
    ghstate asks the host for this size in the hook's own settings (it is not the host's default)."""

    size: int
    unit: str
    count: Callable[[str], int]
    source: str
    asked: bool = False


class HostLimits(NamedTuple):
    agent: str  # the agent name ghstate records (``--agent`` of the MCP server, ``hook --host``'s agent)
    name: str
    hook: Limit  # a SessionStart hook's additionalContext
    mcp: Limit  # an MCP tool's text answer


CODEX_HOOK_TOKENS = 8_000  # what ghstate asks Codex for (additionalContextLimit): about 32 KB of text

HOSTS = {
    "claude-code": HostLimits(
        "claude-code", "Claude Code",
        hook=Limit(10_000, "characters", utf16_units,
                   "Claude Code 2.1.330: a hook's additionalContext longer than 10,000 characters (JavaScript's "
                   "length) is saved to a file and the model gets a preview (`gPe=1e4`, the threshold of the hook "
                   "output persister, in its bundle); no hook setting raises it"),
        mcp=Limit(50_000, "characters", utf16_units,
                  "Claude Code 2.1.330: a tool result longer than 50,000 characters is saved to a file and the model "
                  "gets a preview (`Ov=5e4`, the default maxResultSizeChars, in its bundle); MAX_MCP_OUTPUT_TOKENS, "
                  "25,000 tokens by default (its docs), is the looser bound for text")),
    "codex": HostLimits(
        "codex", "Codex CLI",
        hook=Limit(CODEX_HOOK_TOKENS, "tokens", codex_tokens,
                   "Codex CLI 0.169: a hook's additionalContext over 2,500 tokens is saved to a file and the model "
                   "gets a preview and \"Full hook output saved to: …\" (openai/codex pull request 21069, "
                   "codex-rs/hooks/src/output_spill.rs); a hook handler's `additionalContextLimit` in hooks.json "
                   "sets its own (0: no limit), which ghstate's set-up sets to this", asked=True),
        mcp=Limit(10_000, "tokens", codex_tokens,
                  "Codex CLI 0.169: a tool's output is cut to the model's truncation policy, 10,000 tokens for "
                  "every model it ships (`truncation_policy` in its bundled models.json; `tool_output_token_limit` "
                  "in config.toml changes it)")),
    "gemini-cli": HostLimits(
        "gemini-cli", "Gemini CLI",
        hook=Limit(30_000, "characters", utf16_units,
                   "Gemini CLI 0.61: no limit on a hook's additionalContext (its bundle only escapes < and >); "
                   "30,000 is ghstate's own bound, the same as before"),
        mcp=Limit(40_000, "characters", utf16_units,
                  "Gemini CLI 0.61: an MCP tool's text over 40,000 characters (`truncateToolOutputThreshold`, "
                  "less when the context is nearly full) is cut to its head and tail, \"Output too large. "
                  "Showing first …\" (`DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 4e4`, in its bundle)")),
}
DEFAULT_HOST = "claude-code"


def of(agent: str) -> HostLimits | None:
    """The limits of the host an agent name stands for (None: no host ghstate knows, Cursor's among them)."""
    return HOSTS.get(agent)
