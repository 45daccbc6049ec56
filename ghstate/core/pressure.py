"""Context pressure: how full an agent session's context is, read from what its host records of each answer, and
when to ask the agent for a checkpoint (the first step of the loop ghstate serves: write the state down before
the context degrades, since a checkpoint written from a degraded context is itself poor).

Each host records every answer's usage in the session's file, whose path each hook gets (``transcript_path``):
- Claude Code: a JSON line per message; an assistant message's ``message.usage`` holds its input, cache-read and
  cache-creation tokens, which together are the context it was given (as its status line's ``used_percentage``
  counts them). The window is 200,000 tokens, or 1,000,000 for a 1M model (a ``[1m]`` model, a ``context-1m``
  beta in its requests, or more than 200,000 tokens seen).
- Codex CLI: ``token_count`` events in its rollout file, with the last answer's usage (``total_tokens``) and the
  model's window (``model_context_window``).
- Gemini CLI: a JSON line per message in its chat recording; a ``gemini`` message's ``tokens.input`` is the prompt
  it was sent. Gemini CLI compresses its history once that passes half the model's window
  (``model.compressionThreshold``, 0.5), so its fill is read against that point, not the whole window.

Once per crossing: the agent is asked when the fill reaches the threshold, and not again until the context
drops below it (a compaction, a /clear) and reaches it once more. A crossing is answered by the reminder, or by a
checkpoint written since the fill crossed. Nothing is asked when nothing changed since the last write.
"""

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # pragma: no cover - the templates are passed in; the turn that asks nothing loads none
    from ghstate.core.render import Templates

DEFAULT_THRESHOLD = 60  # percent of the window (config ``checkpoint_at``; 0: never ask)
CLAUDE_WINDOW = 200_000
CLAUDE_LONG_WINDOW = 1_000_000
GEMINI_WINDOW = 1_048_576  # Gemini CLI 0.61's tokenLimit() for every Gemini model
GEMINI_SMALL_WINDOWS = {"gemma-4-31b-it": 256_000, "gemma-4-26b-a4b-it": 256_000}
GEMINI_COMPRESSION = 0.5  # Gemini CLI's DEFAULT_COMPRESSION_TOKEN_THRESHOLD


class Usage(NamedTuple):
    """One answer's usage: when (its timestamp, "" when unknown), the tokens of the context it was given, the
    window of its model (0: unknown)."""

    at: str
    tokens: int
    window: int


