"""Claude Code itself as the judge of what the SessionStart hook injects: run offline against a loopback
model stub, it shows what reaches the model. Skipped when no `claude` binary is found (PATH, or
GHSTATE_CLAUDE=/path/to/claude; `npm install --prefix DIR @anthropic-ai/claude-code` puts one in
DIR/node_modules/.bin)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from large_task import large_task_body
from model_stub import ModelStub

from ghstate.core.parse import parse

CLAUDE = os.environ.get("GHSTATE_CLAUDE") or shutil.which("claude")  # looked up before the tests isolate PATH
ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.thorough,  # the real agent hosts: the thorough tier (tests/conftest.py)
              pytest.mark.skipif(not CLAUDE, reason="no claude binary (set GHSTATE_CLAUDE or put claude on PATH)"),
              pytest.mark.xdist_group("agent-hosts")]  # one host at a time, as in test_hosts_real.py


def test_claude_code_receives_the_prompt_whole_and_once(repo, run, tmp_path, isolated):
    repo = repo.resolve()
    body = tmp_path / "large.md"
    body.write_text(large_task_body())
    run("checkpoint", "--file", str(body))
    cp = parse(body.read_text()).checkpoint
    command = f"PYTHONPATH={ROOT} GHSTATE_STORE=local {sys.executable} -m ghstate hook"
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"matcher": "startup|resume|clear|compact",
                          "hooks": [{"type": "command", "command": f"{command} session-start"}]}],
        "PreCompact": [{"hooks": [{"type": "command", "command": f"{command} pre-compact"}]}]}}))
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {
        str(repo): {"hasTrustDialogAccepted": True, "enableAllProjectMcpServers": True}}}))
    with ModelStub() as stub:
        isolated.add_passthru(f"http://127.0.0.1:{stub.port}")
        env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{stub.port}",
               "ANTHROPIC_API_KEY": "sk-test", "DISABLE_TELEMETRY": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}

        def claude(*args: str) -> str:
            proc = subprocess.run([CLAUDE, "-p", *args, "--output-format", "json"], cwd=repo, env=env,
                                  capture_output=True, text=True, timeout=180)
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)["session_id"]

        def contexts(since: int) -> list[str]:
            texts = [t for body in stub.requests[since:] for t in _texts(body)]
            return [t for t in texts if "SessionStart hook additional context" in t]

        session = claude("hello")
        startup = contexts(0)
        assert startup and "This branch has a ghstate checkpoint: local #1" in startup[-1]
        claude("--resume", session, "/compact")
        mark = len(stub.requests)
        claude("--resume", session, "go on")
        seen = "\n".join(contexts(mark))
    assert "persisted-output" not in seen and "Output too large" not in seen  # not swapped for a preview
    assert "<checkpoint>" in seen and cp.resume in seen
    assert "Next phase: Phase 13: move the cache layer, part 2 (13 of 30)" in seen
    assert all(d in seen for d in cp.decisions)
    assert seen.count("<checkpoint>") == 1 and "already has ghstate checkpoint local #1" in seen


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []
