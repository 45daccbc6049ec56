"""Claude Code hooks: context for a fresh session, a record before compaction; never a failure."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from conftest import FROZEN, store_of
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.core.parse import parse

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"

FULL = "Resuming a task from"  # the whole prompt (the startup line has a data fence of its own)


def event(name: str, repo: Path) -> str:
    data = json.loads((FIXTURES / name).read_text())
    data["cwd"] = str(repo)  # the documented example points at the author's machine
    return json.dumps(data)


@pytest.mark.parametrize("source", ["clear", "compact"])
def test_session_start_gives_the_full_prompt(repo, run, sample_file, source):
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "session-start", input=event(f"session-start-{source}.json", repo))
    out = json.loads(result.stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Next phase: Phase 2: matcher abstraction" in context and FULL in context
    assert result.stderr == ""


def test_session_start_at_startup_gives_a_pointer(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    out = json.loads(run("hook", "session-start", input=event("session-start-startup.json", repo)).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("This branch has a ghstate checkpoint: local #1")
    assert "run `ghstate resume 1`" in context and FULL not in context


def test_session_start_is_quiet_without_a_checkpoint(repo, run):
    result = run("hook", "session-start", input=event("session-start-clear.json", repo))
    assert result.stdout == "" and result.stderr == ""


def test_pre_compact_records_the_execution(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = (repo / ".git" / "ghstate" / "1.md").read_text()
    result = run("hook", "pre-compact", input=event("pre-compact-auto.json", repo))
    assert result.stdout == "" and result.stderr == ""
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert cp.meta.revision == 2
    last = cp.executions[-1]
    assert (last.agent, last.session, last.event) == ("claude-code", "abc123", "pre-compact:auto")
    assert last.transcript.endswith("00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl")
    assert parse(before).checkpoint._replace(executions=(), meta=cp.meta) == cp._replace(executions=())
    assert "Last written by claude-code (editor, session abc123)" in run("resume").stdout


def test_pre_compact_never_writes_a_control_or_invisible_character_of_its_input_raw(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    data = json.loads(event("pre-compact-auto.json", repo))
    hidden = "\u009b\u202e\u200b\u2066\ufeff"
    data["transcript_path"] = f"/tmp/t{hidden}.jsonl"
    data["session_id"] = f"s{hidden}1"
    result = run("hook", "pre-compact", input=json.dumps(data))
    assert result.stdout == "" and result.stderr == ""
    body = (repo / ".git" / "ghstate" / "1.md").read_text()
    assert not any(ch in body for ch in hidden), "raw in the body or its marker"
    last = parse(body).checkpoint.executions[-1]
    assert last.transcript == "/tmp/t\\u009b\\u202e\\u200b\\u2066\\ufeff.jsonl"
    assert last.session == "s\\u009b\\u202e\\u200b\\u2066\\ufeff1"
    prompt = run("resume").stdout
    assert not any(ch in prompt for ch in hidden)


def test_pre_compact_adds_a_revision_only_for_a_session_not_recorded_yet(repo, run, sample_file):
    """The same session compacting again changed nothing: no revision "(no visible change)" each time (issue 48)."""
    run("checkpoint", "--file", str(sample_file))
    for _ in range(3):
        assert run("hook", "pre-compact", input=event("pre-compact-auto.json", repo)).stdout == ""
    cp = parse((store_of(repo) / "1.md").read_text()).checkpoint
    assert cp.meta.revision == 2 and [e.session for e in cp.executions] == ["abc123"]
    other = json.loads(event("pre-compact-auto.json", repo)) | {"session_id": "def456"}
    run("hook", "pre-compact", input=json.dumps(other))  # another session: recorded
    cp = parse((store_of(repo) / "1.md").read_text()).checkpoint
    assert cp.meta.revision == 3 and [e.session for e in cp.executions] == ["abc123", "def456"]
    assert len(run("log", "1").stdout.strip().splitlines()) < 6


def test_pre_compact_is_quiet_without_a_checkpoint(repo, run):
    result = run("hook", "pre-compact", input=event("pre-compact-manual.json", repo))
    assert (result.stdout, result.stderr, result.exit_code) == ("", "", 0)
    assert not (repo / ".git" / "ghstate").exists() or not list((repo / ".git" / "ghstate").glob("*.md"))


NOT_JSON = "Expecting value: line 1 column 1 (char 0)"


@pytest.mark.parametrize(("stdin", "said"), [
    ("", "no hook input on stdin"),
    ("not json", NOT_JSON),
    ("[1, 2]", "the hook input is not a JSON object"),
    ('{"cwd": 5}', "ignored 'cwd' in the hook input (not a string)"),
    ("\x00\xff", NOT_JSON),
    ("{" * 10000, "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (json.dumps({"source": "clear", "cwd": "/nonexistent/folder"}), None),  # no checkpoint: nothing to say
])
@pytest.mark.parametrize("name", ["session-start", "pre-compact"])
def test_hooks_never_fail_whatever_stdin_holds(repo, run, name, stdin, said):
    result = run("hook", name, input=stdin)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == (f"ghstate hook: {said}\n" if said else "")


READ = ("cwd", "source", "session_id", "transcript_path", "trigger")  # what the hooks read of their input
ODD = st.one_of(st.none(), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2),
                st.dictionaries(st.just("k"), st.integers(), max_size=1))
NAMES = st.text(max_size=24)  # any text: control, bidi and invisible characters included
EVENTS = st.fixed_dictionaries({}, optional={
    "hook_event_name": st.sampled_from(["SessionStart", "PreCompact", "PreCompress"]),
    "source": st.one_of(st.sampled_from(["startup", "resume", "clear", "compact", ""]), NAMES, ODD),
    "session_id": st.one_of(NAMES, ODD),
    "transcript_path": st.one_of(NAMES.map(lambda t: f"/tmp/{t}.jsonl"), ODD),
    "trigger": st.one_of(st.sampled_from(["manual", "auto"]), NAMES, ODD),
    "cwd": st.one_of(st.sampled_from(["repo", "elsewhere", "missing", "file", ""]), ODD),
})


def expected_start(event: dict) -> str:
    """What a session's first SessionStart is given (a reference table, apart from the code): the whole
    prompt after /clear or a compaction, and for any source but startup when there is no session to
    remember it by; else the one-line pointer."""
    source = event.get("source") if isinstance(event.get("source"), str) else ""
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else ""
    source = source or "startup"
    return "full" if source in ("clear", "compact") or (not session and source != "startup") else "pointer"


def hook_input(event: dict, repo: Path) -> dict:
    places = {"repo": str(repo), "elsewhere": str(repo.parent / "elsewhere"), "missing": str(repo / "nope"),
              "file": str(repo / "README.md")}
    cwd = event.get("cwd")
    return {**event, "cwd": places.get(cwd, cwd)} if isinstance(cwd, str) else event


@settings(max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck))
@given(EVENTS)
@example({"cwd": []})
@example({"source": "compact", "session_id": "s1", "trigger": "auto", "transcript_path": "/tmp/t\u202e.jsonl"})
@example({"source": "clear", "cwd": "missing", "trigger": "manual"})
@example({"source": "resume", "session_id": "s2", "cwd": "repo"})
@example({"source": "resume", "cwd": "file"})
@example({"source": "startup", "session_id": "s3", "cwd": "elsewhere"})
def test_hooks_fuzzed(repo, run, sample_file, event):
    """The hooks read five keys of their input: drawn of every type, each hook answers as a reference
    says, never fails, and reports each key of the wrong type on stderr (and nothing else there)."""
    from ghstate.core.markup import visible

    if not (repo / ".git" / "ghstate").exists():
        run("checkpoint", "--file", str(sample_file))
        (repo.parent / "elsewhere").mkdir()
    (repo / ".git" / "ghstate" / "seen.json").unlink(missing_ok=True)  # each example is a session's first start
    wrong = [k for k in READ if k in event and event[k] is not None and not isinstance(event[k], str)]
    here = event.get("cwd") != "elsewhere"
    stdin = json.dumps(hook_input(event, repo))
    for name in ("session-start", "pre-compact"):
        was = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
        before = was.meta.revision
        session, transcript, trigger = (event.get(k) if isinstance(event.get(k), str) else ""
                                        for k in ("session_id", "transcript_path", "trigger"))
        recorded = ("claude-code", visible(session), visible(transcript)) in {
            (x.agent, x.session, x.transcript) for x in was.executions}  # a session compacting again: no revision
        result = run("hook", name, input=stdin)
        os.chdir(repo)  # the hook moved to the event's cwd
        assert result.stderr.splitlines() == [f"ghstate hook: ignored {k!r} in the hook input (not a string)"
                                              for k in wrong]
        body = (repo / ".git" / "ghstate" / "1.md").read_text()
        cp = parse(body).checkpoint
        if name == "session-start":
            if not here:
                assert result.stdout == ""
                continue
            context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
            assert (FULL in context) == (expected_start(event) == "full")
            assert context.startswith("This branch has a ghstate checkpoint") == (expected_start(event) == "pointer")
            continue
        assert result.stdout == ""
        assert cp.meta.revision == before + (here and not recorded)
        if here and not recorded:
            last = cp.executions[-1]
            assert (last.agent, last.session, last.transcript) == ("claude-code", visible(session), visible(transcript))
            assert last.event == (f"pre-compact:{trigger}" if trigger in ("manual", "auto") else "pre-compact")
        assert not any(unicodedata.category(ch) in ("Cc", "Cf") for ch in body.replace("\n", "")), "raw in the body"


def test_hook_with_broken_config_reports_on_stderr(repo, run):
    (repo / ".ghstate").mkdir()
    (repo / ".ghstate" / "config.toml").write_text("block_after = 0\n")  # a bad value (an unknown key is a warning)
    result = run("hook", "session-start", input=event("session-start-clear.json", repo))
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("ghstate hook: block_after in ")


def test_session_start_offline_github_falls_quiet_fast(repo, run, sample_file, monkeypatch, isolated):
    monkeypatch.setenv("GH_TOKEN", "ghp_x")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    waited = []
    monkeypatch.setattr("ghstate.github.transport._sleep", waited.append)
    result = run("hook", "session-start", input=event("session-start-clear.json", repo))  # no route: refused
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("ghstate hook: finding the checkpoint of branch feature/x in octo/hello failed: "
                                     "cannot reach")
    assert sum(waited) <= 4.0


def test_a_hook_gives_up_quietly_when_github_trickles(repo, run, sample_file, trickle_port, monkeypatch, isolated):
    isolated.add_passthru(f"http://127.0.0.1:{trickle_port}")  # a real (loopback) server, slow on purpose
    monkeypatch.setattr("ghstate.commands.hook.DEADLINE", 1)
    monkeypatch.setenv("GH_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{trickle_port}")
    result = run("hook", "session-start", input=event("session-start-clear.json", repo))
    assert result.exit_code == 0 and result.stdout == "" and "gave up after 1 s" in result.stderr


def test_fields_of_the_wrong_type_are_reported_and_ignored(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "session-start", input=json.dumps({"source": ["clear"], "cwd": 42}))
    assert "ignored 'source'" in result.stderr and "ignored 'cwd'" in result.stderr
    assert json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"].startswith("This branch has")


# ------------------------------------------------------------- once per session and revision, fitted


def start(run, repo, source: str, session: str = "abc123") -> str:
    data = json.loads(event(f"session-start-{source}.json", repo))
    data["session_id"] = session
    result = run("hook", "session-start", input=json.dumps(data))
    assert result.stderr == ""
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else ""


def test_the_large_task_fits_claude_codes_limit_and_keeps_what_matters(repo, run, tmp_path):
    from large_task import large_task_body

    path = tmp_path / "large.md"
    path.write_text(large_task_body())
    assert 16_000 < len(path.read_text()) < 18_000
    run("checkpoint", "--file", str(path))
    cp = parse(path.read_text()).checkpoint
    assert len(run("resume").stdout) > 10_000  # unfitted, it would be replaced by a preview
    for source in ("clear", "compact"):
        context = start(run, repo, source, session=f"s-{source}")
        assert len(context) <= 10_000
        assert cp.resume in context and "Next phase: Phase 13: move the cache layer, part 2 (13 of 30)" in context
        assert all(f"- {d}\n" in context for d in cp.decisions)
        assert context.rstrip().splitlines()[-1].startswith("Left out to fit 10,000 characters: ")


def test_a_second_session_start_for_the_same_session_and_revision_is_one_line(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    first = start(run, repo, "compact")
    assert FULL in first
    assert start(run, repo, "compact") == ""  # the same start again (fired twice): the session has it
    resumed = start(run, repo, "resume")  # resumed, nothing changed: one line
    assert len(resumed.splitlines()) == 1 and "already has ghstate checkpoint local #1 at revision 1" in resumed
    assert FULL in start(run, repo, "clear", session="another")  # another session: the whole prompt


def test_resume_after_one_decision_injects_only_the_change(repo, run, sample_file, clock):
    run("checkpoint", "--file", str(sample_file))
    start(run, repo, "clear")
    run("checkpoint", "--decision", "keep the v1 API")
    context = start(run, repo, "resume")
    assert "changed since this session last saw it (revision 1 → 2)" in context
    assert "New locked decisions (settled, do not reopen):\n- keep the v1 API" in context
    assert "required flags, not positional" not in context and "Next phase" not in context
    assert "src/parser.ts" not in context and context.count("<checkpoint>") == 1
    assert start(run, repo, "resume") == ""  # the same start again: nothing
    clock.advance(60)
    assert len(start(run, repo, "resume").splitlines()) == 1  # a later resume: the change is not given twice


def test_resume_after_a_tick_says_the_next_phase_and_the_stale_instruction(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    start(run, repo, "compact")
    run("checkpoint", "--done", "Phase 2")
    context = start(run, repo, "resume")
    assert "Done since: Phase 2: matcher abstraction" in context
    assert "Next phase, now: Phase 3: wire config" in context
    assert "The resume instruction names phase 2 of 3, which is done" in context


def test_startup_stays_one_line_and_an_unseen_resume_points_at_the_checkpoint(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    start(run, repo, "compact")
    for source, session in (("startup", "abc123"), ("startup", "new"), ("resume", "never-seen")):
        context = start(run, repo, source, session=session)
        assert len(context.splitlines()) == 1 and context.startswith("This branch has a ghstate checkpoint")


def test_a_compaction_forgets_what_the_session_was_given(repo, run, sample_file):
    """What a session was given leaves its context when it compacts: the pre-compact hook forgets it, so
    that no later start of the session is answered as if it still had it (a "resume" gets the pointer, as
    a session never seen does, not "changed since this session last saw it")."""
    run("checkpoint", "--file", str(sample_file))
    assert FULL in start(run, repo, "compact")
    assert start(run, repo, "resume").startswith("This session already has ghstate checkpoint local #1 at revision 1")
    run("hook", "pre-compact", input=event("pre-compact-auto.json", repo))  # session abc123 compacts again
    assert start(run, repo, "resume").startswith("This branch has a ghstate checkpoint: local #1")
    assert FULL in start(run, repo, "compact")


def test_a_sessions_last_start_is_forgotten_with_it_and_kept_for_the_last_sessions_only(tmp_path):
    """The pre-compact hook forgets the session's last start too (a start after it is a new one), and the
    seen-file keeps the last starts of as many sessions as it keeps sessions."""
    from ghstate.local import seen

    with seen.book(tmp_path) as book:
        for i in range(seen.MAX_SESSIONS + 5):
            book.started(f"s{i}", "local:1", "compact", 1)
    seen.forget(tmp_path, f"s{seen.MAX_SESSIONS + 4}")
    with seen.book(tmp_path) as book:
        assert book.last_start(f"s{seen.MAX_SESSIONS + 4}") is None
        assert book.last_start(f"s{seen.MAX_SESSIONS + 3}")["src"] == "compact"
        assert book.last_start("s4") is None and book.last_start("s5") is not None  # the oldest went
        assert len(book.data["starts"]) == seen.MAX_SESSIONS - 1


@pytest.mark.parametrize("source", ["compact", "clear"])
def test_a_later_compaction_restores_even_when_no_pre_compact_ran(repo, run, sample_file, clock, source):
    """Issue 18: the whole prompt at revision 1, a delta at revision 2, then a compaction whose PreCompact
    hook timed out or is missing: the session's context was replaced, so it gets the whole prompt again."""
    run("checkpoint", "--file", str(sample_file))
    assert FULL in start(run, repo, source)
    clock.advance(60)
    run("checkpoint", "--decision", "keep the v1 API")
    assert "changed since this session last saw it" in start(run, repo, "resume")
    clock.advance(600)  # the session works, then compacts: no pre-compact hook in between
    later = start(run, repo, source)
    assert FULL in later and "Next phase: Phase 2: matcher abstraction" in later
    clock.advance(900)  # and again, with nothing delivered in between but long after: still a real compaction
    assert FULL in start(run, repo, source)


