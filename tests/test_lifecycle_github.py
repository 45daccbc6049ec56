# ruff: noqa: F811 - the runner fixture of test_ci, imported, is a parameter of the tests here
"""A checkpoint's life beside its branch on GitHub (the fake): the Action on pull_request and delete events,
list --stale and close --stale, each request counted."""

from __future__ import annotations

import json

import pytest
from bodies import render_body
from conftest import SAMPLE
from test_ci import outputs, runner, seed  # noqa: F401 - the runner's environment and a fake GitHub behind it

from ghstate.core.marker import PullRequest
from ghstate.core.parse import parse

PR_URL = "https://github.com/octo/hello/pull/12"
MUTATIONS = ("UpdateCheckpoint", "AppendCheckpoint", "CloseCheckpoint", "CreateRef", "UpdateRefs")


def event(runner, monkeypatch, tmp_path, action="opened", merged=False, branch="feature/x", head_repo="octo/hello",
          name="pull_request", **head):
    """A pull_request event of the runner: its file and the environment GitHub Actions gives."""
    closed = action == "closed"
    payload = {"action": action, "number": 12, "pull_request": {
        "number": 12, "html_url": PR_URL, "state": "closed" if closed else "open", "merged": merged,
        "head": {"ref": branch, "sha": "feedface" * 5, "repo": {"full_name": head_repo}},
        "base": {"ref": "main", "repo": {"full_name": "octo/hello"}}}}
    payload["pull_request"]["head"].update(head)
    path = tmp_path / f"event-{action}-{len(list(tmp_path.glob('event-*')))}.json"
    path.write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    monkeypatch.setenv("GITHUB_EVENT_NAME", name)
    monkeypatch.setenv("GITHUB_HEAD_REF", branch)
    monkeypatch.setenv("GITHUB_REF_NAME", "12/merge")
    runner.calls.clear()


def branch(runner, name="feature/x"):
    runner.tasks.refs[f"refs/heads/{name}"] = "a" * 40


def state(runner, number=7):
    return parse(runner.issues[number]["body"]).checkpoint


def mutations(runner):
    return [op for op in runner.operations() if op in MUTATIONS] + \
        [f"{m} {u}" for m, u, _ in runner.calls if m in ("POST", "PATCH", "PUT", "DELETE") and "/graphql" not in u]


def test_an_opened_pull_request_is_linked_once(runner, run, monkeypatch, tmp_path):
    seed(runner)
    event(runner, monkeypatch, tmp_path)
    out = run("ci").stdout  # no result: the pull request is linked, nothing else
    assert "::notice::ghstate: linked pull request #12 (open) to #7" in out
    assert state(runner).meta.pull_request == PullRequest(12, PR_URL, "open")
    assert runner.issues[7]["state"] == "open" and state(runner).verification_data is None
    linked = len(runner.calls)
    assert linked == 4  # the branch's entry, the checkpoint it names, the chain's commit, its move with the body
    event(runner, monkeypatch, tmp_path, action="synchronize")
    out = run("ci").stdout
    assert "#7 already links pull request #12 (open)" in out and mutations(runner) == []  # no write
    assert len(runner.calls) == 2 < linked  # the branch's entry and the checkpoint it names
    assert "Pull request #12 (open) " + PR_URL in run("show", "7").stdout


def test_a_merged_pull_request_records_the_result_then_closes_its_checkpoint(runner, run, monkeypatch, tmp_path):
    seed(runner)
    runner.tasks.refs["refs/heads/feature/x"] = "e" * 40  # the merged branch is still on GitHub
    event(runner, monkeypatch, tmp_path, action="closed", merged=True)
    out = run("ci", "--result", "success", "--phase", "Phase 2").stdout
    assert "closed #7 as completed: pull request #12 merged" in out
    assert runner.issues[7]["state"] == "closed" and runner.issues[7]["state_reason"] == "completed"
    cp = state(runner)
    assert cp.meta.pull_request == PullRequest(12, PR_URL, "merged")
    assert cp.verification_data.status == "passing" and cp.phases[1].done  # the final result, recorded first
    assert outputs(runner) == {"issue": "7", "status": "passing"}
    assert runner.operations().count("CloseCheckpoint") == 1
    # the lookup 2, the chain's commit, its move, the close, and its chain folded into the archive (what is there,
    # the archive's commit, the move of both refs: issue 44)
    assert len(runner.calls) == 8, runner.operations()
    assert "refs/ghstate/checkpoints/7" not in runner.tasks.refs and "refs/ghstate/archive" in runner.tasks.refs
    event(runner, monkeypatch, tmp_path, action="closed", merged=True)  # the event again: nothing is lost or redone
    out = run("ci", "--result", "success").stdout
    # the branch index finds it closed, and says so
    assert "#7, the checkpoint of branch feature/x, was closed when PR #12 merged already; nothing recorded" in out
    assert mutations(runner) == []
    # resume by number shows the closed state, and says why it closed
    result = run("resume", "7")
    assert "Note: #7 closed when PR #12 merged" in result.stderr
    assert "This checkpoint was closed when PR #12 merged" in result.stdout


