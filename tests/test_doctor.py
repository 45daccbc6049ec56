"""``ghstate doctor``: the set-up checked, and with --github what the write log (a chain of commits on a ref
per checkpoint) and claims rely on, probed on a throwaway issue and ref: every row on a faithful fake GitHub
and under each variant of what GitHub leaves open, and the row that fails when a behaviour is missing, each
saying what it saw. The same probes against a real repository are the ``live`` tests (test_live.py)."""

from __future__ import annotations

import json

import pytest
from conftest import FAKE_TOKEN
from github_fake import NOT_ACCESSIBLE
from github_fake_tasks import VARIANTS

TOKEN = FAKE_TOKEN  # the conftest's gh fixture reaches the fake with it
CHAIN_ROWS = ("a throwaway issue can be created (Issues: write)", "Git objects can be written (Contents: write)",
              "a commit's message is read back whole", "a ref in refs/ghstate/ can be made from none",
              "a move from a value the ref no longer holds is refused",
              "a move from the value the ref holds is made (compare-and-swap)",
              "a write's answer holds its version and the one before",
              "a body's write after a refused move in one request",
              "refs outside branches and tags are listed (else one read more)",
              "two quick saves by one token are two versions",
              "errors come typed, beside what could be answered",
              "issue search finds a body's words, and a hidden marker's (else by title)", "the probe's ref is deleted",
              "the throwaway issue is closed")


def rows(result) -> dict[str, dict]:
    return {r["check"]: r for r in json.loads(result.stdout)}


def github_rows(result) -> list[dict]:
    return [r for r in json.loads(result.stdout) if r["check"] in CHAIN_ROWS]


def test_every_behaviour_holds_on_a_faithful_github_and_the_probe_cleans_up(gh, run):
    result = run("doctor", "--github", "--json")
    checks = github_rows(result)
    assert [r["check"] for r in checks] == list(CHAIN_ROWS)
    assert all(r["ok"] is True for r in checks), checks
    assert "ran after the refused move" in rows(result)["a body's write after a refused move in one request"]["detail"]
    [probe] = gh.issues.values()
    assert probe["state"] == "closed" and any(x["name"] == "ghstate-doctor" for x in probe["labels"])
    assert gh.tasks.refs == {} and TOKEN not in result.stdout + result.stderr


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_what_github_leaves_open_fails_no_row_and_each_row_says_what_it_saw(gh, run, variant):
    gh.tasks.use(variant)
    checks = rows(run("doctor", "--github", "--json"))
    assert all(checks[name]["ok"] is not False for name in CHAIN_ROWS), checks
    batched = checks["a body's write after a refused move in one request"]["detail"]
    assert ("did not run" in batched) == variant.stops_after_error and "handles both" in batched
    listed = checks["refs outside branches and tags are listed (else one read more)"]
    assert (listed["ok"], "not listed" in listed["detail"]) == ((None, True) if not variant.lists_custom_refs
                                                                else (True, False))
    assert gh.tasks.refs == {}


@pytest.mark.parametrize(("knobs", "ok", "said"), [
    ({}, True, "found 0 s after the write; a hidden marker's words too"),
    ({"search_comments": False}, True, "a hidden marker's words not: a checkpoint an older ghstate made is found by "
                                       "its title"),
    ({"search_lag": 12}, True, "found 15 s after the write; a hidden marker's words too"),
    ({"search_lag": 600}, None, "not found in 60 s: a checkpoint the branch index does not hold"),
])
def test_the_search_row_says_how_long_the_index_took_and_whether_it_reads_hidden_markers(gh, run, knobs, ok, said):
    """What GitHub does not document of its issue search (tests/github_fake.py's variants: an index seconds
    behind, hidden markers not searched), measured on the throwaway issue: a row that never fails, and waits
    at most SEARCH_WAIT (on GitHub's clock here) however far behind the index is."""
    for name, value in knobs.items():
        setattr(gh, name, value)
    start = gh.clock
    row = rows(run("doctor", "--github", "--json"))["issue search finds a body's words, and a hidden marker's (else "
                                                      "by title)"]
    assert (row["ok"], said in row["detail"]) == (ok, True), row
    assert (gh.clock - start).total_seconds() < 120


def test_a_github_that_merges_quick_saves_fails_that_row_and_says_what_ghstate_does(gh, run):
    gh.coalesce_seconds = 3600
    result = run("doctor", "--github", code=1)
    line = next(x for x in result.stdout.splitlines() if "two quick saves by one token" in x)
    assert line.startswith("FAILED") and "were kept as one" in line
    assert "give agents a token of their own" in result.stdout
    assert result.stderr.startswith("Error: 1 check failed: two quick saves by one token are two versions")


