"""Configuration: one file, read once; a bad value is an error, an unknown key a warning; store and repository
resolution."""

from __future__ import annotations

import pytest

from ghstate import config
from ghstate.errors import ConfigError


def test_defaults_without_a_file(repo):
    settings = config.build(env={})
    assert settings.store == "local" and settings.repo is None
    assert settings.state_dir == repo / ".ghstate"
    assert settings.policy == config.Policy()


def test_config_toml(repo):
    (repo / ".ghstate").mkdir()
    (repo / ".ghstate" / "config.toml").write_text(
        'label = "state"\nblock_after = 5\ntrusted_authors = ["ci-bot"]\nstore = "local"\n')
    policy = config.build(env={}).policy
    assert policy.label == "state" and policy.block_after == 5 and policy.trusted_authors == ("ci-bot",)


def test_pyproject_tool_section(repo):
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.ghstate]\nmax-item-chars = 200\n')
    assert config.build(env={}).policy.max_item_chars == 200


def test_an_unknown_key_is_a_warning_naming_the_key_meant_and_stops_nothing(repo, run, capsys):
    """Found by a newcomer: a key a newer ghstate knows, committed by a teammate, stopped every command of an
    older one, the session-start hook included (the fresh session got no context). It is read as nothing and
    said once; a typo is said with the key it looks like."""
    import json

    (repo / ".ghstate").mkdir()
    (repo / ".ghstate" / "config.toml").write_text('new_future_key = 1\nmax_item_chars = 200\nlabl = "x"\n')
    assert config.build(env={}).policy.max_item_chars == 200
    said = capsys.readouterr().err
    assert "Warning: unknown key 'new_future_key' in" in said and "is ignored (a newer ghstate's?)" in said
    assert "Warning: unknown key 'labl' in" in said and "(did you mean 'label'?)" in said
    config.build(env={})
    assert capsys.readouterr().err == ""  # said once a process
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start.")
    event = json.dumps({"hook_event_name": "SessionStart", "source": "clear", "session_id": "s", "cwd": str(repo)})
    out = run("hook", "session-start", input=event).stdout
    assert "Start." in json.loads(out)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(("text", "message"), [
    ("block_after = 0\n", "block_after"),
    ('block_after = "3"\n', "block_after"),
    ("block_after = true\n", "block_after"),
    ('store = "s3"\n', "store in"),
    ("trusted_authors = [1]\n", "list of strings"),
    ("label = = 1\n", "cannot read"),
])
def test_bad_config_is_an_error(repo, run, text, message):
    (repo / ".ghstate").mkdir()
    (repo / ".ghstate" / "config.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        config.build(env={})
    result = run("resume", code=1)
    assert result.stderr.startswith("Error: ") and message.split("'")[0] in result.stderr


@pytest.mark.parametrize(("url", "repo_name"), [
    ("git@github.com:octo/hello.git", "octo/hello"),
    ("https://github.com/octo/hello.git", "octo/hello"),
    ("https://github.com/octo/hello", "octo/hello"),
    ("ssh://git@github.com/octo/hello.git", "octo/hello"),
    ("ssh://git@ssh.github.com:443/octo/hello.git", "octo/hello"),
    ("https://x-access-token:abc@github.com/octo/hello.git", "octo/hello"),
    ("git@gitlab.com:octo/hello.git", None),
    ("/srv/git/hello.git", None),
])
def test_repository_from_origin(url, repo_name):
    assert config.gitinfo.repo_from_url(url) == repo_name


def test_repository_from_origin_remote_and_ghes(repo):
    from conftest import git

    git(repo, "remote", "add", "origin", "git@ghe.example.com:team/app.git")
    assert config.build(env={}).repo is None
    settings = config.build(env={"GITHUB_API_URL": "https://ghe.example.com/api/v3"})
    assert settings.repo == "team/app" and settings.store == "local"  # no token: local
    settings = config.build(env={"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GH_TOKEN": "t"})
    assert settings.store == "github" and settings.api_url == "https://ghe.example.com/api/v3"


def test_store_resolution(repo):
    assert config.build(env={"GITHUB_REPOSITORY": "o/r"}).store == "local"
    settings = config.build(env={"GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "ghp_secretvalue"})
    assert settings.store == "github" and settings.token == "ghp_secretvalue"
    assert "ghp_secretvalue" not in repr(settings)
    assert config.build(env={"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "a", "GITHUB_TOKEN": "b"}).token == "a"
    assert config.build(store="local", env={"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "a"}).store == "local"
    with pytest.raises(ConfigError, match="no GitHub token"):
        config.build(store="github", env={"GITHUB_REPOSITORY": "o/r"})
    with pytest.raises(ConfigError, match="no GitHub repository"):
        config.build(store="github", env={"GH_TOKEN": "a"})
    with pytest.raises(ConfigError, match="OWNER/NAME"):
        config.build(repo="nope", env={})


def test_gh_auth_token_is_the_last_resort(repo, monkeypatch, tmp_path):
    gh = tmp_path / "gh"
    gh.write_text("#!/bin/sh\necho gho_fromgh\n")
    gh.chmod(0o755)
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: str(gh) if name == "gh" else None)
    assert config.build(env={"GITHUB_REPOSITORY": "o/r"}).token == "gho_fromgh"
    assert config.build(env={"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "env"}).token == "env"


def test_gh_auth_token_is_asked_for_the_enterprise_host(monkeypatch, tmp_path):
    import subprocess

    asked = []
    real_run = subprocess.run

    def fake_run(args, **kwargs):
        if args[:3] == ["/usr/bin/gh", "auth", "token"]:
            asked.append(args)
            return subprocess.CompletedProcess(args, 0, "ghe-token\n", "")
        return real_run(args, **kwargs)

    monkeypatch.setattr("shutil.which", lambda name, *a, **k: "/usr/bin/gh" if name == "gh" else None)
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.chdir(tmp_path)
    settings = config.build(env={"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_REPOSITORY": "o/r"})
    assert settings.token == "ghe-token" and settings.store == "github"
    assert asked == [["/usr/bin/gh", "auth", "token", "--hostname", "ghe.example.com"]]


def test_a_relative_cache_home_is_ignored_so_no_cache_lands_in_a_repository(tmp_path):
    from ghstate import config

    assert config._cache_dir({"XDG_CACHE_HOME": ".cache", "HOME": str(tmp_path)}).startswith(str(tmp_path / ".cache"))
    assert config._cache_dir({"XDG_CACHE_HOME": ".cache"}) is None
    assert config._cache_dir({"XDG_CACHE_HOME": str(tmp_path / "c")}).startswith(str(tmp_path / "c"))


@pytest.mark.parametrize(("origin", "api", "said"), [
    ("git@github.com:team/app.git", "https://ghe.example.com/api/v3",
     "the 'origin' remote is on github.com, but GITHUB_API_URL makes the API https://ghe.example.com/api/v3: unset "
     "it to use github.com"),
    ("https://ghe.example.com/team/app.git", "",
     "the 'origin' remote is on ghe.example.com, but the API in use is https://api.github.com: for a GitHub "
     "Enterprise Server set GH_HOST=ghe.example.com (or GITHUB_API_URL=https://ghe.example.com/api/v3)"),
])
def test_an_origin_on_another_host_than_the_apis_is_named(repo, origin, api, said):
    from conftest import git

    git(repo, "remote", "add", "origin", origin)
    env = {"GH_TOKEN": "t", **({"GITHUB_API_URL": api} if api else {})}
    with pytest.raises(ConfigError) as caught:
        config.build(store="github", env=env)
    assert str(caught.value) == f"no GitHub repository: {said}, or pass -R OWNER/NAME"
    git(repo, "remote", "set-url", "origin", "/srv/git/app.git")  # a path names no host: as before
    with pytest.raises(ConfigError, match="no GitHub repository: pass -R OWNER/NAME, set GITHUB_REPOSITORY"):
        config.build(store="github", env=env)


@pytest.mark.parametrize(("given", "env", "repo_name", "api"), [
    (None, {"GH_REPO": "octo/hello"}, "octo/hello", "https://api.github.com"),
    (None, {"GH_REPO": "octo/hello", "GITHUB_REPOSITORY": "ci/other"}, "octo/hello", "https://api.github.com"),
    ("mine/app", {"GH_REPO": "octo/hello"}, "mine/app", "https://api.github.com"),  # --repo first
    (None, {"GH_REPO": "ghe.example.com/team/app"}, "team/app", "https://ghe.example.com/api/v3"),
    (None, {"GH_REPO": "github.com/octo/hello", "GH_HOST": "ghe.example.com"}, "octo/hello", "https://api.github.com"),
    (None, {"GH_HOST": "ghe.example.com", "GITHUB_REPOSITORY": "team/app"}, "team/app",
     "https://ghe.example.com/api/v3"),
    (None, {"GH_HOST": "acme.ghe.com", "GH_REPO": "o/r"}, "o/r", "https://api.acme.ghe.com"),  # GHE.com's API host
    (None, {"GH_HOST": "ghe.example.com", "GH_REPO": "o/r", "GITHUB_API_URL": "https://gw.example/api/"}, "o/r",
     "https://gw.example/api"),  # GITHUB_API_URL names the API outright
    ("ghe.example.com/team/app", {}, "team/app", "https://ghe.example.com/api/v3"),  # -R HOST/OWNER/NAME, as gh
])
def test_gh_repo_and_gh_host_are_read_as_gh_reads_them(repo, given, env, repo_name, api):
    settings = config.build(repo=given, env={"GH_TOKEN": "t", **env})
    assert (settings.repo, settings.api_url, settings.store) == (repo_name, api, "github")


def test_gh_host_names_the_host_whose_origin_is_read(repo):
    from conftest import git

    git(repo, "remote", "add", "origin", "git@ghe.example.com:team/app.git")
    settings = config.build(env={"GH_HOST": "ghe.example.com", "GH_TOKEN": "t"})
    assert (settings.repo, settings.api_url) == ("team/app", "https://ghe.example.com/api/v3")
    with pytest.raises(ConfigError, match=r"GH_REPO must be \[HOST/\]OWNER/REPO, not 'nope'"):
        config.build(env={"GH_REPO": "nope"})
    with pytest.raises(ConfigError, match="GH_HOST must be a host name"):
        config.build(env={"GH_HOST": "https://ghe.example.com/"})


@pytest.mark.parametrize(("api", "env", "expected"), [
    # an Enterprise Server's own token first, as gh reads it, then GH_TOKEN and GITHUB_TOKEN
    ("https://ghe.example.com/api/v3", {"GH_ENTERPRISE_TOKEN": "e1", "GITHUB_ENTERPRISE_TOKEN": "e2", "GH_TOKEN": "g"},
     "e1"),
    ("https://ghe.example.com/api/v3", {"GITHUB_ENTERPRISE_TOKEN": "e2", "GH_TOKEN": "g"}, "e2"),
    ("https://ghe.example.com/api/v3", {"GH_TOKEN": "g", "GITHUB_TOKEN": "t"}, "g"),  # the Action's GH_TOKEN
    # github.com and a GHE.com tenant never take an Enterprise Server's token
    ("", {"GH_ENTERPRISE_TOKEN": "e1", "GH_TOKEN": "g"}, "g"),
    ("https://api.octo.ghe.com", {"GH_ENTERPRISE_TOKEN": "e1", "GITHUB_TOKEN": "t"}, "t"),
])
def test_an_enterprise_servers_token_is_read_as_gh_reads_it(monkeypatch, tmp_path, api, env, expected):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    monkeypatch.chdir(tmp_path)
    env = {"GITHUB_REPOSITORY": "o/r", **({"GITHUB_API_URL": api} if api else {}), **env}
    settings = config.build(env=env)
    assert settings.token == expected and settings.store == "github"
    assert config.token_source(env, config.api_hosts(settings.api_url)[0]) in env


@pytest.mark.parametrize("hosts", [
    {"GH_HOST": "ghe.example.com"},  # the host from GH_HOST
    {"GH_REPO": "ghe.example.com/o/r"},  # from GH_REPO's host
])
def test_the_enterprise_host_may_come_from_gh_host_or_gh_repo(monkeypatch, tmp_path, hosts):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    monkeypatch.chdir(tmp_path)
    env = {"GITHUB_REPOSITORY": "o/r", "GH_ENTERPRISE_TOKEN": "e1", "GH_TOKEN": "g", **hosts}
    settings = config.build(env=env)
    assert settings.api_url == "https://ghe.example.com/api/v3" and settings.token == "e1"


def test_the_enterprise_host_may_come_from_the_origin_remote(monkeypatch, repo):
    """GH_HOST names the host and origin the repository: the Enterprise Server's token is read."""
    import subprocess

    subprocess.run(["git", "remote", "add", "origin", "https://ghe.example.com/team/app.git"], check=True)
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    settings = config.build(env={"GH_HOST": "ghe.example.com", "GITHUB_ENTERPRISE_TOKEN": "e2", "GH_TOKEN": "g"})
    assert settings.repo == "team/app" and settings.token == "e2"


def test_no_token_for_an_enterprise_server_names_its_variable(monkeypatch, tmp_path):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="GH_ENTERPRISE_TOKEN.*--hostname ghe.example.com"):
        config.build(store="github", env={"GH_HOST": "ghe.example.com", "GITHUB_REPOSITORY": "o/r"})


def test_the_local_store_fallback_for_an_enterprise_server_names_its_token(monkeypatch, tmp_path):
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    monkeypatch.chdir(tmp_path)
    settings = config.build(env={"GH_HOST": "ghe.example.com", "GITHUB_REPOSITORY": "o/r"})
    assert settings.store == "local" and "GH_ENTERPRISE_TOKEN" in settings.fallback
    assert config.build(env={"GITHUB_REPOSITORY": "o/r"}).fallback == config.NO_TOKEN


@pytest.mark.parametrize(("env", "session"), [
    ({}, ""),
    ({"CLAUDE_CODE_SESSION_ID": "d3f13f62-8d5e-4458-936b-df1c35a5df00"}, "d3f13f62-8d5e-4458-936b-df1c35a5df00"),
    ({"CODEX_THREAD_ID": "01a24a25-5f09-7152-8b6f-3d7a87eaf758"}, "01a24a25-5f09-7152-8b6f-3d7a87eaf758"),
    ({"GEMINI_SESSION_ID": "g-1"}, "g-1"),
    ({"GHSTATE_SESSION": "mine", "CLAUDE_CODE_SESSION_ID": "theirs"}, "mine"),
    ({"CLAUDE_CODE_SESSION_ID": "two words"}, ""),  # no id: not taken for one
    ({"CLAUDE_CODE_SESSION_ID": "x" * 129, "CODEX_THREAD_ID": "t-1"}, "t-1"),
])
def test_the_session_is_the_hosts_where_it_gives_one(repo, env, session):
    """Issue 57: a claim's holder is the agent in its session. Inside an agent host the session is the host's
    own id, as each gives it to what it runs (tests/test_hosts_real.py sees them give it): two windows of one
    host are two holders without a flag."""
    assert config.build(env=env).session == session
    assert config.build(env=env, session="flag").session == "flag"
