"""Real processes writing one checkpoint at once, against a GitHub-shaped server on loopback.

6 and 12 ``ghstate checkpoint`` processes (decisions, ticks, resume instructions, risks), one
``ghstate ci`` run and a person's web edit land together. Every process that exits 0 must have its
change in ``resume --format json`` right after the last one exits, and in the body after convergence;
the person's text stays. (The in-process scheduler in test_interleavings.py searches the orderings;
this test shows the real program, PyGithub and HTTP included, does the same.)
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
            out.append((["--resume-at", f"resume {k}"], lambda s: s["resume"].startswith("resume ")))
        else:
            out.append((["--risk", f"parallel risk {k}"], lambda s, k=k: f"parallel risk {k}" in s["risks"]))
    return out


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
        # The person's text stays in the body, unless their save landed between a writer's re-read and
        # its write (the window GitHub's API leaves); then the issue's edit history has it. Which one
        # happened is timing; test_interleavings.py checks that only that window can drop it.
        person_text = "asked by a person"
        saves = [i for i, b in enumerate(fake.history[1]) if person_text in b]
        assert saves, "the person's save never reached GitHub"
        assert person_text in body.questions or saves[-1] < len(fake.history[1]) - 1
        assert fake.problems() == []


def _json(cp: Checkpoint) -> dict:
    from ghstate.core.state_json import to_json

    return to_json(cp)


@pytest.mark.parametrize("coalesce", [None, 3600], ids=["every save a version", "quick saves of one editor merged"])
def test_eighteen_writers_on_one_token_lose_nothing_reported_whatever_github_keeps(coalesce, repo, tmp_path):
    """Found from outside: where GitHub keeps quick saves by one editor as one version (agents sharing a
    token are one editor), 14 of 18 reported parallel writes were lost without a word. Every write that
    exits 0 is in the next ``resume`` on this machine (its record of what it reported), and the next
    write brings the body up to date."""
    with serve_fake() as fake:
        fake.coalesce_seconds = coalesce
        cp = parse(SAMPLE).checkpoint.with_meta(revision=1, branch="feature/x", id="c0ffeec0ffee")
        fake.add_issue(1, render_body(cp), title="CLI refactor")
        env = environment(fake, tmp_path)
        cmd = [sys.executable, "-m", "ghstate"]
        procs = [subprocess.Popen([*cmd, "checkpoint", "1", "--decision", f"agent {k}"], cwd=repo, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(18)]
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0 and "Traceback" not in err, err

        def run(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([*cmd, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60)

        resumed = run("resume", "1", "--format", "json")
        assert resumed.returncode == 0, resumed.stderr
        decisions = json.loads(resumed.stdout)["decisions"]
        assert all(f"agent {k}" in decisions for k in range(18)), (decisions, resumed.stderr)
        assert run("checkpoint", "1", "--risk", "after").returncode == 0
        body = parse(fake.issues[1]["body"].split("\n<!-- ghstate:log ")[0]).checkpoint
        assert all(f"agent {k}" in body.decisions for k in range(18))
        assert fake.problems() == []
