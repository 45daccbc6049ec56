"""``ghstate doctor``: the set-up checked, and with --github what the write log and claims rely on, probed
on a throwaway issue: every row on a faithful fake GitHub, and the row that fails on each variant of what
GitHub leaves open. The same probes against a real repository are the ``live`` tests (test_live.py)."""

from __future__ import annotations

import json

from conftest import FAKE_TOKEN

TOKEN = FAKE_TOKEN  # the conftest's gh fixture reaches the fake with it


def rows(result) -> dict[str, dict]:
    return {r["check"]: r for r in json.loads(result.stdout)}


def test_every_behaviour_holds_on_a_faithful_github_and_the_probe_cleans_up(gh, run):
    result = run("doctor", "--github", "--json")
    checks = rows(result)
    assert all(r["ok"] is not False for r in checks.values()), checks
    for name in ("a write's answer holds the version it made", "versions are listed newest first, the creation "
                 "among them", "a version's text is the whole body, not a difference", "every save is a version, "
                 "two quick saves by one token too", "errors come typed, beside what could be answered",
                 "a ref in refs/ghstate/ can be created", "a second create of it fails"):
        assert checks[name]["ok"] is True, (name, checks.get(name))
    [probe] = gh.issues.values()
    assert probe["state"] == "closed" and any(x["name"] == "ghstate-doctor" for x in probe["labels"])
    assert TOKEN not in result.stdout + result.stderr


def test_a_github_that_merges_quick_saves_fails_that_row_and_says_what_ghstate_does(gh, run):
    gh.coalesce_seconds = 3600
    result = run("doctor", "--github", code=1)
    line = next(x for x in result.stdout.splitlines() if "two quick saves by one token" in x)
    assert line.startswith("FAILED") and "versions for 4 saves" in line
    assert "give each agent its own token" in result.stdout
    assert result.stderr.startswith("Error: 1 check failed: every save is a version")


def test_a_history_behind_its_body_fails_the_answer_row(gh, run):
    gh.history_lag = 2  # the read of the issue's id, then the write's answer
    result = run("doctor", "--github", code=1)
    assert any(x.startswith("FAILED") and "a write's answer holds the version it made" in x
               for x in result.stdout.splitlines())


def test_a_deleted_revision_reads_as_no_text(gh, run):
    gh.add_issue(5, "first\n")
    gh.edit(5, "second\n")
    gh.edit(5, "third\n")
    gh.delete_revision(5, 1)
    checks = rows(run("doctor", "--github", "--issue", "5", "--json"))
    assert checks["#5's history reads as the write log reads it"]["ok"] is True
    assert "1 of the newest 3 deleted" in checks["#5's history reads as the write log reads it"]["detail"]


def test_the_local_checks_name_the_token_source_never_the_token(repo, run, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    result = run("doctor")
    assert "GitHub token" in result.stdout and "from GH_TOKEN" in result.stdout and TOKEN not in result.stdout
    assert result.stdout.splitlines()[0].startswith("ok") and "git" in result.stdout.splitlines()[0]


def test_a_host_whose_server_cannot_start_here_fails(repo, run, monkeypatch):
    import importlib.util

    (repo / ".mcp.json").write_text('{"mcpServers": {"ghstate": {"command": "ghstate", "args": ["mcp"]}}}\n')
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    result = run("doctor", code=1)
    assert any(x.startswith("FAILED") and "Claude Code MCP server" in x for x in result.stdout.splitlines())


def test_the_store_folder_is_tried_not_inferred(repo, run, monkeypatch, tmp_path):
    """A folder not there yet but makeable is fine (the first write makes it, parents too); a file where the
    folder should be, or a place no folder can be made (/proc, even for root), fails with why; nothing is
    left behind by the probe."""
    def row(folder, code):
        monkeypatch.setenv("GHSTATE_DIR", str(folder))
        result = run("doctor", "--json", code=code)
        return next(r for r in json.loads(result.stdout) if r["check"] == "store folder")

    deep = tmp_path / "deep" / "a" / "b"
    assert row(deep, None)["ok"] is True and not (tmp_path / "deep").exists()
    (tmp_path / "store").mkdir()
    assert row(tmp_path / "store", None)["ok"] is True and list((tmp_path / "store").iterdir()) == []
    (tmp_path / "plain").write_text("x")
    failed = row(tmp_path / "plain", 1)
    assert failed["ok"] is False and "is a file, not a folder" in failed["detail"]
    failed = row(tmp_path / "plain" / "sub", 1)
    assert failed["ok"] is False and f"cannot be made: {tmp_path / 'plain'} is a file" in failed["detail"]
    if __import__("pathlib").Path("/proc/self").exists():
        failed = row("/proc/x", 1)
        assert failed["ok"] is False and failed["detail"].startswith("/proc/x cannot be made (")


def test_issue_without_github_is_a_usage_error(repo, run):
    result = run("doctor", "--issue", "3", code=2)
    assert result.stderr.endswith("\nError: --issue reads an issue's edit history on GitHub: give it with --github\n")


def test_github_that_cannot_be_reached_is_a_failed_row_in_json_too(repo, run, monkeypatch):
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    result = run("doctor", "--github", "--json", code=1)
    github = [r for r in json.loads(result.stdout) if r["check"] == "GitHub"]
    assert len(github) == 1 and github[0]["ok"] is False and "repository" in github[0]["detail"]
    assert result.stderr.splitlines()[-1].startswith("Error: ") and "GitHub" in result.stderr.splitlines()[-1]
