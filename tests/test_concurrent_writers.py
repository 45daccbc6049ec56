"""Real processes writing one checkpoint at once, against a GitHub-shaped server on loopback.

6 and 12 ``ghstate checkpoint`` processes (decisions, ticks, resume instructions, risks), one ``ghstate ci``
run and a person's web edit land together; then 20 writers on 4 machines (each its own clone and
``.ghstate/``) sharing one token, a CI writer and two people editing on github.com, under each variant of
what GitHub leaves open. Every process that exits 0 must have its change in ``resume --format json`` on a
machine that never wrote, right after the last one exits, and in the body once it converged; every
person's edit stands. (The in-process scheduler in test_interleavings.py searches the orderings; these
show the real program, PyGithub and HTTP included, does the same.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from bodies import render_body
from conftest import SAMPLE
from github_http import serve_fake

from ghstate.core.model import Checkpoint
from ghstate.core.parse import parse

ROOT = Path(__file__).resolve().parents[1]


def environment(fake, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GHSTATE_", "GH_"))}
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/feature/x"}))
    # GHSTATE_NO_CACHE: no pacing of this machine's writes either (tests/test_write_log.py covers it), so
    # that the processes contend as hard as they can
    env.update(GH_TOKEN="ghs_test", GITHUB_REPOSITORY="octo/hello", GITHUB_API_URL=fake.base, GHSTATE_NO_CACHE="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
    return env


def ci_environment(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    for name in ("output", "summary"):
        (tmp_path / name).write_text("")
    return {**env, "GITHUB_ACTIONS": "true", "GITHUB_SHA": "4f2c1e9aa1b2c3d4e5f6", "GITHUB_RUN_ID": "777",
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REF_NAME": "feature/x",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"), "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "GITHUB_WORKSPACE": str(tmp_path)}


def writers(n: int) -> list[tuple[list[str], object]]:
    """``n`` checkpoint commands and, for each, what it must leave in the state."""
    out: list[tuple[list[str], object]] = []
    for k in range(n):
        kind = k % 4
        if kind == 0:
            out.append((["--decision", f"parallel decision {k}"],
                        lambda s, k=k: f"parallel decision {k}" in s["decisions"]))
        elif kind == 1:
            phase = 2 + (k // 4) % 2
            out.append((["--done", str(phase)], lambda s, p=phase: s["phases"][p - 1]["done"]))
        elif kind == 2:
            out.append((["--resume", f"resume {k}"], lambda s: s["resume"].startswith("resume ")))
        else:
            out.append((["--risk", f"parallel risk {k}"], lambda s, k=k: f"parallel risk {k}" in s["risks"]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 12])
def test_concurrent_writers_ci_and_a_person_lose_nothing(n, repo, tmp_path):
    with serve_fake() as fake:
        cp = parse(SAMPLE).checkpoint.with_meta(revision=1, branch="feature/x", id="c0ffeec0ffee")
        fake.add_issue(1, render_body(cp), title="CLI refactor")
        env = environment(fake, tmp_path)
        cmd = [sys.executable, "-m", "ghstate"]
        jobs = writers(n)
        procs = [subprocess.Popen([*cmd, "checkpoint", "1", *args], cwd=repo, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for args, _ in jobs]
        ci = subprocess.Popen([*cmd, "ci", "--result", "failure", "--issue", "1"], cwd=repo,
                              env=ci_environment(env, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)

        def person() -> None:  # opens the editor once a few writes are in, saves a moment later
            while len(fake.calls) < n:
                time.sleep(0.005)
            with fake.lock:
                page = fake.issues[1]["body"]
            time.sleep(0.05)
            with fake.lock:
                fake.edit(1, page.replace("## Open questions\n", "## Open questions\n- asked by a person\n"))

        editor = threading.Thread(target=person)
        editor.start()
        results = [(p, *p.communicate(timeout=120)) for p in [*procs, ci]]
        editor.join(timeout=30)
        for proc, _, err in results:
            assert proc.returncode == 0, err
            assert "Traceback" not in err

        resumed = subprocess.run([*cmd, "resume", "1", "--format", "json"], cwd=repo, env=env, capture_output=True,
                                 text=True, timeout=60)
        assert resumed.returncode == 0, resumed.stderr
        state = json.loads(resumed.stdout)
        for args, check in jobs:
            assert check(state), f"{args} is missing from resume: {state}"
        assert (state["verification"] or {}).get("status") == "failing"

        # The body converges: the last write checked the log and holds every logged revision. A
        # person's save from an older page can still come last; then the next write brings it up to date.
        body = parse(fake.issues[1]["body"]).checkpoint
        if "asked by a person" in fake.issues[1]["body"] and not all(
                check(_json(body)) for _, check in jobs):
            subprocess.run([*cmd, "checkpoint", "1", "--question", "after"], cwd=repo, env=env, check=True,
                           capture_output=True, timeout=60)
            body = parse(fake.issues[1]["body"]).checkpoint
        for args, check in jobs:
            assert check(_json(body)), f"{args} is missing from the body"
        # The person's text stays, in what a reader sees and in the body.
        assert "asked by a person" in state["questions"] and "asked by a person" in body.questions
        assert fake.problems() == []


def _json(cp: Checkpoint) -> dict:
    from ghstate.core.state_json import to_json

    return to_json(cp)


RACES = {  # what GitHub leaves open, one variant each (tests/github_fake.py, tests/github_fake_tasks.py)
    "faithful": {},
    "quick saves of one editor merged": {"coalesce_seconds": 3600},
    "an index behind its body, its count included": {"history_lag": 2},
    "mutations after a failed one do not run": {"variant": "stops-after-error"},
    "refused moves reported typed": {"variant": "typed-ref-errors"},
    "custom refs not listed": {"variant": "custom-refs-unlisted"},
    "lost answers and GitHub's errors": {"faults": True},
    # found by a person saving early: the first write's look for the save its lost answer replaced, under
    # more bodies than a page holds and the head's mirror written again
    "lost answers, a person saving before the first write": {"faults": True, "person_at": 3},
    "history cursors that name a version": {"cursors": "version"},
    "revisions deleted from the history while it runs": {"delete_revisions": True},
}


def _setup(fake, how: dict) -> None:
    from github_fake_tasks import VARIANTS

    from ghstate.core.chain import TREE_FILES

    fake.tasks.add_tree(TREE_FILES)
    fake.coalesce_seconds = how.get("coalesce_seconds")
    fake.history_lag = how.get("history_lag", 0)
    fake.cursors = how.get("cursors", "offset")
    if how.get("variant"):
        fake.tasks.use(next(v for v in VARIANTS if v.name == how["variant"]))
    if how.get("faults"):  # a lost answer on each request of a write, and errors GitHub answers with
        fake.fail("POST", r"^/git/commits$", None, after=True, times=2)
        fake.fail("POST", r"^/graphql AppendCheckpoint$", None, after=True, times=3)
        fake.fail("POST", r"^/graphql AppendCheckpoint$", 502, times=2)
        fake.fail("POST", r"^/graphql Checkpoint$", 502, times=2)
        fake.fail_op("AppendCheckpoint", status=200, message="Something went wrong while executing your query. "
                     "This may be the result of a timeout, or it could be a GitHub bug.", times=1)


def machine(root: Path, name: str) -> Path:
    """A clone of its own: its own working tree and its own local store (``.git/ghstate``)."""
    folder = root / name
    folder.mkdir()
    for args in (["init", "-q", "-b", "feature/x"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("how", list(RACES.values()), ids=list(RACES))
def test_twenty_writers_on_four_machines_ci_and_two_people_lose_nothing(how, tmp_path):
    """Found from outside: with the log in the body's edit history, 20 writers on 4 machines sharing one
    token, while GitHub kept quick saves of one editor as one version, all reported landing and a fifth
    machine saw 1 or 2 of them. On the chain, a machine that never wrote sees every write that reported
    landing, and what each person changed (a question added; a decision deleted) stands."""
    with serve_fake() as fake:
        _setup(fake, how)
        cp = parse(SAMPLE).checkpoint.with_meta(revision=1, branch="feature/x", id="c0ffeec0ffee")
        fake.add_issue(1, render_body(cp), title="CLI refactor")
        env = environment(fake, tmp_path)
        machines = [machine(tmp_path, f"machine-{m}") for m in range(4)]
        cmd = [sys.executable, "-m", "ghstate"]
        jobs = [(k, args, check) for k, (args, check) in enumerate(writers(20))]
        procs = [subprocess.Popen([*cmd, "checkpoint", "1", *args], cwd=machines[k % 4], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k, args, _ in jobs]
        ci = subprocess.Popen([*cmd, "ci", "--result", "failure", "--issue", "1"], cwd=machine(tmp_path, "runner"),
                              env=ci_environment(env, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)

        saved = threading.Event()  # one person opens the page after the other saved (else one overwrites
        # the other on github.com, as GitHub lets a person do: no writer of ghstate is in it)

        def person(login: str, after: int, edit, wait: threading.Event | None) -> None:
            while len(fake.calls) < after or (wait is not None and not wait.is_set()):
                time.sleep(0.005)
            with fake.lock:  # opens the editor, saves a moment later
                page = fake.issues[1]["body"]
            time.sleep(0.05)
            with fake.lock:
                fake.edit(1, edit(page), login=login)
            saved.set()

        def deleter() -> None:  # someone allowed to deletes versions of the body from its history, as it grows
            for at in (20, 40, 60):
                while len(fake.calls) < at:
                    time.sleep(0.005)
                with fake.lock:
                    fake.delete_revision(1, len(fake.history[1]) - 2)

        people = [threading.Thread(target=deleter)] if how.get("delete_revisions") else []
        people += [threading.Thread(target=person, args=("mona", how.get("person_at", 10), lambda page: page.replace(
                       "## Open questions\n", "## Open questions\n- asked by mona\n"), None)),
                   threading.Thread(target=person, args=("hubot", 30, lambda page: page.replace(
                       "- required flags, not positional\n", ""), saved))]
        for thread in people:
            thread.start()
        results = [(p, *p.communicate(timeout=300)) for p in [*procs, ci]]
        for thread in people:
            thread.join(timeout=60)
        for proc, _, err in results:
            assert proc.returncode == 0 and "Traceback" not in err, err

        reader = machine(tmp_path, "never-wrote")
        resumed = subprocess.run([*cmd, "resume", "1", "--format", "json"], cwd=reader, env=env, capture_output=True,
                                 text=True, timeout=60)
        assert resumed.returncode == 0, resumed.stderr
        state = json.loads(resumed.stdout)
        for _, args, check in jobs:
            assert check(state), f"{args} is missing from resume on a machine that never wrote: {state}"
        assert (state["verification"] or {}).get("status") == "failing"
        assert "asked by mona" in state["questions"], "a person's edit was undone"
        assert "required flags, not positional" not in state["decisions"], "a person's deletion was undone"
        assert fake.problems() == []


@pytest.mark.slow
def test_twenty_agents_creating_checkpoints_for_twenty_branches_at_once_each_find_their_own(tmp_path):
    """Issue 38: each of 20 agents creates its branch's checkpoint at once, and a second agent races the
    first on five of the branches: every branch ends with one open checkpoint, in the branch index, holding
    every write that reported landing, and each branch's resume finds its own."""
    with serve_fake() as fake:
        env = environment(fake, tmp_path)
        cmd = [sys.executable, "-m", "ghstate"]
        jobs = []
        for k in range(25):
            branch = f"agent/{k % 20}-ü"
            folder = tmp_path / f"agent-{k}"
            folder.mkdir()
            for args in (["init", "-q", "-b", branch], ["commit", "-q", "--allow-empty", "-m", "init"]):
                subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
            jobs.append((branch, folder, subprocess.Popen(
                [*cmd, "checkpoint", "--goal", f"goal of {branch}", "--decision", f"decided by agent {k}",
                 "--resume", "Phase 1"], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)))
        for _, _, proc in jobs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0 and "Traceback" not in err, err
        open_ones = {}
        for number, issue in fake.issues.items():
            if issue["state"] == "open":
                cp = parse(issue["body"]).checkpoint
                assert cp.meta.branch not in open_ones, f"two open checkpoints for {cp.meta.branch}"
                open_ones[cp.meta.branch] = number
        assert len(open_ones) == 20
        for k, (branch, folder, _) in enumerate(jobs):
            resumed = subprocess.run([*cmd, "resume", "--format", "json"], cwd=folder, env=env, capture_output=True,
                                     text=True, timeout=60)
            assert resumed.returncode == 0, resumed.stderr
            state = json.loads(resumed.stdout)
            assert state["issue"] == open_ones[branch] and state["goal"] == f"goal of {branch}"
            assert f"decided by agent {k}" in state["decisions"], state
        assert fake.problems() == []