@pytest.mark.parametrize("source", ["compact", "clear"])
def test_a_double_fired_session_start_gives_nothing_the_second_time(repo, run, sample_file, clock, source):
    """The host fires a SessionStart twice, or two set-ups of the hook fire at once (the plugin's and
    init's): the session already has what the first gave, and gets nothing more."""
    from ghstate.local import seen

    run("checkpoint", "--file", str(sample_file))
    assert FULL in start(run, repo, source)
    clock.advance(seen.REPEAT_SECONDS)  # the host fires it again, at the window's very end
    assert start(run, repo, source) == ""
    clock.advance(0.5)  # half a second past the window: a compaction of its own
    assert FULL in start(run, repo, source)
    other = "clear" if source == "compact" else "compact"
    assert FULL in start(run, repo, other)  # another source is another event, not a repeat


def test_the_repeat_rule():
    from ghstate.local.seen import REPEAT_SECONDS, repeated

    record = {"src": "compact", "at": 100.0, "full": True, "rev": 2}
    assert repeated("compact", record, now=100.0) and repeated("compact", record, now=100 + REPEAT_SECONDS)
    assert not repeated("compact", record, now=100 + REPEAT_SECONDS + 0.5)
    assert not repeated("clear", record, now=101) and not repeated("compact", {**record, "src": "resume"}, now=101)
    assert not repeated("compact", {"rev": 2, "full": True}, now=101)  # a record of an earlier version
    assert not repeated("compact", None, now=101)


