"""A checkpoint's life beside its branch, on the local store: its pull request shown, resume and the session-start
hook on a branch whose checkpoint closed, list --stale and close --stale, --limit."""

from __future__ import annotations

import json

import pytest
from conftest import git

from ghstate.core.marker import PullRequest

URL = "https://github.com/octo/hello/pull/31"


def link(state: str = "open", number: int = 31, issue: int | None = None) -> None:
    """The current branch's checkpoint told its pull request, as the Action's write tells it."""
    from ghstate.core.intent import Intent, WriteSpec
    from ghstate.services.app import build_app

    app = build_app(store="local")
    app.writer().write(WriteSpec(Intent(pull_request=PullRequest(number, URL, state)), tree=app.tree(),
                                 number=issue, create=False, record_tree=False))


@pytest.fixture
def written(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor")
    return repo


def test_show_resume_and_json_name_the_pull_request(written, run):
    link()
    assert "Pull request #31 (open) " + URL in run("show", "1").stdout
    prompt = run("resume").stdout
    assert f"pull request #31 (open) {URL}" in prompt.split("Written on:", 1)[1].split("\n", 1)[0]
    assert json.loads(run("show", "1", "--json").stdout)["pull_request"] == {"number": 31, "url": URL,
                                                                            "state": "open"}
    assert json.loads(run("resume", "--json").stdout)["pull_request"]["number"] == 31
    assert "closed" not in run("resume").stderr


def test_a_checkpoint_without_a_pull_request_costs_the_prompt_nothing(written, run):
    assert "pull request" not in run("resume").stdout and "Pull request" not in run("show", "1").stdout


def test_resume_on_a_branch_whose_checkpoint_closed_when_its_pull_request_merged(written, run):
    link("merged")
    run("close", "1")
    result = run("resume")  # by branch: exit 0, the notice on stderr, the closed state shown
    assert result.stderr.startswith("Note: local #1 closed when PR #31 merged; this is its closed state")
    assert "This checkpoint was closed when PR #31 merged: its task is finished" in result.stdout
    assert "Next phase: Phase 2: matcher abstraction" in result.stdout  # the state itself, read by number
    assert run("resume", "--format", "short").stdout.startswith("[closed when PR #31 merged] local #1 CLI refactor")
    data = json.loads(run("resume", "--json").stdout)
    assert data["closed"] == "closed when PR #31 merged" and data["issue"] == 1
    assert "Closed when PR #31 merged." in run("show").stdout
    assert json.loads(run("show", "--json").stdout)["closed"] == "closed when PR #31 merged"
    assert "closed when PR #31 merged" in run("resume", "1").stdout  # by number too


def test_resume_on_a_branch_whose_checkpoint_was_closed_by_hand(written, run):
    run("close", "1")
    result = run("resume")
    assert result.stderr.startswith("Note: local #1 closed; this is its closed state")
    assert "This checkpoint was closed: its task is finished or abandoned" in result.stdout
    link("closed", issue=1)  # a write by number reaches it where it is; closed unmerged
    assert "local #1 closed as not planned (PR #31 closed unmerged)" in run("resume").stderr


def test_resume_on_a_branch_with_no_checkpoint_at_all_still_fails(repo, run):
    assert "no open checkpoint for branch feature/x" in run("resume", code=1).stderr


def test_the_session_start_hook_on_a_merged_branch_says_so_and_hands_no_task(written, run):
    link("merged")
    run("close", "1")
    out = run("hook", "session-start", input=json.dumps({"source": "clear", "session_id": "s-1"})).stdout
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("This branch's ghstate checkpoint local #1 was closed when PR #31 merged: its task is "
                              "not open.")
    assert "Next phase" not in context and len(context) < 250


# ----------------------------------------------------------------------------------------------- stale


def branch_with_checkpoint(repo, run, sample_file, branch: str, title: str) -> None:
    git(repo, "checkout", "-q", "-b", branch, "main")
    (repo / f"{title}.txt").write_text(title)
    git(repo, "add", f"{title}.txt")  # not .ghstate/: the store is this machine's, on every branch
    git(repo, "commit", "-q", "-m", title)
    run("checkpoint", "--file", str(sample_file), "--title", title)


@pytest.fixture
def branches(repo, run, sample_file):
    """main, and four branches off it with a checkpoint each: one merged into main, one deleted, one whose pull
    request closed unmerged, one live."""
    git(repo, "branch", "-m", "main")
    for branch in ("feature/merged", "feature/gone", "feature/pr-closed", "feature/live-ü"):
        branch_with_checkpoint(repo, run, sample_file, branch, branch.split("/")[1])
    git(repo, "checkout", "-q", "feature/pr-closed")
    link("closed", 41)
    git(repo, "checkout", "-q", "feature/live-ü")
    link("open", 42)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "feature/merged")
    git(repo, "branch", "-q", "-D", "feature/gone")
    return repo


