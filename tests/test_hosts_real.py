"""The agent hosts themselves as judges of what `ghstate init --agent` writes (see ../shared/agent-hosts.md).

Skipped unless the host binaries are found: in GHSTATE_HOSTS_BIN (a folder such as
DIR/node_modules/.bin after `npm install --prefix DIR @anthropic-ai/claude-code @openai/codex
@google/gemini-cli`) or on PATH. They run offline: HOME is a temporary folder that trusts the test
repository, and the model is a loopback stub that records what each request carried.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import SAMPLE
from model_stub import ModelStub

ROOT = Path(__file__).resolve().parents[1]


def find_host(name: str) -> str | None:
    folders = [os.environ.get("GHSTATE_HOSTS_BIN", ""), *os.environ.get("PATH", "").split(os.pathsep)]
    for folder in filter(None, folders):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


# One host at a time, on one worker (--dist loadgroup): each starts node, hooks and MCP servers, and two at once
# on a small machine can push a server's start or a hook past the host's timeout.
pytestmark = [pytest.mark.thorough,  # the real agent hosts: the thorough tier (tests/conftest.py)
              pytest.mark.skipif(not any(find_host(n) for n in ("claude", "codex", "gemini")),
                                 reason="no agent host is installed (set GHSTATE_HOSTS_BIN to their folder)"),
              pytest.mark.xdist_group("agent-hosts")]


def host(name: str) -> str:
    found = find_host(name)
    if found is None:
        pytest.skip(f"{name} is not installed (set GHSTATE_HOSTS_BIN to the folder of the host binaries)")
    return found


@pytest.fixture
def trusted(repo, tmp_path):
    """An environment in which the hosts trust ``repo``, find this checkout's ghstate as `ghstate`, and
    talk to no one but loopback; the repository set up for every host, with a checkpoint."""
    real = str(repo.resolve())
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".codex").mkdir()
    (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {real: {
        "hasTrustDialogAccepted": True, "enableAllProjectMcpServers": True}}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({real: "TRUST_FOLDER"}))
    (home / ".codex" / "config.toml").write_text(f'[projects."{real}"]\ntrust_level = "trusted"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "ghstate"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m ghstate "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_", "ANTHROPIC_",
                                                                     "OPENAI_", "GEMINI_", "GOOGLE_"))}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", DISABLE_TELEMETRY="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", GIT_CONFIG_GLOBAL=os.devnull)
    for args in (["init", "--agent", "all"], ["checkpoint", "--file", "-"]):
        proc = subprocess.run([str(wrapper), *args], cwd=repo, env=env, input=SAMPLE, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
    return env


@pytest.mark.parametrize(("name", "expected"), [
    ("claude", "ghstate: ghstate mcp --agent claude-code - ✔ Connected"),
    ("gemini", "✓ ghstate: ghstate mcp --agent gemini-cli (stdio) - Connected"),
    ("codex", "mcp --agent codex"),
])
def test_each_host_starts_the_ghstate_server(repo, trusted, name, expected):
    proc = subprocess.run([host(name), "mcp", "list"], cwd=repo, env=trusted, capture_output=True, text=True,
                          timeout=180)
    out = proc.stdout + proc.stderr
    assert expected in out, out
    if name == "codex":  # codex lists what it configured (it does not connect): enabled, from .codex/config.toml
        line = next(line for line in out.splitlines() if line.startswith("ghstate "))
        assert "enabled" in line


@pytest.fixture
def model():
    with ModelStub() as stub:  # Claude Code's model: the same loopback stub as test_claude_judge.py
        yield stub


def test_claude_code_gives_the_model_the_checkpoint_at_startup_and_after_compaction(repo, trusted, model):
    claude = host("claude")
    env = {**trusted, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}",
           "ANTHROPIC_API_KEY": "sk-test"}

    def ask(*args: str) -> dict:
        proc = subprocess.run([claude, "-p", *args, "--output-format", "json"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first = ask("say OK")
    startup = json.dumps(model.requests)
    assert "SessionStart hook additional context: This branch has a ghstate checkpoint: local #1" in startup
    assert "run `ghstate resume 1`" in startup
    assert "Working state: ghstate checkpoints" in startup  # the AGENTS.md block reaches the model too
    model.requests.clear()
    ask("--resume", first["session_id"], "/compact")
    ask("--resume", first["session_id"], "say OK again")
    after = json.dumps(model.requests)
    assert "Next phase: Phase 2: matcher abstraction" in after and "<checkpoint>" in after


class GeminiStub(http.server.ThreadingHTTPServer):
    """Answers the Gemini API with "OK", reporting ``usage`` prompt tokens (Gemini CLI records them in its chat
    recording); ``calls`` are function calls to answer with first, one a request; keeps every request body."""

    bodies: list
    usage: int
    calls: list

    @classmethod
    def start(cls, usage: int = 1) -> GeminiStub:
        stub = cls(("127.0.0.1", 0), _Gemini)
        stub.bodies, stub.usage, stub.calls = [], usage, []
        threading.Thread(target=stub.serve_forever, daemon=True).start()
        return stub


class _Gemini(http.server.BaseHTTPRequestHandler):
    server: GeminiStub
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            self.server.bodies.append(json.loads(raw or b"{}"))
        except ValueError:
            pass
        routing = "alt=sse" not in self.path  # the model router's call, not the session's
        call = self.server.calls.pop(0) if self.server.calls and not routing else None
        if call is not None:  # the tool as this host names it (an MCP server's tools may be given a prefix)
            body = self.server.bodies[-1]
            names = [f["name"] for t in body.get("tools", []) for f in t.get("functionDeclarations", [])]
            call = {**call, "name": next((n for n in names if n.endswith(call["name"])), call["name"])}
        text = '{"complexity_reasoning": "simple", "complexity_score": 10}' if b"complexity_score" in raw else "OK"
        parts = [{"functionCall": call}] if call else [{"text": text}]
        answer = {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP"}],
                  "usageMetadata": {"promptTokenCount": self.server.usage, "candidatesTokenCount": 1,
                                    "totalTokenCount": self.server.usage + 1}}
        data = (json.dumps(answer) if routing else f"data: {json.dumps(answer)}\n\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if routing else "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def gemini_first_request(gemini: str, cwd: Path, env: dict[str, str]) -> str:
    """What Gemini CLI, run in ``cwd`` with ``env``, sends the model first: it carries the session's context."""
    import time

    stub = GeminiStub.start()
    env = {**env, "GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{stub.server_address[1]}"}
    try:
        with subprocess.Popen([gemini, "-p", "say OK"], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) as proc:
            deadline = time.monotonic() + 150
            try:
                while not stub.bodies and time.monotonic() < deadline and proc.poll() is None:
                    time.sleep(0.2)
            finally:
                proc.kill()
    finally:
        stub.shutdown()
        stub.server_close()
    assert stub.bodies, "Gemini CLI sent nothing to the model"
    return json.dumps(stub.bodies[0])


