"""The write log on a chain, as GitHub really is: each case of issue 33 against the fake GitHub, each writer on
a machine of its own (its own ``.ghstate/``), a reader on a machine that never wrote, in every variant of
GitHub's behaviour the fake offers for what GitHub does not document.

Every case was a lost write or an undone edit while the log was the body's edit history: a landed update
whose answer was lost, resent over a later writer's; ``push`` after an outage overwriting a person's later
edit, and ordering writes by the writers' clocks; quick saves by one editor kept as one version; a history
index behind its body; a person's save without the marker line from a page opened earlier; a write near
the size bound overwritten by a stale page; a version landing between a reader's two requests; a deleted
revision.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from conftest import SAMPLE
from github_fake import NOT_ACCESSIBLE, FakeGitHub
from github_fake_tasks import VARIANTS

from ghstate.core import chain
from ghstate.core.chain import TREE_FILES
from ghstate.core.parse import parse

TOKEN = "ghp_" + "T0k3n" * 8
# What GitHub leaves open: the Git ref variants (tests/github_fake_tasks.py), and the edit history's
GITHUB = [*((v.name, {"variant": v}) for v in VARIANTS),
          ("quick saves of one editor merged", {"coalesce_seconds": 3600}),
          ("an index behind its body, its count included", {"history_lag": 2})]


@pytest.fixture(params=[how for _, how in GITHUB], ids=[name for name, _ in GITHUB])
def gh(request, isolated, repo, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    fake.tasks.add_tree(TREE_FILES)
    how = request.param
    if "variant" in how:
        fake.tasks.use(how["variant"])
    fake.coalesce_seconds = how.get("coalesce_seconds")
    fake.history_lag = how.get("history_lag", 0)
    yield fake
    assert fake.problems() == [], "requests that GitHub's API description does not allow"


@pytest.fixture
def on(run, tmp_path):
    """``on("a", "checkpoint", …)``: ghstate run on machine "a" (a ``.ghstate/`` and a cache folder of its own:
    the machine's lock and pacing are its own)."""
    def run_on(machine: str, *args: str, **kwargs):
        env = {**kwargs.pop("env", {}), "GHSTATE_DIR": str(tmp_path / "machines" / machine),
               "XDG_CACHE_HOME": str(tmp_path / "caches" / machine)}
        return run(*args, env=env, **kwargs)

    return run_on


def raw(gh, number=1) -> str:
    return gh.issues[number]["body"]


def body(gh, number=1):
    return parse(chain.split(raw(gh, number))[0]).checkpoint


def fresh_reader(on, number=1) -> dict:
    """What ``resume`` says on a machine that never wrote."""
    return json.loads(on("never-wrote", "resume", str(number), "--format", "json").stdout)


def elsewhere(monkeypatch, tmp_path, machine: str, **edits) -> None:
    """Another machine's write, in process (for a hook that runs while a request of ours is answered)."""
    from ghstate.core.edits import Edits
    from ghstate.core.intent import Intent, WriteSpec
    from ghstate.services.app import build_app

    with monkeypatch.context() as patch:
        patch.setenv("GHSTATE_DIR", str(tmp_path / "machines" / machine))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "caches" / machine))
        build_app(store="github").writer().write(WriteSpec(Intent(edits=Edits(**edits)), number=1))


# ------------------------------------------------------------------------------ a lost answer


