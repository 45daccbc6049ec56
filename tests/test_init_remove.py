"""`ghstate init --remove`: what init wrote comes out again, for every host, and the repository is as it
was before init, byte for byte, the person's own settings, hooks and AGENTS.md included. With `--github`,
after a yes, the labels and the refs under refs/ghstate/ go too; the issues stay."""

from __future__ import annotations

import json

import pytest
from github_fake import FakeGitHub
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import examples
from test_init import LAYOUTS, snapshot, user_files


@pytest.fixture(autouse=True)
def argv(monkeypatch):
    monkeypatch.setattr("sys.argv", ["pytest"])


def tree(repo) -> dict:
    """Every file (bytes) and folder of the repository but git's own."""
    folders = {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_dir() and ".git" not in p.parts}
    return {"files": snapshot(repo), "folders": folders}


CLAUDE_SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm test:*)"],
        "deny": []
    },
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ]
    },
    "model": "opus"
}
"""
AGENTS = "# Agents\n\nRun `make test` before committing.\n"


def test_init_then_remove_restores_a_repository_with_its_own_claude_settings_and_agents_md(repo, run):
    (repo / ".claude").mkdir()
    (repo / ".claude/settings.json").write_text(CLAUDE_SETTINGS)
    (repo / "AGENTS.md").write_text(AGENTS)
    before = tree(repo)
    out = run("init", "--agent", "claude").stdout
    assert "hooks added" in out and "ghstate block written" in out
    settings = json.loads((repo / ".claude/settings.json").read_text())
    assert [h["command"] for e in settings["hooks"]["SessionStart"] for h in e["hooks"]] == [
        "echo hi", "ghstate hook session-start"]
    assert (repo / ".ghstate/.gitignore").is_file() and (repo / ".claude/commands/checkpoint.md").is_file()

    removed = run("init", "--remove").stdout
    assert tree(repo) == before
    assert ".claude/settings.json  ghstate's entries removed" in " ".join(removed.split("  ")).replace("   ", "  ") \
        or "ghstate's entries removed" in removed
    assert "AGENTS.md" in removed and "ghstate block removed" in removed
    assert "ghstate init --remove --github" in removed  # what stays on GitHub, and the command that removes it
    assert "nothing of ghstate's found" in run("init", "--remove").stdout  # again: nothing left to do


def test_init_all_then_remove_restores_every_hosts_files(repo, run):
    user_files(repo)
    before = tree(repo)
    run("init", "--agent", "all")
    assert tree(repo) != before
    run("init", "--remove")
    assert tree(repo) == before


def test_init_then_remove_in_an_empty_repository_leaves_it_empty(repo, run):
    before = tree(repo)
    run("init", "--agent", "all")
    for path in (".mcp.json", ".claude/settings.json", ".codex/config.toml", ".codex/hooks.json",
                 ".gemini/settings.json", ".cursor/mcp.json", ".cursor/rules/ghstate.mdc", "AGENTS.md",
                 ".gemini/commands/ghstate/checkpoint.toml", ".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml"):
        assert (repo / path).is_file(), path
    out = run("init", "--remove").stdout
    assert tree(repo) == before, out
    assert out.count("deleted") >= 12


# "empty servers": a person's empty "mcpServers": {} that init filled cannot be told from one init made, and
# goes with ghstate's entry (the one layout not given back byte for byte; the JSON is the person's but for it).
@pytest.mark.parametrize("layout", [name for name in LAYOUTS if name != "empty servers"])
def test_remove_gives_back_a_persons_json_in_its_own_layout(repo, run, layout):
    (repo / ".mcp.json").write_text(LAYOUTS[layout], newline="")
    before = tree(repo)
    run("init", "--agent", "claude")
    run("init", "--remove")
    assert tree(repo) == before


def test_an_edited_command_file_is_kept_unless_forced(repo, run):
    run("init", "--agent", "claude")
    command = repo / ".claude/commands/checkpoint.md"
    command.write_text("my own version\n")
    out = run("init", "--remove").stdout
    assert command.read_text() == "my own version\n" and "edited since init wrote it: kept" in out
    assert not (repo / ".claude/commands/ghstate-resume.md").exists() and not (repo / ".mcp.json").exists()
    run("init", "--remove", "--force")
    assert not (repo / ".claude").exists()


def test_remove_takes_out_the_resume_command_an_earlier_init_wrote_under_the_name_claude_code_hides(repo, run):
    from ghstate.templating import builtin_templates

    before = tree(repo)
    run("init", "--agent", "claude")
    (repo / ".claude/commands/ghstate-resume.md").rename(repo / ".claude/commands/resume.md")  # an earlier init's
    out = run("init", "--remove").stdout
    assert tree(repo) == before and ".claude/commands/resume.md" in out
    run("init", "--agent", "claude")
    hidden = repo / ".claude/commands/resume.md"
    hidden.write_text((builtin_templates() / "claude-resume.md").read_text() + "and my own line\n")
    assert "edited since init wrote it: kept" in run("init", "--remove").stdout and hidden.exists()
    run("init", "--remove", "--force")
    assert not hidden.exists()


def test_the_local_stores_checkpoints_are_kept_with_their_gitignore(repo, run, sample_file):
    run("init", "--agent", "claude")
    run("checkpoint", "--file", str(sample_file))
    run("init", "--remove")
    assert (repo / ".git/ghstate/1.md").is_file()  # the clone's store, out of the work tree: left alone
    assert not (repo / ".claude").exists()
    run("init", "--agent", "claude")
    run("checkpoint", "--file", str(sample_file), env={"GHSTATE_DIR": str(repo / ".ghstate")})
    out = run("init", "--remove", env={"GHSTATE_DIR": str(repo / ".ghstate")}).stdout
    assert (repo / ".ghstate/1.md").is_file() and (repo / ".ghstate/.gitignore").is_file()
    assert "kept: .ghstate/ holds the local store's checkpoints" in out


def test_a_pyproject_tool_table_gets_its_github_line_back_out(repo, run, isolated, monkeypatch):
    text = '[project]\nname = "app"\n\n[tool.ghstate]\nlabel = "state"\n'
    (repo / "pyproject.toml").write_text(text)
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    FakeGitHub(isolated)
    before = tree(repo)
    run("init", "--agent", "claude")
    assert "github = true" in (repo / "pyproject.toml").read_text()
    run("init", "--remove")  # without a token now: removing needs none, although init set it up for GitHub
    assert tree(repo) == before


def test_remove_on_github_deletes_labels_and_refs_after_a_yes_and_keeps_the_issues(repo, run, isolated, monkeypatch,
                                                                                   sample_file):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    fake = FakeGitHub(isolated)
    before = tree(repo)
    run("init", "--agent", "claude")
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--risk", "a second write: the chain")
    assert {"ghstate", "ghstate:ci-failing", "ghstate:blocked"} <= fake.labels
    assert any(name.startswith("refs/ghstate/") for name in fake.tasks.refs)
    fake.tasks.refs["refs/heads/main"] = next(iter(fake.tasks.refs.values()))  # a branch: never touched

    refused = run("init", "--remove", "--github", input="n\n", code=1)
    assert refused.stderr.splitlines()[-1].startswith("Error: not confirmed: nothing was changed")
    assert "ghstate" in fake.labels and (repo / ".mcp.json").exists() or (repo / ".claude").exists()

    out = run("init", "--remove", "--github", input="y\n").stdout
    assert not {"ghstate", "ghstate:ci-failing", "ghstate:blocked"} & fake.labels and "bug" in fake.labels
    assert [n for n in fake.tasks.refs if n.startswith("refs/ghstate/")] == []
    assert "refs/heads/main" in fake.tasks.refs
    assert fake.issues[1]["state"] == "open" and fake.issues[1]["labels"] == []  # the issue stays, unlabelled
    assert "label ghstate" in out and "refs/ghstate/ refs" in out
    assert fake.problems() == []
    files = tree(repo)
    assert {k: v for k, v in files["files"].items() if not k.startswith(".ghstate/")} == before["files"]


def test_remove_on_github_with_yes_asks_nothing(repo, run, isolated, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    fake = FakeGitHub(isolated)
    run("init")
    out = run("init", "--remove", "--github", "--yes").stdout
    assert "ghstate" not in fake.labels and "none listed" in out and fake.problems() == []


def test_github_and_yes_go_with_remove(repo, run):
    assert "go with --remove" in run("init", "--github", code=2).stderr
    assert "give no --agent" in run("init", "--remove", "--agent", "claude", code=2).stderr


def test_init_on_a_public_repository_says_its_checkpoints_are_public(repo, run, isolated, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    fake = FakeGitHub(isolated)
    fake.visibility = "PUBLIC"
    out = " ".join(run("init").stdout.split())
    assert "octo/hello is public: its checkpoints are public issues" in out
    fake.visibility = "PRIVATE"
    assert "is public" not in run("init").stdout and fake.problems() == []


def test_the_checkpoint_commands_draft_stays_out_of_git(repo, run):
    """/checkpoint writes .ghstate/draft.md and reads it back (templates/claude-checkpoint.md): a working
    file of one session, ignored as seen.json is; an older .gitignore gets the line on the next init."""
    import subprocess

    run("init", "--agent", "claude")
    assert "draft.md" in (repo / ".claude/commands/checkpoint.md").read_text()
    (repo / ".ghstate/draft.md").write_text("## Goal\nx\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.split()
    assert ".ghstate/.gitignore" in staged and ".ghstate/draft.md" not in staged
    ignore = repo / ".ghstate/.gitignore"
    ignore.write_text(ignore.read_text().replace("/draft.md\n", ""))
    assert "machine-local entries added" in run("init", "--agent", "claude").stdout
    assert ignore.read_text().endswith("/draft.md\n")


def test_this_machines_own_records_go_with_the_folder_when_no_checkpoint_is_there(repo, run):
    """On GitHub the store folder holds only what the hooks remember (seen.json, its lock): ignored by git,
    read by nothing else, they go with .ghstate/.gitignore; writes kept for push would keep the folder."""
    before = tree(repo)
    run("init", "--agent", "claude")
    for name in ("seen.json", ".seen.lock", ".lock"):
        (repo / ".ghstate" / name).write_text("{}\n")
    run("init", "--remove")
    assert tree(repo) == before
    run("init", "--agent", "claude")
    (repo / ".ghstate/pending").mkdir()
    (repo / ".ghstate/pending/1-new.json").write_text("{}\n")
    env = {"GHSTATE_DIR": str(repo / ".ghstate")}  # a store there: its kept writes keep the folder
    assert "kept: .ghstate/ holds" in run("init", "--remove", env=env).stdout
    assert (repo / ".ghstate/pending/1-new.json").is_file() and (repo / ".ghstate/.gitignore").is_file()
    run("init", "--remove")  # a worktree's own store from before: moved into the clone's, nothing lost
    assert (repo / ".git/ghstate/pending/1-new.json").is_file() and not (repo / ".ghstate/pending").exists()


def test_a_gitignore_an_earlier_version_wrote_goes_with_init_remove(repo, run):
    """An earlier ghstate wrote other comment lines and fewer rules: its .gitignore is still ghstate's own."""
    before = tree(repo)
    run("init", "--agent", "claude")
    (repo / ".ghstate/.gitignore").write_text(
        "# Written by ghstate: this machine's own files, kept out of git. N.md and chain/ are committable.\n"
        "/seen.json\n/.seen.lock\n/.lock\n/pending/\n/reported/\n/.*.tmp\n/draft.md\n")
    run("init", "--remove")
    assert tree(repo) == before