def test_gemini_cli_gives_the_model_the_checkpoint_and_the_servers_instructions(repo, trusted, tmp_path):
    home = Path(trusted["HOME"])
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(auth))
    seen = gemini_first_request(host("gemini"), repo, trusted)
    assert "<hook_context>This branch has a ghstate checkpoint: local #1" in seen
    assert "call the `resume` tool of the ghstate MCP server" in seen
    assert "call resume first" in seen  # the MCP server's instructions, from its initialize answer


class ResponsesStub(http.server.ThreadingHTTPServer):
    """Answers the OpenAI Responses API (streamed) with "OK", reporting ``usage`` (Codex records it in its
    rollout's token_count events), and keeps every request body."""

    bodies: list
    usage: dict

    @classmethod
    def start(cls, input_tokens: int = 1) -> ResponsesStub:
        stub = cls(("127.0.0.1", 0), _Responses)
        stub.bodies, stub.usage = [], {"input_tokens": input_tokens}
        threading.Thread(target=stub.serve_forever, daemon=True).start()
        return stub

    def close(self) -> None:
        self.shutdown()
        self.server_close()


def codex_provider(config: Path, port: int) -> str:
    """Point Codex's ``config`` (``~/.codex/config.toml``) at a ResponsesStub on ``port``; its text before."""
    kept = config.read_text()
    config.write_text(f'model_provider = "stub"\nmodel = "gpt-5.1-codex"\n\n[model_providers.stub]\nname = "stub"\n'
                      f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n\n'
                      + kept)
    return kept


