"""One local store per clone, shared by every worktree (real ``git worktree``s): its checkpoints, claims, lock
and kept writes; agents in several worktrees racing for children (real processes); a worktree's own
``.ghstate/`` from before, moved into the clone's store with nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLE, git, store_of

from ghstate.core import chain
from ghstate.core.parse import parse
from ghstate.local.claims import LocalClaims
from ghstate.local.store import LocalStore

ROOT = Path(__file__).resolve().parents[1]
PLAN = """## Goal
Ship the parser.

## Current status
- [x] Phase 1: parser
- [ ] Phase 2: matcher
- [ ] Phase 3: config
- [ ] Phase 4: docs

## Resume instruction
Start at Phase 2.
"""


def worktree(repo: Path, name: str) -> Path:
    """A linked worktree of ``repo`` on a branch of its own, beside it."""
    path = repo.parent / name
    git(repo, "worktree", "add", "-q", "-b", name, str(path))
    return path


def test_the_store_is_the_clones_not_the_worktrees(repo, run):
    """Written in the main worktree, the checkpoint is in ``<git common dir>/ghstate``: out of the work tree (git
    status shows nothing), and the one a linked worktree's commands read."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    assert (repo / ".git" / "ghstate" / "1.md").is_file() and not (repo / ".ghstate").exists()
    assert git(repo, "status", "--porcelain") == ""
    linked = worktree(repo, "two")
    assert store_of(linked) == repo / ".git" / "ghstate"
    os.chdir(linked)
    short = run("resume", "1", "--store", "local", "--format", "short").stdout
    assert short.startswith("local #1 Checkpoint: feature/x")


def test_split_in_one_worktree_ready_and_claim_in_another_see_one_queue(repo, run, tmp_path):
    """The issue's case: ``split`` in the main worktree, then ``ready`` in a linked one said "no local checkpoint
    #1"; a claim made in one worktree is seen, and refused to another agent, in the other."""
    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--store", "local", "--file", str(tmp_path / "plan.md"), "--title", "Parser")
    run("split", "1", "--store", "local")
    one, two = worktree(repo, "one"), worktree(repo, "two")
    os.chdir(one)
    assert [line.split("\t")[0] for line in run("ready", "1", "--store", "local").stdout.splitlines()] == [
        "#2", "#3", "#4"]
    assert run("claim", "--next", "1", "--store", "local", "--agent", "w1").stdout == "#2\n"
    os.chdir(two)
    assert run("claim", "2", "--store", "local", "--agent", "w2", code=4).stderr.startswith("Error: local #2")
    assert run("claim", "--next", "1", "--store", "local", "--agent", "w2").stdout == "#3\n"
    os.chdir(repo)
    states = {c["number"]: c["state"] for c in json.loads(run("ready", "1", "--store", "local", "--json").stdout)}
    assert states == {2: "claimed", 3: "claimed", 4: "ready"}


