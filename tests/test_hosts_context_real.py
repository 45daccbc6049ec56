"""The agent hosts themselves as judges of the context (issues 54 and 55), offline against a model stub that
reports each answer's usage, which the host records as it would a real model's:

- when the context fills, the model is asked once for the checkpoint, naming it and the fill (the Stop hook of
  Claude Code and Codex, Gemini CLI's AfterAgent), and never when it is nearly empty or nothing changed since the
  checkpoint was written;
- after a compaction (Claude Code's /compact; Codex compacting by itself past its token limit), the model's
  request holds the prompt whole for an 11 KB and a 30 KB task: the goal, the resume instruction, the first locked
  decision and the prompt's closing line, and no host's spill marker; in Gemini CLI, the MCP resume tool's answer.

Skipped unless the host binaries are found (GHSTATE_HOSTS_BIN or PATH), as in test_hosts_real.py, whose
`trusted` environment (a HOME that trusts the repository, `init --agent all`, checkpoint #1) they share.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import test_hosts_real
from large_task import sized_task_body
from model_stub import ModelStub
from test_hosts_real import GeminiStub, ResponsesStub, codex_provider, find_host, host

from ghstate.core.parse import parse

pytestmark = [pytest.mark.thorough,  # the real agent hosts: the thorough tier (tests/conftest.py)
              pytest.mark.skipif(not any(find_host(n) for n in ("claude", "codex", "gemini")),
                                 reason="no agent host is installed (set GHSTATE_HOSTS_BIN to their folder)"),
              pytest.mark.xdist_group("agent-hosts")]  # one host at a time, as in test_hosts_real.py

REMINDER = "ghstate: context 75% full"
# test_hosts_real's environment: a HOME that trusts ``repo``, `init --agent all` and checkpoint #1 done
trusted = test_hosts_real.trusted
SPILLED = ("Full hook output saved", "Output too large", "persisted-output", "hook_outputs")


def git(repo: Path, env: dict, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def ghstate(repo: Path, env: dict, *args: str, input: str | None = None) -> str:
    wrapper = next(Path(p) / "ghstate" for p in env["PATH"].split(os.pathsep) if (Path(p) / "ghstate").is_file())
    proc = subprocess.run([str(wrapper), *args], cwd=repo, env=env, input=input, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def commit_setup(repo: Path, env: dict) -> None:
    """What init wrote, committed as its user would: one commit since checkpoint #1, and a clean tree."""
    git(repo, env, "add", "-A")
    git(repo, env, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "Set up ghstate")


def asked(bodies: list) -> int:
    """How many of the model's turns carry the reminder as their newest words (history aside; a request a host sent
    again is one turn)."""
    return len({json.dumps(_last_input(b), sort_keys=True) for b in bodies if REMINDER in json.dumps(_last_input(b))})


def turns(bodies: list) -> int:
    """How many turns the model was asked for: requests with different newest words (a host that sends one again,
    on a loaded machine, asks for one turn; a blocked Stop's continuation is a turn of its own)."""
    return len({json.dumps(_last_input(body), sort_keys=True) for body in bodies})


def _last_input(body: dict) -> object:
    """The newest message of a request (Anthropic's messages, or a Responses API input)."""
    items = body.get("messages") or body.get("input") or body.get("contents") or []
    return items[-1] if items else None


# ------------------------------------------------------------------------------------ issue 54: the reminder


class Claude:
    """Claude Code in print mode in ``repo`` against a ModelStub: each call one prompt, its session id answered."""

    def __init__(self, repo: Path, env: dict, model: ModelStub) -> None:
        self.repo, self.claude = repo, host("claude")
        self.env = {**env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}", "ANTHROPIC_API_KEY": "sk-test"}

    def __call__(self, *args: str) -> str:
        proc = subprocess.run([self.claude, "-p", *args, "--output-format", "json"], cwd=self.repo, env=self.env,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])["session_id"]