def delete_event(monkeypatch, tmp_path, branch: str = "feature/x") -> None:
    path = tmp_path / "delete.json"
    path.write_text(json.dumps({"ref": branch, "ref_type": "branch", "pusher_type": "user"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "delete")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)


def test_a_branch_deleted_after_its_checkpoint_closed_takes_its_entry_with_it(runner, run, monkeypatch, tmp_path):
    """Issue 44, part 3: a branch entry goes once its branch is gone from GitHub and its checkpoint closed. Merged
    with its branch still there: the entry stays (resume there says it closed); the branch deleted afterwards:
    the delete event drops it. Merged with the branch deleted at once: the close drops it."""
    seed(runner)
    runner.tasks.refs["refs/heads/feature/x"] = "e" * 40
    event(runner, monkeypatch, tmp_path, action="closed", merged=True)
    run("ci", "--result", "success")
    assert runner.tasks.branch_index() == {"feature%2Fx": 7}
    assert "#7 closed when PR #12 merged" in run("resume", "7").stderr
    del runner.tasks.refs["refs/heads/feature/x"]
    delete_event(monkeypatch, tmp_path)
    out = run("ci").stdout
    assert "the branch index no longer names #7 for feature/x" in out and runner.tasks.branch_index() == {}
    seed(runner, number=8, branch="feature/y")  # merged, its branch deleted by GitHub at the merge
    event(runner, monkeypatch, tmp_path, action="closed", merged=True, branch="feature/y")
    run("ci", "--result", "success")
    assert runner.issues[8]["state"] == "closed" and runner.tasks.branch_index() == {}


def test_closed_unmerged_stays_open_while_its_branch_is_there_then_its_deletion_closes_it(runner, run, monkeypatch,
                                                                                          tmp_path):
    seed(runner)
    branch(runner)
    event(runner, monkeypatch, tmp_path, action="closed")
    out = run("ci").stdout
    assert "#7 stays open: pull request #12 closed unmerged, its branch feature/x is still there" in out
    assert runner.issues[7]["state"] == "open" and state(runner).meta.pull_request.state == "closed"
    assert runner.operations().count("BranchRefs") == 1
    # list --stale names it, and why
    assert "its pull request #12 closed unmerged" in run("list", "--stale").stdout
    # the branch is deleted: the delete event closes it as not planned
    del runner.tasks.refs["refs/heads/feature/x"]
    path = tmp_path / "delete.json"
    path.write_text(json.dumps({"ref": "feature/x", "ref_type": "branch", "pusher_type": "user"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "delete")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    monkeypatch.delenv("GITHUB_HEAD_REF")
    out = run("ci").stdout
    assert "closed #7 as not planned: its branch feature/x was deleted" in out
    assert (runner.issues[7]["state"], runner.issues[7]["state_reason"]) == ("closed", "not_planned")
    assert "closed as not planned (PR #12 closed unmerged)" in run("resume", "7").stderr
    assert "no open checkpoint for the deleted branch feature/x" in run("ci").stdout


def test_closed_unmerged_with_its_branch_gone_closes_as_not_planned(runner, run, monkeypatch, tmp_path):
    seed(runner, branch="feature/ü/x")  # slashes and Unicode: asked of GitHub as they are
    event(runner, monkeypatch, tmp_path, action="closed", branch="feature/ü/x")
    out = run("ci", "--result", "failure").stdout
    assert "closed #7 as not planned: pull request #12 closed unmerged and its branch is gone" in out
    assert runner.issues[7]["state_reason"] == "not_planned"
    assert state(runner).verification_data.status == "failing"
    asked = [json.loads(json.dumps(b))["variables"] for _, u, b in runner.calls
             if "BranchRefs" in ((b or {}).get("query") or "")]
    assert asked == [{"owner": "octo", "name": "hello", "ref_0": "refs/heads/feature/ü/x"}]


def test_a_pull_request_from_a_fork_records_nothing(runner, run, monkeypatch, tmp_path):
    seed(runner)
    event(runner, monkeypatch, tmp_path, action="closed", merged=True, head_repo="mallory/hello")
    out = run("ci", "--result", "success").stdout
    assert "pull request #12 comes from the fork mallory/hello: its branch feature/x is not one of octo/hello's; " \
           "nothing recorded" in out
    assert runner.calls == [] and runner.issues[7]["state"] == "open"


def test_a_pull_request_of_a_branch_with_no_checkpoint_is_one_line(runner, run, monkeypatch, tmp_path):
    event(runner, monkeypatch, tmp_path, branch="feature/none")
    result = run("ci")
    assert result.stdout.strip() == "::notice::ghstate: no open checkpoint for branch feature/none; nothing recorded"
    assert mutations(runner) == []


def test_a_push_still_needs_a_result(runner, run):
    assert "--result is needed" in run("ci", code=2).stderr


# ----------------------------------------------------------------------------------------------- stale


@pytest.fixture
def stale_set(gh):
    """Three checkpoints: #1 on a branch that is there, #2 on a branch that is gone, #3 whose pull request merged."""
    for number, name, pr in ((1, "feature/live", None), (2, "feature/gone", None),
                             (3, "feature/merged", PullRequest(9, "https://github.com/octo/hello/pull/9", "merged"))):
        cp = parse(SAMPLE).checkpoint.with_meta(revision=1, branch=name, commit="0123abc", id=f"id{number:010d}",
                                                updated_at=gh.clock.strftime("%Y-%m-%dT%H:%M:%SZ"), pull_request=pr)
        gh.add_issue(number, render_body(cp), title=name)
    gh.tasks.refs["refs/heads/feature/live"] = "a" * 40
    gh.tasks.refs["refs/heads/feature/merged"] = "b" * 40
    return gh


def test_list_stale_asks_for_every_branch_in_one_request(stale_set, run):
    out = run("list", "--stale").stdout
    assert "#2" in out and "branch feature/gone is gone from octo/hello" in out
    assert "#3" in out and "its pull request #9 merged" in out
    assert "#1 " not in out
    assert stale_set.operations() == ["OpenCheckpoints", "BranchRefs"]


def test_branches_are_asked_a_hundred_a_request(gh, run):
    for number in range(1, 151):
        cp = parse(SAMPLE).checkpoint.with_meta(revision=1, branch=f"b/{number}", commit="0123abc",
                                                id=f"id{number:010d}", updated_at="2026-11-22T08:00:00Z")
        gh.add_issue(number, render_body(cp), title=f"b{number}")
    gh.calls.clear()
    rows = json.loads(run("list", "--stale", "--json").stdout)
    # every open checkpoint with its body (10 a page), every branch asked in 100s
    assert len(rows) == 150 and gh.count_op("BranchRefs") == 2 and gh.count_op("OpenCheckpoints") == 15


def test_close_stale_dry_run_writes_nothing_then_closes_as_not_planned(stale_set, run):
    stale_set.calls.clear()
    out = run("close", "--stale", "--dry-run").stdout.splitlines()
    assert [line.split(":")[0] for line in out] == ["Would close #3 as not planned", "Would close #2 as not planned"]
    assert mutations(stale_set) == [] and all(i["state"] == "open" for i in stale_set.issues.values())
    out = run("close", "--stale").stdout
    assert "Closed #2 as not planned: branch feature/gone is gone from octo/hello" in out
    assert [(n, i["state"]) for n, i in sorted(stale_set.issues.items())] == [(1, "open"), (2, "closed"), (3, "closed")]
    assert stale_set.issues[2]["state_reason"] == stale_set.issues[3]["state_reason"] == "not_planned"


def test_a_fork_deleted_since_is_told_by_its_label(runner, run, monkeypatch, tmp_path):
    seed(runner)
    event(runner, monkeypatch, tmp_path, action="closed", merged=True, repo=None, label="mallory:feature/x")
    assert "pull request #12 comes from the fork of mallory (deleted since): its branch feature/x is not one of " \
           "octo/hello's" in run("ci").stdout  # its repository is gone: its label's owner tells
    assert runner.issues[7]["state"] == "open" and runner.calls == []


def test_a_close_that_fails_is_a_warning_and_the_result_stands(runner, run, monkeypatch, tmp_path):
    seed(runner)
    event(runner, monkeypatch, tmp_path, action="closed", merged=True)
    runner.fail_op("CloseCheckpoint", 502, times=99)
    result = run("ci", "--result", "success")
    assert "::warning::ghstate: #7 was not closed (" in result.stdout and "what was recorded stands" in result.stdout
    assert "Recorded success on #7 (passing)" in result.stdout
    assert state(runner).meta.pull_request.state == "merged" and runner.issues[7]["state"] == "open"


def test_a_deleted_tag_is_nothing_to_do(runner, run, monkeypatch, tmp_path):
    seed(runner)
    tmp_path.joinpath("tag.json").write_text(json.dumps({"ref": "v1.0", "ref_type": "tag"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "tag.json"))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "delete")
    assert run("ci").stdout.strip() == "::notice::ghstate: a tag was deleted, not a branch; nothing to do"
    assert runner.calls == []