def test_the_seen_file_is_small_bounded_and_survives_damage(repo, run, sample_file):
    from ghstate.local import seen

    run("checkpoint", "--file", str(sample_file))
    for i in range(seen.MAX_SESSIONS + 8):
        start(run, repo, "clear", session=f"s{i}")
    path = repo / ".git" / "ghstate" / seen.FILE  # the clone's store folder: never in the work tree
    data = json.loads(path.read_text())
    assert len(data["sessions"]) == seen.MAX_SESSIONS and "s0" not in data["sessions"]
    assert path.stat().st_size < 20_000
    path.write_text("{not json")
    assert FULL in start(run, repo, "clear", session="s39")  # forgotten with the damage: full again
    assert json.loads(path.read_text())["sessions"].keys() == {"s39"}


def test_concurrent_session_starts_inject_the_prompt_once(repo, run, sample_file):
    import os
    import subprocess
    import sys

    run("checkpoint", "--file", str(sample_file))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "GHSTATE_STORE": "local"}
    data = json.dumps({"session_id": "same", "source": "compact", "cwd": str(repo), "hook_event_name": "SessionStart"})
    procs = [subprocess.Popen([sys.executable, "-c", FROZEN, "hook", "session-start"], cwd=repo, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(data, timeout=60) for p in procs]
    assert all(err == "" for _, err in outs), outs
    contexts = [json.loads(out)["hookSpecificOutput"]["additionalContext"] for out, _ in outs if out]
    assert len(contexts) == 1 and FULL in contexts[0]  # the others say nothing: the session has it


def test_resume_json_gives_the_same_delivery(repo, run, sample_file, clock):
    run("checkpoint", "--file", str(sample_file))
    first = json.loads(run("resume", "--session", "x", "--source", "clear", "--format", "json").stdout)
    assert first["delivery"]["kind"] == "full" and FULL in first["delivery"]["text"]
    run("checkpoint", "--risk", "the cache may go stale")
    data = json.loads(run("resume", "--session", "x", "--format", "json").stdout)
    assert data["delivery"]["kind"] == "changes" and data["delivery"]["changes"]["risks"] == ["the cache may go stale"]
    assert data["provenance"]["risks"][1]["revision"] == 2
    again = json.loads(run("resume", "--session", "x", "--format", "json").stdout)
    assert again["delivery"] == {"kind": "repeat", "text": "", "changes": None}  # the same start again
    assert run("resume", "--session", "x").stdout == ""
    clock.advance(60)
    later = json.loads(run("resume", "--session", "x", "--format", "json").stdout)
    assert later["delivery"]["kind"] == "line"


# ------------------------------------------------------------------------------------ other hosts
# Inputs are the hosts' documented shapes: Codex's from the JSON Schemas its binary (0.169) embeds,
# kept in fixtures/hosts/codex; Gemini CLI's from its hooks reference (0.61: source startup|resume|clear,
# a timestamp, PreCompress with a trigger).

CODEX_SCHEMAS = Path(__file__).parent / "fixtures" / "hosts" / "codex"


def codex_schema(name: str) -> dict:
    return json.loads((CODEX_SCHEMAS / f"{name}.schema.json").read_text())


def test_codex_fixtures_are_what_codex_sends():
    jsonschema = pytest.importorskip("jsonschema")
    for fixture, schema in (("codex-session-start-compact.json", "session-start.command.input"),
                            ("codex-session-start-startup.json", "session-start.command.input"),
                            ("codex-pre-compact-auto.json", "pre-compact.command.input")):
        jsonschema.validate(json.loads((FIXTURES / fixture).read_text()), codex_schema(schema))


@pytest.mark.parametrize(("fixture", "full"), [("codex-session-start-compact.json", True),
                                               ("codex-session-start-startup.json", False)])
def test_codex_session_start_answers_in_codex_shape(repo, run, sample_file, fixture, full):
    jsonschema = pytest.importorskip("jsonschema")
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "session-start", "--host", "codex", input=event(fixture, repo))
    out = json.loads(result.stdout)
    jsonschema.validate(out, codex_schema("session-start.command.output"))  # Codex rejects anything else
    context = out["hookSpecificOutput"]["additionalContext"]
    assert result.stderr == ""  # transcript_path: null is not worth a word
    if full:
        assert "Next phase: Phase 2: matcher abstraction" in context and FULL in context
    else:
        assert context.startswith("This branch has a ghstate checkpoint: local #1")
        assert "call the `resume` tool of the ghstate MCP server (or run `ghstate resume 1`)" in context