def test_a_write_in_one_worktree_is_the_next_writes_base_in_another(repo, run):
    """One chain for a checkpoint, whichever worktree writes: the second write builds on the first."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    os.chdir(worktree(repo, "two"))
    run("checkpoint", "1", "--store", "local", "--decision", "from two")
    os.chdir(repo)
    run("checkpoint", "1", "--store", "local", "--decision", "from main")
    cp = parse(chain.split((repo / ".git" / "ghstate" / "1.md").read_text())[0]).checkpoint
    assert {"from two", "from main"} <= set(cp.decisions) and cp.meta.revision == 3
    assert sorted(p.name for p in (repo / ".git" / "ghstate" / "chain" / "1").iterdir()) == ["1.json", "2.json",
                                                                                           "3.json"]


def test_ghstate_dir_is_still_the_store_when_set(repo, run, tmp_path, monkeypatch):
    """The explicit override: GHSTATE_DIR is the store, wherever the command runs, as before."""
    monkeypatch.setenv("GHSTATE_DIR", str(tmp_path / "elsewhere"))
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    assert (tmp_path / "elsewhere" / "1.md").is_file() and not (repo / ".git" / "ghstate").exists()


def _race_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), GIT_CONFIG_GLOBAL=os.devnull, GHSTATE_NO_CACHE="1")
    return env


def test_agents_in_six_worktrees_racing_for_three_children_three_win(repo, run, tmp_path):
    """N agents, each a real process in a worktree of its own (real ``git worktree``s), race ``claim --next``
    for M ready children: exactly M win, each a different child; the others are told nothing is ready (exit
    3). Each worktree finds the one store, so the claims' compare-and-swap is one for all of them."""
    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--store", "local", "--file", str(tmp_path / "plan.md"), "--title", "Parser")
    run("split", "1", "--store", "local")
    trees = [worktree(repo, f"agent-{i}") for i in range(6)]
    env = _race_env(tmp_path)
    agents = [subprocess.Popen([sys.executable, "-m", "ghstate", "claim", "--next", "1", "--store", "local",
                                "--agent", f"agent-{i}"], cwd=tree, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for i, tree in enumerate(trees)]
    results = [(p.returncode, out, err) for p in agents for out, err in [p.communicate(timeout=120)]]
    winners = [out.strip() for code, out, _ in results if code == 0]
    assert sorted(winners) == ["#2", "#3", "#4"], results
    assert sorted(code for code, _, _ in results if code != 0) == [3, 3, 3], results
    claims = LocalClaims(repo / ".git" / "ghstate" / "claims")
    holders = {n: claims.read(n).claim.agent for n in (2, 3, 4)}
    assert sorted(holders.values()) == sorted(f"agent-{i}" for i, (code, _, _) in enumerate(results) if code == 0)
    assert not any((tree / ".ghstate").exists() for tree in trees)  # no worktree made a store of its own


# ----------------------------------------------------------------------- a worktree's own store, from before


def _old_store(tree: Path, run, *writes: tuple[str, ...]) -> Path:
    """``tree/.ghstate`` made as ghstate made a worktree's own store before (GHSTATE_DIR points there)."""
    folder = tree / ".ghstate"
    for args in writes:
        run(*args, env={"GHSTATE_DIR": str(folder)})
    return folder


def test_a_worktrees_own_store_is_moved_into_the_clones_nothing_lost(repo, run, tmp_path):
    """Two worktrees, each with its own ``.ghstate/`` numbered from 1 (one with a write kept for GitHub and a
    claim), and the clone's store holding #1 already: the next command in each finds everything, under new
    numbers where the numbers were taken, says so, and records it in ``moved.log``."""
    run("checkpoint", "--store", "local", "--goal", "clone's own", "--phase", "Phase 1: a", "--resume", "a")
    one, two = worktree(repo, "one"), worktree(repo, "two")
    old_one = _old_store(one, run)
    os.chdir(one)
    _old_store(one, run, ("checkpoint", "--store", "local", "--goal", "one's", "--phase", "Phase 1: x",
                          "--resume", "x"), ("checkpoint", "1", "--store", "local", "--decision", "one's d2"))
    (old_one / "pending").mkdir()
    (old_one / "pending" / "00000000000000000001-new-1-abcdef.json").write_text("{}\n")
    (old_one / "claims" / "1").mkdir(parents=True)
    (old_one / "claims" / "1" / "1.json").write_text('{"claim": null, "released_by": "w"}\n')
    os.chdir(two)
    old_two = _old_store(two, run, ("checkpoint", "--store", "local", "--goal", "two's", "--phase", "Phase 1: y",
                                    "--resume", "y"))
    os.chdir(one)
    result = run("list", "--store", "local", "--json")
    titles = {row["issue"]: row["title"] for row in json.loads(result.stdout)}
    assert titles == {1: "Checkpoint: feature/x", 2: "Checkpoint: one"}, result.stderr
    assert "Note: moved this worktree's local store" in result.stderr and "#1 as #2" in result.stderr
    assert sorted(p.name for p in old_one.iterdir()) == [".gitignore", ".lock"]  # the worktree's own files stay
    store = repo / ".git" / "ghstate"
    assert [(g, json.loads((store / "chain" / "2" / f"{g}.json").read_text())["checkpoint"]) for g in (1,)] == [(1, 2)]
    assert "one's d2" in run("show", "2", "--store", "local").stdout
    assert len(list((store / "pending").glob("*.json"))) == 1 and (store / "claims" / "2" / "1.json").is_file()
    os.chdir(two)
    assert "#1 as #3" in run("show", "3", "--store", "local").stderr
    assert not (old_two / "1.md").exists()
    moved = (store / "moved.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in moved] == [f"{old_one} #1 -> #2", f"{old_two} #1 -> #3"]
    assert "two's" in run("show", "3", "--store", "local").stdout


def test_the_same_committed_store_in_two_worktrees_is_taken_once_and_left_in_git(repo, run):
    """``.ghstate/`` committed (as the README's set-up did) is in every worktree: the first command copies it
    under its own numbers, and leaves the files git tracks where they are; another worktree's copy, all of which
    the clone's store holds already, is not made a second checkpoint. A copy that went on being written from
    there goes on in the clone's (its newer generations taken); nothing in a work tree is deleted."""
    folder = repo / ".ghstate"
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE, env={"GHSTATE_DIR": str(folder)})
    run("checkpoint", "1", "--store", "local", "--decision", "d2", env={"GHSTATE_DIR": str(folder)})
    git(repo, "add", "-f", ".ghstate")
    git(repo, "commit", "-q", "-m", "the store, committed")
    one, two = worktree(repo, "one"), worktree(repo, "two")
    assert (one / ".ghstate" / "1.md").is_file() and (two / ".ghstate" / "1.md").is_file()
    run("checkpoint", "1", "--store", "local", "--decision", "two went on", env={"GHSTATE_DIR": str(two / ".ghstate")})
    os.chdir(repo)
    said = run("show", "1", "--store", "local").stderr
    assert "copied this worktree's local store" in said and "#1" in said and "git rm --cached -r" in said
    assert "git rm --cached" not in run("show", "1", "--store", "local").stderr  # said once
    os.chdir(one)
    said = run("list", "--store", "local").stderr
    assert "#1 (held by the clone's #1 already)" in said and (one / ".ghstate" / "1.md").exists()
    os.chdir(two)
    said = run("list", "--store", "local").stderr
    assert "#1" in said and "as #2" not in said
    assert "two went on" in run("show", "1", "--store", "local").stdout
    assert sorted(LocalStore(repo / ".git" / "ghstate").numbers()) == [1]
    for tree in (repo, one, two):
        assert git(tree, "status", "--porcelain", "--", ".ghstate") == ("" if tree != two else "M .ghstate/1.md")


def test_a_move_cut_short_is_finished_by_the_next_command(repo, run):
    """A move killed after #1's chain was copied into the clone's store, before its body: the next command
    finishes it under #1 (not a second copy, and not the chain alone, which no listing shows)."""
    import shutil

    old = repo / ".ghstate"
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE, env={"GHSTATE_DIR": str(old)})
    run("checkpoint", "1", "--store", "local", "--decision", "d2", env={"GHSTATE_DIR": str(old)})
    store = repo / ".git" / "ghstate"
    shutil.copytree(old / "chain", store / "chain")
    assert "#1" in run("list", "--store", "local").stderr
    assert sorted(LocalStore(store).numbers()) == [1] and not (old / "1.md").exists()
    assert "d2" in run("show", "1", "--store", "local").stdout