class _Responses(http.server.BaseHTTPRequestHandler):
    server: ResponsesStub
    protocol_version = "HTTP/1.1"

    def _send(self, data: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            self.server.bodies.append(json.loads(raw or b"{}"))
        except ValueError:
            pass
        item = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                "content": [{"type": "output_text", "text": "OK", "annotations": []}]}
        tokens = getattr(self.server, "usage", {}).get("input_tokens", 1)
        usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": tokens + 1}
        events = [("response.created", {"response": {"id": "resp_1"}}),
                  ("response.output_item.added", {"output_index": 0, "item": {**item, "content": []}}),
                  ("response.output_text.delta", {"output_index": 0, "content_index": 0, "item_id": "msg_1",
                                                  "delta": "OK"}),
                  ("response.output_item.done", {"output_index": 0, "item": item}),
                  ("response.completed", {"response": {"id": "resp_1", "usage": usage}})]
        data = "".join(f"event: {n}\ndata: {json.dumps({'type': n, **d})}\n\n" for n, d in events)
        self._send(data.encode(), "text/event-stream")

    def do_GET(self) -> None:
        self._send(b'{"data": [], "models": []}', "application/json")

    def log_message(self, *args: object) -> None:
        pass


def test_codex_gives_the_model_the_checkpoint_and_agents_md(repo, trusted):
    codex = host("codex")
    stub = ResponsesStub.start()
    codex_provider(Path(trusted["HOME"]) / ".codex" / "config.toml", stub.server_address[1])
    try:
        proc = subprocess.run([codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "say OK"],
                              cwd=repo, env={**trusted, "OPENAI_API_KEY": "sk-test"}, capture_output=True, text=True,
                              timeout=180)
    finally:
        stub.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert stub.bodies, "Codex sent nothing to the model"
    seen = json.dumps(stub.bodies[0])
    assert "This branch has a ghstate checkpoint: local #1" in seen  # the SessionStart hook's context
    assert "call the `resume` tool of the ghstate MCP server" in seen
    assert "Working state: ghstate checkpoints" in seen  # the AGENTS.md block


@pytest.mark.parametrize(("name", "given"), [("claude", True), ("gemini", False)])
def test_each_host_gives_the_server_its_session_or_none(repo, trusted, tmp_path, name, given):
    """Issue 57: a claim's holder is the agent in its session. Claude Code gives the MCP servers it starts its
    session id (CLAUDE_CODE_SESSION_ID), and ghstate takes it; Gemini CLI gives none, and the server is a session
    of its own (its process id and a random part: each Gemini CLI process starts its own server)."""
    seen = tmp_path / "seen"
    wrapper = Path(trusted["PATH"].split(os.pathsep)[0]) / "ghstate"
    real = wrapper.read_text()
    wrapper.write_text(real.replace("exec ", f'[ "$1" = mcp ] && echo "session=$CLAUDE_CODE_SESSION_ID" >> "{seen}"\n'
                                            "exec ", 1))
    proc = subprocess.run([host(name), "mcp", "list"], cwd=repo, env=trusted, capture_output=True, text=True,
                          timeout=180)
    assert "Connected" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    sessions = {line.removeprefix("session=") for line in seen.read_text().splitlines()}
    assert all(sessions) if given else sessions == {""}, sessions
