"""Credentials are refused on every store and on every input path, with the same override (issue 48, part 2).

The local store's bodies are committed, pushed and pasted like an issue's: the README's "credential-looking
text is refused" holds there too, for flags, a markdown or JSON ``--file`` and the MCP tool.
"""

from __future__ import annotations

import json

import pytest
from conftest import store_of

from ghstate.agents import mcp_tools
from ghstate.services.app import build_app

FAKE = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d"  # 36 characters of token alphabet, made up

SECRETS = [
    (f"use token ghp_{FAKE}", "a GitHub token"),
    ("key AKIA" + "Q" * 16 + " for the bucket", "an AWS access key id"),
    ("password=hunter2hunter2", "a credential assigned to 'password'"),
    ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
    ("db postgres://app:s3cretVa1ue@db.internal:5432/app", "a password in a URL"),
]


def files(repo):
    """The store's checkpoint files: mirrors and chain generations."""
    folder = store_of(repo)
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and (p.suffix == ".md" or p.parent.parent.name == "chain"))


@pytest.mark.parametrize(("text", "kind"), SECRETS)
def test_a_flag_holding_a_credential_is_refused_on_the_local_store(repo, run, text, kind):
    result = run("checkpoint", "--store", "local", "--goal", "g", "--decision", text, code=1)
    assert result.stderr.startswith("Error: refusing to write the checkpoint: a line of 'Decisions locked' ")
    assert kind in result.stderr and "--allow-secrets" in result.stderr
    assert not (store_of(repo) / "1.md").exists()
    run("checkpoint", "--store", "local", "--goal", "g")  # an update is scanned as a create is
    before = files(repo), (store_of(repo) / "1.md").read_text()
    run("checkpoint", "--store", "local", "--risk", text, code=1)
    assert (files(repo), (store_of(repo) / "1.md").read_text()) == before  # no chain generation either


@pytest.mark.parametrize(("text", "kind"), SECRETS)
def test_allow_secrets_writes_it_on_the_local_store(repo, run, text, kind):
    run("checkpoint", "--store", "local", "--goal", "g", "--decision", text, "--allow-secrets")
    assert text.split()[-1] in (store_of(repo) / "1.md").read_text() or kind == "a private key"


def test_a_file_markdown_or_json_holding_a_credential_is_refused(repo, run, tmp_path):
    md = tmp_path / "cp.md"
    md.write_text(f"## Goal\ng\n\n## Decisions locked\n- use token ghp_{FAKE}\n\n## Resume instruction\nGo on.\n")
    assert "a GitHub token" in run("checkpoint", "--store", "local", "--file", str(md), code=1).stderr
    js = tmp_path / "cp.json"
    js.write_text(json.dumps({"goal": "g", "resume": "go", "risks": ["password=hunter2hunter2"]}))
    assert "'password'" in run("checkpoint", "--store", "local", "--file", str(js), code=1).stderr
    assert "'password'" in run("checkpoint", "--store", "local", "--file", "-", input=js.read_text(), code=1).stderr
    assert files(repo) == []


def test_the_mcp_tool_refuses_and_names_its_own_override(repo):
    def app():
        return build_app(store="local")

    answer = mcp_tools.call("checkpoint", {"goal": "g", "decision": [f"use token ghp_{FAKE}"]}, app)
    assert answer.error and "refusing to write the checkpoint" in answer.text
    assert "allow_secrets: true" in answer.text and "--allow-secrets" not in answer.text
    assert files(repo) == []
    answer = mcp_tools.call("checkpoint", {"goal": "g", "decision": [f"use token ghp_{FAKE}"], "allow_secrets": True},
                            app)
    assert not answer.error, answer.text
    assert f"ghp_{FAKE}" in (store_of(repo) / "1.md").read_text()


def test_a_credential_allowed_once_does_not_block_later_writes(repo, run):
    """Only what a write adds is scanned: the line allowed once stays, and the next write goes through."""
    run("checkpoint", "--store", "local", "--goal", "g", "--risk", "password=hunter2hunter2", "--allow-secrets")
    run("checkpoint", "--store", "local", "--decision", "keep the v1 API")
    assert "keep the v1 API" in (store_of(repo) / "1.md").read_text()


def test_split_takes_the_override_its_refusal_names(repo, run):
    """A parent's decision allowed once is carried by each child split makes: refused without --allow-secrets
    (no child made), made with it."""
    run("checkpoint", "--store", "local", "--goal", "g", "--phase", "Phase 1: a", "--phase", "Phase 2: b",
        "--decision", f"use token ghp_{FAKE}", "--allow-secrets")
    before = files(repo)
    result = run("split", "1", "--store", "local", code=1)
    assert "a GitHub token" in result.stderr and "--allow-secrets" in result.stderr and files(repo) == before
    assert run("split", "1", "--store", "local", "--allow-secrets").stdout.startswith("Split local #1 into 2 new")
    assert f"ghp_{FAKE}" in (store_of(repo) / "2.md").read_text()
