"""The main job end to end on the local store: checkpoint, resume, show, list, log, lint."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE, git

from ghstate.cli import cli
from ghstate.core.parse import parse


def body(repo, number=1):
    return (repo / ".git" / "ghstate" / f"{number}.md").read_text()


def state(repo, number=1):
    return parse(body(repo, number)).checkpoint


def test_checkpoint_creates_then_resume_prints_the_prompt(repo, run, sample_file):
    out = run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor").stdout
    assert out.splitlines() == ["Created checkpoint local #1 (revision 1): created with 3 phases (1 done)",
                                ".git/ghstate/1.md"]
    prompt = run("resume").stdout
    assert "Next phase: Phase 2: matcher abstraction (2 of 3)" in prompt
    assert "Locked decisions (settled, do not reopen):\n- required flags, not positional" in prompt
    assert "Start at Phase 2. Re-read parser module and tests before editing matcher code." in prompt
    assert "treat any earlier picture of the code as stale" in prompt
    assert "- src/parser.ts" in prompt
    assert "<checkpoint>" in prompt and "</checkpoint>" in prompt
    cp = state(repo)
    assert cp.title == "CLI refactor"
    assert cp.meta.revision == 1 and cp.meta.branch == "feature/x"
    assert cp.meta.commit == git(repo, "rev-parse", "HEAD")


def test_body_on_disk_is_exactly_what_an_issue_carries(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    text = body(repo)
    assert text.startswith("<!-- ghstate:v1 {")
    assert "\n## Goal\nRefactor the CLI parser" in text
    assert text.endswith("before editing matcher code.\n")
    assert not list((repo / ".git" / "ghstate").glob("*.tmp"))


@pytest.mark.parametrize("ref", ["Phase 2", "2", "Phase 2: matcher abstraction", "phase 2"])
def test_done_accepts_label_index_or_name_and_changes_only_that(repo, run, sample_file, ref):
    run("checkpoint", "--file", str(sample_file))
    before = state(repo)
    out = run("checkpoint", "--done", ref).stdout
    assert "Phase 2 done" in out
    after = state(repo)
    assert [p.done for p in after.phases] == [True, True, False]
    assert after.meta.revision == before.meta.revision + 1
    for key in ("goal", "decisions", "questions", "risks", "files", "resume", "extra"):
        assert getattr(after, key) == getattr(before, key)
    assert [p.steps for p in after.phases] == [p.steps for p in before.phases]


STEPPED = SAMPLE.replace("- [ ] Phase 2: matcher abstraction\n",
                         "- [ ] Phase 2: matcher abstraction\n  - [ ] define the protocol\n  - [x] port the fuzzy one\n"
                         "  - a note, not a checkbox\n")


def test_done_ticks_the_phases_steps_and_undo_unticks_them(repo, run, tmp_path):
    """``--done "Phase 2"`` is the whole phase done: its steps too (show said ✓ Phase 2 (0/2 steps)); a
    plain bullet among the steps is no checkbox and stays one. ``--undo`` reopens the phase and its steps."""
    (tmp_path / "c.md").write_text(STEPPED)
    run("checkpoint", "--file", str(tmp_path / "c.md"))
    run("checkpoint", "--done", "Phase 2")
    phase = state(repo).phases[1]
    assert phase.done and [s.done for s in phase.steps] == [True, True, None]
    assert "- [x] define the protocol" in body(repo) and "  - a note, not a checkbox" in body(repo)
    assert "(2/2 steps)" in run("show", "1").stdout
    run("checkpoint", "--undo", "Phase 2")
    phase = state(repo).phases[1]
    assert not phase.done and [s.done for s in phase.steps] == [False, False, None]
    assert run("lint", "1").stdout == ""


def test_decision_and_resume_flags_change_only_what_they_name(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    run("checkpoint", "--decision", "matcher is a protocol, not a class", "--resume", "Start Phase 3")
    after = body(repo)
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert changed[1:] == ["- matcher is a protocol, not a class", "Start Phase 3"]
    assert changed[0].startswith("<!-- ghstate:v1 ")  # only the revision stamp besides


def test_undo_phase_add_question_risk_read(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--undo", "1", "--phase", "Phase 4: docs", "--question", "q?", "--risk", "r!",
        "--files", "src/matcher.ts", "--goal", "New goal")
    cp = state(repo)
    assert cp.phases[0].done is False and cp.phases[-1].name == "Phase 4: docs"
    assert cp.questions[-1] == "q?" and cp.risks[-1] == "r!" and cp.files[-1] == "`src/matcher.ts`"
    assert cp.goal == "New goal"


def test_same_content_is_not_rewritten(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    first = body(repo)
    out = run("checkpoint", "--file", str(sample_file)).stdout
    assert out.startswith("No changes: local #1 is up to date (revision 1).")
    assert body(repo) == first


def test_dry_run_prints_and_writes_nothing(repo, run, sample_file):
    out = run("checkpoint", "--file", str(sample_file), "--dry-run").stdout
    assert out.startswith("<!-- ghstate:v1 ") and "## Resume instruction" in out
    assert not (repo / ".git" / "ghstate").exists() or not list((repo / ".git" / "ghstate").glob("*.md"))


def test_dry_run_with_json_prints_the_state_that_would_be_written(repo, run, sample_file):
    new = json.loads(run("checkpoint", "--file", str(sample_file), "--dry-run", "--json").stdout)
    assert new["issue"] is None and new["next_phase"] == "Phase 2: matcher abstraction"
    assert not (repo / ".git" / "ghstate").exists() or not list((repo / ".git" / "ghstate").glob("*.md"))
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    update = json.loads(run("checkpoint", "1", "--risk", "zz", "--dry-run", "--json").stdout)
    assert update["issue"] == 1 and update["risks"][-1] == "zz" and update["meta"]["revision"] == 2
    assert body(repo) == before


def test_json_output_and_incremental_json_input(repo, run, sample_file):
    data = json.loads(run("checkpoint", "--file", str(sample_file), "--json").stdout)
    assert data["issue"] == 1 and data["next_phase"] == "Phase 2: matcher abstraction"
    assert data["meta"]["revision"] == 1
    data["decisions"].append("no regex in the parser")
    out = run("checkpoint", "1", "--file", "-", "--json", input=json.dumps(data)).stdout
    assert json.loads(out)["decisions"] == ["required flags, not positional", "no regex in the parser"]
    assert json.loads(out)["meta"]["revision"] == 2


def test_a_writes_json_says_whether_it_created_updated_or_left_it_unchanged(repo, run, sample_file):
    """``checkpoint --json`` was the same for a write and for "No changes" but for meta.revision."""
    def result(*args):
        return json.loads(run("checkpoint", *args, "--json").stdout)["result"]

    assert result("--file", str(sample_file), "--dry-run") == "created"
    assert result("--file", str(sample_file)) == "created"
    assert result("--file", str(sample_file)) == "unchanged"
    assert result("--risk", "zz", "--dry-run") == "updated"
    assert result("--risk", "zz") == "updated"
    assert result("--risk", "zz") == "unchanged"  # the item is there already
    assert result("1", "--done", "Phase 2") == "updated"


def test_file_without_a_section_keeps_it(repo, run, sample_file, tmp_path):
    run("checkpoint", "--file", str(sample_file))
    partial = tmp_path / "partial.md"
    partial.write_text("## Resume instruction\nStart at Phase 3.\n")
    run("checkpoint", "--file", str(partial))
    cp = state(repo)
    assert cp.resume == "Start at Phase 3." and len(cp.phases) == 3 and cp.decisions


def test_branch_finds_its_own_checkpoint(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    git(repo, "checkout", "-q", "-b", "other")
    out = run("checkpoint", "--phase", "Phase 1: other work", "--resume", "go").stdout
    assert "local #2" in out
    git(repo, "checkout", "-q", "feature/x")
    assert "Phase 2: matcher abstraction" in run("resume", "--format", "short").stdout
    git(repo, "checkout", "-q", "other")
    assert "Phase 1: other work" in run("resume", "--format", "short").stdout


def test_show_list_log(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor", "--agent", "claude-code",
        "--session", "s-41")
    run("checkpoint", "--done", "2", "--role", "reviewer", "--agent", "codex")
    shown = run("show").stdout
    assert "CLI refactor" in shown and "2/3 phases" in shown and "✓ Phase 2: matcher abstraction" in shown
    rows = json.loads(run("list", "--json").stdout)
    assert rows == [{
        "number": 1, "issue": 1, "title": "CLI refactor", "url": str(repo / ".git" / "ghstate" / "1.md"),
        "branch": "feature/x",
        "status": "open", "phases_done": 2, "phases_total": 3, "next_phase": "Phase 3: wire config",
        "verification": None, "revision": 2, "updated_at": rows[0]["updated_at"],
    }]
    assert "local #1" in run("list").stdout
    log = run("log", "1").stdout.splitlines()
    assert log[0].startswith("r1") and "claude-code (editor, session s-41): created with 3 phases" in log[0]
    assert log[1].startswith("r2") and "codex (reviewer): Phase 2 done" in log[1]
    executions = json.loads(run("resume", "--format", "json").stdout)["executions"]
    assert [(e["agent"], e["role"], e["revision"]) for e in executions] == [
        ("claude-code", "editor", 1), ("codex", "reviewer", 2)]


def test_resume_formats(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor")
    short = run("resume", "--format", "short").stdout
    assert short.count("\n") == 1
    assert short.startswith("local #1 CLI refactor | next: Phase 2: matcher abstraction (1/3 done)")
    from ghstate.core.chain import split

    assert run("resume", "--format", "markdown").stdout == split(body(repo))[0]  # without the chain's key
    data = json.loads(run("resume", "1", "--format", "json").stdout)
    assert data["schema"] == 1 and data["drift"]["commits_since"] == 0 and data["files"] == [
        "src/parser.ts", "src/parser.test.ts"]


def test_resume_writes_nothing(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = {p: p.read_bytes() for p in (repo / ".git" / "ghstate").rglob("*") if p.is_file()}
    run("resume")
    run("resume", "--format", "json")
    after = {p: p.read_bytes() for p in (repo / ".git" / "ghstate").rglob("*") if p.is_file()}
    assert before == after


def test_parse_render_plumbing_round_trip(run, sample_file):
    parsed = run("parse", str(sample_file)).stdout
    rendered = run("render", "-", input=parsed).stdout
    assert run("parse", "-", input=rendered).stdout == parsed
    assert json.loads(parsed)["next_phase"] == "Phase 2: matcher abstraction"


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (("checkpoint", "--file", "missing.md"), None, "Error: cannot read missing.md: no such file"),
    (("checkpoint", "--file", "-"), "", "Error: standard input is empty"),
    (("checkpoint", "--file", "-"), b"\x89PNG\r\n\x1a\n\x00\x00", "Error: standard input is binary"),
    (("checkpoint", "--file", "-"), b"caf\xe9 au lait", "Error: standard input is not UTF-8 text"),
    (("checkpoint", "--file", "-"), "{not json", "Error: standard input looks like JSON but is not valid JSON"),
    (("checkpoint", "--file", "-"), '{"phases": [{"done": true}]}', "Error: standard input: invalid state: "
                                                                       "phases[0].name: is required"),
    (("render", "-"), SAMPLE, "Error: standard input is not a JSON state"),
    (("render", "-"), '{"schema": 9}', "Error: standard input: invalid state: schema"),
    (("parse", "-"), b"\x00\x01", "Error: standard input is binary"),
    (("resume", "7"), None, "Error: no local checkpoint #7"),
    (("show", "3"), None, "Error: no local checkpoint #3"),
    (("resume",), None, "Error: no open checkpoint for branch feature/x in the local store"),
    (("checkpoint", "--file", "-"), "[1, 2]", "Error: standard input: invalid state: the JSON state must be an object"),
    (("checkpoint", "--file", "-"), "null", "Error: standard input: invalid state: the JSON state must be an object"),
    (("checkpoint", "--file", "-"), "## Goal\nx\x1b]0;pwned\x07\n", "Error: standard input holds a control character"),
])
def test_bad_input_gets_one_error_line(repo, run, args, stdin, message):
    result = run(*args, input=stdin, code=1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_unknown_phase_is_an_error_and_writes_nothing(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    result = run("checkpoint", "--done", "Phase 9", code=1)
    assert result.stderr.startswith("Error: no phase 'Phase 9'; phases are: 1. Phase 1: parser changes")
    assert body(repo) == before


def test_usage_errors_exit_2(repo, run):
    assert "nothing to write" in run("checkpoint", code=2).stderr
    assert "is not an issue number" in run("resume", "abc", code=2).stderr
    assert "Invalid value for '--format'" in run("resume", "--format", "xml", code=2).stderr


def test_version_and_help_for_every_command(run):
    assert run("--version").stdout.startswith("ghstate ")
    from ghstate.cli import cli

    for name, command in cli.commands.items():
        text = run(name, "--help").stdout
        assert command.help and "Example" in command.help, f"{name} has no example in its help"
        assert text.strip(), name


def test_lint(repo, run, tmp_path, sample_file):
    assert run("lint", str(sample_file)).stdout == ""
    bad = tmp_path / "bad.md"
    bad.write_text("## Goal\nx\n\n## Status\n- Phase 1 not a box\n")
    result = run("lint", str(bad), code=1)
    assert result.stdout.splitlines() == [
        f"{bad}:5: GS001 error: no resume instruction: add '## Resume instruction' with the exact next step",
        f"{bad}:5: GS003 error: phase 'Phase 1 not a box' is not a checkbox; write it as '- [ ] Phase 1 not a box'"]
    assert result.stderr == f"Error: {bad}: 2 errors and 0 warnings; fix the errors listed above\n"


def test_debug_shows_traceback(repo, run, monkeypatch):
    monkeypatch.setenv("GHSTATE_DEBUG", "1")
    from ghstate.errors import NotFound

    with pytest.raises(NotFound):
        run("resume", "7", code=None)


# ------------------------------------------------------------------- no branch, broken surroundings


def test_outside_git_checkpoints_update_the_same_task(tmp_path, monkeypatch, run, sample_file):
    monkeypatch.chdir(tmp_path)
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--decision", "a second revision, not a second task")
    assert sorted(p.name for p in (tmp_path / ".ghstate").glob("*.md")) == ["1.md"]
    assert "a second revision, not a second task" in run("resume").stdout


def test_a_detached_head_finds_what_was_written_there(repo, run, sample_file):
    git(repo, "checkout", "-q", "--detach")
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--risk", "r")
    assert sorted(p.name for p in (repo / ".git" / "ghstate").glob("*.md")) == ["1.md"]
    assert run("resume", "--format", "json").stdout


def test_a_failed_create_leaves_no_empty_checkpoint(repo, run, sample_file, monkeypatch):
    def full_disk(path, text):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("ghstate.local.store._temp_beside", full_disk)
    result = run("checkpoint", "--file", str(sample_file), code=1)
    assert result.stderr.startswith("Error: cannot use ") and "No space left on device" in result.stderr
    assert not list((repo / ".git" / "ghstate").glob("*.md"))


@pytest.mark.parametrize("step", ["os.fsync", "os.link"])
def test_a_create_killed_at_any_step_leaves_no_checkpoint(repo, run, sample_file, monkeypatch, step):
    """Killed while the body is being written, or right before it is put in place: no N.md at all."""
    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # what a signal does to the process at that moment

    with monkeypatch.context() as patched:  # undoing only this, not the repository's folder and environment
        patched.setattr(step, killed)
        result = run.runner.invoke(cli, ["checkpoint", "--file", str(sample_file)])
    assert result.exit_code != 0
    assert not list((repo / ".git" / "ghstate").glob("*.md"))
    assert "No open checkpoints" in run("list").stdout + run("list").stderr


def test_an_empty_file_left_by_an_older_version_is_no_checkpoint(repo, run):
    (repo / ".git" / "ghstate").mkdir()
    (repo / ".git" / "ghstate" / "1.md").write_text("")
    listing = run("list")
    assert "#1" not in listing.stdout


def test_a_store_that_is_not_a_folder_is_a_clear_error(repo, run, sample_file, monkeypatch):
    (repo / "afile").write_text("x")
    monkeypatch.setenv("GHSTATE_DIR", str(repo / "afile"))
    result = run("checkpoint", "--file", str(sample_file), code=1)
    assert result.stderr.startswith("Error: cannot use ") and "internal error" not in result.stderr


def test_a_broken_template_is_named(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    (repo / ".ghstate" / "templates").mkdir(parents=True)
    (repo / ".ghstate" / "templates" / "prompt.md.j2").write_text("{{ x")
    result = run("resume", code=1)
    assert result.stderr.startswith("Error: the template ") and "prompt.md.j2 cannot be used" in result.stderr


def test_a_template_that_loses_the_checkpoint_is_refused(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    (repo / ".ghstate" / "templates").mkdir(parents=True)
    (repo / ".ghstate" / "templates" / "checkpoint.md.j2").write_text("CUSTOM BODY\n")
    result = run("checkpoint", "--decision", "x", code=1)
    assert "writes a body that does not read back as the checkpoint" in result.stderr and body(repo) == before


def test_a_template_that_keeps_everything_is_used(repo, run, sample_file):
    from ghstate.templating import builtin_templates

    (repo / ".ghstate" / "templates").mkdir(parents=True)
    ours = (builtin_templates() / "checkpoint.md.j2").read_text().replace("{{ marker }}\n", "{{ marker }}\n\n")
    (repo / ".ghstate" / "templates" / "checkpoint.md.j2").write_text(ours)
    run("checkpoint", "--file", str(sample_file))
    assert body(repo).split("\n")[1] == ""


def test_lint_of_a_file_follows_the_repository_policy(repo, run, tmp_path):
    (repo / "pyproject.toml").write_text("[tool.ghstate]\nmax_item_chars = 20\n")
    path = tmp_path / "cp.md"
    path.write_text("## Goal\nx\n\n## Status\n- [ ] Phase 1\n\n## Risks\n- a risk described at length\n\n"
                    "## Resume\nPhase 1\n")
    assert "(limit 20)" in run("lint", str(path)).stdout


@pytest.mark.parametrize("toml", ["[tool.ghstate.sub]\nx = 1\n", "[tool]\nghstate = { bogus = 1 }\n",
                                  "[tool . ghstate]\nbogus = 1\n"])
def test_config_mistakes_are_said_however_the_table_is_written(repo, run, toml):
    (repo / "pyproject.toml").write_text(toml)
    assert "Warning: unknown key" in run("list").stderr  # a warning: a newer ghstate's key stops nothing


def test_issue_form_lists_one_per_line_reach_the_prompt(repo, run, tmp_path):
    form = tmp_path / "form.md"
    form.write_text("### Goal\n\nShip it\n\n### Current status\n\n- [ ] Phase 1: do\n\n### Decisions locked\n\n"
                    "use postgres\nno ORM\n\n### Files to re-read\n\n`src/b.py`, `src/c.py`\n\n"
                    "### Resume instruction\n\nStart Phase 1\n")
    state_json = json.loads(run("parse", str(form)).stdout)
    assert state_json["decisions"] == ["use postgres", "no ORM"] and state_json["files"] == ["src/b.py", "src/c.py"]
    run("checkpoint", "--file", str(form))
    prompt = run("resume").stdout
    assert "- use postgres\n- no ORM" in prompt and "- src/c.py" in prompt
    assert "Verification: none recorded yet" in prompt


# ------------------------------------------------------------------ --file against what happened since

PERSONAL = ("Preamble by a person.\n\n## Goal\nShip it.\n\n## Current status\n- [ ] Phase 1: a\n- [ ] Phase 2: b\n"
            "- [ ] Phase 3: c\n\n## Decisions locked\n- keep v1\n- no ORM\n\n## Notes\noriginal notes\n\n"
            "## Resume instruction\nStart Phase 1.\n")


def test_a_stale_file_keeps_a_persons_edits_to_unknown_sections_and_the_preamble(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(PERSONAL)
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    state = json.loads(run("show", "1", "--json").stdout)
    path = repo / ".git" / "ghstate" / "1.md"
    path.write_text(path.read_text().replace("original notes", "PERSON rewrote the notes")
                    .replace("Preamble by a person.", "Preamble EDITED"))  # a web edit
    state["decisions"].append("agent decision")
    run("checkpoint", "1", "--file", "-", input=json.dumps(state))
    text = path.read_text()
    assert "PERSON rewrote the notes" in text and "Preamble EDITED" in text and "agent decision" in text


def test_a_markerless_file_from_an_earlier_revision_keeps_what_came_after(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(PERSONAL)
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    run("checkpoint", "--done", "1", "--decision", "a reviewer's decision")  # revision 2, by someone else
    (tmp_path / "mine.md").write_text(PERSONAL.replace("Start Phase 1.", "Start Phase 2 now."))  # from rev 1
    run("checkpoint", "--file", str(tmp_path / "mine.md"))
    cp = state(repo)
    assert cp.resume == "Start Phase 2 now." and cp.phases[0].done and "a reviewer's decision" in cp.decisions


def test_force_replaces_unknown_sections_and_the_preamble_too(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(PERSONAL)
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["extra"] = []
    run("checkpoint", "1", "--file", "-", "--force", input=json.dumps(state_json))
    assert "original notes" not in body(repo) and "Preamble by a person" not in body(repo)


def test_verification_data_counts_as_part_of_the_section(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(PERSONAL)
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["verification"] = {"status": "failing", "commit": "abc1234", "text": "failing at abc1234"}
    run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["verification"]["status"] = "passing"  # the data alone changes
    run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    assert state(repo).verification_data.status == "passing"
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["verification"] = None  # cleared: the text and CI's data go together
    run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    assert state(repo).verification_data is None and "Verification: none recorded yet" in run("resume").stdout


def test_indented_code_in_a_list_section_stays_code(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text("## Goal\nShip.\n\n## Current status\n- [ ] Phase 1: a\n\n## Decisions locked\n"
                                    "    SELECT 1;\n\n- keep v1\n- no ORM\n\n## Resume instruction\nGo.\n")
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    assert state(repo).decisions == ("keep v1", "no ORM")
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["decisions"] = ["keep v1"]
    run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    cp = state(repo)
    assert cp.decisions == ("keep v1",) and any(e.body == "    SELECT 1;" for e in cp.extra)


def test_a_heading_that_ends_in_a_hash_survives_json(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text("## Goal\nx\n\n## Notes on C#\nhello\n\n## Resume instruction\ngo\n")
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    for _ in range(2):
        state_json = json.loads(run("show", "1", "--json").stdout)
        state_json["decisions"].append(f"d{len(state_json['decisions'])}")
        run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    assert body(repo).count("## Notes on C#\nhello") == 1


@pytest.mark.parametrize("args", [
    ("checkpoint", "--decision", "x\x1b]0;pwned\x07"),
    ("checkpoint", "--agent", "bot\nnext line", "--decision", "x"),
    ("checkpoint", "--phase", "  "),
    ("checkpoint", "--done", "2", "--undo", "2"),
    ("resume", "-R", "not a repo"),
])
def test_flags_that_cannot_be_meant_are_usage_errors(repo, run, sample_file, args):
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    result = run(*args, code=2)
    assert "Error" in result.stderr and body(repo) == before


def test_an_unreadable_checkpoint_is_listed_as_a_problem(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    (repo / ".git" / "ghstate" / "2.md").write_bytes(b"caf\xe9")
    result = run("list")
    assert "local #1" in result.stdout and "Warning: " in result.stderr and "2.md is not UTF-8" in result.stderr


def test_the_execution_comes_from_the_environment_too(repo, run, sample_file, monkeypatch):
    monkeypatch.setenv("GHSTATE_AGENT", "codex")
    monkeypatch.setenv("GHSTATE_ROLE", "editor")
    monkeypatch.setenv("GHSTATE_SESSION", "s-9")
    run("checkpoint", "--file", str(sample_file))
    executions = json.loads(run("resume", "--format", "json").stdout)["executions"]
    assert [(e["agent"], e["role"], e["session"]) for e in executions] == [("codex", "editor", "s-9")]
    assert "codex (editor, session s-9)" in run("log", "1").stdout


def test_every_hook_subcommand_has_help_with_an_example(run):
    for sub in ("session-start", "pre-compact"):
        out = run("hook", sub, "--help").stdout
        assert "Example" in out and out.split("\n\n")[1].strip()


def test_a_markerless_file_that_matches_two_revisions_equally_loses_neither(repo, run):
    run("checkpoint", "--phase", "Phase 1: start", "--resume", "Start at Phase 1", "--goal", "G0")
    old = "\n".join(body(repo).split("\n")[1:])  # the agent keeps a copy, without the marker
    run("checkpoint", "1", "--decision", "reviewer: keep v1 API", "--role", "reviewer")
    copy = repo / "old.md"
    copy.write_text(old + "\n## Decisions locked\n- agent: use sqlite\n")
    run("checkpoint", "1", "--file", str(copy))
    assert {"reviewer: keep v1 API", "agent: use sqlite"} <= set(state(repo).decisions)


def test_a_markerless_file_older_than_the_history_loses_nothing(repo, run):
    run("checkpoint", "--phase", "Phase 1: start", "--resume", "Start at Phase 1", "--goal", "G0",
        "--decision", "d1")
    old = "\n".join(body(repo).split("\n")[1:])
    for i in range(2, 9):
        run("checkpoint", "1", "--decision", f"d{i}")
    copy = repo / "old.md"
    copy.write_text(old.replace("G0", "G1"))
    run("checkpoint", "1", "--file", str(copy))
    cp = state(repo)
    assert cp.goal == "G1" and {f"d{i}" for i in range(1, 9)} <= set(cp.decisions)


def test_show_json_after_a_web_edit_does_not_pass_the_edit_off_as_the_files(repo, run):
    run("checkpoint", "--phase", "Phase 1: start", "--resume", "Start at Phase 1", "--goal", "Ship it.")
    path = repo / ".git" / "ghstate" / "1.md"
    path.write_text(path.read_text().replace("Ship it.", "Ship it. Person: also Windows."))
    state_json = json.loads(run("show", "1", "--json").stdout)
    state_json["goal"] += " Agent: and macOS."
    result = run("checkpoint", "1", "--file", "-", input=json.dumps(state_json))
    assert "Warning" not in result.stderr and "concurrent edit" not in body(repo)
    assert state(repo).goal == "Ship it. Person: also Windows. Agent: and macOS."
    draft = run("resume", "1", "--format", "markdown").stdout  # the same for a markdown draft
    path.write_text(path.read_text().replace("Agent: and macOS.", "Agent: and macOS. Person: and BSD."))
    result = run("checkpoint", "1", "--file", "-", input=draft.replace("Start at Phase 1", "Start at Phase 1 now"))
    assert "concurrent edit" not in body(repo) and state(repo).goal.endswith("Person: and BSD.")


def test_the_prompt_shows_typed_text_as_typed_not_its_escapes(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--decision", "Phase 4: support <T> generics", "--resume", "rename __init__ *first*")
    prompt = run("resume").stdout
    assert "support <T> generics" in prompt and "\\<T>" not in prompt
    assert "rename __init__ *first*" in prompt


TYPED = ["support <T> in __init__ and *args", "# not a heading", "1. first, not a list", "> not a quote",
         "a | b and [x](y) and &amp; and \\ back", "`code <T>` stays code"]


def test_show_prints_text_as_typed_not_githubs_escaping(repo, run):
    """`show` is a person's view, as `resume` and `--json` are: what was typed, not `\\<T>`, `\\_\\_` or `&#35;`
    (issue 48). The body keeps the escapes GitHub needs."""
    args = [a for t in TYPED for a in ("--decision", t, "--risk", t, "--question", t)]
    run("checkpoint", "--goal", TYPED[0], "--phase", TYPED[0], "--resume", TYPED[1], *args)
    assert "\\<T>" in body(repo) and "&#35; not a heading" in body(repo)
    out = run("show", "1").stdout
    for t in TYPED:
        assert out.count(f"  • {t}\n") == 3, t
    assert f"Goal\n  {TYPED[0]}\n" in out and f"  · {TYPED[0]}\n" in out and f"Resume\n  {TYPED[1]}\n" in out
    assert "\\" not in out.replace("\\ back", "") and "&#" not in out
    as_json = json.loads(run("show", "1", "--json").stdout)
    assert as_json["decisions"] == TYPED  # the same text the JSON gives
    assert f"next: {TYPED[0]} (0/1 done)" in run("resume", "--format", "short").stdout


# --------------------------------------------------------------------- nothing ignored without a word (issue 48)

MEANT = ("## Goal\nShip.\n\n## Current status\n- [ ] Phase 1: a\n\n## Decision\n- use X\n\n"
         "## Risks and mitigations\n- slow\n\n## Notes from Bob\nhi\n\n## Next steps\nthen Y\n\n"
         "## Resume instruction\nStart at Phase 1.\n")


def test_sections_meant_as_ghstates_are_warned_at_the_write_and_named_by_the_prompt(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(MEANT)
    warned = run("checkpoint", "--file", str(tmp_path / "cp.md")).stderr.splitlines()
    assert [w.split(":")[0] for w in warned] == ["Warning"] * 3
    assert "the file's section 'Decision' is not ghstate's 'Decisions locked'" in warned[0]
    assert "'Risks and mitigations'" in warned[1] and "'Next steps'" in warned[2]
    assert "use X" in body(repo)  # kept as written
    prompt = run("resume").stdout
    assert ("Other sections, not shown here (`ghstate show 1` has them): Decision; Risks and mitigations; "
            "Notes from Bob; Next steps\n") in prompt
    assert run("checkpoint", "--file", str(tmp_path / "cp.md")).stderr == ""  # said once, when they came
    assert "GS014" in run("lint", str(tmp_path / "cp.md")).stdout


@pytest.mark.parametrize(("given", "said"), [
    ({"resume_at": "Start at Phase 2.", "decisions": ["d"]}, "unknown key 'resume_at' (the state's key for that "
                                                             "is 'resume'); a state's keys are schema, title,"),
    ({"goal": "g", "decision": ["d"]}, "unknown key 'decision' (the state's key for that is 'decisions')"),
    ({"goal": "g", "colour": "red"}, "unknown key 'colour'; a state's keys are "),
    ({"phases": [{"name": "x", "dne": True}]}, "phases[0]: unknown key 'dne'; its keys are name, done, status, steps"),
    ({"phases": [{"name": "x", "steps": [{"name": "a", "don": True}]}]}, "phases[0].steps[0]: unknown key 'don'"),
    ({"extra": [{"heading": "x", "bdy": "y"}]}, "extra[0]: unknown key 'bdy'; its keys are heading, level, after"),
])
def test_a_json_state_with_an_unknown_key_is_refused_naming_the_known_ones(repo, run, sample_file, given, said):
    run("checkpoint", "--file", str(sample_file))
    before = body(repo)
    result = run("checkpoint", "--file", "-", input=json.dumps(given), code=1)
    assert result.stderr.startswith(f"Error: standard input: invalid state: {said}")
    assert body(repo) == before and len(result.stderr.splitlines()) == 1
    assert said in run("render", "-", input=json.dumps(given), code=1).stderr


def test_ghstates_own_json_output_is_input_as_it_stands(repo, run, sample_file):
    """The keys show, resume and checkpoint add beside the state (fit, notes, result, …) are no unknown keys."""
    run("checkpoint", "--file", str(sample_file))
    outputs = (run("show", "1", "--json"), run("resume", "1", "--json"),
               run("checkpoint", "1", "--json", "--goal", "g"))
    for out in outputs:
        assert run("checkpoint", "1", "--file", "-", input=out.stdout).stdout.startswith("No changes")


def test_a_file_whose_removals_both_sides_kept_says_so_when_nothing_else_changed(repo, run):
    """The file was made before a decision was added, and removes another: the section is merged, both kept,
    and the write changes nothing. It said nothing at all (the warning was dropped with the no-op)."""
    run("checkpoint", "--goal", "g", "--decision", "A", "--decision", "B", "--resume", "go")
    made = run("resume", "1", "--format", "markdown").stdout
    run("checkpoint", "--decision", "C")
    result = run("checkpoint", "--file", "-", input=made.replace("- B\n", ""))
    assert result.stdout.startswith("No changes: local #1 is up to date (revision 2).")
    assert result.stderr == ("Warning: the file and the checkpoint both changed Decisions locked since the file "
                             "was made; both are kept, so this write changed nothing (--force writes the file's "
                             "sections)\n")
    assert state(repo).decisions == ("A", "B", "C")


def test_force_replaces_only_the_sections_the_file_holds_and_names_what_it_removed(repo, run, tmp_path):
    (tmp_path / "cp.md").write_text(PERSONAL.replace("## Notes\n", "## Notes from Bob\n"))
    run("checkpoint", "--file", str(tmp_path / "cp.md"))
    run("checkpoint", "--decision", "added later")
    (tmp_path / "mine.md").write_text("## Decisions locked\n- keep v1\n\n## Scratch\nmine\n")
    result = run("checkpoint", "--file", str(tmp_path / "mine.md"), "--force")
    assert result.stdout.startswith("Updated checkpoint local #1 (revision 3): -2 decisions; +section 'Scratch'")
    assert result.stderr == ("Warning: --force removed what the file does not hold: decision 'no ORM'; decision "
                             "'added later'\n")
    cp = state(repo)
    assert cp.decisions == ("keep v1",) and len(cp.phases) == 3 and cp.resume == "Start Phase 1."
    assert "## Notes from Bob\noriginal notes" in body(repo) and "Preamble by a person." in body(repo)


# ------------------------------------------------------------------------------- recovery hints (issue 48)


def test_after_git_branch_m_resume_names_the_checkpoint_of_the_old_name_and_move(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    git(repo, "branch", "-m", "feature/x", "feature/y")
    git(repo, "branch", "-m", "feature/y", "feat-renamed")  # two renames: the reflog has both, latest first
    result = run("resume", code=1)
    assert result.stderr == ("Error: no open checkpoint for branch feat-renamed in the local store; this branch was "
                             "renamed from feature/x, whose checkpoint is local #1: 'ghstate resume 1' reads it, and "
                             "'ghstate checkpoint 1 --move' with your next change makes it this branch's\n")
    run("checkpoint", "1", "--move", "--resume", "Start at Phase 2 on the new name.")
    assert "Start at Phase 2 on the new name." in run("resume").stdout


def test_a_branch_never_renamed_gets_the_plain_hint(repo, run):
    git(repo, "checkout", "-q", "-b", "fresh")
    assert run("resume", code=1).stderr.endswith("give an ISSUE number, or create one with 'ghstate checkpoint'\n")


def test_list_close_and_ready_agree_on_number_and_an_absolute_url(repo, run, sample_file):
    """The checkpoint's number is `number` in list, close and ready JSON (`issue`, the older key, stays in list
    and close); close's url is list's, absolute, not a path relative to here (issue 48)."""
    run("checkpoint", "--file", str(sample_file))
    (row,) = json.loads(run("list", "--json").stdout)
    assert row["number"] == row["issue"] == 1 and row["url"] == str(repo / ".git" / "ghstate" / "1.md")
    assert json.loads(run("list", "--json", "number,url").stdout) == [{"number": 1, "url": row["url"]}]
    would = run("close", "1", "--dry-run")
    assert would.stdout == "Would close local #1: .git/ghstate/1.md\n" and (repo / ".git" / "ghstate" / "1.md").exists()
    assert json.loads(run("close", "1", "--dry-run", "--json").stdout) == {
        "number": 1, "issue": 1, "url": row["url"], "state": "open"}
    closed = json.loads(run("close", "1", "--json").stdout)
    assert closed == {"number": 1, "issue": 1, "url": str(repo / ".git" / "ghstate" / "closed" / "1.md"),
                      "state": "closed"}
    assert run("close", "1", "--days", "3", code=2).stderr.endswith("Error: --days goes with --stale\n")


def test_without_a_reflog_the_local_store_names_a_checkpoint_of_a_branch_gone_whose_commit_is_here(repo, run,
                                                                                                  sample_file):
    """Renamed where this clone's reflog does not say it (another clone, an expired reflog): the store shows a
    checkpoint of a branch this clone no longer has, whose commit is in this branch's history."""
    run("checkpoint", "--file", str(sample_file))
    git(repo, "checkout", "-q", "-b", "elsewhere-named")
    git(repo, "branch", "-D", "feature/x")
    result = run("resume", code=1)
    assert result.stderr == ("Error: no open checkpoint for branch elsewhere-named in the local store; local #1 is "
                             "the checkpoint of branch feature/x, which this clone no longer has, and its commit is in "
                             "this branch's history: if this branch was feature/x, 'ghstate checkpoint 1 --move' with "
                             "your next change makes it this branch's ('ghstate resume 1' reads it)\n")
    git(repo, "checkout", "-q", "--orphan", "unrelated")
    git(repo, "commit", "-q", "--allow-empty", "-m", "another history")
    assert run("resume", code=1).stderr.endswith("create one with 'ghstate checkpoint'\n")  # not in its history


