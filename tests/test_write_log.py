"""The write log on GitHub as GitHub really is: each scenario of issue 26 against the fake GitHub, in every
variant of GitHub's behaviour the fake offers for what GitHub does not document."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLE
from github_fake import FakeGitHub

from ghstate.core.parse import parse
from ghstate.github import history

TOKEN = "ghp_" + "T0k3n" * 8


@pytest.fixture
def sleeps(monkeypatch):
    waited: list[float] = []
    monkeypatch.setattr("ghstate.github.transport._sleep", waited.append)
    return waited


@pytest.fixture
def gh(isolated, repo, monkeypatch, sleeps):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    fake = FakeGitHub(isolated)
    yield fake
    assert fake.problems() == [], "requests that GitHub's API description does not allow"


def raw(gh, number=1) -> str:
    return gh.issues[number]["body"]


def resumed(run, number=1) -> dict:
    return json.loads(run("resume", str(number), "--format", "json").stdout)


def test_a_decision_a_person_deletes_keeping_the_marker_stays_deleted(gh, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", "to be deleted")
    run("checkpoint", "1", "--risk", "a risk")
    gh.edit(1, raw(gh).replace("- to be deleted\n", ""))
    assert "to be deleted" not in resumed(run)["decisions"]
    run("checkpoint", "1", "--risk", "another")
    assert "to be deleted" not in parse(history.split(raw(gh))[0]).checkpoint.decisions


def test_a_decision_a_person_deletes_with_the_marker_line_stays_deleted(gh, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", "to be deleted")
    run("checkpoint", "1", "--risk", "a risk")
    body = re.sub(r"<!-- ghstate:v1 .*?-->\r?\n", "", raw(gh), count=1, flags=re.S)
    gh.edit(1, body.replace("- to be deleted\n", ""))
    state = resumed(run)
    assert "to be deleted" not in state["decisions"] and "a risk" in state["risks"]
    run("checkpoint", "1", "--risk", "another")
    cp = parse(history.split(raw(gh))[0]).checkpoint
    assert "to be deleted" not in cp.decisions and {"a risk", "another"} <= set(cp.risks)


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf as the web UI sends"])
def test_what_the_last_write_added_and_a_person_deleted_stays_deleted(gh, run, crlf):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", "to be deleted")
    text = raw(gh).replace("- to be deleted\n", "")
    gh.edit(1, text.replace("\n", "\r\n") if crlf else text)
    assert "to be deleted" not in resumed(run)["decisions"]
    run("checkpoint", "1", "--risk", "another")
    assert "to be deleted" not in parse(history.split(raw(gh))[0]).checkpoint.decisions


# ---------------------------------------------------------------------- what GitHub leaves open


def concurrent_write(gh, seen: list[str], number=1, **edits) -> str:
    """The body another ghstate (the same token) writes, having read #``number`` when its history was
    ``seen``: its change on the newest of those versions, its entry in its marker, its claims counted on
    them."""
    from bodies import ENV
    from memstore import MemoryEditStore

    from ghstate.core.edits import Edits
    from ghstate.core.intent import Intent, WriteSpec
    from ghstate.services.writer import Writer

    store = MemoryEditStore()
    store.add_issue(number, seen[-1])
    store.history[number] = list(seen)
    store.editors[number] = ["octocat"] * len(seen)
    Writer(store, env=ENV).write(WriteSpec(Intent(edits=Edits(**edits)), number=number))
    return store.raw[number]


@pytest.mark.parametrize("coalesce", [None, 3600], ids=["every save a version", "quick saves of one editor merged"])
def test_a_reported_write_a_merged_save_lost_is_applied_again_and_said_once(gh, run, coalesce):
    """Two agents share one token: the second, built on a read from before the first's write, saves right
    after it. Where GitHub keeps the two saves as one version the first write is gone from the history
    with its text; this machine remembers it, applies it again and says so once."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--risk", "settled")
    seen = list(gh.history[1])  # what the other agent read, before the first write
    gh.coalesce_seconds = coalesce
    run("checkpoint", "1", "--decision", "reported A")
    gh.edit(1, concurrent_write(gh, seen, decisions=("from B",)), login="octocat")
    result = run("resume", "1", "--format", "json")
    state = json.loads(result.stdout)
    assert {"reported A", "from B"} <= set(state["decisions"])
    if coalesce:
        assert "missing from its edit history" in result.stderr and "+1 decision" in result.stderr
    run("checkpoint", "1", "--risk", "next")
    body = parse(history.split(raw(gh))[0]).checkpoint
    assert {"reported A", "from B"} <= set(body.decisions) and "next" in body.risks
    assert "missing" not in run("resume", "1").stderr  # said once; written back by the next write


