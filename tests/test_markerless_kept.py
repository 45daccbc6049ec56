"""A person's save without the marker line that also lacks an item the chain holds (issue 39, bug 3): the page
is ambiguous (that item deleted, or a page opened before it was written), so the write keeps the item, and
says so: the line it kept, and how to remove it for good. On the fake GitHub and on the local store."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLE

from ghstate.core import chain
from ghstate.core.parse import parse

LEAK = "staging login is hunter2-swordfish"
MARKER = re.compile(r"<!-- ghstate:v1 .*?-->\r?\n", re.S)


@pytest.fixture
def github(isolated, repo, monkeypatch):
    from github_fake import FakeGitHub

    from ghstate.core.chain import TREE_FILES

    monkeypatch.setenv("GH_TOKEN", "ghp_" + "T0k3n" * 8)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    fake.tasks.add_tree(TREE_FILES)
    yield fake
    assert fake.problems() == []


def _said_kept(stderr: str) -> None:
    said = [line for line in stderr.splitlines() if LEAK in line]
    assert len(said) == 1, stderr  # once, however many times the page is merged in the command
    warning = said[0]
    assert warning.lower().startswith("warning:"), stderr
    assert "marker" in warning and "--file" in warning, warning


def test_a_line_kept_from_a_page_without_its_marker_is_said_on_github(github, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", LEAK)
    page = chain.split(github.issues[1]["body"])[0]
    github.edit(1, MARKER.sub("", page, count=1).replace(f"- {LEAK}\n", ""), login="mona")
    resumed = run("resume", "1")
    _said_kept(resumed.stderr)
    written = run("checkpoint", "1", "--risk", "next")
    _said_kept(written.stderr)
    assert LEAK in parse(chain.split(github.issues[1]["body"])[0]).checkpoint.decisions  # kept: ambiguous
    quiet = run("checkpoint", "1", "--risk", "after")  # merged once: said once
    assert LEAK not in quiet.stderr


def test_a_line_kept_from_a_file_without_its_marker_is_said_on_the_local_store(repo, run):
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    run("checkpoint", "--store", "local", "1", "--decision", LEAK)
    path = repo / ".git" / "ghstate" / "1.md"
    path.write_text(MARKER.sub("", chain.split(path.read_text())[0], count=1).replace(f"- {LEAK}\n", ""))
    written = run("checkpoint", "--store", "local", "1", "--risk", "next")
    _said_kept(written.stderr)
    assert LEAK in json.loads(run("resume", "--store", "local", "1", "--format", "json").stdout)["decisions"]


def test_a_page_without_its_marker_that_deletes_nothing_is_not_said(github, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", LEAK)
    page = chain.split(github.issues[1]["body"])[0]
    github.edit(1, MARKER.sub("", page, count=1).replace("## Open questions\n", "## Open questions\n- q\n"))
    written = run("checkpoint", "1", "--risk", "next")
    assert "marker" not in written.stderr, written.stderr


def test_a_deletion_with_the_marker_in_place_is_not_said(github, run):
    run("checkpoint", "--file", "-", input=SAMPLE)
    run("checkpoint", "1", "--decision", LEAK)
    github.edit(1, github.issues[1]["body"].replace(f"- {LEAK}\n", ""), login="mona")
    written = run("checkpoint", "1", "--risk", "next")
    assert LEAK not in written.stderr
    assert LEAK not in parse(chain.split(github.issues[1]["body"])[0]).checkpoint.decisions