def test_a_family_moved_under_new_numbers_keeps_its_links(repo, run, tmp_path):
    """A worktree's own store split into a parent and children, its numbers taken in the clone's store: moved
    under new numbers, each child's marker names its parent and the children it waits for by their new
    numbers, so ``ready`` of the new parent lists them (and the clone's own #1 gets no children). The bodies
    stay their chains' mirrors: the move is no person's edit."""
    run("checkpoint", "--store", "local", "--goal", "clone's own", "--phase", "Phase 1: a", "--resume", "a")
    run("checkpoint", "--store", "local", "--goal", "second", "--phase", "Phase 1: b", "--resume", "b", "--new")
    tree = worktree(repo, "one")
    os.chdir(tree)
    (tmp_path / "plan.md").write_text(PLAN.replace("- [ ] Phase 3: config", "- [ ] Phase 3: config (after Phase 2)"))
    old = {"GHSTATE_DIR": str(tree / ".ghstate")}
    run("checkpoint", "--store", "local", "--file", str(tmp_path / "plan.md"), "--title", "Parser", env=old)
    run("split", "1", "--store", "local", env=old)
    run("checkpoint", "3", "--store", "local", "--decision", "written before the move", env=old)
    run("checkpoint", "2", "--store", "local", "--decision", "also written", env=old)
    edited = tree / ".ghstate" / "2.md"  # then edited by a person: still their edit once moved
    edited.write_text(edited.read_text().replace("## Resume instruction", "## Open questions\n- a person asks\n\n"
                                                 "## Resume instruction"))
    said = run("list", "--store", "local").stderr
    assert "#1 as #3, #2 as #4, #3 as #5, #4 as #6" in said, said
    ready = json.loads(run("ready", "3", "--store", "local", "--json").stdout)
    assert {c["number"]: (c["state"], c["blocked_by"]) for c in ready} == {
        4: ("ready", []), 5: ("blocked", [4]), 6: ("ready", [])}, ready
    assert json.loads(run("ready", "1", "--store", "local", "--json").stdout) == []  # the clone's own #1
    store = LocalStore(repo / ".git" / "ghstate")
    for number in (3, 5):
        assert "a person" not in run("log", str(number), "--store", "local").stdout
        assert chain.classify(store.get(number).body, store.get(number).head).kind == "current", number
    five = parse(chain.split(store.get(5).body)[0]).checkpoint
    assert five.meta.task.parent == 3 and five.meta.task.after == (4,) and "written before the move" in five.decisions
    assert chain.classify(store.get(4).body, store.get(4).head).kind == "edited"
    four = json.loads(run("show", "4", "--store", "local", "--json").stdout)
    assert "a person asks" in four["questions"] and "also written" in four["decisions"]