def test_a_file_to_re_read_with_a_space_in_its_path_is_that_path_everywhere(repo, run):
    """Found by a newcomer: `--files "my docs/read me.md"` was written as code and read back with its backticks
    (a span with a space was taken for a command), so the JSON named '`my docs/read me.md`', a change to it was
    not flagged in the prompt, and lint called ghstate's own line no path."""
    (repo / "my docs").mkdir()
    (repo / "my docs" / "read me.md").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start Phase 1.", "--files",
        "my docs/read me.md", "--files", "src/other.py")
    (repo / "my docs" / "read me.md").write_text("changed\n")
    git(repo, "commit", "-qam", "change")
    state = json.loads(run("resume", "--format", "json").stdout)
    assert state["files"] == ["my docs/read me.md", "src/other.py"]
    assert state["drift"]["reread_changed"] == ["my docs/read me.md"]
    assert "files to re-read that changed: my docs/read me.md." in run("resume").stdout
    assert "GS011" not in run("lint").stdout


def test_a_file_to_re_read_given_by_its_absolute_path_is_flagged_when_it_changes(repo, run):
    """Found by a newcomer: agents often pass absolute paths; `--files "$PWD/b.py"` was never flagged as changed
    (the repository names it b.py)."""
    (repo / "b.py").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "b")
    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start.", "--files",
        str(repo.resolve() / "b.py"), "--files", "/elsewhere/b.py")
    (repo / "b.py").write_text("changed\n")
    git(repo, "commit", "-qam", "change")
    drift = json.loads(run("resume", "--format", "json").stdout)["drift"]
    assert drift["reread_changed"] == [str(repo.resolve() / "b.py")]


def test_a_store_that_is_a_file_is_an_error_not_an_empty_store(repo, run, tmp_path, monkeypatch):
    """Found by a newcomer: GHSTATE_DIR naming a file made `checkpoint` fail but `list` say there were none."""
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("GHSTATE_DIR", str(tmp_path / "afile"))
    result = run("list", code=1)
    assert result.stderr == (f"Error: the local store {tmp_path / 'afile'} is a file, not a folder; point GHSTATE_DIR "
                             "at a folder, or move the file away\n")
