"""A checkpoint outlives GitHub's absence (issue 45): what this machine last saw of it (the replica) stands in for
a GitHub that refuses connections, never answers, answers 5xx or asks for a longer wait than the command's
budget, with this machine's kept writes on top, said in words; kept writes go out with the next command that
reaches GitHub, first, in order, never twice. Each case failed before the replica and the fallback: the hook
printed nothing, ``resume`` exited 1, and a kept write stayed in ``pending/`` unsaid."""

from __future__ import annotations

import json
import os

import pytest
import requests
from conftest import store_of
from test_github_store import existing, gh, sleeps, state_of  # noqa: F401 - fixtures


class Refused(requests.exceptions.ConnectionError):
    def __init__(self, *args: object) -> None:
        super().__init__("HTTPSConnectionPool: Max retries exceeded (NewConnectionError: [Errno 111] Connection "
                         "refused)")


class Unanswered(requests.exceptions.ReadTimeout):
    """What a request to a GitHub that accepts the connection and never answers ends with: its read timeout."""

    def __init__(self, *args: object) -> None:
        super().__init__("HTTPSConnectionPool(host='api.github.com', port=443): Read timed out. (read timeout=3)")


def refused(gh) -> None:  # noqa: F811
    gh.fail("*", r".*", None, times=999, exception=Refused)


def unanswering(gh) -> None:  # noqa: F811
    gh.fail("*", r".*", None, times=999, exception=Unanswered)


def erroring(gh) -> None:  # noqa: F811
    gh.fail("*", r".*", 502, times=999, message="Server Error")


def rate_limited(gh) -> None:  # noqa: F811
    """Every request answered by a secondary rate limit asking for two minutes (agents sharing one token)."""
    from github_fake import SECONDARY_LIMIT

    gh.fail("*", r".*", 403, times=999, headers={"Retry-After": "120"}, message=SECONDARY_LIMIT)


OUTAGES = [refused, unanswering, erroring, rate_limited]


def hook(run, repo, source: str = "clear", session: str = "s-1") -> tuple[str, str]:
    data = {"session_id": session, "source": source, "cwd": str(repo), "hook_event_name": "SessionStart"}
    result = run("hook", "session-start", input=json.dumps(data))
    assert result.exit_code == 0
    out = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else ""
    return out, result.stderr


