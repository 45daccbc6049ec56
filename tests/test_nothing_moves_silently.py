"""Nothing moves silently (issue 34): a write by number from another branch leaves the checkpoint's branch as
it is unless ``--move``; a write by number to an issue that is no checkpoint is refused unless ``--adopt``;
a broken marker is refused by ``checkpoint --file`` as lint refuses it, and a branch's checkpoint whose
marker a person broke is still found by its label and title. On both stores where it applies."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE, git

from ghstate.core import chain
from ghstate.core.parse import parse


@pytest.fixture(params=["local", "github"])
def store(request, repo, monkeypatch):
    """The store a test writes to: the local one, or the fake GitHub (its ``gh``)."""
    if request.param == "github":
        gh = request.getfixturevalue("gh")
        from ghstate.core.chain import TREE_FILES

        gh.tasks.add_tree(TREE_FILES)
        return gh
    monkeypatch.setenv("GHSTATE_STORE", "local")
    return None


def marker_of(repo, store, number=1) -> dict:
    local = repo / ".git" / "ghstate" / f"{number}.md"
    text = store.issues[number]["body"] if store is not None else local.read_text()
    body = chain.split(text)[0]
    return json.loads(body.split("\n", 1)[0].removeprefix("<!-- ghstate:v1 ").removesuffix(" -->"))


def test_a_write_by_number_from_another_branch_leaves_the_checkpoint_where_it_is(store, repo, run):
    """Found by a newcomer: ``checkpoint 1 --risk x`` from another branch moved checkpoint 1 to that branch,
    and ``resume`` on its own branch then found nothing."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    git(repo, "checkout", "-q", "-b", "other")
    result = run("checkpoint", "1", "--risk", "from another branch")
    label = "#1" if store is not None else "local #1"  # as every other line names it
    assert f"Warning: {label} is the checkpoint of branch feature/x: this write left its branch and commit as they " \
           "were" in result.stderr
    assert marker_of(repo, store)["branch"] == "feature/x"
    git(repo, "checkout", "-q", "feature/x")
    assert "from another branch" in json.loads(run("resume", "--format", "json").stdout)["risks"]
    git(repo, "checkout", "-q", "other")
    moved = run("checkpoint", "1", "--risk", "moved", "--move")
    assert f"{label} was the checkpoint of branch feature/x: it is branch other's now (--move)" in moved.stderr
    assert marker_of(repo, store)["branch"] == "other"
    assert "moved" in json.loads(run("resume", "--format", "json").stdout)["risks"]


def test_move_and_adopt_name_an_issue(repo, run):
    result = run("checkpoint", "--risk", "x", "--move", code=2)
    assert "give it" in result.stderr and "--move" in result.stderr


def test_a_write_by_number_to_an_issue_that_is_no_checkpoint_is_refused_unless_adopted(gh, run):
    """Found by a newcomer: ``checkpoint 11 --risk x`` on a bug report turned it into a checkpoint (marker and
    section added, no label, no warning): a mistyped number edited an unrelated issue."""
    gh.add_issue(11, "The parser crashes on empty input.\n\nSteps: run it on an empty file.", title="Crash",
                 labels=("bug",))
    before = gh.issues[11]["body"]
    result = run("checkpoint", "11", "--risk", "x", code=1)
    assert result.stderr.splitlines() == [
        "Error: #11 is not a checkpoint (no 'ghstate' label, no ghstate marker), so nothing was written: to make "
        "it one, run the same command with --adopt"]
    assert gh.issues[11]["body"] == before and len(gh.history[11]) == 1
    run("checkpoint", "11", "--risk", "x", "--adopt")
    issue = gh.issues[11]
    assert {x["name"] for x in issue["labels"]} == {"bug", "ghstate"}
    cp = parse(chain.split(issue["body"])[0]).checkpoint
    assert "x" in cp.risks and "The parser crashes on empty input." in issue["body"]
    run("checkpoint", "11", "--risk", "y")  # a checkpoint now: no --adopt needed