def test_a_history_behind_its_body_fails_the_answer_row_saying_what_it_saw(gh, run):
    """Found by a newcomer: under a lagging index the row said "the newest version's text is 56 characters,
    the body 56" and blamed merged saves. The row names what the answer listed, and nothing else fails."""
    gh.history_lag = 1  # the answer of the next write leaves out its own version
    result = run("doctor", "--github", "--json", code=1)
    checks = rows(result)
    failed = [name for name in CHAIN_ROWS if checks[name]["ok"] is False]
    assert failed == ["a write's answer holds its version and the one before"], checks
    detail = checks[failed[0]]["detail"]
    assert detail.startswith("newest listed: ") and "expected this write's, then the one it wrote over" in detail


def test_a_token_without_contents_write_fails_those_rows_hides_none_and_says_what_to_give(gh, run):
    """Found by a newcomer: a FORBIDDEN on a ref's write was blamed on Issues: write (which had just made the
    issue), and the rows after it were not shown."""
    gh.tasks.deny_refs = True
    result = run("doctor", "--github", code=1)
    lines = result.stdout.splitlines()
    objects = next(x for x in lines if "Git objects can be written" in x)
    assert objects.startswith("FAILED") and "Contents: write" in objects and "Issues: write on" not in objects
    assert "writes go to the issue's body alone" in result.stdout
    checks = rows(run("doctor", "--github", "--json", code=1))
    assert [name for name in CHAIN_ROWS if name not in checks] == ["the probe's ref is deleted"]
    for name in ("a write's answer holds its version and the one before",
                 "two quick saves by one token are two versions", "errors come typed, beside what could be answered",
                 "the throwaway issue is closed"):
        assert checks[name]["ok"] is True, (name, checks[name])
    assert checks["a ref in refs/ghstate/ can be made from none"]["ok"] is None


def test_a_refused_ref_write_names_contents_not_issues(gh, run):
    gh.fail_op("UpdateRefs", type="FORBIDDEN", message=NOT_ACCESSIBLE)
    checks = rows(run("doctor", "--github", "--json", code=1))
    made = checks["a ref in refs/ghstate/ can be made from none"]
    assert made["ok"] is False and "Contents: write" in made["detail"] and "FORBIDDEN" in made["detail"]
    assert checks["errors come typed, beside what could be answered"]["ok"] is True


def test_a_github_that_stops_answering_is_said_once_within_the_budget(gh, run, monkeypatch):
    """Found by a newcomer: with GitHub timing out, each row waited up to 39 s. It is said once, the rows
    after it are not checked, and the waits stay within the command's 45 s."""
    import requests

    waited: list[float] = []
    monkeypatch.setattr("ghstate.github.transport._sleep", waited.append)
    gh.on("POST", r"^/git/trees$", lambda: gh.fail("*", r".*", None, times=999,
                                                    exception=requests.exceptions.ReadTimeout))
    result = run("doctor", "--github", "--json", code=1)
    checks = rows(result)
    said = [name for name in CHAIN_ROWS if (checks.get(name) or {}).get("detail", "").startswith("GitHub did not")]
    assert said == ["Git objects can be written (Contents: write)"], checks
    assert all(checks[name]["detail"].startswith("not checked: GitHub did not answer")
               for name in CHAIN_ROWS[2:11])
    assert sum(waited) <= 45


def test_a_deleted_revision_reads_as_no_text(gh, run):
    gh.add_issue(5, "first\n")
    gh.edit(5, "second\n")
    gh.edit(5, "third\n")
    gh.delete_revision(5, 1)
    checks = rows(run("doctor", "--github", "--issue", "5", "--json"))
    row = checks["#5's newest versions read as a write reads them"]
    assert row["ok"] is True and "1 of the newest 3 deleted" in row["detail"]


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


def test_a_public_repository_is_said_to_hold_public_checkpoints(gh, run):
    gh.visibility = "PUBLIC"
    row = rows(run("doctor", "--json"))["repository visibility"]
    assert row["ok"] is True and "octo/hello is public: its checkpoints are public issues" in row["detail"]
    gh.visibility = "PRIVATE"
    row = rows(run("doctor", "--json"))["repository visibility"]
    assert row["detail"].startswith("private:") and gh.problems() == []


def test_without_a_token_the_visibility_is_not_asked(repo, run):
    assert "repository visibility" not in rows(run("doctor", "--json"))


def test_a_persons_own_token_is_said_with_what_it_risks_and_an_apps_is_fine(gh, run):
    """Issue 39, bug 5: an agent writing with its person's own token makes their quick saves one editor's, and
    GitHub keeps them as one version: a note saved between the agent's read and its write is gone unseen. It
    cannot be merged, only made rare and said."""
    row = rows(run("doctor", "--json"))["the token's account"]
    assert row["ok"] is None and "the token is the account octocat's" in row["detail"]
    assert "give agents a token of their own (a GitHub App's, or a bot account's)" in row["detail"]
    gh.viewer, gh.viewer_type = "ghstate-agent", "Bot"
    row = rows(run("doctor", "--json"))["the token's account"]
    assert row["ok"] is True and row["detail"].startswith("ghstate-agent[bot], a GitHub App's")
    assert gh.problems() == []
