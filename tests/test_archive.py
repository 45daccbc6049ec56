"""Closed checkpoints' refs folded into one (``ghstate.github.archive``, issue 44 part 3): the refs under
refs/ghstate/ grow with open checkpoints, not with every checkpoint ever made; a closed checkpoint's chain
stays readable (``log``, ``show``), a reopened one gets its chain ref back, and a branch's entry goes once
its branch is gone and its checkpoint closed."""

from __future__ import annotations

import json

import pytest
import test_branch_index
from conftest import git

from ghstate.github import archive, branches

gh = test_branch_index.gh  # the fake GitHub with a tree, as the index tests have it


def ghstate_refs(gh) -> list[str]:
    return sorted(name for name in gh.tasks.refs if name.startswith("refs/ghstate/"))


def made(gh, run, repo, branch: str, *writes: str) -> int:
    """A checkpoint ghstate creates on ``branch`` (its entry in the index), then a write for each of ``writes``
    (its chain); its number. The branch is on GitHub."""
    git(repo, "checkout", "-q", "-B", branch)
    out = run("checkpoint", "--phase", f"Phase 1: {branch}", "--resume", "Phase 1").stdout
    number = int(out.split("#", 1)[1].split()[0])
    for risk in writes:
        run("checkpoint", "--risk", risk)
    gh.tasks.refs[f"refs/heads/{branch}"] = "e" * 40
    return number


@pytest.mark.thorough  # a hundred checkpoints made and ninety closed, one by one: the thorough tier
def test_a_hundred_made_and_ninety_closed_leave_the_refs_of_ten(gh, run, repo):
    """Issue 44: each checkpoint left two refs for good (its chain and its branch's entry): 10,000 in a year of
    agents, downloaded by every push and ls-remote. After 100 made and 90 closed (their branches gone, as
    after a merge): the open ten's two refs each, and the archive."""
    numbers = [made(gh, run, repo, f"b{k}", "a write") for k in range(100)]
    assert len(ghstate_refs(gh)) == 200
    for number in numbers[:90]:
        del gh.tasks.refs[f"refs/heads/b{number - 1}"]  # merged, its branch deleted
        run("close", str(number))
    refs = ghstate_refs(gh)
    assert len(refs) <= 2 * 10 + 1, refs
    assert refs.count(archive.ARCHIVE) == 1 and len([r for r in refs if "/checkpoints/" in r]) == 10
    assert sorted(gh.tasks.branch_index().values()) == numbers[90:]


def test_log_and_show_of_an_archived_checkpoint_read_its_whole_history(gh, run, repo):
    number = made(gh, run, repo, "feature/x", "first", "second")
    before = json.loads(run("log", str(number), "--json").stdout)
    shown = run("show", str(number), "--json").stdout
    run("close", str(number))
    assert f"refs/ghstate/checkpoints/{number}" not in gh.tasks.refs
    assert json.loads(run("log", str(number), "--json").stdout) == before and len(before) == 3
    assert json.loads(run("show", str(number), "--json").stdout)["risks"] == json.loads(shown)["risks"]
    start = len(gh.operations())
    run("log", str(number))
    assert gh.operations()[start:] == ["Checkpoint", "ChainCommit", "ArchivedLog"]


def test_a_reopened_checkpoint_gets_its_chain_ref_back_on_its_head(gh, run, repo):
    number = made(gh, run, repo, "feature/x", "before closing")
    head = gh.tasks.refs[f"refs/ghstate/checkpoints/{number}"]
    run("close", str(number))
    gh.issues[number]["state"] = "open"  # reopened on github.com
    run("checkpoint", str(number), "--risk", "after reopening")
    now = gh.tasks.refs[f"refs/ghstate/checkpoints/{number}"]
    assert gh.tasks.objects[now]["parents"] == [head]  # its chain goes on, not a new one
    log = json.loads(run("log", str(number), "--json").stdout)
    assert [e["changes"] for e in log][-2:] == [["+1 risk"], ["+1 risk"]] and len(log) == 3
    assert json.loads(run("show", str(number), "--json").stdout)["risks"] == ["before closing", "after reopening"]