def test_a_landed_update_whose_answer_was_lost_is_never_applied_again(gh, on, monkeypatch, tmp_path):
    """GitHub applies A's write and answers 502. Before A looks, B sets the resume point and a person deletes
    a decision. A finds its commit on the chain and applies nothing again: B's resume point and the
    person's deletion stand. (Resent as a body, A's write set the resume point back and brought the
    decision back.)"""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--decision", "to be deleted")

    def meanwhile() -> None:
        elsewhere(monkeypatch, tmp_path, "b", resume="from B, later")
        gh.edit(1, raw(gh).replace("- to be deleted\n", ""), login="mona")

    gh.fail_op("AppendCheckpoint", 502, after=True)
    gh.on_op("Checkpoint", meanwhile, skip=1)  # A's read, then its look at what landed
    result = on("a", "checkpoint", "1", "--resume-at", "from A")
    assert "Updated checkpoint #1" in result.stdout
    writes = [e.get("write") for c in gh.tasks.chain(1) for e in c["entries"] if e.get("write")]
    assert len(writes) == len(set(writes)), "a write was applied twice"
    state = fresh_reader(on)
    assert state["resume"] == "from B, later" and "to be deleted" not in state["decisions"]
    on("c", "checkpoint", "1", "--risk", "next")
    assert body(gh).resume == "from B, later" and "to be deleted" not in body(gh).decisions


def test_of_two_writers_that_read_one_head_one_moves_it_and_the_other_builds_on_it(gh, on, monkeypatch, tmp_path):
    """A has read the head and made its commit; B's write lands first. A's move names the head it read: it is
    refused, A reads B's head and writes again on it. Both writes are on the chain, one after the other."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--risk", "the chain's first")
    gh.on("POST", r"^/git/commits$", lambda: elsewhere(monkeypatch, tmp_path, "b", decisions=("from B",)))
    on("a", "checkpoint", "1", "--decision", "from A")
    commits = gh.tasks.chain(1)
    assert [c["entries"][-1].get("changes") for c in commits][-2:] == [["+1 decision"], ["+1 decision"]]
    assert [e.get("revision") for c in commits for e in c["entries"]] == [1, 2, 3, 4]
    assert {"from A", "from B"} <= set(fresh_reader(on)["decisions"])
    assert {"from A", "from B"} <= set(body(gh).decisions)


@pytest.mark.parametrize("request_of_the_write", ["the read", "the commit", "the move and the mirror"])
def test_a_lost_answer_on_each_request_of_a_write_loses_nothing_and_doubles_nothing(gh, on, request_of_the_write):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    fault = {"the read": ("POST", r"^/graphql Checkpoint$"), "the commit": ("POST", r"^/git/commits$"),
             "the move and the mirror": ("POST", r"^/graphql AppendCheckpoint$")}[request_of_the_write]
    gh.fail(*fault, None, after=True)
    on("a", "checkpoint", "1", "--decision", "once")
    assert fresh_reader(on)["decisions"].count("once") == 1
    assert [e.get("changes") for c in gh.tasks.chain(1) for e in c["entries"]][-1] == ["+1 decision"]
    assert body(gh).decisions.count("once") == 1


# ------------------------------------------------------------------------------ push after an outage


def test_push_rebases_a_kept_write_what_came_after_its_base_stands_and_its_value_is_beside(gh, on):
    """A's write is kept while GitHub is out of reach. Meanwhile a person sets the resume point on github.com
    and B adds a decision. ``push`` puts A's write on the head: the person's resume point stands, A's is kept
    beside it and said, B's decision and A's own risk are both there. (It overwrote the person's edit.)"""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--risk", "first")
    gh.fail("*", r".*AppendCheckpoint|/git/commits", None, times=99)
    kept = on("a", "checkpoint", "1", "--resume-at", "A's, kept", "--risk", "A's risk", code=1)
    assert "kept locally" in kept.stderr
    gh.faults.clear()
    gh.edit(1, raw(gh).replace("Start at Phase 2. Re-read parser module and tests before editing matcher code.",
                               "The person's resume point"), login="mona")
    on("b", "checkpoint", "1", "--decision", "B's, meanwhile")
    pushed = on("a", "push")
    assert "Published" in pushed.stdout and "Resume instruction" in pushed.stderr
    state = fresh_reader(on)
    assert state["resume"] == "The person's resume point"
    assert any(x["heading"] == "Resume instruction (concurrent edit)" and "A's, kept" in x["body"]
               for x in state["extra"])
    assert "B's, meanwhile" in state["decisions"] and {"first", "A's risk"} <= set(state["risks"])


def test_chain_order_decides_never_a_writers_clock(gh, on, monkeypatch):
    """A machine whose clock is 10 minutes slow writes after another: its write is the later one (it was
    treated as older and replaced)."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("b", "checkpoint", "1", "--resume-at", "B, first")
    slow = (datetime.now(timezone.utc) - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with monkeypatch.context() as patch:
        patch.setattr("ghstate.services.writer.utc_now", lambda: slow)
        on("a", "checkpoint", "1", "--resume-at", "A, later with a slow clock")
    assert fresh_reader(on)["resume"] == "A, later with a slow clock"
    on("c", "checkpoint", "1", "--risk", "next")
    assert body(gh).resume == "A, later with a slow clock"


def test_a_kept_write_that_landed_after_all_is_not_made_again(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    gh.fail_op("AppendCheckpoint", None, after=True)  # it lands; the answer is lost …
    gh.on_op("AppendCheckpoint", lambda: gh.fail_op("Checkpoint", None, times=99))  # … and that cannot be told
    assert "kept locally" in on("a", "checkpoint", "1", "--decision", "landed anyway", code=1).stderr
    gh.faults.clear()
    on("b", "checkpoint", "1", "--risk", "later")
    pushed = on("a", "push")
    assert "it had landed" in pushed.stderr
    assert fresh_reader(on)["decisions"].count("landed anyway") == 1


# ------------------------------------------------------------------------------ one editor, many saves


def test_writers_sharing_a_token_and_a_person_lose_nothing_whatever_github_keeps(gh, on, monkeypatch, tmp_path):
    """Agents sharing one token are one editor: GitHub may keep their quick saves as one version. Every write
    reported is on the chain, and a person's save made while one of them was being written is merged."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    gh.on_op("AppendCheckpoint", lambda: gh.edit(1, raw(gh).replace(
        "## Open questions\n", "## Open questions\n- asked by mona\n"), login="mona"), skip=2)
    for k, machine in enumerate("abcabc"):
        on(machine, "checkpoint", "1", "--decision", f"agent {k}")
    state = fresh_reader(on)
    assert {f"agent {k}" for k in range(6)} <= set(state["decisions"]) and "asked by mona" in state["questions"]
    assert {f"agent {k}" for k in range(6)} <= set(body(gh).decisions) and "asked by mona" in body(gh).questions


