"""``--store auto`` falling back to the local store where the checkpoints are on GitHub is said, with the
reason, once per command; never answered as if GitHub had none; an error where ``init`` set it up."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE, git
from github_fake import FakeGitHub

from ghstate.services.app import build_app

NO_TOKEN = ("Warning: using the local store (.git/ghstate), not the issues of octo/hello: no GitHub token: "
            "set GH_TOKEN or GITHUB_TOKEN, or run 'gh auth login'")


@pytest.fixture
def on_github(repo):
    git(repo, "remote", "add", "origin", "git@github.com:octo/hello.git")
    return repo


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning: using the local store")]


@pytest.mark.parametrize("args", [("list",), ("list", "--json"), ("resume",), ("show", "1"), ("log", "1"),
                                  ("lint", "1"), ("checkpoint", "--risk", "r"), ("close", "1")])
def test_a_github_origin_without_a_token_is_said_once_by_every_command_that_reads_or_writes(on_github, run, args,
                                                                                           sample_file):
    run("checkpoint", "--file", str(sample_file), "--store", "local")  # said nothing: asked for
    result = run(*args)
    assert warnings(result.stderr) == [NO_TOKEN]


def test_an_empty_local_store_is_not_answered_as_github_having_no_checkpoints(on_github, run):
    result = run("list")
    assert result.stderr.splitlines() == [
        NO_TOKEN, "No open checkpoints in the local store (GitHub's checkpoints were not read)."]
    result = run("resume", code=1)
    assert result.stderr.splitlines()[-1] == (
        "Error: no open checkpoint for branch feature/x in the local store (GitHub's checkpoints were not read: no "
        "GitHub token: set GH_TOKEN or GITHUB_TOKEN, or run 'gh auth login'); give an ISSUE number, or create one "
        "with 'ghstate checkpoint'")


@pytest.mark.parametrize(("env", "said"), [
    ({"GITHUB_API_URL": "https://ghe.example.com/api/v3"},
     "the 'origin' remote is on github.com, but GITHUB_API_URL makes the API https://ghe.example.com/api/v3: unset "
     "it to use github.com"),
    ({"GH_HOST": "ghe.example.com"},
     "the 'origin' remote is on github.com, but GH_HOST makes the API https://ghe.example.com/api/v3: unset it to "
     "use github.com"),
])
def test_an_origin_on_another_host_than_the_apis_is_said(on_github, run, monkeypatch, env, said):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    said = f"Warning: using the local store (.git/ghstate), not GitHub's issues: {said}"
    assert warnings(run("list").stderr) == [said]


@pytest.mark.parametrize("origin", [None, "git@gitlab.com:octo/hello.git", "/srv/git/hello.git"])
def test_a_repository_that_is_not_on_github_uses_the_local_store_quietly(repo, run, origin):
    if origin:
        git(repo, "remote", "add", "origin", origin)
    result = run("list")
    assert result.stderr == "No open checkpoints in the local store.\n"
    assert not warnings(run("list", "--store", "local").stderr)


def test_hooks_warn_and_never_fail_the_session(on_github, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--store", "local")
    event = json.dumps({"hook_event_name": "SessionStart", "source": "clear", "session_id": "s-1"})
    result = run("hook", "session-start", input=event)
    assert warnings(result.stderr) == [NO_TOKEN]
    assert "Phase 2: matcher abstraction" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_mcp_tools_app_names_the_fallback_in_what_it_cannot_find(on_github):
    """The MCP server builds an App per call (no click): its answer says GitHub was not read, and why."""
    app = build_app()
    assert app.fallback == NO_TOKEN.removeprefix("Warning: ")
    with pytest.raises(Exception, match=r"GitHub's checkpoints were not read: no GitHub token"):
        app.find(None)


@pytest.fixture
def set_up(on_github, run, isolated, monkeypatch):
    """init run with a token, on a fake GitHub: the repository is set up for GitHub."""
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    FakeGitHub(isolated)
    out = run("init", "--agent", "claude").stdout
    assert ".ghstate/config.toml" in out and "github = true" in out
    monkeypatch.delenv("GH_TOKEN")
    return on_github


def test_init_records_that_the_repository_is_set_up_for_github(set_up, run, isolated, monkeypatch):
    text = (set_up / ".ghstate" / "config.toml").read_text()
    assert text.endswith("github = true\n") and text.startswith("# ghstate init set this repository up for GitHub")
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    assert "set up for GitHub already" in run("init", "--agent", "claude").stdout
    assert (set_up / ".ghstate" / "config.toml").read_text() == text  # once


@pytest.mark.parametrize("args", [("list",), ("resume",), ("checkpoint", "--risk", "r"), ("show", "1")])
def test_in_a_repository_set_up_for_github_the_fallback_is_an_error(set_up, run, args):
    result = run(*args, code=1)
    assert result.stderr == (
        "Error: this repository is set up for GitHub (github = true in "
        f"{set_up / '.ghstate' / 'config.toml'}), but no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or run 'gh "
        "auth login' (or pass --store local for this machine's store)\n")
    assert not list((set_up / ".git" / "ghstate").glob("*.md"))


def test_set_up_for_github_the_local_store_is_still_there_when_asked_for_and_hooks_do_not_fail(set_up, run):
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    assert "Phase 2" in run("resume", "--store", "local").stdout
    result = run("hook", "session-start", input='{"source": "clear"}')
    assert result.stdout == "" and result.stderr.startswith("ghstate hook: this repository is set up for GitHub")


def test_init_records_it_in_pyproject_when_the_policy_lives_there(on_github, run, isolated, monkeypatch):
    (on_github / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.ghstate]\nblock_after = 5\n')
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    FakeGitHub(isolated)
    run("init", "--agent", "claude")
    text = (on_github / "pyproject.toml").read_text()
    assert "[tool.ghstate]\n# ghstate init" in text and text.endswith("github = true\nblock_after = 5\n")
    assert not (on_github / ".ghstate" / "config.toml").exists()
    from ghstate import config

    assert config.build(env={"GH_TOKEN": "t"}).policy == config.Policy(block_after=5, github=True)