def seen_and_kept(gh, run, outage) -> None:  # noqa: F811
    """#7 read on this machine (revision 4, after one write), then GitHub goes away and a write is kept."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    run("checkpoint", "--decision", "seen on GitHub")
    assert "seen on GitHub" in run("resume").stdout
    outage(gh)
    kept = run("checkpoint", "--decision", "X, written while GitHub was away", code=1)
    assert "it is safe on this machine, and the next ghstate command that reaches GitHub sends it" in kept.stderr


def pending(repo) -> list:
    return sorted((store_of(repo) / "pending").glob("*.json"))


# ------------------------------------------------------------------------- resume without GitHub


@pytest.mark.parametrize("outage", OUTAGES)
def test_without_github_resume_the_hook_and_show_give_the_checkpoint_as_last_seen_with_kept_writes(
        gh, run, repo, outage, clock):  # noqa: F811
    seen_and_kept(gh, run, outage)
    said = "GitHub did not answer: #7 as this machine last saw it at "
    revision = "(revision 4), with 1 write of this machine not yet on GitHub."
    out = run("resume").stdout
    assert out.startswith(said) and revision in out.splitlines()[0]
    assert "seen on GitHub" in out and "X, written while GitHub was away" in out
    context, stderr = hook(run, repo)
    assert context.startswith(said) and revision in context.splitlines()[0], stderr
    assert "X, written while GitHub was away" in context and "Next phase: Phase 2" in context
    shown = run("show", "7").stdout
    assert shown.startswith(said) and "X, written while GitHub was away" in shown
    data = json.loads(run("resume", "7", "--format", "json").stdout)
    assert data["reading"]["github_answered"] is False and data["reading"]["revision"] == 4
    assert data["reading"]["kept_writes"] == 1 and "X, written while GitHub was away" in data["decisions"]
    assert "X, written while GitHub was away" in run("resume", "7", "--format", "markdown").stdout
    assert len(pending(repo)) == 1  # nothing was sent: GitHub did not answer


def test_a_checkpoint_never_seen_here_is_the_error_it_was(gh, run):  # noqa: F811
    existing(gh)
    refused(gh)
    result = run("resume", "7", code=1)
    assert result.stderr.startswith("Error: reading issue #7 of octo/hello failed: cannot reach https://api.github.com")
    assert "GitHub did not answer" not in result.stderr + result.stdout


@pytest.mark.parametrize("args", [("lint", "7"), ("log", "7")])
def test_a_command_that_does_not_say_where_its_state_comes_from_never_reads_the_copy(gh, run, args):  # noqa: F811
    existing(gh)
    run("resume", "7")
    refused(gh)
    result = run(*args, code=1)
    assert result.stderr.startswith("Error: reading issue #7 of octo/hello failed: cannot reach")


def test_github_answering_is_trusted_over_this_machines_copy(gh, run, repo):  # noqa: F811
    existing(gh)
    run("resume", "7")
    [copy] = (repo / ".git" / "ghstate" / "replica").glob("*.json")
    data = json.loads(copy.read_text())
    data["body"] = data["body"].replace("required flags, not positional", "a decision only the copy holds")
    copy.write_text(json.dumps(data))
    out = run("resume", "7").stdout
    assert "required flags, not positional" in out and "only the copy holds" not in out
    assert "did not answer" not in out


def test_a_broken_replica_file_is_set_aside_in_one_line(gh, run, repo):  # noqa: F811
    existing(gh)
    run("resume", "7")
    [copy] = (repo / ".git" / "ghstate" / "replica").glob("*.json")
    copy.write_text(copy.read_text()[:40])  # cut short
    refused(gh)
    result = run("resume", "7", code=1)
    lines = result.stderr.splitlines()
    assert [line for line in lines if "set aside" in line] == [lines[0]] and lines[0].startswith("Warning: ")
    assert lines[-1].startswith("Error: reading issue #7") and "Traceback" not in result.stderr
    assert not copy.exists() and (copy.parent / "aside" / copy.name).exists()


def test_the_hook_without_github_keeps_its_budget(gh, run, repo, sleeps):  # noqa: F811
    """GitHub accepts the connection and never answers: the hook's attempts each end at the transport's 3 s
    timeout, and no attempt starts that could end past its 4 s budget (so with the pause between them, the
    hook's time on GitHub is at most 4 s, whatever the clock). Before the deadline it made a second attempt
    at 4 s and took 7.1 s."""
    seen_and_kept(gh, run, unanswering)
    gh.calls.clear()
    sleeps.clear()
    context, _ = hook(run, repo)
    assert context.startswith("GitHub did not answer: #7")
    from ghstate.commands.hook import GITHUB_BUDGET, GITHUB_TIMEOUT

    assert (GITHUB_TIMEOUT, GITHUB_BUDGET) == (3, 4.0)
    assert len(gh.calls) * GITHUB_TIMEOUT + sum(sleeps) <= GITHUB_BUDGET


def test_resume_without_github_gives_up_within_15_seconds(gh, run, repo, sleeps):  # noqa: F811
    """As the hook, with the readers' budget: 15 s, each attempt at most the transport's 10 s (it took 47 s)."""
    seen_and_kept(gh, run, unanswering)
    gh.calls.clear()
    sleeps.clear()
    assert run("resume").stdout.startswith("GitHub did not answer: #7")
    from ghstate.github.transport import TIMEOUT
    from ghstate.services.app import READ_BUDGET

    assert READ_BUDGET == {"total": 15.0, "deadline": True} and TIMEOUT == 10
    assert len(gh.calls) * TIMEOUT + sum(sleeps) <= 15


def test_the_mcp_resume_tool_falls_back_too(gh, run, repo):  # noqa: F811
    from ghstate.agents import mcp_tools
    from ghstate.services.app import READ_BUDGET, build_app

    seen_and_kept(gh, run, erroring)
    answer = mcp_tools.call("resume", {"issue": 7}, lambda: build_app(github=dict(READ_BUDGET)))
    assert not answer.error and answer.text.startswith("GitHub did not answer: #7 as this machine last saw it")
    assert "X, written while GitHub was away" in answer.text


# ------------------------------------------------------------------------------ GitHub back


def test_when_github_is_back_resume_sends_the_kept_write_first(gh, run, repo):  # noqa: F811
    seen_and_kept(gh, run, refused)
    gh.faults.clear()
    result = run("resume")
    assert "was published first: updated #7" in result.stderr and "did not answer" not in result.stdout
    assert "X, written while GitHub was away" in result.stdout and pending(repo) == []
    assert "X, written while GitHub was away" in state_of(gh, 7).decisions
    run("checkpoint", "--decision", "Y")  # lands on top of X, which is not sent again
    assert state_of(gh, 7).decisions[-2:] == ("X, written while GitHub was away", "Y")
    assert "Nothing to push." in run("push").stderr


def test_a_write_never_lands_over_a_kept_write_it_sends_it_first_in_order(gh, run, repo):  # noqa: F811
    existing(gh)
    gh.fail_op("AppendCheckpoint", 502, times=999)  # reads work, writes do not
    run("checkpoint", "7", "--resume", "first, kept", code=1)
    run("checkpoint", "7", "--resume", "second, kept", code=1)
    gh.faults.clear()
    result = run("checkpoint", "7", "--resume", "third, once GitHub was back")
    assert result.stderr.count("was published first: updated #7") == 2
    assert state_of(gh, 7).resume == "third, once GitHub was back" and pending(repo) == []
    assert [line.split()[0] for line in run("log", "7").stdout.splitlines()][-3:] == ["r4", "r5", "r6"]


def test_the_hook_sends_kept_writes_within_its_budget_else_says_how_many_wait(gh, run, repo, monkeypatch):  # noqa: F811
    seen_and_kept(gh, run, refused)
    gh.faults.clear()
    monkeypatch.setattr("ghstate.commands.hook.SEND_KEPT", 0.0)  # no time left to send: said, applied on top
    context, stderr = hook(run, repo)
    assert context.startswith("#7 as GitHub has it (revision 4), with 1 write of this machine not yet on GitHub")
    assert "X, written while GitHub was away" in context and len(pending(repo)) == 1
    assert "1 write this machine kept while GitHub was out of reach is still waiting" in stderr
    monkeypatch.setattr("ghstate.commands.hook.SEND_KEPT", 60.0)
    context, stderr = hook(run, repo, session="s-2")
    assert pending(repo) == [] and "was published first: updated #7" in stderr
    assert "X, written while GitHub was away" in context and "not yet on GitHub" not in context


def test_the_pre_compact_hook_sends_kept_writes_before_its_record(gh, run, repo):  # noqa: F811
    seen_and_kept(gh, run, refused)
    gh.faults.clear()
    data = {"session_id": "s-1", "trigger": "auto", "cwd": str(repo), "hook_event_name": "PreCompact"}
    run("hook", "pre-compact", input=json.dumps(data))
    assert pending(repo) == [] and "X, written while GitHub was away" in state_of(gh, 7).decisions
    log = run("log", "7").stdout.splitlines()
    assert [line.split()[0] for line in log] == ["r3", "r4", "r5", "r6"]
    assert "+1 decision" in log[2] and "claude-code (editor, session s-1)" in log[3], log  # the kept write first


def test_a_write_kept_without_any_read_is_built_on_the_head_this_machine_saw_not_on_clocks(
        gh, run, repo, monkeypatch, tmp_path):  # noqa: F811
    """GitHub out of reach from the kept write's first request; meanwhile another machine, whose clock is 10
    minutes slow, set the same value. Built on the head this machine last saw, the kept write is rebased
    over the other's: the other's value stands and the kept one is beside it. By the writers' clocks (before),
    the other's write looked older, and the kept write stood over it."""
    existing(gh)
    run("checkpoint", "7", "--risk", "a chain to build on")  # this machine saw #7, at the head of its chain
    refused(gh)
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T10:00:00Z")
    run("checkpoint", "7", "--resume", "this machine's, kept", code=1)
    gh.faults.clear()
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T09:50:00Z")
    other = run("checkpoint", "7", "--resume", "the other machine's, later",
                env={"GHSTATE_DIR": str(tmp_path / "other-machine")})
    assert "published first" not in other.stderr  # another machine: this one's kept write is not its to send
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T10:05:00Z")
    run("push")
    cp = state_of(gh, 7)
    assert cp.resume == "the other machine's, later"
    assert any("this machine's, kept" in extra.body for extra in cp.extra)


def test_a_write_told_to_wait_past_its_budget_is_kept_and_returns(gh, run, repo, sleeps):  # noqa: F811
    from github_fake import SECONDARY_LIMIT

    existing(gh)
    gh.fail_op("AppendCheckpoint", 403, times=9, headers={"Retry-After": "120"}, message=SECONDARY_LIMIT)
    result = run("checkpoint", "7", "--risk", "r", code=1)
    assert "GitHub asked for a pause of 120 s" in result.stderr and sleeps == []
    assert "it is safe on this machine, and the next ghstate command that reaches GitHub sends it" in result.stderr
    assert len(pending(repo)) == 1


# ------------------------------------------------------------------------------ the replica itself


def _seen(number: int, repo: str = "octo/hello"):
    from ghstate.local.replica import Seen

    return Seen(repo, number, "t", f"https://github.com/{repo}/issues/{number}", "open", "b", 1, "", "## Goal\ng\n",
                "2026-11-28T10:00:00Z", trusted=True)


def test_the_replica_keeps_the_newest_hundred(tmp_path):
    from ghstate.local.replica import BOUND, Replica

    copy = Replica(tmp_path, "octo/hello")
    for number in range(1, BOUND + 6):
        copy.keep(_seen(number))
        os.utime(copy._path(number), (number, number))  # seen in this order
    assert BOUND == 100 and len(list(tmp_path.glob("*.json"))) == BOUND
    assert copy.get(5) is None and copy.get(6) == _seen(6) and copy.get(BOUND + 5) == _seen(BOUND + 5)


def test_a_replica_write_cut_short_leaves_the_previous_copy_whole(tmp_path, monkeypatch):
    from ghstate.local.replica import Replica

    copy = Replica(tmp_path, "octo/hello")
    copy.keep(_seen(1))

    def killed(*args: object) -> None:
        raise KeyboardInterrupt  # the process dies between the temporary file and the rename

    monkeypatch.setattr("os.replace", killed)
    with pytest.raises(KeyboardInterrupt):
        copy.keep(_seen(1)._replace(title="newer"))
    monkeypatch.undo()
    assert copy.get(1) == _seen(1) and copy.notices == []


@pytest.mark.parametrize("text", ["", "{", "[]", '{"kind": "something else"}',
                                  "\udcff".encode("utf-8", "surrogatepass")])
def test_a_replica_file_that_is_not_ghstates_is_set_aside(tmp_path, text):
    from ghstate.local.replica import Replica

    copy = Replica(tmp_path, "octo/hello")
    path = copy._path(3)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert copy.get(3) is None and len(copy.notices) == 1 and "set aside" in copy.notices[0]
    assert (tmp_path / "aside" / path.name).exists()


def test_an_edited_replica_file_is_set_aside(tmp_path):
    from ghstate.local.replica import Replica

    copy = Replica(tmp_path, "octo/hello")
    copy.keep(_seen(3))
    path = copy._path(3)
    path.write_text(path.read_text().replace("## Goal", "## Goal edited"))  # still ghstate's shape
    assert copy.get(3) is None and "not what ghstate wrote" in copy.notices[0]


def test_a_replica_file_for_another_repository_is_not_used(tmp_path):
    from ghstate.local.replica import Replica

    Replica(tmp_path, "octo/other").keep(_seen(3, "octo/other"))
    mine = Replica(tmp_path, "octo/hello")
    assert mine.get(3) is None and mine.by_branch("b") is None
    (tmp_path / mine._path(3).name).write_text(json.dumps(_seen(3, "octo/other").to_data()))  # renamed by hand
    assert mine.get(3) is None and "not what its name says" in mine.notices[0]


def test_a_write_waits_behind_a_kept_write_github_refused_and_both_go_in_order(gh, run, repo):  # noqa: F811
    existing(gh)
    gh.fail_op("AppendCheckpoint", 502, times=999)
    run("checkpoint", "7", "--resume", "kept first", code=1)
    gh.faults.clear()
    gh.fail_op("Checkpoint", 401, message="Bad credentials")  # GitHub refuses the kept write's read, once
    result = run("checkpoint", "7", "--resume", "made after it", code=1)
    assert "a write this machine kept for #7 earlier is still waiting to go to GitHub, so this one waits behind it" \
        in result.stderr and len(pending(repo)) == 2
    assert state_of(gh, 7).resume != "made after it"  # it did not land over the kept one
    run("push")
    assert state_of(gh, 7).resume == "made after it" and pending(repo) == []


def test_every_worktree_of_the_clone_finds_what_this_machine_saw(gh, run, repo, monkeypatch):  # noqa: F811
    """The replica is one per clone (in its git folder), not per worktree: a checkpoint read in one worktree
    stands in, without GitHub, in another."""
    from conftest import git

    existing(gh)
    run("resume", "7")
    linked = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature/y", str(linked))
    monkeypatch.chdir(linked)
    refused(gh)
    out = run("resume", "7").stdout
    assert out.startswith("GitHub did not answer: #7 as this machine last saw it") and "Phase 2" in out
    assert not (linked / ".ghstate" / "replica").exists() and (repo / ".git" / "ghstate" / "replica").is_dir()
    assert "replica" not in git(repo, "status", "--porcelain", "--untracked-files=all")


def test_a_write_after_kept_writes_github_did_not_answer_is_kept_at_once_on_the_head_last_seen(gh, run, repo):  # noqa: F811
    """GitHub did not answer the kept write sent first: the new write does not ask it again (its budget is not
    spent twice), and is kept behind it, for the checkpoint and head this machine last saw."""
    seen_and_kept(gh, run, unanswering)
    gh.calls.clear()
    run("checkpoint", "--decision", "Z", code=1)
    assert gh.count_op("BranchCheckpoint") == 0 and gh.operations() and set(gh.operations()) == {"Checkpoint"}
    first, second = (json.loads(path.read_text())["write"] for path in pending(repo))
    assert first["number"] == second["number"] == 7 and first["base"] == second["base"] != ""


# ------------------------------------------------------------------------- close, and what the machine saw

def test_a_checkpoint_closed_here_is_not_resumed_as_open_without_github(gh, run, repo):  # noqa: F811
    """``close`` tells this machine's copy: without GitHub, the branch's checkpoint is said to be closed, as
    GitHub's answer says, rather than handed to a fresh session as an open task (found by a review of the
    seams: the copy still said open)."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    run("checkpoint", "--decision", "seen on GitHub")
    run("close", "7")
    assert run("resume", code=1).stderr.startswith("Error: no open checkpoint for branch feature/x")  # its branch gone
    refused(gh)
    offline = run("resume").stdout
    assert "as this machine last saw it" in offline and "This checkpoint was closed" in offline
    ctx, _ = hook(run, repo)
    assert "checkpoint #7 was closed: its task is not open" in ctx


def kept_while_away(gh, run, repo) -> None:  # noqa: F811
    """#7 seen here, then a write to it kept while GitHub refused connections; GitHub back."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    run("checkpoint", "--decision", "seen on GitHub")
    refused(gh)
    run("checkpoint", "--decision", "kept while away", code=1)
    assert len(pending(repo)) == 1
    gh.faults.clear()


def test_a_kept_write_goes_out_before_the_close(gh, run, repo):  # noqa: F811
    """A write kept for #7 is published by ``close 7`` before it closes, so that nothing lands on the checkpoint
    after it closed (which would bring its chain's ref back)."""
    kept_while_away(gh, run, repo)
    run("close", "7")
    assert pending(repo) == []
    assert "kept while away" in state_of(gh, 7).decisions
    assert gh.issues[7]["state"] == "closed"
    assert not [ref for ref in gh.tasks.refs if ref.endswith("checkpoints/7")]


def test_an_empty_pending_folder_from_before_is_no_store_to_move(gh, run, repo):  # noqa: F811
    """What ``push`` of an earlier version left (an empty ``.ghstate/pending/``), or a lock alone, is not a
    worktree's store: no note about moving "nothing", nothing moved."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    (repo / ".ghstate" / "pending").mkdir(parents=True)
    assert "moved" not in run("resume").stderr
    (repo / ".ghstate" / "pending" / ".push.lock").write_text("")
    assert "moved" not in run("resume").stderr
    assert (repo / ".ghstate" / "pending" / ".push.lock").exists()


@pytest.mark.parametrize("command", [("list",), ("ready",), ("close", "--stale", "--days", "1")])
def test_a_listing_sends_the_kept_writes_first(gh, run, repo, command):  # noqa: F811
    """``list``, ``ready`` and ``close --stale`` reach GitHub without reading one checkpoint: they too send this
    clone's kept writes first (found by the closing review: only commands reading through App.read did)."""
    kept_while_away(gh, run, repo)
    run(*command)
    assert pending(repo) == []
    assert "kept while away" in state_of(gh, 7).decisions


def test_another_repositorys_replica_files_are_never_set_aside(tmp_path):
    """Finding 10 of issue 58: ``a+b--``, the files of ``a/b``, is also how ``a/b--2``'s begin; a branch lookup of
    ``a/b`` set ``a/b--2``'s copies aside as "not what its name says"."""
    from ghstate.local.replica import Replica

    other = Replica(tmp_path, "a/b--2")
    other.keep(_seen(7, "a/b--2")._replace(branch="b"))
    mine = Replica(tmp_path, "a/b")
    mine.keep(_seen(1, "a/b")._replace(branch="c"))
    assert mine.by_branch("b") is None and mine.by_branch("c") == _seen(1, "a/b")._replace(branch="c")
    assert mine.notices == [] and not (tmp_path / "aside").exists()
    assert other.get(7) == _seen(7, "a/b--2")._replace(branch="b") and other.by_branch("b") is not None


def test_the_replica_never_steps_back_a_revision(gh, run, repo):  # noqa: F811
    """Finding 9 of issue 58: a read that began before this machine's own write and ended after it kept what it
    read over the write's copy, so that without GitHub the checkpoint read one revision back. The slow read is
    its keep, made after the write's."""
    from ghstate.local.replica import Replica

    existing(gh)
    run("resume", "7")
    copy = Replica(repo / ".git" / "ghstate" / "replica", "octo/hello")
    slow = copy.get(7)
    run("checkpoint", "7", "--decision", "written after the slow read began")
    assert copy.get(7).revision == slow.revision + 1
    copy.keep(slow)  # the slow read ends
    refused(gh)
    out = run("resume", "7").stdout
    assert f"(revision {slow.revision + 1})" in out.splitlines()[0] and "written after the slow read began" in out


def test_offline_the_branchs_checkpoint_is_never_a_child_task(gh, run, repo, tmp_path):  # noqa: F811
    """Finding 3 of issue 58: children carry their parent's branch, and the replica's branch lookup did not pass
    them over. After ``split``, with a child read later than the parent, offline ``resume`` printed the child,
    and a write by branch was kept for the child (``push`` then sent it there)."""
    plan = tmp_path / "plan.md"
    plan.write_text("## Goal\nShip it.\n\n## Current status\n- [x] Phase 1: a\n- [ ] Phase 2: b\n- [ ] Phase 3: c\n\n"
                    "## Resume instruction\nStart at Phase 2.\n")
    run("checkpoint", "--file", str(plan), "--title", "Parent")
    run("split", "1")
    run("resume")  # the parent, by branch
    assert "Phase 2: b" in run("resume", "2").stdout  # a child, read later
    refused(gh)
    out = run("resume").stdout
    assert out.startswith("GitHub did not answer: #1 as this machine last saw it"), out[:300]
    run("checkpoint", "--decision", "kept for the branch's checkpoint", code=1)
    [kept] = pending(repo)
    assert json.loads(kept.read_text())["write"]["number"] == 1
    gh.faults.clear()
    run("push")
    assert "kept for the branch's checkpoint" in state_of(gh, 1).decisions
    assert "kept for the branch's checkpoint" not in state_of(gh, 2).decisions


def test_a_create_github_refused_after_its_lookup_answered_stays_a_create(gh, run, repo, tmp_path):  # noqa: F811
    """Finding 7 of issue 58: after a lookup that GitHub answered (the branch's checkpoint closed since, on another
    machine) and a create that then failed, the write was kept on what this machine last saw (#7, open then), and
    ``push`` wrote it to the closed #7. What GitHub answered stands: it is kept as a new checkpoint for the branch,
    and ``push`` creates it."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    run("checkpoint", "--decision", "seen here while open")
    run("close", "7", env={"GHSTATE_DIR": str(tmp_path / "other-machine")})
    gh.fail("POST", r"^/issues$", 502, times=99)
    kept = run("checkpoint", "--phase", "Phase 1: again", "--resume", "made after #7 closed", code=1)
    assert "kept locally" in kept.stderr
    [path] = pending(repo)
    assert json.loads(path.read_text())["write"]["number"] is None
    gh.faults.clear()
    pushed = run("push").stdout
    assert "Published" in pushed and "created #8" in pushed, pushed
    assert state_of(gh, 8).resume == "made after #7 closed" and state_of(gh, 7).resume != "made after #7 closed"


def test_a_write_by_number_to_a_closed_checkpoint_is_said_and_its_refs_stay_folded(gh, run, repo):  # noqa: F811
    """Finding 7 of issue 58: a write by number to a closed checkpoint made its chain ref again after the close had
    folded it, without a word. It is said, and the chain folded into the archive again."""
    existing(gh)
    run("checkpoint", "7", "--risk", "a chain")
    run("close", "7")
    assert "refs/ghstate/checkpoints/7" not in gh.tasks.refs
    out = run("checkpoint", "7", "--decision", "written after the close")
    assert "#7 is closed: this write is on its log, and it stays closed" in out.stderr
    assert "refs/ghstate/checkpoints/7" not in gh.tasks.refs and gh.issues[7]["state"] == "closed"
    assert "written after the close" in json.loads(run("show", "7", "--json").stdout)["decisions"]


def test_ci_and_the_task_commands_keep_nothing_and_say_nothing_was_kept(gh, run, repo, tmp_path):  # noqa: F811
    """Finding 11 of issue 58: the outage table said ``ci`` and the task commands keep their write; neither ever was
    (CI's result is made from what it reads, a split from the parent as read, a claim is decided by GitHub's
    compare-and-swap). The table says so now, and so does each command: an error, exit 1, nothing in ``pending/``
    and no word of a write kept."""
    existing(gh)
    gh.tasks.index(7, "feature/x")
    run("checkpoint", "--decision", "seen on GitHub")
    refused(gh)
    ci = run("ci", "--result", "success", "--issue", "7")  # a CI job is not failed by GitHub's absence
    assert "the result was not recorded" in ci.stdout and "kept" not in ci.stdout + ci.stderr
    for args in (("split", "7"), ("claim", "--next", "7", "--agent", "w1"), ("done", "8", "--agent", "w1")):
        result = run(*args, code=None)
        assert result.exit_code == 1, (args, result.stdout, result.stderr)
        assert result.stderr.startswith("Error: ") and "kept" not in result.stderr, (args, result.stderr)
    assert pending(repo) == []
    table = (__import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "github.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| `ci`"))
    assert "nothing is kept" in row


def test_a_copy_kept_before_authors_were_checked_is_no_branchs_checkpoint(tmp_path):
    """A security review of issue 53 (low): the replica kept no word of who opened a checkpoint, so a copy an
    earlier ghstate kept of a stranger's issue (taken as a branch's then) was still handed out as the branch's when
    GitHub did not answer. A copy is a branch's only when it was kept as a trusted author's; read by number, any."""
    import json

    from ghstate.local.replica import Replica

    copy = Replica(tmp_path, "octo/hello")
    copy.keep(_seen(1))
    path = copy._path(1)
    data = json.loads(path.read_text())
    del data["trusted"]  # as an earlier ghstate wrote it
    path.write_text(json.dumps(data))
    assert copy.by_branch("b") is None and copy.get(1) is not None and copy.notices == []