def test_a_persons_save_between_a_writes_read_and_its_mirror_is_merged_as_theirs(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--risk", "before")
    gh.on_op("AppendCheckpoint", lambda: gh.edit(1, raw(gh).replace("- required flags, not positional\n", "")
                                                 .replace("## Open questions\n", "## Open questions\n- from mona\n"),
                                                 login="mona"))
    on("b", "checkpoint", "1", "--decision", "from B")
    state = fresh_reader(on)
    assert "from mona" in state["questions"] and "required flags, not positional" not in state["decisions"]
    assert "from B" in state["decisions"]
    edits = [e for c in gh.tasks.chain(1) for e in c["entries"] if e["event"] == "edit"]
    assert [e.get("author") for e in edits] == ["mona"]  # the person's edit is theirs on the log
    log = on("c", "log", "1").stdout
    assert "mona" in log


# ------------------------------------------------------------------------------ a person's pages


def test_a_save_without_the_marker_line_from_an_older_page_keeps_the_writes_since(gh, on):
    """The page was opened at revision 2; two writes landed; the person saves that page with the marker
    line taken out and a question added. Their question stands, and the two writes are still there (the
    newest of two equally close versions was taken as the page, and a write counted as held was lost)."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--risk", "r2")
    page = chain.split(raw(gh))[0]
    on("b", "checkpoint", "1", "--decision", "written after the page, one")
    on("c", "checkpoint", "1", "--decision", "written after the page, two")
    saved = re.sub(r"<!-- ghstate:v1 .*?-->\r?\n", "", page, count=1, flags=re.S)
    gh.edit(1, saved.replace("## Open questions\n", "## Open questions\n- asked on an old page\n"), login="mona")
    state = fresh_reader(on)
    assert {"written after the page, one", "written after the page, two"} <= set(state["decisions"])
    assert "asked on an old page" in state["questions"] and "r2" in state["risks"]
    on("a", "checkpoint", "1", "--risk", "next")
    cp = body(gh)
    assert {"written after the page, one", "written after the page, two"} <= set(cp.decisions)
    assert "asked on an old page" in cp.questions


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf as the web UI sends"])
def test_what_a_person_deletes_stays_deleted(gh, on, crlf):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--decision", "to be deleted")
    on("b", "checkpoint", "1", "--risk", "a risk")
    text = raw(gh).replace("- to be deleted\n", "")
    gh.edit(1, text.replace("\n", "\r\n") if crlf else text, login="mona")
    assert "to be deleted" not in fresh_reader(on)["decisions"]
    on("c", "checkpoint", "1", "--risk", "another")
    assert "to be deleted" not in body(gh).decisions and {"a risk", "another"} <= set(body(gh).risks)


def test_an_older_mirror_landing_after_a_newer_one_is_repaired_never_read_as_an_edit(gh, on):
    """One winner's mirror lands after a later winner's: the body is an older mirror, unedited. It is the
    head that readers read, and the next write repairs the body; nothing of either write is lost."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--decision", "first")
    older = raw(gh)
    on("b", "checkpoint", "1", "--decision", "second")
    gh.edit(1, older, login="octocat")  # the first's mirror, landing late
    state = fresh_reader(on)
    assert {"first", "second"} <= set(state["decisions"])
    assert not [e for c in gh.tasks.chain(1) for e in c["entries"] if e["event"] == "edit"]
    on("c", "checkpoint", "1", "--decision", "first")  # changes nothing: the body is repaired all the same
    assert {"first", "second"} <= set(body(gh).decisions)


