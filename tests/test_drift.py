"""Drift, with a real git in temporary repositories: what moved since the checkpoint was written."""

from __future__ import annotations

import json

from conftest import git


def drift(run, *args):
    return json.loads(run("resume", *args, "--format", "json").stdout)["drift"]


def prompt(run):
    return run("resume").stdout


def test_no_drift_right_after_the_checkpoint(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    d = drift(run)
    assert d["commits_since"] == 0 and d["changed_files"] == [] and not d["branch_changed"]
    assert "Since the checkpoint: 0 commits; no files changed." in prompt(run)


def test_commits_and_changed_files_committed_and_not(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    (repo / "src" / "parser.ts").write_text("export const parse = () => 2;\n")
    git(repo, "commit", "-qam", "change parser")
    (repo / "README.md").write_text("edited, not committed\n")
    (repo / "new.txt").write_text("untracked\n")
    d = drift(run)
    assert d["commits_since"] == 1
    assert d["changed_files"] == ["README.md", "new.txt", "src/parser.ts"]
    assert d["reread_changed"] == ["src/parser.ts"]
    text = prompt(run)
    assert "- src/parser.ts (changed since the checkpoint)" in text
    assert "1 commit; 3 files changed (README.md, new.txt, src/parser.ts); files to re-read that changed: " \
           "src/parser.ts" in text


def test_files_dirty_at_checkpoint_and_untouched_since_are_not_drift(repo, run, sample_file):
    (repo / "README.md").write_text("work in progress\n")
    run("checkpoint", "--file", str(sample_file))
    assert drift(run)["changed_files"] == []
    (repo / "README.md").write_text("more work\n")
    assert drift(run)["changed_files"] == ["README.md"]


def test_branch_changed(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    git(repo, "checkout", "-q", "-b", "elsewhere")
    d = drift(run, "1")
    assert d["branch_changed"] and d["branch"] == "elsewhere" and d["recorded_branch"] == "feature/x"
    assert "branch is now elsewhere (was feature/x)" in run("resume", "1").stdout


def test_recorded_commit_rewritten_away(repo, run, sample_file):
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "to be amended")
    run("checkpoint", "--file", str(sample_file))
    (repo / "a.txt").write_text("b\n")
    git(repo, "commit", "-q", "--amend", "-am", "amended")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    d = drift(run)
    assert d["commit_missing"] is True
    assert "the recorded commit is not in this repository (rebased, or not fetched)" in prompt(run)


def test_history_rewritten_but_commit_still_known(repo, run, sample_file):
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "dropped later")
    run("checkpoint", "--file", str(sample_file))
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    d = drift(run)
    assert d["rewritten"] == 1 and d["commits_since"] == 0
    assert "history was rewritten (1 recorded commits are no longer on HEAD)" in prompt(run)


def test_outside_git_drift_is_unknown_not_wrong(tmp_path, monkeypatch, run, sample_file):
    monkeypatch.chdir(tmp_path)
    run("checkpoint", "--file", str(sample_file))
    d = drift(run, "1")
    assert d["known"] is False and d["commits_since"] == 0
    assert "Since the checkpoint" not in run("resume", "1").stdout


def test_reread_matching_folders_globs_and_line_suffixes():
    from ghstate.drift import matches

    assert matches("src/", "src/a.py") and matches("src", "src/a.py") and not matches("src", "srcx/a.py")
    assert matches("src/**/*.py", "src/x/y.py") and matches("src/a.py:120", "src/a.py")
    assert matches("./src/a.py", "src/a.py") and not matches("", "a")