def test_claude_code_asks_for_the_checkpoint_once_when_the_context_fills(repo, trusted):
    commit_setup(repo, trusted)
    with ModelStub(usage={"input_tokens": 1_000, "cache_read_input_tokens": 140_000,
                          "cache_creation_input_tokens": 9_000}) as model:  # 150,000 of 200,000: 75%
        ask = Claude(repo, trusted, model)

        session = ask("say OK")
        assert asked(model.requests) == 1, "the Stop hook's reason, given to the model once"
        reminder = next(json.dumps(_last_input(b)) for b in model.requests if REMINDER in json.dumps(_last_input(b)))
        assert "Checkpoint local #1" in reminder and "1 commit" in reminder and "`checkpoint` tool" in reminder
        assert "<checkpoint>\\nTask: Checkpoint: feature/x\\nBranch: feature/x\\nChanged: " in reminder  # fenced
        seen = len(model.requests)
        ask("--resume", session, "say OK again")  # the same session, still 75% full: not asked again
        assert asked(model.requests[seen:]) == 0 and turns(model.requests[seen:]) == 1

        model.usage = {"input_tokens": 20}  # a new session, 0.01% full: nothing
        seen = len(model.requests)
        ask("say OK")
        assert asked(model.requests[seen:]) == 0 and turns(model.requests[seen:]) == 1

        ghstate(repo, trusted, "checkpoint", "--decision", "keep the parser")  # written: nothing changed since
        model.usage = {"input_tokens": 150_000}
        seen = len(model.requests)
        ask("say OK")
        assert asked(model.requests[seen:]) == 0 and turns(model.requests[seen:]) == 1