def test_two_closes_at_once_both_fold_into_the_archive(gh, run, repo):
    one = made(gh, run, repo, "b1", "w1")
    two = made(gh, run, repo, "b2", "w2")
    heads = {n: gh.tasks.refs[f"refs/ghstate/checkpoints/{n}"] for n in (one, two)}
    gh.on_op("UpdateRefs", lambda: run("close", str(two)))  # the other close moves the archive first
    run("close", str(one))
    assert ghstate_refs(gh) == sorted([archive.ARCHIVE, branches.ref_name("b1"), branches.ref_name("b2")])
    kept = set()
    at = gh.tasks.refs[archive.ARCHIVE]
    while at:  # the archive's commits, first parent after first parent: each keeps one closed head
        parents = gh.tasks.objects[at]["parents"]
        kept.update(parents[1:] if len(parents) > 1 else parents)
        at = parents[0] if len(parents) > 1 else ""
    assert set(heads.values()) <= kept


def test_a_branch_entry_stays_while_its_branch_is_there_and_resume_says_it_closed(gh, run, repo):
    number = made(gh, run, repo, "feature/x", "w")
    run("close", str(number))
    assert gh.tasks.branch_index() == {"feature%2Fx": number}
    assert f"#{number} closed" in run("resume", code=None).stderr


def test_close_again_folds_a_checkpoint_closed_before_the_archive(gh, run, repo):
    """A checkpoint closed by an older ghstate (or on github.com) keeps its refs; `ghstate close N` on it folds
    them, and leaves its state reason as it was."""
    number = made(gh, run, repo, "feature/x", "w")
    del gh.tasks.refs["refs/heads/feature/x"]
    gh.tasks.close(number, "not_planned")
    assert f"refs/ghstate/checkpoints/{number}" in gh.tasks.refs
    assert run("close", str(number)).stdout.startswith(f"#{number} was closed already")
    assert ghstate_refs(gh) == [archive.ARCHIVE] and gh.issues[number]["state_reason"] == "not_planned"
    assert "CloseCheckpoint" not in gh.operations()


def test_a_token_that_cannot_write_refs_still_closes_and_says_the_refs_stay(gh, run, repo):
    number = made(gh, run, repo, "feature/x", "w")
    gh.tasks.deny_refs = True
    result = run("close", str(number))
    assert gh.issues[number]["state"] == "closed" and f"refs/ghstate/checkpoints/{number}" in gh.tasks.refs
    assert "its refs could not be folded into refs/ghstate/archive" in result.stderr
    assert "concurrent writers are not protected" not in result.stderr


def test_a_write_whose_body_lagged_is_on_the_chain_of_its_closed_checkpoint(gh, run, repo):
    """Finding 5 of issue 58: a write that ended with its body not brought up to date (the ref moved, the body's
    write failed), then a close: the chain was folded from the head the body named, so ``show``, ``log`` and
    ``resume`` of the closed checkpoint missed the write, and a reopened checkpoint built on the older head
    cut it off for good. A write that reported success is on the chain of its closed checkpoint."""
    number = made(gh, run, repo, "feature/x", "first")
    gh.fail_op("AppendCheckpoint", type="UNPROCESSABLE", field="updateIssue", message="body write refused")
    gh.fail_op("UpdateCheckpoint", 502, times=9)
    out = run("checkpoint", "--risk", "written while the body lagged")
    assert "body could not be brought up to date" in out.stderr and "written while the body lagged" not in \
        gh.issues[number]["body"]
    gh.faults.clear()
    run("close", str(number))
    assert f"refs/ghstate/checkpoints/{number}" not in gh.tasks.refs
    assert "written while the body lagged" in json.loads(run("show", str(number), "--json").stdout)["risks"]
    assert "+1 risk" in run("log", str(number)).stdout.splitlines()[-1]
    assert "written while the body lagged" in run("resume", str(number)).stdout
    gh.issues[number]["state"] = "open"  # reopened by a person
    run("checkpoint", str(number), "--decision", "after the reopen")
    shown = json.loads(run("show", str(number), "--json").stdout)
    assert "written while the body lagged" in shown["risks"] and "after the reopen" in shown["decisions"]