def test_adopt_gives_back_the_label_a_person_took_off_a_checkpoint(gh, run):
    """A checkpoint (its marker there) whose label a person removed is written by number as it is; with
    ``--adopt`` the write also labels it again, so that branch lookups and ``list`` find it. Fails if
    ``--adopt`` labels only an issue with neither label nor marker (as it did)."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    gh.issues[1]["labels"] = []
    run("checkpoint", "1", "--risk", "unlabelled")
    assert gh.issues[1]["labels"] == []
    run("checkpoint", "1", "--risk", "labelled again", "--adopt")
    assert [x["name"] for x in gh.issues[1]["labels"]] == ["ghstate"]


def test_an_issue_form_checkpoint_needs_no_adopting(gh, run):
    gh.add_issue(12, "### Goal\n\nShip it\n\n### Progress\n\n- [ ] Phase 1: a\n", title="From the form")
    run("checkpoint", "12", "--done", "1")


def test_a_file_whose_marker_is_broken_is_refused_as_lint_refuses_it(store, repo, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    broken = '<!-- ghstate:v1 {"revision": 1, "branch": "feature/x",} -->\n' + SAMPLE
    result = run("checkpoint", "1", "--file", "-", input=broken, code=1)
    assert result.stderr.splitlines() == [
        "Error: standard input, line 1: the ghstate marker is not valid JSON (GS007); fix it, or take the line "
        "out (the checkpoint keeps its own)"]
    assert run("lint", "-", input=broken, code=1).stdout.count("GS007") == 1


def test_a_branch_checkpoint_whose_marker_a_person_broke_is_still_found_by_its_label_and_title(store, repo, run):
    """Found by a newcomer: a marker broken by hand hid the branch's checkpoint (``resume`` found none, and
    the next write was refused as empty)."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    if store is not None:
        text = store.issues[1]["body"]
        store.edit(1, text.replace('{"revision":1', '{"revision":1,,', 1))
    else:
        path = repo / ".git" / "ghstate" / "1.md"
        path.write_text(path.read_text().replace('{"revision":1', '{"revision":1,,', 1))
    assert "Phase 2" in run("resume").stdout
    run("checkpoint", "--risk", "still found")
    assert "still found" in json.loads(run("resume", "--format", "json").stdout)["risks"]


def body_of(repo, store, number=1) -> str:
    """The body as a reader sees it (the chain's key left out)."""
    local = repo / ".git" / "ghstate" / f"{number}.md"
    return chain.split(store.issues[number]["body"] if store is not None else local.read_text())[0]


@pytest.mark.parametrize("marker", [False, True])
def test_a_file_that_lacks_an_item_the_checkpoint_holds_says_it_was_kept(store, repo, run, tmp_path, marker):
    """Finding 14 of issue 58: a --file without ghstate's marker holds the risks section with one of the
    checkpoint's two risks, and nothing else: it answered "No changes: … up to date" and nothing more. What it
    was made from is a guess (the revision it matches best), and the risk it lacks was kept without a word, as a
    person's page without its marker line says it. It is said, with how to remove it. A file made from the
    checkpoint (its marker) says what it was made from: a risk written after it is no removal."""
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "r", "--risk", "risk A")
    made = body_of(repo, store)  # the body at revision 1: its marker says what the file was made from
    run("checkpoint", "1", "--risk", "risk B")
    draft = tmp_path / "draft.md"
    draft.write_text(made if marker else "## Remaining risks\n- risk A\n")
    result = run("checkpoint", "1", "--file", str(draft))
    assert "No changes" in result.stdout and "risk B" in json.loads(run("show", "1", "--json").stdout)["risks"]
    said = ("the file has no digests of the checkpoint it was made from, and lacks risk 'risk B', which the "
            "checkpoint holds: kept, as the file may have been made before it was written (--force writes the "
            "file's sections as they are)")
    assert (said in result.stderr) != marker, result.stderr
    forced = run("checkpoint", "1", "--file", str(draft), "--force")
    assert "--force removed what the file does not hold: risk 'risk B'" in forced.stderr