class Codex:
    """Codex CLI in ``repo`` against a ResponsesStub (its hooks trusted for each run)."""

    def __init__(self, repo: Path, env: dict, usage: int) -> None:
        self.repo, self.codex = repo, host("codex")
        self.stub = ResponsesStub.start(usage)
        codex_provider(Path(env["HOME"]) / ".codex" / "config.toml", self.stub.server_address[1])
        self.env = {**env, "OPENAI_API_KEY": "sk-test"}

    def __call__(self, *args: str) -> None:
        proc = subprocess.run([self.codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", *args],
                              cwd=self.repo, env=self.env, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def close(self) -> None:
        self.stub.shutdown()
        self.stub.server_close()


def test_codex_asks_for_the_checkpoint_once_when_the_context_fills(repo, trusted):
    commit_setup(repo, trusted)
    codex = Codex(repo, trusted, usage=195_000)  # of the 258,400 tokens Codex gives a model it has no data on: 75%
    try:
        codex("say OK")
        assert asked(codex.stub.bodies) == 1, "the Stop hook's reason, given to the model once"
        assert "Checkpoint local #1" in json.dumps(_last_input(codex.stub.bodies[-1]))
        seen = len(codex.stub.bodies)
        codex("resume", "--last", "say OK again")
        assert asked(codex.stub.bodies[seen:]) == 0 and turns(codex.stub.bodies[seen:]) == 1

        codex.stub.usage = {"input_tokens": 25}  # a new session, 0.01% full: nothing
        seen = len(codex.stub.bodies)
        codex("say OK")
        assert asked(codex.stub.bodies[seen:]) == 0 and turns(codex.stub.bodies[seen:]) == 1

        ghstate(repo, trusted, "checkpoint", "--decision", "keep the parser")  # written: nothing changed since
        codex.stub.usage = {"input_tokens": 195_000}
        seen = len(codex.stub.bodies)
        codex("say OK")
        assert asked(codex.stub.bodies[seen:]) == 0 and turns(codex.stub.bodies[seen:]) == 1
    finally:
        codex.close()


class Gemini:
    """Gemini CLI in ``repo`` against a GeminiStub."""

    def __init__(self, repo: Path, env: dict, usage: int) -> None:
        self.repo, self.gemini = repo, host("gemini")
        self.stub = GeminiStub.start(usage)
        home = Path(env["HOME"])
        (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {
            "selectedType": "gemini-api-key"}}}))
        self.env = {**env, "GEMINI_API_KEY": "test",
                    "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{self.stub.server_address[1]}"}

    def __call__(self, *args: str) -> None:
        proc = subprocess.run([self.gemini, *args], cwd=self.repo, env=self.env, capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def session(self) -> list:
        """The requests of the session (the router's calls left out)."""
        return [b for b in self.stub.bodies if "contents" in b and "systemInstruction" in b]

    def close(self) -> None:
        self.stub.shutdown()
        self.stub.server_close()


def test_gemini_cli_asks_for_the_checkpoint_once_when_the_context_fills(repo, trusted):
    commit_setup(repo, trusted)
    gemini = Gemini(repo, trusted, usage=393_216)  # 75% of the 524,288 tokens Gemini CLI keeps before compressing
    try:
        gemini("-p", "say OK")
        assert asked(gemini.session()) == 1, "the AfterAgent hook's reason, given to the model once"
        seen = len(gemini.session())
        gemini("-p", "say OK again", "--resume", "latest")

        assert asked(gemini.session()[seen:]) == 0
    finally:
        gemini.close()


# ------------------------------------------------------------------------------------ issue 55: the prompt whole


def texts(value: object) -> str:
    """Every string of a request, one per line: what the model reads, JSON's escapes undone."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(texts(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(texts(v) for v in value)
    return ""


def two_tasks(repo: Path, env: dict) -> dict[str, str]:
    """Branches task-11 and task-30, each with its checkpoint: an 11 KB and a 30 KB task (30 phases, 40 locked
    decisions); their bodies by branch."""
    bodies = {}
    for kilobytes in (11, 30):
        branch = f"task-{kilobytes}"
        git(repo, env, "checkout", "-q", "-b", branch)
        bodies[branch] = sized_task_body(kilobytes)
        ghstate(repo, env, "checkpoint", "--new", "--file", "-", input=bodies[branch])
    return bodies


def expected(repo: Path, env: dict, *flags: str) -> str:
    """What the session-start hook gives a compacted session here (another session, so that it is given whole)."""
    event = {"hook_event_name": "SessionStart", "source": "compact", "session_id": f"judge-{time.time_ns()}",
             "cwd": str(repo)}
    out = ghstate(repo, env, "hook", "session-start", *flags, input=json.dumps(event))
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def assert_whole(seen: str, body: str, prompt: str) -> None:
    """The model was given the prompt whole: its goal, resume instruction, first locked decision and closing line,
    and no host's spill marker in place of any of it."""
    cp = parse(body).checkpoint
    assert not [m for m in SPILLED if m in seen], [m for m in SPILLED if m in seen]
    closing = prompt.rstrip().splitlines()[-1]
    for part in (cp.goal, cp.resume, cp.decisions[0], closing):
        assert part in seen, part


def test_claude_code_gives_the_model_the_prompt_whole_after_compact(repo, trusted):
    commit_setup(repo, trusted)
    bodies = two_tasks(repo, trusted)
    with ModelStub() as model:
        ask = Claude(repo, trusted, model)

        session = ""
        for branch, body in bodies.items():  # one session: the 11 KB task, then the 30 KB one on its branch
            git(repo, trusted, "checkout", "-q", branch)
            session = session or ask("say OK")
            ask("--resume", session, "/compact")
            prompt = expected(repo, trusted)  # what the hook gave it (the tree as the compaction found it)
            assert len(prompt) <= 10_000 and "Left out to fit 10,000 characters" in prompt  # both fitted
            seen = len(model.requests)
            ask("--resume", session, "go on")
            assert_whole("\n".join(texts(b) for b in model.requests[seen:]), body, prompt)


def test_codex_gives_the_model_the_prompt_whole_after_compacting_by_itself(repo, trusted):
    """It spilled before ghstate set Codex's additionalContextLimit: "Full hook output saved to: …" for both."""
    commit_setup(repo, trusted)
    bodies = two_tasks(repo, trusted)
    codex = Codex(repo, trusted, usage=5_000)  # past the limit below: each next turn compacts first
    limit = ("-c", "model_auto_compact_token_limit=1000")
    try:
        git(repo, trusted, "checkout", "-q", "task-11")
        codex(*limit, "say OK")
        for branch, body in bodies.items():
            git(repo, trusted, "checkout", "-q", branch)
            seen = len(codex.stub.bodies)
            codex(*limit, "resume", "--last", "go on")
            prompt = expected(repo, trusted, "--host", "codex")
            last = texts(codex.stub.bodies[-1])
            assert len(codex.stub.bodies) > seen + 1, "a compaction, then the turn"
            assert_whole(last, body, prompt)
    finally:
        codex.close()


def test_gemini_cli_gives_the_model_the_mcp_resume_tools_answer_whole(repo, trusted):
    """Gemini CLI cuts an MCP tool's text past 40,000 characters to its head and tail ("Output too large"): a
    50 KB task's prompt is fitted under it, whole, its closing line saying what was left out. (Gemini CLI starts
    no session after it compresses; its /clear cannot be driven by `gemini -p`.)"""
    commit_setup(repo, trusted)
    git(repo, trusted, "checkout", "-q", "-b", "task-50")
    body = sized_task_body(50, risks=80)
    ghstate(repo, trusted, "checkpoint", "--new", "--file", "-", input=body)
    whole = ghstate(repo, trusted, "resume")
    assert len(whole) > 40_000  # unfitted, Gemini CLI would cut it
    gemini = Gemini(repo, trusted, usage=1_000)
    gemini.stub.calls = [{"name": "resume", "args": {}}]
    try:
        gemini("-p", "load the checkpoint", "--approval-mode", "yolo")
        prompt = ghstate(repo, trusted, "resume", "--budget", "40000")
        answer = next(texts(b) for b in gemini.session() if '"functionResponse"' in json.dumps(b))
        assert_whole(answer, body, prompt)
        assert "Left out to fit 40,000 characters" in answer
    finally:
        gemini.close()