PLAN = """## Goal
Ship the parser.

## Current status
- [x] Phase 1: parser
- [ ] Phase 2: matcher
- [ ] Phase 3: config
- [ ] Phase 4: docs (after Phase 2)

## Resume instruction
Start at Phase 2.
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["faithful", "refused moves reported typed", "custom refs not listed"])
def test_sessions_of_one_host_on_four_machines_race_for_two_children_two_win(how, tmp_path):
    """Issue 57, as processes: eight sessions of one host (the agent name init writes, each its session id as
    Claude Code gives it) on four machines race 'claim --next' for the two ready children of a plan on the
    fake GitHub behind a loopback server: two win, on different children, and each child's ref names its
    winner's session; the six others exit 3."""
    with serve_fake() as fake:
        _setup(fake, RACES[how])
        env = environment(fake, tmp_path)
        cmd = [sys.executable, "-m", "ghstate"]
        planner = machine(tmp_path, "planner")
        (tmp_path / "plan.md").write_text(PLAN)
        for args in (["checkpoint", "--file", str(tmp_path / "plan.md"), "--title", "Parser"], ["split", "1"]):
            subprocess.run([*cmd, *args], cwd=planner, env=env, check=True, capture_output=True, timeout=120)
        machines = [machine(tmp_path, f"machine-{m}") for m in range(4)]
        procs = [subprocess.Popen([*cmd, "claim", "--next", "1", "--agent", "claude-code"], cwd=machines[k % 4],
                                  env={**env, "CLAUDE_CODE_SESSION_ID": f"session-{k}"}, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for k in range(8)]
        results = [(p.returncode, out, err) for p in procs for out, err in [p.communicate(timeout=300)]]
        winners = {out.strip(): k for k, (code, out, _) in enumerate(results) if code == 0}
        assert sorted(winners) == ["#2", "#3"], results
        assert sorted(code for code, _, _ in results) == [0, 0, 3, 3, 3, 3, 3, 3], results
        assert all("Traceback" not in err for _, _, err in results)
        for child, k in winners.items():
            record = fake.tasks.claim_of(int(child[1:]))
            assert (record["agent"], record["session"]) == ("claude-code", f"session-{k}")
        assert fake.problems() == []


@pytest.mark.slow
def test_a_lease_run_out_on_githubs_clock_goes_to_one_of_four_processes(tmp_path):
    """A claim's lease runs on GitHub's clock: while it holds, four processes on four machines are refused; once
    GitHub's clock has passed its end (the test moves the fake's, which also runs with real time behind the
    loopback server), exactly one of them takes it over and the others are told who."""
    with serve_fake() as fake:
        _setup(fake, RACES["faithful"])
        env = environment(fake, tmp_path)
        cmd = [sys.executable, "-m", "ghstate"]
        planner = machine(tmp_path, "planner")
        (tmp_path / "plan.md").write_text(PLAN)
        for args in (["checkpoint", "--file", str(tmp_path / "plan.md"), "--title", "Parser"], ["split", "1"],
                     ["claim", "2", "--agent", "first", "--lease", "90s"]):
            subprocess.run([*cmd, *args], cwd=planner, env=env, check=True, capture_output=True, timeout=120)
        machines = [machine(tmp_path, f"machine-{m}") for m in range(4)]

        def race() -> list[tuple[int, str, str]]:
            procs = [subprocess.Popen([*cmd, "claim", "2", "--agent", f"agent-{k}"], cwd=machines[k], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(4)]
            return [(p.returncode, out, err) for p in procs for out, err in [p.communicate(timeout=300)]]

        held = race()
        assert [code for code, _, _ in held] == [4] * 4, held
        with fake.lock:
            fake.advance(120)
        taken = race()
        assert sorted(code for code, _, _ in taken) == [0, 4, 4, 4], taken
        winner = next(k for k, (code, _, _) in enumerate(taken) if code == 0)
        assert all(f"claimed by agent-{winner} until" in err for code, _, err in taken if code == 4), taken
        assert fake.tasks.claim_of(2)["agent"] == f"agent-{winner}" and fake.problems() == []
