"""A local checkpoint's history is never deleted or rolled back (issue 48, part 1), reproduced with real git in a
throwaway repository: a store committed on a branch, then ``git stash`` and a checkout of another branch, a new
checkpoint there; the highest ``N.md`` deleted by hand; chain files taken away while ``N.md`` kept its newer
revision. A number that has a chain is never given again, and ``N.md`` newer than its chain is merged into it
(the missing generation made again from it, and said), never read as the older head."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SAMPLE, git

from ghstate.core import chain
from ghstate.core.parse import parse


def state(run, number: int, env: dict | None = None) -> dict:
    """``show --json`` of local #number, with its revision at the top."""
    data = json.loads(run("show", str(number), "--store", "local", "--json", env=env).stdout)
    return {**data, "revision": data["meta"]["revision"]}


def test_stash_and_checkout_of_a_committed_store_lose_no_history(repo, run):
    """The issue's steps, with the store in the work tree (GHSTATE_DIR=.ghstate, as it was by default) and
    committed: two more writes on the branch, ``git stash``, ``git checkout main`` (the committed files go, the
    chain's new generations stay, untracked), a checkpoint there. It gets a new number (not #1 again, which
    deleted #1's uncommitted generations), and back on the branch #1 is revision 3 with "d3"."""
    env = {"GHSTATE_DIR": ".ghstate"}
    git(repo, "branch", "main")
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE, env=env)
    run("checkpoint", "1", "--store", "local", "--decision", "d1", env=env)
    git(repo, "add", "-f", ".ghstate")
    git(repo, "commit", "-q", "-m", "ghstate")
    run("checkpoint", "1", "--store", "local", "--decision", "d2", env=env)
    run("checkpoint", "1", "--store", "local", "--decision", "d3", env=env)
    git(repo, "stash")
    git(repo, "checkout", "-q", "main")
    assert not (repo / ".ghstate" / "1.md").exists() and (repo / ".ghstate" / "chain" / "1" / "4.json").exists()
    made = run("checkpoint", "--store", "local", "--goal", "hotfix", "--phase", "Phase 1: fix", "--resume", "fix",
               env=env)
    assert made.stdout.startswith("Created checkpoint local #2"), made.stdout
    # untracked: the generations after the commit (1.json, its creation, and 2.json were committed)
    assert sorted(p.name for p in (repo / ".ghstate" / "chain" / "1").iterdir()) == ["3.json", "4.json"]
    git(repo, "checkout", "-q", "-f", "feature/x")  # -f: the store's .gitignore, made again on main, is the same
    git(repo, "stash", "pop")
    one = state(run, 1, env)
    assert one["revision"] == 4 and {"d1", "d2", "d3"} <= set(one["decisions"]), one
    run("checkpoint", "1", "--store", "local", "--decision", "d4", env=env)
    assert {"d1", "d2", "d3", "d4"} <= set(state(run, 1, env)["decisions"])
    assert state(run, 2, env)["goal"] == "hotfix"


def test_in_the_clones_store_git_cannot_take_the_history_away(repo, run):
    """The same steps with the store where it now is (the clone's, under the git folder): ``git add -A``
    commits nothing of it, and stash and checkout leave it alone."""
    git(repo, "branch", "main")
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--store", "local", "--decision", "d1")
    git(repo, "add", "-A")
    assert git(repo, "status", "--porcelain") == ""
    run("checkpoint", "1", "--store", "local", "--decision", "d3")
    git(repo, "stash", "--include-untracked")
    git(repo, "checkout", "-q", "main")
    assert run("checkpoint", "--store", "local", "--goal", "hotfix", "--phase", "Phase 1: fix",
               "--resume", "fix").stdout.startswith("Created checkpoint local #2")
    git(repo, "checkout", "-q", "feature/x")
    one = state(run, 1)
    assert one["revision"] == 3 and {"d1", "d3"} <= set(one["decisions"])


