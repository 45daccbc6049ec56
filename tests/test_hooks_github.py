"""The SessionStart hook on the GitHub store: comments only when the whole prompt is given, and a
repeated start costs no more than finding the checkpoint and checking the log."""

from __future__ import annotations

import json

import pytest
from test_github_store import existing, gh, sleeps  # noqa: F401 - fixtures


@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """The hook's deadline is not what these tests are about: a loaded machine (the agent hosts running as
    judges on the other worker) must not cut a hook short here."""
    monkeypatch.setattr("ghstate.commands.hook.DEADLINE", 120)


def start(run, repo, source: str, session: str = "s-1") -> str:
    data = {"session_id": session, "source": source, "cwd": str(repo), "hook_event_name": "SessionStart"}
    result = run("hook", "session-start", input=json.dumps(data))
    assert result.stderr == ""
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else ""


def test_comments_reach_the_whole_prompt_and_a_repeat_asks_for_nothing_more(gh, run, repo):  # noqa: F811
    existing(gh)
    gh.tasks.index(7, "feature/x")
    gh.add_comment(7, "please also handle --fuzzy=0", login="maintainer", association="MEMBER")
    context = start(run, repo, "compact")
    assert "GitHub issue #7" in context and "please also handle --fuzzy=0" in context
    gh.calls.clear()
    assert start(run, repo, "compact") == ""  # the same start again: the session has it
    # Finding the branch's checkpoint (its entry in the branch index), then the checkpoint with its newest
    # comments and how long its edit history is: nothing more.
    assert gh.operations() == ["BranchCheckpoint", "Checkpoint"] and len(gh.calls) == 2
