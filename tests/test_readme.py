"""The README a newcomer reads in one sitting: short, and its first screen says how to install ghstate and
set a repository up on GitHub; the reference it points to is there."""

from __future__ import annotations

import re
from pathlib import Path

from ghstate import INSTALL, SOURCE

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_read_in_one_sitting():
    assert len(README.splitlines()) <= 160


def test_its_first_screen_takes_a_newcomer_to_a_checkpoint_and_a_resume_with_claude_code():
    """Install with the MCP SDK, the token's permissions by name, init and the files to commit, and the day
    itself (/checkpoint before /clear, then the session-start hook), in that order, in the first 60 lines."""
    first = "\n".join(README.splitlines()[:60])
    steps = [INSTALL, "gh auth login", "GH_TOKEN", "Issues: Read and write",
             "Contents: Read and write", "Metadata: Read", "ghstate init --agent claude", "git add .mcp.json",
             "`/checkpoint`", "`/clear`", "session-start hook"]
    at = [first.find(step) for step in steps]
    assert all(i >= 0 for i in at), [s for s in steps if first.find(s) < 0]
    assert at == sorted(at), "the first screen's steps are out of order"
    assert "uv tool install 'ghstate[mcp]'" in first and "Claude Code is an" in first and "MCP host" in first
    for written in (".mcp.json", ".claude/settings.json", ".claude/commands/checkpoint.md", "ghstate-resume.md",
                    ".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml", ".ghstate/.gitignore", ".ghstate/config.toml"):
        assert written in first, written
    assert "public" in first and "`pipx install ghstate`" in first and "`uv tool install ghstate`" in first


def test_what_init_writes_for_claude_is_what_the_first_screen_commits(repo, run, monkeypatch):
    """The `git add` line of the first screen names every file init writes for Claude Code (with the SDK)."""
    monkeypatch.setattr("sys.argv", ["pytest"])
    monkeypatch.setattr("ghstate.commands.init.sdk_available", lambda program: True)
    run("init", "--agent", "claude")
    line = next(x for x in README.splitlines() if x.strip().startswith("git add .mcp.json"))
    named = line.split("&&")[0].split()[2:]
    import subprocess

    written = set(subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=repo, check=True,
                                 capture_output=True, text=True).stdout.split())
    personal = {".claude/settings.local.json"}  # the status line, each person's own: said, and never committed
    agents = (ROOT / "docs" / "agents.md").read_text()
    assert personal <= written and all(p in agents for p in personal) and "not committed" in agents
    written -= personal
    assert written and all(any(w == n or w.startswith(n + "/") for n in named) for w in written), (written, named)


def test_the_daily_install_is_by_name_and_the_clone_is_the_way_before_the_first_release():
    """Installed by its name on the package index, with the MCP SDK (the `mcp` extra); until the first release
    is there, the clone's commands (which work as written today); never a git+https URL, which would need
    the account this checkout is published under (OWNER is a placeholder)."""
    section = README.split("## Claude Code in five minutes", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"^\s*```sh\n(.*?)^\s*```$", section, re.M | re.S)[0]
    assert "OWNER" not in section and "git+" not in section
    assert block.split("#")[0].strip() == INSTALL == "pipx install 'ghstate[mcp]'"
    assert "uv tool install 'ghstate[mcp]'" in block
    before = " ".join(section.split("```sh")[0].split())
    assert "Before the first release, in a clone: `pipx install . && pipx inject ghstate 'mcp>=2.3,<3'`" in before
    assert "uv tool install --with 'mcp>=2.3,<3' .`" in before


def test_the_platforms_are_stated_alike_in_the_readme_and_the_action():
    """Linux and macOS; Windows named as not supported until it is tested (POSIX lock and deadline)."""
    readme = " ".join(README.split("\n## ", 1)[0].split())
    assert "Linux and macOS; Windows is not supported until it is tested" in readme and "POSIX" in readme
    import yaml

    text = (ROOT / "action.yml").read_text()
    said = " ".join(yaml.safe_load(text)["description"].split())  # what the Marketplace shows
    assert "Linux and macOS runners; Windows runners are not supported until they are tested" in said
    assert "rely on POSIX" in " ".join(re.sub(r"^\s*# ?", "", text, flags=re.M).split())


def test_the_action_is_shown_under_this_repositorys_name():
    owner = SOURCE.removeprefix("https://github.com/").split("/")[0]
    assert f"uses: {owner}/ghstate@" in (ROOT / "docs" / "action.md").read_text()


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


def test_the_first_screen_shows_the_three_things_ghstate_does_with_the_actions_link():
    """Issue 56: the Action's link had slid to line 63; a newcomer's first screen (60 lines) names the checkpoint,
    the resume and CI, with the link to the Action's page."""
    first = "\n".join(README.splitlines()[:60])
    assert "*checkpoint*" in first and "*resumes*" in first and "(docs/action.md)" in first


def test_the_test_command_is_the_quick_tier_and_ci_runs_every_tier():
    """The README's test command runs the quick tier (the default); .ci/run runs it, then the thorough tier and the
    long races; CONTRIBUTING.md names each tier with its command and its time."""
    ci = (ROOT / ".ci" / "run").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert "under 2 minutes" in README
    assert "\ntests\n" in ci and "GHSTATE_TIER=thorough tests" in ci and "GHSTATE_TIER=all tests -m slow" in ci
    for tier in ("GHSTATE_TIER=thorough", "-m slow", "GHSTATE_TIER=all"):
        assert tier in contributing, tier