def test_removal_undoes_insertion_byte_for_byte_against_hypothesis_layouts():
    """Whatever a person's JSON looks like (indent, separators, a trailing blank, their own servers), init's
    entries inserted then removed give back their text byte for byte; a file that was an empty object goes
    (init cannot tell it from one it made)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from strategies import json_settings as docs

    from ghstate.agents.hosts import CLAUDE_HOOKS, add_hooks, add_mcp_server, edit_json, mcp_entry
    from ghstate.agents.removal import without_entries

    @settings(max_examples=examples(150), deadline=None)
    @given(docs, st.sampled_from([None, 1, 2, 4, "\t"]), st.sampled_from([(",", ":"), (", ", ": ")]),
           st.sampled_from(["none", "servers", "hooks"]), st.sampled_from(["", "\n", "\n\n  "]))
    def check(doc, indent, separators, own, tail):
        if own == "servers":
            doc = {**doc, "mcpServers": {"other": {"command": "x", "args": []}}}
        elif own == "hooks":
            doc = {**doc, "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
                {"type": "command", "command": "echo hi"}]}]}}
        user = json.dumps(doc, indent=indent, separators=separators if indent is None else (",", separators[1]),
                          ensure_ascii=False) + tail

        def change(d):
            return add_mcp_server(d, "f", mcp_entry("ghstate", "claude")) | add_hooks(d, "f", CLAUDE_HOOKS,
                                                                                       "ghstate", "claude")
        merged = edit_json(user, "f", change)
        assert without_entries(merged, "f") == ("" if doc == {} else user)

    check()


@pytest.mark.parametrize("user", ["# Agents\n", "# Agents\r\n\r\nRun `make`.\r\n", "# Agents\n\n\n",
                                  "x\n<!-- a comment -->\n"])
def test_the_agents_block_comes_out_as_it_went_in(user):
    from ghstate.agents.hosts import with_agents_block
    from ghstate.agents.removal import without_agents_block

    assert without_agents_block(with_agents_block(user, "How to resume.\n")) == user
    assert without_agents_block(with_agents_block(None, "How to resume.\n")) == ""


@pytest.mark.parametrize("user", ['model = "o3"\n', 'model = "o3"\r\n\r\n[profiles.fast]\r\nmodel = "o4"\r\n',
                                  "# only a comment\n"])
def test_the_codex_table_comes_out_as_it_went_in(user):
    from ghstate.agents.hosts import with_codex_server
    from ghstate.agents.removal import without_codex_server

    assert without_codex_server(with_codex_server(user, "f", "ghstate"), "f") == user
    assert without_codex_server(with_codex_server(None, "f", "ghstate"), "f") == ""
    edited = with_codex_server(user, "f", "ghstate").replace('"codex"]', '"mine"]')  # a table of CRLF lines too
    assert with_codex_server(edited, "f", "ghstate", force=True) == with_codex_server(user, "f", "ghstate")


def test_one_list_of_what_ghstate_keeps_out_of_git(tmp_path):
    """The local store's first write, init and init --remove read one list (``local.store.KEPT_OUT``): the
    .gitignore the store writes is init's byte for byte (the draft's line included: it was missing before),
    init adds nothing to it, and init --remove deletes exactly the list's ``record`` files with it."""
    from ghstate.agents import removal, setup
    from ghstate.local import store

    folder = tmp_path / ".ghstate"
    folder.mkdir()
    store.keep_out_of_git(folder)
    written = (folder / ".gitignore").read_text()
    assert written == setup.ignored() == store.IGNORED
    assert [line for line in written.splitlines() if not line.startswith("#")] == [p for p, _ in store.KEPT_OUT]
    assert "/draft.md" in written.splitlines()
    assert setup.keep_out_of_git(folder, tmp_path).text is None  # init: nothing missing
    assert set(store.RECORDS) == {"seen.json", ".seen.lock", ".lock", "reported"}
    for record in store.RECORDS:
        if record == "reported":
            (folder / record).mkdir()
        else:
            (folder / record).write_text("x")
    gone = {r.target for r in removal._store_folder(tmp_path, folder) if r.text == ""}
    assert gone == {f".ghstate/{name}" for name in store.RECORDS} | {".ghstate/.gitignore"}


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\n", "\r\n", "#", "<!--", "-->", "é"]), max_size=30).map("".join))
@example("no newline at end")  # found by a newcomer: init --remove gave it a line break it did not have
@example("x\r\ny")
@example("ends with a line break\n")
@example("ends with a blank line\n\n")
@example("")  # found by a newcomer: a committed empty AGENTS.md was deleted
def test_the_agents_md_block_comes_back_out_byte_for_byte(text):
    """AGENTS.md as a person left it (any line breaks, a last line with or without one, CRLF, empty) is, after
    init's block and init --remove, what it was, byte for byte; one that init made is deleted."""
    from ghstate.agents import hosts, removal
    from ghstate.agents.setup import builtin_templates

    body = (builtin_templates() / "agents-md.md").read_text(encoding="utf-8")
    left = removal.without_agents_block(hosts.with_agents_block(text, body))
    assert (left if left != removal.EMPTY else "") == text and left != ""
    assert removal.without_agents_block(hosts.with_agents_block(None, body)) == ""