@pytest.mark.parametrize("lag", [1, 2])
def test_a_history_behind_its_body_is_read_again_and_never_claimed_past(gh, run, lag):
    """GitHub's answer holds the body and its edit history; when the history does not show the body yet,
    ghstate reads again (at most HISTORY_READS times) and, while it cannot check, claims nothing more."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--risk", "first")
    gh.history_lag = lag
    result = run("checkpoint", "1", "--risk", "second")
    assert "Updated checkpoint #1" in result.stdout
    state = json.loads(run("resume", "1", "--format", "json").stdout)
    assert {"first", "second"} <= set(state["risks"])
    log = parse(history.split(raw(gh))[0]).checkpoint.meta.log
    assert log.seen + log.own <= len(gh.history[1])


def test_a_history_that_never_shows_its_body_is_said_and_nothing_claimed_past_it(gh, run):
    """A write dropped by a person's stale save is in the history; while the history does not show its
    body, what it holds cannot be checked: that is said (never guessed), and the write is shown once it
    can be read."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    page = raw(gh)
    run("checkpoint", "1", "--decision", "dropped by a stale page")
    gh.edit(1, page.replace("- should --fuzzy", "- asked on an old page\n- should --fuzzy"))
    gh.history_lag = 99
    result = run("resume", "1", "--format", "json")
    assert "did not hold still" in result.stderr
    written = run("checkpoint", "1", "--risk", "written meanwhile")
    assert "Updated checkpoint #1" in written.stdout
    gh.history_lag = 0
    state = json.loads(run("resume", "1", "--format", "json").stdout)
    assert "dropped by a stale page" in state["decisions"] and "written meanwhile" in state["risks"]
    assert "asked on an old page" in state["questions"]


@pytest.mark.parametrize("cursors", ["offset", "version"])
def test_an_unmerged_write_far_back_is_found_while_versions_land_between_pages(gh, run, cursors):
    """A write, then a person's save from a page opened before it (it drops the write), then more than a
    hundred other saves: reading back to the write takes pages, and a save landing between two pages
    moves every position of a count-from-the-newest cursor. The write is still found, in its place."""
    gh.cursors = cursors
    run("checkpoint", "--file", "-", input=SAMPLE)
    page = raw(gh)
    run("checkpoint", "1", "--decision", "far back")
    stale = page.replace("- should --fuzzy accept a threshold?", "- asked on an old page")
    for i in range(105):
        gh.edit(1, stale + f"\n<!-- note {i} -->\n")
    def two_land():  # between two pages of the history: a count from the newest moves by two
        gh.edit(1, stale + "\n<!-- landed between pages -->\n")
        gh.edit(1, stale + "\n<!-- and another -->\n")

    gh.on_op("History", two_land, skip=1)
    state = json.loads(run("resume", "1", "--format", "json").stdout)
    assert "far back" in state["decisions"] and "asked on an old page" in state["questions"]
    run("checkpoint", "1", "--risk", "after")
    body = parse(history.split(raw(gh))[0]).checkpoint
    assert "far back" in body.decisions and body.meta.log.seen <= len(gh.history[1])


def test_push_drops_a_kept_write_that_landed_and_never_undoes_a_later_one(gh, run):
    """GitHub took the write but answered a timeout, and whether it landed could not be told then: it
    was kept. A later write set the resume point; push finds the kept write in the history (it carries
    its write id) and makes nothing again."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    gh.fail_op("UpdateCheckpoint", status=200, after=True,
               message="Something went wrong while executing your query. This may be the result of a timeout, "
                       "or it could be a GitHub bug. Please include `ABCD:1234` when reporting this issue.")
    gh.on_op("UpdateCheckpoint", lambda: gh.fail_op("Checkpoint", 502, times=20))  # landed? cannot be told
    kept = run("checkpoint", "1", "--resume-at", "earlier", code=1)
    assert "kept locally" in kept.stderr
    gh.faults.clear()
    run("checkpoint", "1", "--resume-at", "later")
    pushed = run("push")
    assert "had landed" in pushed.stderr
    assert json.loads(run("resume", "1", "--format", "json").stdout)["resume"] == "later"


@pytest.fixture
def minutes(monkeypatch):
    """The writers' clock, a minute further at each write (kept and later writes are minutes apart)."""
    from datetime import datetime, timedelta, timezone

    at = [datetime(2026, 11, 25, 9, 0, tzinfo=timezone.utc)]

    def now() -> str:
        at[0] += timedelta(minutes=1)
        return at[0].strftime("%Y-%m-%dT%H:%M:%SZ")

    monkeypatch.setattr("ghstate.services.writer.utc_now", now)


