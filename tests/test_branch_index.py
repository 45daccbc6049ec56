"""The branch index (``ghstate.github.branches``): a branch's checkpoint found in the same requests at any
count of open checkpoints, made with its checkpoint, moved by ``--move``, found closed, a checkpoint from
before it found and indexed by its first write, two creators for one branch ending with one checkpoint;
and the branch's pull request linked by a write."""

from __future__ import annotations

import json

import pytest
from conftest import git
from github_fake import FakeGitHub
from github_fake_tasks import VARIANTS
from hypothesis import given
from hypothesis import strategies as st

from ghstate.core.chain import TREE_FILES
from ghstate.core.parse import parse
from ghstate.github import branches

TOKEN = "ghp_" + "b" * 36


@pytest.fixture
def gh(isolated, repo, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    fake.tasks.add_tree(TREE_FILES)
    yield fake
    assert fake.problems() == [], "requests that GitHub's API description does not allow"


@pytest.fixture
def on(run, tmp_path):
    """``on("a", …)``: ghstate on machine "a" (a store folder and a cache of its own: its own lock)."""
    def run_on(machine: str, *args: str, **kwargs):
        env = {**kwargs.pop("env", {}), "GHSTATE_DIR": str(tmp_path / "machines" / machine),
               "XDG_CACHE_HOME": str(tmp_path / "caches" / machine)}
        return run(*args, env=env, **kwargs)

    return run_on


def seed(gh, number: int, branch: str, indexed: bool = True) -> None:
    """A checkpoint of ``branch`` as ghstate wrote it; ``indexed``: with its entry in the branch index."""
    marker = json.dumps({"revision": 1, "branch": branch})
    body = f"<!-- ghstate:v1 {marker} -->\n## Goal\n{branch}\n## Resume instruction\ngo\n"
    gh.add_issue(number, body, title=f"Checkpoint: {branch}")
    if indexed:
        gh.tasks.index(number, branch)


def ops_since(gh, start: int) -> list[str]:
    return gh.operations()[start:]


def state(gh, number: int):
    return parse(gh.issues[number]["body"]).checkpoint


@pytest.mark.parametrize("count", [10, 250])
def test_a_branch_is_found_in_two_requests_at_any_count_and_none_in_two(gh, run, repo, count):
    for number in range(1, count + 1):  # #1 is the oldest: a listing would reach it last
        seed(gh, number, "feature/x" if number == 1 else f"b{number}")
    start = len(gh.operations())
    prompt = run("resume").stdout
    assert "GitHub issue #1 " in prompt and ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint"]
    start = len(gh.operations())
    run("checkpoint", "--risk", "found by its entry")
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint", "AppendCheckpoint"]  # + the commit (REST)
    assert state(gh, 1).risks == ("found by its entry",)
    git(repo, "checkout", "-q", "-b", "feature/none")
    start = len(gh.operations())
    result = run("resume", code=1)
    assert "no open checkpoint for branch feature/none" in result.stderr
    assert ops_since(gh, start) == ["BranchCheckpoint", "BranchSearch"]


def test_a_checkpoint_from_before_the_index_is_found_and_indexed_by_its_first_write(gh, run):
    seed(gh, 7, "feature/x", indexed=False)
    seed(gh, 8, "other", indexed=True)  # written since: in the index
    start = len(gh.operations())
    run("resume")  # a read finds it by search, and writes nothing
    assert ops_since(gh, start) == ["BranchCheckpoint", "BranchSearch", "Checkpoint"]
    assert "feature%2Fx" not in gh.tasks.branch_index()
    run("checkpoint", "--decision", "indexed now")
    assert gh.tasks.branch_index() == {"feature%2Fx": 7, "other": 8}
    start = len(gh.operations())
    run("checkpoint", "--decision", "by its entry")
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint", "AppendCheckpoint"]
    assert state(gh, 7).decisions == ("indexed now", "by its entry")


def test_an_index_that_does_not_say_every_checkpoint_is_in_it_never_answers_none(gh, run, repo):
    """A branch with no entry may have a checkpoint from before the index: searched for, never taken for none
    (no second checkpoint for the branch)."""
    seed(gh, 7, "feature/x", indexed=False)
    seed(gh, 8, "other")
    gh.tasks.refs.pop(branches.INDEXED)
    run("checkpoint", "--risk", "on seven")
    assert sorted(gh.issues) == [7, 8] and state(gh, 7).risks == ("on seven",)


def test_move_makes_the_branch_it_moves_to_name_it_and_the_one_it_left_not(gh, run, repo):
    seed(gh, 7, "feature/x")
    git(repo, "checkout", "-q", "-b", "feature/y")
    result = run("checkpoint", "7", "--risk", "moved", "--move")
    assert "it is branch feature/y's now" in result.stderr
    assert gh.tasks.branch_index() == {"feature%2Fy": 7}
    start = len(gh.operations())
    assert "GitHub issue #7 " in run("resume").stdout
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint"]
    git(repo, "checkout", "-q", "feature/x")
    assert "no open checkpoint for branch feature/x" in run("resume", code=1).stderr


def test_a_closed_checkpoint_is_found_closed_and_the_next_write_makes_a_new_one(gh, run):
    seed(gh, 7, "feature/x")
    gh.tasks.close(7)
    from ghstate.services.app import build_app
    from ghstate.services.reader import locate

    app = build_app()
    assert locate(app.store, None, "feature/x") is None
    assert locate(app.store, None, "feature/x", closed=True).state == "closed"
    out = run("checkpoint", "--phase", "Phase 1: again", "--resume", "Phase 1").stdout
    assert out.startswith("Created checkpoint #8")
    assert gh.tasks.branch_index() == {"feature%2Fx": 8} and gh.issues[7]["state"] == "closed"


def test_an_entry_moved_onto_another_branchs_checkpoint_is_passed_over_and_said(gh, run):
    seed(gh, 7, "feature/x", indexed=False)
    seed(gh, 8, "other")
    gh.tasks.refs[branches.ref_name("feature/x")] = gh.tasks.refs[branches.ref_name("other")]  # by hand
    result = run("resume")
    assert "GitHub issue #7 " in result.stdout and "names no checkpoint of branch feature/x" in result.stderr


def test_an_entry_naming_a_checkpoint_of_another_branch_is_passed_over(gh, run):
    seed(gh, 7, "feature/x", indexed=False)
    seed(gh, 8, "other")
    gh.tasks.index(8, "feature/x")  # an entry of this branch that names #8, whose marker says "other"
    result = run("resume")
    assert "GitHub issue #7 " in result.stdout and "whose marker names another branch" in result.stderr


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_two_creators_for_one_branch_end_with_one_checkpoint_and_both_writes(gh, on, variant):
    """A and B find no checkpoint for the branch; B creates and indexes its own while A's create is on its
    way: A's entry is refused, A's issue is closed as the duplicate, and A's write goes to B's."""
    gh.tasks.use(variant)
    gh.on("POST", r"^/issues$", lambda: on("b", "checkpoint", "--decision", "from b", "--resume", "b"))
    result = on("a", "checkpoint", "--decision", "from a", "--resume", "a")
    assert "#1 was created for branch feature/x at the same time as #2" in result.stderr
    assert gh.issues[2]["state"] == "closed" and gh.issues[2].get("state_reason") == "duplicate"
    assert [n for n, i in gh.issues.items() if i["state"] == "open"] == [1]
    assert set(state(gh, 1).decisions) == {"from a", "from b"}
    assert gh.tasks.branch_index() == {"feature%2Fx": 1}


def test_a_write_by_branch_links_its_open_pull_request_and_not_a_forks(gh, run):
    seed(gh, 7, "feature/x")
    gh.tasks.add_pull(20, "feature/x", state="MERGED")  # an older one, merged
    gh.tasks.add_pull(31, "feature/x", cross=True)  # a fork's branch of the same name
    run("checkpoint", "--risk", "r")
    assert state(gh, 7).meta.pull_request is None
    gh.tasks.add_pull(32, "feature/x")
    start = len(gh.operations())
    out = run("checkpoint", "--risk", "r2").stdout
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint", "AppendCheckpoint"]  # no request of its own
    pull = state(gh, 7).meta.pull_request
    assert (pull.number, pull.state, pull.url) == (32, "open", "https://github.com/octo/hello/pull/32")
    assert "pull request #32 linked" in out
    data = json.loads(run("show", "7", "--json").stdout)
    assert data["pull_request"] == {"number": 32, "url": "https://github.com/octo/hello/pull/32", "state": "open"}


@given(st.text(min_size=1, max_size=300))
def test_every_branch_name_has_one_flat_ref_name_git_accepts(branch):
    name = branches.ref_name(branch).removeprefix(branches.PREFIX)
    assert "/" not in name and ".." not in name and not name.startswith(".") and not name.endswith(".lock")
    assert len(name) <= branches.LONGEST and all(c.isascii() and (c.isalnum() or c in "%_-") for c in name)
    assert branches.number_of(branches.message(24, branch), branch) == 24
    assert branches.number_of(branches.message(24, branch), branch + "x") is None


def test_branch_names_with_slashes_or_unicode_are_apart(gh, run, repo):
    for branch in ("a.b", "a/b", "fix/ünïcode-☃", "a%2Fb"):  # (git itself keeps "a" and "a/b" apart)
        git(repo, "checkout", "-q", "-b", branch)
        run("checkpoint", "--phase", f"Phase 1: {branch}", "--resume", "Phase 1")
    assert sorted(gh.tasks.branch_index().values()) == [1, 2, 3, 4]
    git(repo, "checkout", "-q", "a/b")
    assert "GitHub issue #2 " in run("resume").stdout


@pytest.mark.parametrize("reason, said", [("completed", "#7 closed when PR #12 merged"),
                                          ("not_planned", "#7 closed as not planned")])
def test_resume_on_a_branch_whose_checkpoint_closed_says_so_and_shows_it(gh, run, reason, said):
    marker = {"revision": 2, "branch": "feature/x", "pull_request": {
        "number": 12, "url": "https://github.com/octo/hello/pull/12",
        "state": "merged" if reason == "completed" else "closed"}}
    gh.add_issue(7, f"<!-- ghstate:v1 {json.dumps(marker)} -->\n## Goal\nShip it.\n## Resume instruction\ngo\n",
                 title="Checkpoint: feature/x")
    gh.tasks.index(7, "feature/x")
    gh.tasks.close(7, reason)
    start = len(gh.operations())
    result = run("resume")
    assert said in result.stderr and "no open checkpoint" not in result.stderr
    # its entry, the checkpoint it names, closed, and GitHub's search for an open one made since (finding 4 of
    # issue 58): none
    assert "Ship it." in result.stdout and ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint", "BranchSearch"]
    assert json.loads(run("resume", "--json").stdout)["closed"]


def test_a_chain_ref_moved_onto_another_checkpoints_log_is_said_and_never_built_on(gh, run):
    """Issue 39, bug 6: `git push origin refs/ghstate/checkpoints/2:refs/ghstate/checkpoints/1` (or a tool that
    misfires). A commit names its checkpoint: #1 is read from its body, said, and its write does not land on
    #2's log."""
    seed(gh, 1, "feature/x")
    seed(gh, 2, "other")
    run("checkpoint", "1", "--decision", "one's own")
    run("checkpoint", "2", "--decision", "two's own")
    two = gh.tasks.refs["refs/ghstate/checkpoints/2"]
    gh.tasks.refs["refs/ghstate/checkpoints/1"] = two
    result = run("resume", "1", "--format", "json")
    assert "points at a commit of #2's write log, not #1's" in result.stderr
    assert json.loads(result.stdout)["decisions"] == ["one's own"]
    result = run("checkpoint", "1", "--decision", "after the move")
    assert "points at a commit of #2's write log" in result.stderr
    assert state(gh, 1).decisions == ("one's own", "after the move")
    assert gh.tasks.refs["refs/ghstate/checkpoints/2"] == two and state(gh, 2).decisions == ("two's own",)


@pytest.mark.parametrize("message", ["a commit of someone else's\n", 'ghstate #1 r2: x\n\n{"format":"ghstate-chain/1",',
                                     "ghstate #1 r2: x\n\n" + "{" * 200_000])
def test_a_head_that_is_no_ghstate_commit_is_said_and_the_write_goes_on_top(gh, run, message):
    """Issue 39, bug 7: the body was read and the next write landed, but nothing said the log's head was
    unreadable, or where the write put its commit."""
    seed(gh, 1, "feature/x")
    run("checkpoint", "1", "--decision", "before")
    tree = gh.tasks.objects[gh.tasks.refs["refs/ghstate/checkpoints/1"]]["tree"]
    gh.tasks.objects["f" * 40] = {"type": "commit", "message": message, "tree": tree, "parents": [], "at": "x"}
    gh.tasks.refs["refs/ghstate/checkpoints/1"] = "f" * 40
    result = run("resume", "1")
    assert f"refs/ghstate/checkpoints/1's newest commit ({'f' * 12}) is no write of ghstate's" in result.stderr
    result = run("checkpoint", "1", "--decision", "after")
    assert "is no write of ghstate's" in result.stderr and "a write's commit goes on top of it" in result.stderr
    assert state(gh, 1).decisions == ("before", "after")
    assert gh.tasks.objects[gh.tasks.refs["refs/ghstate/checkpoints/1"]]["parents"] == ["f" * 40]


# ---------------------------------------------------------------------------- checkpoints the index does not hold

# GitHub's issue search as each plausible GitHub runs it: what its documentation leaves open (tests/github_fake.py)
SEARCHES = {"default": {}, "words-anywhere": {"search_match": "words"}, "marker-unsearched": {"search_comments": False},
            "lagging": {"search_lag": 30}}


def searching(gh, variant: str) -> None:
    for knob, value in SEARCHES[variant].items():
        setattr(gh, knob, value)


def form_body(branch: str, goal: str = "Ship the form.") -> str:
    """An issue made with the issue form `init` installs, as GitHub renders it (`### Label`, a blank line, the
    value; `_No response_` for a field left empty)."""
    return (f"### Branch\n\n{branch}\n\n### Goal\n\n{goal}\n\n### Current status\n\n- [ ] Phase 1: start\n\n"
            "### Decisions locked\n\n_No response_\n\n### Open questions\n\n_No response_\n\n### Remaining risks\n\n"
            "_No response_\n\n### Files to re-read\n\n_No response_\n\n### Resume instruction\n\nStart at Phase 1.")


@pytest.mark.parametrize("variant", SEARCHES)
def test_a_checkpoint_made_with_the_issue_form_after_the_index_is_found_by_its_branch(gh, run, repo, variant):
    """Issue 44, part 1: ghstate made #1 (the index and refs/ghstate/indexed set); a person then opened #2 with
    the issue form. Before, `resume` on its branch said "no open checkpoint" and a write made a second one."""
    searching(gh, variant)
    git(repo, "checkout", "-q", "-b", "feature/first")
    run("checkpoint", "--phase", "Phase 1: first", "--resume", "Phase 1")
    gh.add_issue(2, form_body("feature/from-form"), title="Checkpoint: form work")
    gh.advance(60)  # (a lagging search index has caught up: what it misses is only seconds old)
    git(repo, "checkout", "-q", "-b", "feature/from-form")
    start = len(gh.operations())
    assert "GitHub issue #2 " in run("resume").stdout and "Ship the form." in run("resume").stdout
    assert ops_since(gh, start)[:3] == ["BranchCheckpoint", "BranchSearch", "Checkpoint"]
    run("checkpoint", "--risk", "on the form's checkpoint")
    assert sorted(gh.issues) == [1, 2] and state(gh, 2).risks == ("on the form's checkpoint",)
    assert gh.tasks.branch_index()["feature%2Ffrom-form"] == 2  # indexed by that first write, no person
    start = len(gh.operations())
    run("resume")
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint"]


@pytest.mark.parametrize("variant", SEARCHES)
def test_an_older_ghstates_checkpoint_without_an_entry_is_found_after_the_flag(gh, run, repo, variant):
    """An older ghstate on a teammate's machine (or a person pasting a body) made #9 after refs/ghstate/indexed
    was set: no entry names it. Before, its branch had "no open checkpoint"."""
    searching(gh, variant)
    seed(gh, 1, "other")  # indexed, with refs/ghstate/indexed
    assert branches.INDEXED in gh.tasks.refs
    seed(gh, 9, "feature/x", indexed=False)
    gh.advance(60)
    start = len(gh.operations())
    assert "GitHub issue #9 " in run("resume").stdout
    assert ops_since(gh, start) == ["BranchCheckpoint", "BranchSearch", "Checkpoint"]
    run("checkpoint", "--decision", "found")
    assert sorted(gh.issues) == [1, 9] and state(gh, 9).decisions == ("found",)


def unindexed_repository(gh, count: int, flag: bool) -> None:
    """``count`` open checkpoints no entry names (#2 the oldest, on branch u2), one indexed first (#1) when
    ``flag`` (a repository that ran the index, refs/ghstate/indexed set), none at all otherwise (one that never
    ran it)."""
    if flag:
        seed(gh, 1, "indexed")
    for number in range(2, count + 2):
        seed(gh, number, f"u{number}", indexed=False)


@pytest.mark.parametrize("flag", [True, False], ids=["after-the-flag", "never-indexed"])
def test_a_thousand_checkpoints_the_index_does_not_hold_cost_the_same_as_ten(gh, run, repo, flag):
    """1,000 checkpoints made after the flag (or in a repository that never ran the index): the oldest one's
    branch in 3 requests, a branch with none in 2, as with 10. Before: none found (after the flag), or 102 and
    101 requests (never indexed)."""
    counts = {}
    for count in (10, 1_000):
        gh.issues.clear()
        gh.tasks.refs.clear()
        unindexed_repository(gh, count, flag)
        counts[count] = []
        for branch, code in (("u2", 0), (f"u{count + 1}", 0), ("none-here", 1)):
            git(repo, "checkout", "-q", "-B", branch)
            start = len(gh.operations())
            result = run("resume", "--format", "json", code=code)
            if code == 0:
                assert json.loads(result.stdout)["meta"]["branch"] == branch
            counts[count].append(ops_since(gh, start))
    found, none = ["BranchCheckpoint", "BranchSearch", "Checkpoint"], ["BranchCheckpoint", "BranchSearch"]
    assert counts[10] == counts[1_000] == [found, found, none]


def test_what_a_lagging_search_misses_is_only_seconds_old_and_ghstates_own_are_in_the_index(gh, run, repo):
    gh.search_lag = 30
    git(repo, "checkout", "-q", "-b", "feature/new")
    run("checkpoint", "--phase", "Phase 1: new", "--resume", "Phase 1")  # ghstate's own: in the index at once
    assert "GitHub issue #1 " in run("resume").stdout
    gh.add_issue(2, form_body("feature/form"), title="Checkpoint: feature/form")
    git(repo, "checkout", "-q", "-b", "feature/form")
    assert "no open checkpoint for branch feature/form" in run("resume", code=1).stderr  # seconds old
    gh.advance(31)
    assert "GitHub issue #2 " in run("resume").stdout


def test_a_search_github_refuses_falls_back_to_looking_through_the_open_checkpoints(gh, run):
    seed(gh, 7, "feature/x", indexed=False)
    gh.fail_op("BranchSearch", type="FORBIDDEN", message="search is disabled on this instance")
    result = run("resume")
    assert "GitHub issue #7 " in result.stdout
    assert "GitHub's issue search could not look for branch feature/x's checkpoint" in result.stderr
    assert "OpenCheckpoints" in gh.operations()


@pytest.mark.parametrize("variant", ["default", "words-anywhere"])
def test_more_issues_naming_a_branchs_words_than_a_search_reads_never_answer_none(gh, run, repo, variant):
    """Branch `fix` while ten newer checkpoints are on `fix/…` (the phrase "branch fix" is in each
    of their markers): none of the searched ones is its, and the search says there are more: looked through."""
    searching(gh, variant)
    seed(gh, 1, "fix", indexed=False)
    for number in range(2, 2 + 2 * branches.SEARCHED):
        seed(gh, number, f"fix/{number}", indexed=False)
    git(repo, "checkout", "-q", "-b", "fix")
    result = run("resume", "--format", "json")
    assert json.loads(result.stdout)["meta"]["branch"] == "fix" and "OpenCheckpoints" in gh.operations()
    run("checkpoint", "--risk", "no second one")
    assert len(gh.issues) == 1 + 2 * branches.SEARCHED and state(gh, 1).risks == ("no second one",)


@pytest.mark.parametrize("made", ["form", "older ghstate"])
def test_a_closed_checkpoint_in_the_index_never_hides_an_open_one_search_finds(gh, run, repo, made):
    """Finding 4 of issue 58: the branch's entry names a closed checkpoint (#7); an open one for the branch was made
    since with the issue form, or by an older ghstate (#8, no entry). The lookup returned none without searching:
    ``resume`` said the branch's checkpoint closed, and the next write made a duplicate. It is found, written to and
    indexed by that write."""
    seed(gh, 7, "feature/x")
    gh.tasks.close(7)
    if made == "form":
        gh.add_issue(8, form_body("feature/x"), title="Checkpoint: made by a person")
    else:
        seed(gh, 8, "feature/x", indexed=False)
    gh.advance(60)  # (a lagging search index has caught up)
    start = len(gh.operations())
    result = run("resume")
    assert "GitHub issue #8 " in result.stdout and "closed" not in result.stderr
    assert ops_since(gh, start) == ["BranchCheckpoint", "Checkpoint", "BranchSearch", "Checkpoint"]
    out = run("checkpoint", "--risk", "on the open one").stdout
    assert not out.startswith("Created") and sorted(gh.issues) == [7, 8]
    assert state(gh, 8).risks == ("on the open one",) and gh.tasks.branch_index() == {"feature%2Fx": 8}