@pytest.mark.parametrize("text", ["model = 'o3'", "model = 'o3'\n", "model = 'o3'\r\n\r\n", "[x]\r\na = 1"])
def test_codex_config_comes_back_out_byte_for_byte(text, tmp_path):
    from ghstate.agents import hosts, removal

    with_server = hosts.with_codex_server(text, str(tmp_path / "config.toml"), "ghstate", False)
    assert removal.without_codex_server(with_server, str(tmp_path / "config.toml")) == text


def test_a_committed_empty_agents_md_stays_after_init_and_remove(repo, run):
    (repo / "AGENTS.md").write_text("")
    run("init", "--agent", "codex")
    assert "ghstate:begin" in (repo / "AGENTS.md").read_text()
    run("init", "--remove")
    assert (repo / "AGENTS.md").exists() and (repo / "AGENTS.md").read_text() == ""


@pytest.mark.parametrize("text", ["# Our agents\n\nUse the tests.", "- a list item", "plain words\r\nmore"])
def test_a_block_set_apart_by_a_line_break_alone_renders_as_after_a_blank_line(text):
    """init sets its block apart from a last line without a line break by that line break alone (so that
    init --remove gives the file back byte for byte): GitHub's renderer (cmark-gfm) shows it as it shows the
    block after a blank line, its heading a heading and the person's text untouched."""
    from judges import github_html

    from ghstate.agents import hosts
    from ghstate.agents.setup import builtin_templates

    body = (builtin_templates() / "agents-md.md").read_text(encoding="utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    alone = github_html(hosts.with_agents_block(text, body))
    assert alone == github_html(hosts.with_agents_block(text + newline, body))
    assert "<h2>Working state: ghstate checkpoints</h2>" in alone