def test_the_highest_checkpoint_deleted_by_hand_keeps_its_number_and_chain(repo, run, tmp_path, monkeypatch):
    """``rm 2.md``: the next checkpoint is #3, and #2's chain is still there (it was emptied and #2 made again)."""
    store = tmp_path / "store"
    monkeypatch.setenv("GHSTATE_DIR", str(store))
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    git(repo, "checkout", "-q", "-b", "other")
    run("checkpoint", "--store", "local", "--goal", "second", "--phase", "Phase 1: b", "--resume", "b")
    run("checkpoint", "2", "--store", "local", "--decision", "kept in the chain")
    chain_files = sorted(p.name for p in (store / "chain" / "2").iterdir())
    (store / "2.md").unlink()
    git(repo, "checkout", "-q", "-b", "third")
    made = run("checkpoint", "--store", "local", "--goal", "third", "--phase", "Phase 1: c", "--resume", "c")
    assert made.stdout.startswith("Created checkpoint local #3"), made.stdout
    assert sorted(p.name for p in (store / "chain" / "2").iterdir()) == chain_files
    link = json.loads((store / "chain" / "2" / chain_files[-1]).read_text())
    assert "kept in the chain" in link["body"]


def _committed_with_its_chain(repo: Path, run, env: dict) -> Path:
    """#1 written three times in a store in the work tree, committed (``git add -f``: its .gitignore now keeps
    the store out) after the second write: ``1.md`` holds "d3", generation 3 is untracked (1 is its creation)."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE, env=env)
    run("checkpoint", "1", "--store", "local", "--decision", "d2", env=env)
    git(repo, "add", "-f", ".ghstate")
    git(repo, "commit", "-q", "-m", "ghstate")
    run("checkpoint", "1", "--store", "local", "--decision", "d3", env=env)
    return repo / ".ghstate"


def test_a_mirror_newer_than_its_chain_is_merged_never_rolled_back(repo, run):
    """``git clean -fdx`` takes generation 3 away, ``1.md`` still holds revision 3 with "d3": ``show`` reported
    revision 2 without it, saying nothing, and the next write wrote "d3" away. Now the missing generation is
    made again from ``1.md``, said once, and ``show``, ``log`` and the next write go on from it."""
    env = {"GHSTATE_DIR": ".ghstate"}
    folder = _committed_with_its_chain(repo, run, env)
    git(repo, "clean", "-q", "-fdx", ".ghstate/chain")
    assert sorted(p.name for p in (folder / "chain" / "1").iterdir()) == ["1.json", "2.json"]
    result = run("show", "1", "--store", "local", "--json", env=env)
    shown = {**json.loads(result.stdout), "revision": json.loads(result.stdout)["meta"]["revision"]}
    assert shown["revision"] == 3 and "d3" in shown["decisions"], shown
    assert "1.md holds revision 3, but its chain" in result.stderr and "made again from 1.md" in result.stderr
    assert json.loads((folder / "chain" / "1" / "3.json").read_text())["parent"] == 2
    assert "Warning" not in run("show", "1", "--store", "local", env=env).stderr  # said once, when it was made
    log = run("log", "1", "--store", "local", env=env).stdout.splitlines()
    assert log[-1].startswith("r3") and "restored from 1.md" in log[-1], log
    run("checkpoint", "1", "--store", "local", "--risk", "r4", env=env)
    cp = parse(chain.split((folder / "1.md").read_text())[0]).checkpoint
    assert cp.meta.revision == 4 and {"d2", "d3"} <= set(cp.decisions) and "r4" in cp.risks


def test_a_mirror_older_than_its_chain_is_the_chains_head(repo, run):
    """The other way round (``git stash`` takes ``1.md`` back to the committed revision 2, generation 2 stays):
    the chain's head is newer and stands, as before."""
    env = {"GHSTATE_DIR": ".ghstate"}
    _committed_with_its_chain(repo, run, env)
    git(repo, "stash")
    shown = state(run, 1, env)
    assert shown["revision"] == 3 and "d3" in shown["decisions"]