def _record(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def claude_usage(lines: list[str], *, long_context: bool = False) -> list[Usage]:
    """Claude Code's transcript: each main-thread assistant answer's context. ``long_context``: the model set
    for the session is a 1M one (its settings name a ``[1m]`` model)."""
    found: list[tuple[str, int]] = []
    for line in lines:
        data = _record(line)
        if data is None:
            continue
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        params = data.get("params") if isinstance(data.get("params"), dict) else {}
        model = _text(message.get("model")) or _text(params.get("model"))
        betas = params.get("betas") if isinstance(params.get("betas"), list) else []
        if "[1m]" in model.lower() or any(isinstance(b, str) and b.startswith("context-1m") for b in betas):
            long_context = True
        usage = message.get("usage")
        if data.get("type") != "assistant" or data.get("isSidechain") is True or not isinstance(usage, dict):
            continue
        tokens = sum(_count(usage.get(key)) for key in ("input_tokens", "cache_read_input_tokens",
                                                       "cache_creation_input_tokens"))
        if tokens:
            found.append((_text(data.get("timestamp")), tokens))
    if any(tokens > CLAUDE_WINDOW for _, tokens in found):
        long_context = True
    window = CLAUDE_LONG_WINDOW if long_context else CLAUDE_WINDOW
    return [Usage(at, tokens, window) for at, tokens in found]


def codex_usage(lines: list[str]) -> list[Usage]:
    """Codex's rollout: each ``token_count`` event's last answer, and the model's window."""
    out = []
    for line in lines:
        data = _record(line)
        payload = data.get("payload") if data is not None else None
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        last = info.get("last_token_usage") if isinstance(info.get("last_token_usage"), dict) else {}
        tokens = _count(last.get("total_tokens")) or _count(last.get("input_tokens")) + _count(
            last.get("output_tokens"))
        if tokens:
            out.append(Usage(_text(data.get("timestamp") if data else ""), tokens,
                             _count(info.get("model_context_window"))))
    return out


def gemini_usage(lines: list[str], *, compression: float = GEMINI_COMPRESSION) -> list[Usage]:
    """Gemini CLI's chat recording: each answer's prompt, against the point where Gemini CLI compresses (a
    message written again with its tokens, later in the file, counts once, where it was first written)."""
    seen: dict[str, Usage] = {}
    for n, line in enumerate(lines):
        data = _record(line)
        if data is None or data.get("type") != "gemini" or not isinstance(data.get("tokens"), dict):
            continue
        tokens = _count(data["tokens"].get("input"))
        if not tokens:
            continue
        model = _text(data.get("model")).lower()
        window = int(GEMINI_SMALL_WINDOWS.get(model, GEMINI_WINDOW) * compression)
        key = _text(data.get("id")) or f"line {n}"
        seen[key] = Usage(_text(data.get("timestamp")), tokens, window)
    return list(seen.values())


READERS = {"claude": claude_usage, "codex": codex_usage, "gemini": gemini_usage}


class Fill(NamedTuple):
    """How full the context is now: its tokens of its window, and since when it has been at or over the
    threshold it was read against ("" when it is under it, or when no answer said when)."""

    tokens: int
    window: int
    crossed_at: str = ""

    @property
    def percent(self) -> float:
        return 100.0 * self.tokens / self.window if self.window else 0.0

    @property
    def words(self) -> str:
        """``75%``; a fill under 1% with its first significant digit (``0.01%``): never a bare 0%."""
        value = self.percent
        if value >= 1 or value == 0:
            return f"{value:.0f}%"
        return f"{value:.2g}%"


def fill_of(usage: list[Usage], threshold: int) -> Fill | None:
    """The fill after the last answer (None: no answer recorded its usage, or its window is unknown), and when
    the run of answers at or over ``threshold`` percent that it ends began."""
    known = [u for u in usage if u.window]
    if not known:
        return None
    last = known[-1]
    crossed = ""
    for u in reversed(known):
        if not threshold or 100 * u.tokens < threshold * u.window:
            break
        crossed = u.at
    return Fill(last.tokens, last.window, crossed)


def over(fill: Fill, threshold: int) -> bool:
    return threshold > 0 and 100 * fill.tokens >= threshold * fill.window


class Record(NamedTuple):
    """What one session was told about its context, kept between its turns (the seen-file): ``above``: the fill
    was at or over the threshold at the last look; ``answered``: this crossing is answered (the reminder given,
    or the checkpoint written since the fill crossed); ``suggested``: the branch had no checkpoint and starting
    one was suggested (once a session)."""

    above: bool = False
    answered: bool = False
    suggested: bool = False

    def to_data(self) -> dict[str, bool]:
        return {k: v for k, v in self._asdict().items() if v}

    @classmethod
    def from_data(cls, data: Any) -> "Record":
        data = data if isinstance(data, dict) else {}
        return cls(*(data.get(name) is True for name in cls._fields))


def looked(record: Record, is_over: bool) -> Record:
    """The record after a look at the fill: under the threshold, the crossing is over (the next one asks again)."""
    return record._replace(above=True) if is_over else record._replace(above=False, answered=False)


class Work(NamedTuple):
    """What changed since the checkpoint's last write: commits on top of its commit (-1: unknown, its commit is not
    here), the files changed since (committed or not), minutes since it was written (-1: unknown), and whether
    it was written since the fill crossed the threshold."""

    commits: int
    files: tuple[str, ...]
    minutes: int = -1
    written_since: bool = False

    @property
    def nothing(self) -> bool:
        return self.commits <= 0 and not self.files


def minutes_between(earlier: str, later: datetime) -> int:
    """Whole minutes from ``earlier`` (an ISO time, ghstate's or a host's) to ``later``; -1 when unreadable."""
    when = parse_time(earlier)
    return -1 if when is None else max(0, int((later - when).total_seconds() // 60))


def parse_time(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def written_after(updated_at: str, crossed_at: str) -> bool:
    """Whether a checkpoint written at ``updated_at`` was written once the fill had crossed (at ``crossed_at``)."""
    written, crossed = parse_time(updated_at), parse_time(crossed_at)
    return written is not None and crossed is not None and written >= crossed


# What each host's agent is told to do (its own tool, its own command). The MCP tool first: every set-up has it.
HOW = {
    "claude": "call the `checkpoint` tool of the ghstate MCP server (or run `ghstate checkpoint` in a shell; the "
              "/checkpoint command says how)",
    "codex": "call the `checkpoint` tool of the ghstate MCP server (or run `ghstate checkpoint` in a shell)",
    "gemini": "call the `checkpoint` tool of the ghstate MCP server (or run `ghstate checkpoint` in a shell; "
              "/ghstate:checkpoint says how)",
}


def reminder(env: "Templates", *, host: str, fill: Fill, label: str, title: str, branch: str, work: Work) -> str:
    """The reminder: the checkpoint, how full the context is, what changed since the last write and exactly what
    to do. Text from the checkpoint and from git (its title, the branch, file names) is inside the data fence."""
    return env.get_template("reminder.txt.j2").render(
        fill=fill.words, how=HOW.get(host, HOW["claude"]), label=label, title=title, branch=branch,
        commits=work.commits, files=list(work.files[:8]), more_files=max(0, len(work.files) - 8),
        file_count=len(work.files), minutes=work.minutes).strip()


def suggestion(fill: Fill, host: str) -> str:
    """One line for a branch with no checkpoint, at the threshold (once a session)."""
    how = HOW.get(host, HOW["claude"]).split(" (")[0]
    return (f"ghstate: context {fill.words} full and this branch has no checkpoint: to keep what this session "
            f"knows past a compaction or /clear, start one now ({how}: the goal, the phases, the decisions made "
            "and the exact next step).")