# ------------------------------------------------------------------------------ the size bound, the history


def test_a_write_near_the_size_bound_survives_a_stale_page(gh, on):
    """Near 60,000 characters the old log's entry left out its change, and a stale page's save lost the
    write for good. On the chain the commit holds the whole checkpoint: the write survives the stale save."""
    big = SAMPLE.replace("## Remaining risks\n", "## Remaining risks\n" + "".join(
        f"- risk {i} " + "x" * 180 + "\n" for i in range(290)))
    on("a", "checkpoint", "--file", "-", input=big)
    stale = raw(gh)
    assert len(stale) > 55_000
    on("b", "checkpoint", "1", "--decision", "near the bound")
    gh.edit(1, stale.replace("## Open questions\n", "## Open questions\n- a stale page's question\n"), login="mona")
    state = fresh_reader(on)
    assert "near the bound" in state["decisions"] and "a stale page's question" in state["questions"]


def test_a_deleted_revision_makes_no_machine_forget_a_write(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--decision", "one")
    on("b", "checkpoint", "1", "--decision", "two")
    for index in range(1, len(gh.history[1]) - 1):  # every version but the first and the newest
        gh.delete_revision(1, index)
    assert {"one", "two"} <= set(fresh_reader(on)["decisions"])
    on("c", "checkpoint", "1", "--risk", "three")
    assert {"one", "two"} <= set(body(gh).decisions)


def test_a_write_landing_between_a_readers_two_requests_is_not_missed(gh, on, monkeypatch, tmp_path):
    """By branch, a reader lists the checkpoints, then reads the one it found when its body is not its head's
    mirror: a write landing between is in what it reads."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "--decision", "d1")
    gh.edit(1, raw(gh).replace("## Open questions\n", "## Open questions\n- by mona\n"), login="mona")
    gh.on_op("Checkpoint", lambda: elsewhere(monkeypatch, tmp_path, "b", decisions=("landed between",)))
    state = json.loads(on("never-wrote", "resume", "--format", "json").stdout)
    assert {"d1", "landed between"} <= set(state["decisions"]) and "by mona" in state["questions"]


# ------------------------------------------------------------------------------ checkpoints before chains


def test_a_checkpoint_of_the_edit_history_log_moves_on_its_first_write(gh, on):
    """A body an earlier ghstate wrote (its marker's log state and entry): read as it is, its chain begins
    at its next write from its state, revision numbers continued, and the old keys are gone."""
    from bodies import render_body

    cp = parse(SAMPLE).checkpoint.with_meta(revision=7, branch="feature/x", id="abc123abc123",
                                            unknown={"log": {"seen": 6, "own": 1, "applied": ["w"], "via": "edits"}})
    old = render_body(cp)
    old = old.replace("} -->", ',"entry":{"revision":7,"write":"w","body":"0"}} -->', 1)
    gh.add_issue(1, old, title="CLI refactor")
    assert fresh_reader(on)["meta"]["revision"] == 7
    on("a", "checkpoint", "1", "--risk", "first on the chain")
    [commit] = gh.tasks.chain(1)
    assert [e["revision"] for e in commit["entries"]] == [7, 8]
    marker = raw(gh).split("\n", 1)[0]
    assert '"log"' not in marker and '"entry"' not in marker and '"chain"' in marker
    assert "first on the chain" in fresh_reader(on)["risks"]


# ------------------------------------------------------------------------------ where refs cannot be written


def test_a_token_without_contents_write_still_writes_the_body_and_says_so_once(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    gh.tasks.deny_refs = True
    result = on("a", "checkpoint", "1", "--decision", "unprotected", "--risk", "also")
    said = [line for line in result.stderr.splitlines() if "not protected" in line]
    assert len(said) == 1 and "Contents: write" in said[0] and said[0].startswith("Warning: ")
    assert "unprotected" in body(gh).decisions and gh.tasks.refs == {}
    gh.tasks.deny_refs = False
    on("b", "checkpoint", "1", "--risk", "with the chain again")
    state = fresh_reader(on)
    assert "unprotected" in state["decisions"] and "with the chain again" in state["risks"]


def test_a_body_written_without_the_chain_is_merged_into_it_as_an_edit(gh, on):
    """A writer without Contents: write writes the body alone, naming the head it built on without the
    chain's digest: the next writer with the chain takes it in, nothing of either lost."""
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--risk", "on the chain")
    gh.tasks.deny_refs = True
    on("b", "checkpoint", "1", "--decision", "body only")
    gh.tasks.deny_refs = False
    on("c", "checkpoint", "1", "--question", "on the chain again")
    cp = body(gh)
    assert "body only" in cp.decisions and "on the chain" in cp.risks and "on the chain again" in cp.questions
    assert "body only" in fresh_reader(on)["decisions"]


def test_a_github_without_update_refs_still_writes_the_body(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    gh.fail_op("AppendCheckpoint", status=200, message="Field 'updateRefs' doesn't exist on type 'Mutation'")
    result = on("a", "checkpoint", "1", "--decision", "on an old server")
    assert "not protected" in result.stderr and "updateRefs" in result.stderr
    assert "on an old server" in body(gh).decisions


def test_a_token_that_cannot_read_refs_still_reads_the_body(gh, on):
    on("a", "checkpoint", "--file", "-", input=SAMPLE)
    on("a", "checkpoint", "1", "--decision", "d")
    gh.fail_op("Checkpoint", type="FORBIDDEN", message=NOT_ACCESSIBLE, field="head")
    result = on("never-wrote", "resume", "1", "--format", "json")
    assert "d" in json.loads(result.stdout)["decisions"] and "could not be read" in result.stderr