def test_list_stale_names_each_with_why(branches, run):
    out = run("list", "--stale").stdout.splitlines()
    assert len(out) == 3, out
    said = "\n".join(out)
    assert "local #1" in said and "branch feature/merged is merged into main" in said
    assert "local #2" in said and "branch feature/gone is gone" in said
    assert "local #3" in said and "its pull request #41 closed unmerged" in said
    assert "local #4" not in said
    rows = json.loads(run("list", "--stale", "--json").stdout)
    assert {r["issue"]: r["stale"] for r in rows}[2] == ["branch feature/gone is gone"]
    assert len(run("list").stdout.splitlines()) == 4  # without --stale: every open one


def test_a_branch_with_no_commit_of_its_own_is_not_merged(repo, run, sample_file):
    git(repo, "branch", "-m", "main")
    git(repo, "checkout", "-q", "-b", "feature/fresh")
    run("checkpoint", "--file", str(sample_file))
    assert run("list", "--stale").stdout == ""


def test_no_write_for_the_configured_days_is_stale(written, run, clock):
    assert run("list", "--stale").stdout == ""
    clock.advance(31 * 86400)
    assert "no write for 31 days" in run("list", "--stale").stdout
    assert run("list", "--stale", "--days", "40").stdout == ""
    (written / ".ghstate").mkdir(exist_ok=True)
    (written / ".ghstate" / "config.toml").write_text("stale_days = 40\n")
    assert run("list", "--stale").stdout == ""
    assert "no write for 31 days" in run("list", "--stale", env={"GHSTATE_STALE_DAYS": "20"}).stdout
    assert "GHSTATE_STALE_DAYS must be a whole number" in run("list", "--stale", env={"GHSTATE_STALE_DAYS": "x"},
                                                              code=1).stderr
    assert "--days goes with --stale" in run("list", "--days", "3", code=2).stderr


def test_close_stale_dry_run_writes_nothing_then_closes_as_not_planned(branches, run):
    store = branches / ".git" / "ghstate"
    before = sorted(p.relative_to(store).as_posix() for p in store.rglob("*") if p.is_file())
    out = run("close", "--stale", "--dry-run").stdout.splitlines()
    assert [line.split(":")[0] for line in out] == ["Would close local #3 as not planned",  # newest first
                                                    "Would close local #2 as not planned",
                                                    "Would close local #1 as not planned"]
    assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*") if p.is_file()) == before
    out = run("close", "--stale").stdout
    assert "Closed local #2 as not planned: branch feature/gone is gone" in out
    assert sorted(p.name for p in (store / "closed").iterdir()) == ["1.md", "2.md", "3.md"]
    assert run("list", "--stale").stdout == "" and "No stale checkpoints" in run("close", "--stale").stderr
    assert "local #4" in run("list").stdout


def test_close_takes_an_issue_or_stale(repo, run):
    assert "give an ISSUE, or --stale" in run("close", code=2).stderr
    assert "not both" in run("close", "1", "--stale", code=2).stderr
    assert "goes with --stale" in run("close", "1", "--days", "3", code=2).stderr  # --dry-run goes with both


# ----------------------------------------------------------------------------------------------- --limit


def test_list_limit_shows_the_newest_and_says_more_are_left(branches, run):
    result = run("list", "--limit", "2")
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["#4", "#3"]
    assert result.stderr.strip() == "More open checkpoints than these 2: --limit 12 shows more."
    rows = json.loads(run("list", "--limit", "2", "--json").stdout)  # the same shape: a list of rows
    assert [r["issue"] for r in rows] == [4, 3]
    assert run("list", "--limit", "4").stderr == ""
    assert run("list", "--limit", "0", code=2)

