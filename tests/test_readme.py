"""The README a newcomer reads in one sitting: short, and its first screen says how to install ghstate and
set a repository up on GitHub; the reference it points to is there."""

from __future__ import annotations

import re
from pathlib import Path

from ghstate import INSTALL, SOURCE

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_read_in_one_sitting():
    assert len(README.splitlines()) <= 300


def test_its_first_screen_installs_ghstate_and_starts_on_github():
    first = "\n".join(README.splitlines()[:60])
    assert INSTALL in first and "uv tool install ." in first
    assert "GH_TOKEN" in first and "gh auth login" in first
    assert re.search(r"^\s*ghstate init --agent ", first, re.M)
    owner = SOURCE.removeprefix("https://github.com/").split("/")[0]
    assert f"uses: {owner}/ghstate@" in first  # the Action, under this repository's name


def test_its_daily_install_works_as_written_today():
    """The daily install is run in a clone (the README's own starting point): a git+https URL would need
    the account this checkout is published under, which it does not name (OWNER is a placeholder)."""
    section = README.split("## Install for daily use", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```sh\n(.*?)^```$", section, re.M | re.S)
    assert "OWNER" not in section and "git+" not in section
    assert re.search(r"^pipx install \.(\s|$)", block, re.M) and "uv tool install ." in block
    assert INSTALL == "pipx install ."


def test_its_first_shell_block_is_the_main_job_on_the_local_store():
    """What .ci/run extracts and runs: the first ```sh block, on the local store, in this clone."""
    first = re.search(r"^```sh\n(.*?)^```$", README, re.M | re.S).group(1)
    assert "--store local" in first and "ghstate resume" in first and "pip install" in first
    assert "pipx" not in first and "git+" not in first


def test_every_document_it_points_to_is_there():
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]+)?\)", README))
    assert linked >= {"docs/checkpoint.md", "docs/github.md", "docs/agents.md", "docs/action.md", "docs/board.md"}
    for path in linked:
        assert (ROOT / path).is_file(), path
    for doc in (ROOT / "docs").glob("*.md"):
        prose = re.sub(r"`[^`\n]*`", "", doc.read_text())  # a link in a code span is an example
        for target in re.findall(r"\]\(((?!https?:|#)[^)#]+)(?:#[^)]*)?\)", prose):
            assert (doc.parent / target).exists(), f"{doc.name} links {target}"
