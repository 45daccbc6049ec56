"""Checkpoints on a GitHub Project (v2), on the fake GitHub: items, their five fields, Status, the board,
failures that never fail the write, and every document judged by GitHub's schema."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE
from github_fake import FakeGitHub
from github_fake_projects import FakeProjects

TOKEN = "ghp_" + "Pr0j3ct" * 6
REPO = "octo/hello"


class Board:
    def __init__(self, fake: FakeGitHub, projects: FakeProjects) -> None:
        self.fake = fake
        self.projects = projects
        self.project = projects.project()

    def graphql(self) -> int:
        return self.fake.count("POST", r"/graphql$")

    def values(self, number: int = 1, repo: str = REPO) -> dict:
        return self.projects.values(self.project, repo, number)


@pytest.fixture
def gh(isolated, repo, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GHSTATE_PROJECT", "orgs/ACME/projects/7")
    monkeypatch.setattr("ghstate.stores.github._sleep", lambda s: None)
    fake = FakeGitHub(isolated)
    projects = FakeProjects(fake).install()
    projects.add_project()
    yield Board(fake, projects)
    assert fake.problems() == [], "requests GitHub's schema or API description does not allow"


def test_a_new_checkpoint_is_an_item_with_its_five_fields(gh, run, sample_file):
    result = run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor", "--agent", "claude-code",
                 "--role", "editor")
    assert result.stderr == ""
    values = gh.values()
    today = gh.fake.issues[1]["body"].split('"updated_at": "')[1][:10] if '"updated_at": "' in gh.fake.issues[1]["body"] \
        else None
    assert values["Next phase"] == "Phase 2: matcher abstraction"
    assert values["Progress"] == 33
    assert values["CI"] == "none"
    assert values["Last writer"] == "claude-code (editor)"
    assert len(values["Checkpointed"]) == 10 and (today is None or values["Checkpointed"] == today)
    assert values["Status"] == "In Progress"