def test_codex_pre_compact_records_codex(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "pre-compact", "--host", "codex", input=event("codex-pre-compact-auto.json", repo))
    assert (result.stdout, result.stderr) == ("", "")
    last = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint.executions[-1]
    assert (last.agent, last.session, last.event) == ("codex", "019a7c2e-5b1d-7c40-9f3e-2d8a41b6c0aa",
                                                      "pre-compact:auto")


@pytest.mark.parametrize(("fixture", "full"), [("gemini-session-start-clear.json", True),
                                               ("gemini-session-start-startup.json", False)])
def test_gemini_session_start_answers_in_gemini_shape(repo, run, sample_file, fixture, full):
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "session-start", "--host", "gemini", input=event(fixture, repo))
    out = json.loads(result.stdout)
    assert set(out) == {"hookSpecificOutput"}  # Gemini reads hookSpecificOutput.additionalContext
    context = out["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str) and result.stderr == ""
    assert (FULL in context) == full
    if not full:
        assert "call the `resume` tool of the ghstate MCP server" in context


def test_gemini_pre_compress_records_gemini(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    result = run("hook", "pre-compact", "--host", "gemini", input=event("gemini-pre-compress-auto.json", repo))
    assert (result.stdout, result.stderr) == ("", "")
    last = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint.executions[-1]
    assert (last.agent, last.event) == ("gemini-cli", "pre-compact:auto")
    assert last.transcript.endswith("session-2026-11-23T12-00-6f1c2b3a.json")


def test_an_unknown_host_is_a_usage_error(repo, run):
    result = run("hook", "session-start", "--host", "vim", input="{}", code=2)
    assert "'vim' is not one of" in result.stderr