def test_a_claim_and_a_close_made_in_a_worktrees_own_store_survive_the_take(repo, run, tmp_path):
    """Finding 6 of issue 58, with real ``git worktree``s: the same committed store in the main worktree and in
    ``one``, where (before one store per clone) an agent claimed child #2 and someone closed child #4. Taken into
    the clone's store, which holds them already: the claim was removed (``ready`` offered #2 again) and the close
    undone (#4 listed open). Both stand."""
    (tmp_path / "plan.md").write_text(PLAN)
    folder = {"GHSTATE_DIR": str(repo / ".ghstate")}
    run("checkpoint", "--store", "local", "--file", str(tmp_path / "plan.md"), "--title", "Parser", env=folder)
    run("split", "1", "--store", "local", env=folder)
    git(repo, "add", "-f", ".ghstate")
    git(repo, "commit", "-q", "-m", "the store, committed")
    one = worktree(repo, "one")
    own = {"GHSTATE_DIR": str(one / ".ghstate")}
    os.chdir(one)
    assert run("claim", "2", "--store", "local", "--agent", "w1", env=own).stdout == "#2\n"
    run("close", "4", "--store", "local", env=own)
    os.chdir(repo)
    states = {c["number"]: c["state"] for c in json.loads(run("ready", "1", "--store", "local", "--json").stdout)}
    assert states == {2: "ready", 3: "blocked", 4: "ready"} or states.get(2) == "ready", states  # main's copy
    os.chdir(one)
    said = run("list", "--store", "local", "--json")
    assert sorted(row["issue"] for row in json.loads(said.stdout)) == [1, 2, 3], said.stderr
    states = {c["number"]: c["state"] for c in json.loads(run("ready", "1", "--store", "local", "--json").stdout)}
    assert states[2] == "claimed" and states.get(4) in (None, "done"), states
    assert run("claim", "2", "--store", "local", "--agent", "w2", code=4).stderr.startswith("Error: local #2")
