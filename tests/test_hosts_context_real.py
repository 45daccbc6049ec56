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

import http.server
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from large_task import sized_task_body
from model_stub import ModelStub
from test_hosts_real import _Responses, find_host, host, trusted  # noqa: F401 - trusted is a fixture

from ghstate.core.parse import parse

pytestmark = [pytest.mark.skipif(not any(find_host(n) for n in ("claude", "codex", "gemini")),
                                 reason="no agent host is installed (set GHSTATE_HOSTS_BIN to their folder)"),
              pytest.mark.xdist_group("agent-hosts")]  # one host at a time, as in test_hosts_real.py

REMINDER = "ghstate: context 75% full"
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
    """How many of the model's requests carry the reminder as its newest words (history aside)."""
    return sum(1 for body in bodies if REMINDER in json.dumps(_last_input(body)))


def _last_input(body: dict) -> object:
    """The newest message of a request (Anthropic's messages, or a Responses API input)."""
    items = body.get("messages") or body.get("input") or body.get("contents") or []
    return items[-1] if items else None


# ------------------------------------------------------------------------------------ issue 54: the reminder


def test_claude_code_asks_for_the_checkpoint_once_when_the_context_fills(repo, trusted):
    claude = host("claude")
    commit_setup(repo, trusted)
    with ModelStub(usage={"input_tokens": 1_000, "cache_read_input_tokens": 140_000,
                          "cache_creation_input_tokens": 9_000}) as model:  # 150,000 of 200,000: 75%
        env = {**trusted, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}", "ANTHROPIC_API_KEY": "sk-test"}

        def ask(*args: str) -> str:
            proc = subprocess.run([claude, "-p", *args, "--output-format", "json"], cwd=repo, env=env,
                                  capture_output=True, text=True, timeout=180)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            return json.loads(proc.stdout.strip().splitlines()[-1])["session_id"]

        session = ask("say OK")
        assert asked(model.requests) == 1, "the Stop hook's reason, given to the model once"
        reminder = next(json.dumps(_last_input(b)) for b in model.requests if REMINDER in json.dumps(_last_input(b)))
        assert "Checkpoint local #1" in reminder and "1 commit" in reminder and "`checkpoint` tool" in reminder
        seen = len(model.requests)
        ask("--resume", session, "say OK again")  # the same session, still 75% full: not asked again
        assert asked(model.requests[seen:]) == 0 and len(model.requests) == seen + 1

        model.usage = {"input_tokens": 20}  # a new session, 0.01% full: nothing
        seen = len(model.requests)
        ask("say OK")
        assert asked(model.requests[seen:]) == 0 and len(model.requests) == seen + 1

        ghstate(repo, trusted, "checkpoint", "--decision", "keep the parser")  # written: nothing changed since
        model.usage = {"input_tokens": 150_000}
        seen = len(model.requests)
        ask("say OK")
        assert asked(model.requests[seen:]) == 0 and len(model.requests) == seen + 1