def test_push_merges_a_kept_write_under_what_later_writes_set(gh, run, minutes):
    run("checkpoint", "--file", "-", input=SAMPLE)
    gh.fail_op("UpdateCheckpoint", 502, times=20)
    run("checkpoint", "1", "--resume-at", "earlier", "--decision", "kept one", code=1)
    gh.faults.clear()
    run("checkpoint", "1", "--resume-at", "later")
    run("push")
    state = json.loads(run("resume", "1", "--format", "json").stdout)
    assert state["resume"] == "later" and "kept one" in state["decisions"]


def test_a_logged_write_deleted_from_the_history_is_named_and_its_number_not_given_again(gh, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    page = raw(gh)
    run("checkpoint", "1", "--decision", "deleted later")  # revision 2
    gh.edit(1, page.replace("- should --fuzzy", "- a person's stale save\n- should --fuzzy"))
    gh.delete_revision(1, 1)  # the write's version, before anything merged it
    result = run("resume", "1", "--format", "json")
    assert "deleted from the edit history" in result.stderr and "octocat" in result.stderr
    run("checkpoint", "1", "--risk", "next")
    body = parse(history.split(raw(gh))[0]).checkpoint
    assert body.meta.revision > 2  # 2 may have been the deleted write's: never given again
    assert "deleted later" not in body.decisions  # its text is gone: it is named, not guessed


def big_body(chars: int) -> str:
    """A checkpoint body of about ``chars`` characters, most of it in its risks."""
    risks = "".join(f"- risk {i}: " + "x" * 80 + "\n" for i in range(chars // 92))
    return SAMPLE.replace("## Remaining risks\n", "## Remaining risks\n" + risks)


def test_the_bound_counts_the_body_as_stored_with_its_log_entry(gh, run):
    """Found from outside: a 58,000-character checkpoint was stored as 62,471 characters (the write's entry
    was added after the 60,000 were checked). The entry that does not fit leaves out its intent, said."""
    run("checkpoint", "--file", "-", input=SAMPLE)
    result = run("checkpoint", "1", "--file", "-", input=big_body(58_000))
    assert len(raw(gh)) <= 60_000
    assert "leaves out what it changed" in result.stderr
    assert len(json.loads(run("resume", "1", "--format", "json").stdout)["risks"]) > 600


def test_a_body_over_the_bound_is_refused_before_anything_is_written_on_every_store(repo, run):
    """The local store has the bound too (its checkpoints are issues-to-be): refused, largest sections
    named, nothing written."""
    result = run("checkpoint", "--store", "local", "--file", "-", input=big_body(64_000), code=1)
    assert result.stderr.startswith("Error: the checkpoint would be") and "Remaining risks" in result.stderr
    assert not list((repo / ".ghstate").glob("*.md"))


# ------------------------------------------------------------------------------------- pacing


def test_thirty_agents_writing_at_once_stay_under_the_secondary_limit(tmp_path):
    """GitHub allows about 80 content-creating requests a minute to one account: thirty agents on one
    machine sharing a token, all writing in the same instant, and writing again as contended writes do
    (200 writes in all), are spaced out (each waits for its turn under one file lock): at most 80 in any
    minute."""
    from ghstate.local.pace import Pacer

    clock = [1000.0]
    sent: list[float] = []

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    for _ in range(200):  # each a write of one of the agents' processes, all wanting to go at once
        clock[0] = 1000.0 if not sent else max(1000.0, clock[0] - 0.001)  # they all arrive at once
        Pacer(tmp_path, "https://api.github.com octo/hello", clock=lambda: clock[0], sleep=sleep).before_write()
        sent.append(clock[0])
    assert max(sum(1 for t in sent if start <= t < start + 60) for start in sent) <= 80
    assert sent == sorted(sent) and all(b - a >= 0.79 for a, b in zip(sent, sent[1:], strict=False))


def test_a_write_waits_for_its_turn_and_a_contended_one_backs_off(gh, run):
    """Every write to GitHub goes through this machine's pacing; a write that must be written again
    (a person saved in between) waits a jittered moment first."""
    from conftest import WAITS

    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--risk", "first")
    assert WAITS == [pytest.approx(0.8)]  # two writes in one instant (the clock stands still): the second waited
    WAITS.clear()
    gh.on_op("UpdateCheckpoint", lambda: gh.edit(1, raw(gh).replace("- first", "- first\n- a person's")))
    run("checkpoint", "1", "--risk", "second")
    # its turn, the backoff before the write built on the person's version, its turn again
    assert len(WAITS) == 3 and WAITS[0] == WAITS[2] == pytest.approx(0.8) and 0.25 <= WAITS[1] <= 0.75
