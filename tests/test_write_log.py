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
