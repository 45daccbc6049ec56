"""`ghstate ci` in a simulated runner: pass, fail, three fails, recovery, no checkpoint, bad reports,
a hostile branch name; at most 5 requests; every other section left byte-for-byte as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bodies import render_body
from conftest import SAMPLE
from github_fake import FakeGitHub

from ghstate.core import chain
from ghstate.core.chain import TREE_FILES
from ghstate.core.parse import parse

FIXTURES = Path(__file__).parent / "fixtures" / "junit"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def runner(isolated, tmp_path, monkeypatch):
    """The environment a GitHub Actions runner gives a step, and a fake GitHub behind it."""
    workspace = tmp_path / "workspace"
    (workspace / "reports").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/feature/x"}))
    files = {"output": tmp_path / "output", "summary": tmp_path / "summary"}
    for path in files.values():
        path.write_text("")
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo/hello", "GITHUB_SHA": "4f2c1e9aa1b2c3d4e5f6",
        "GITHUB_RUN_ID": "777", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REF_NAME": "feature/x",
        "GITHUB_EVENT_PATH": str(event), "GITHUB_OUTPUT": str(files["output"]),
        "GITHUB_STEP_SUMMARY": str(files["summary"]), "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_WORKFLOW": "tests", "GH_TOKEN": "ghs_runnertoken", "GHSTATE_BLOCK_AFTER": "3",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda s: None)
    fake = FakeGitHub(isolated)
    fake.workspace = workspace
    fake.files = files
    fake.tasks.add_tree(TREE_FILES)  # a repository whose first chain commit was written (its tree is there)
    yield fake
    assert fake.problems() == []


def seed(fake, number=7, branch="feature/x"):
    cp = parse(SAMPLE + "\n## Notes from review\nKeep `|` and *this*.\n").checkpoint
    cp = cp.with_meta(revision=3, branch=branch, commit="0123abc", id="abcabcabcabc")
    fake.tasks.index(number, branch)  # the branch's entry in the branch index, as ghstate's create makes it
    return fake.add_issue(number, render_body(cp), title="CLI refactor")


def outputs(fake) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: NAME<<DELIMITER, the value, DELIMITER."""
    text = fake.files["output"].read_text()
    found = re.findall(r"^(\w+)<<(\S+)\n(.*?)\n\2$", text, re.MULTILINE | re.DOTALL)
    assert "".join(f"{k}<<{d}\n{v}\n{d}\n" for k, d, v in found) == text, "malformed"
    return {k: v for k, _, v in found}


def labels(fake, number=7):
    return sorted(x["name"] for x in fake.issues[number]["labels"])


def sections_outside_verification(body: str) -> str:
    kept = body.split("\n", 1)[1]  # the marker changes with every revision
    return re.sub(r"\n*## Verification\n.*?(?=\n## |\Z)", "", kept, flags=re.DOTALL).strip()


def test_a_phase_ci_ticks_is_ticked_with_its_steps_where_they_stand(runner, run):
    """As --done ticks a phase and its steps: a phase done with steps still open is what lint's GS013 warns of."""
    stepped = SAMPLE.replace("- [ ] Phase 2: matcher abstraction\n",
                             "- [ ] Phase 2: matcher abstraction\n  * [ ] a protocol\n  * [X] a fuzzy one\n")
    cp = parse(stepped).checkpoint.with_meta(revision=3, branch="feature/x", commit="0123abc", id="abcabcabcabc")
    runner.add_issue(7, render_body(cp), title="CLI refactor")
    before = runner.issues[7]["body"]
    run("ci", "--result", "success", "--tick", "Phase 2")  # --tick: its name; --phase, the older one, works too
    ticked = sections_outside_verification(before).replace("- [ ] Phase 2: matcher abstraction\n  - [ ] a protocol",
                                                           "- [x] Phase 2: matcher abstraction\n  - [x] a protocol")
    assert sections_outside_verification(runner.issues[7]["body"]) == ticked
    assert "GS013" not in run("lint", "7").stdout


def test_pass_ticks_the_phase_and_writes_outputs_and_summary(runner, run):
    seed(runner)
    (runner.workspace / "reports" / "ok.xml").write_bytes((FIXTURES / "all-pass.xml").read_bytes())
    before = runner.issues[7]["body"]
    out = run("ci", "--result", "success", "--junit", "reports/*.xml", "--phase", "Phase 2").stdout
    assert "Recorded success on #7 (passing)" in out
    cp = parse(runner.issues[7]["body"]).checkpoint
    v = cp.verification_data.to_dict()
    assert v["status"] == "passing" and v["attempt_count"] == 1 and v["consecutive_failures"] == 0
    assert v["counts"] == {"tests": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0, "flaky": 0}
    assert v["run_url"] == "https://github.com/octo/hello/actions/runs/777" and v["commit"] == "4f2c1e9aa1b2c3d4e5f6"
    assert cp.phases[1].done and "**passing** on `feature/x` at `4f2c1e9`" in cp.verification
    assert outputs(runner) == {"issue": "7", "status": "passing"}
    summary = runner.files["summary"].read_text()
    assert "### ghstate: checkpoint #7 is passing" in summary and "Ticked: Phase 2: matcher abstraction" in summary
    assert len(runner.calls) <= 5
    # only Verification and the ticked phase changed; the rest byte-for-byte
    after = runner.issues[7]["body"]
    assert sections_outside_verification(after) == sections_outside_verification(before).replace(
        "- [ ] Phase 2: matcher abstraction", "- [x] Phase 2: matcher abstraction")
    assert cp.meta.commit == "0123abc" and cp.meta.branch == "feature/x"  # the agent's baseline is kept


def test_failures_escalate_to_blocked_then_recover(runner, run):
    seed(runner)
    (runner.workspace / "reports" / "pytest.xml").write_bytes((FIXTURES / "pytest-two-failures.xml").read_bytes())
    before = sections_outside_verification(runner.issues[7]["body"])
    statuses = []
    for attempt in range(3):
        runner.calls.clear()
        run("ci", "--result", "failure", "--junit", "reports/pytest.xml", "--post-prompt", "true",
            env={"GITHUB_SHA": f"{attempt}f2c1e9aa1b2c3d4e5f6"})  # a new commit each time
        statuses.append(outputs(runner)["status"])
        runner.files["output"].write_text("")
        # the branch's lookup 2, the commit and the move with the mirror 2, the label, the comment
        assert len(runner.calls) <= 6, [m for m, _, _ in runner.calls]
        if attempt == 0:
            assert labels(runner) == ["ghstate", "ghstate:ci-failing"]
    assert statuses == ["failing", "failing", "blocked"]
    assert labels(runner) == ["ghstate", "ghstate:blocked", "ghstate:ci-failing"]
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert (v["failure_type"], v["consecutive_failures"], v["attempt_count"]) == ("test", 3, 3)
    assert v["failure_detail"] == "tests.test_parser::test_strict_flags: AssertionError: assert 'x' == 'y'"
    assert v["suggested_focus"].startswith("Fix tests.test_parser::test_strict_flags first")
    assert [t["name"] for t in v["failing_tests"]] == ["tests.test_parser::test_strict_flags",
                                                       "tests.test_matcher::test_fuzzy"]
    prompts = [c for c in runner.comments[7] if c["body"].startswith("<!-- ghstate:prompt -->")]
    assert len(prompts) == 1 and "Verification: blocked" in prompts[0]["body"]
    # every recorded result is a commit on the checkpoint's chain, so a concurrent write cannot lose it
    logged = {e["write"] for c in runner.tasks.chain(7) for e in c["entries"] if e.get("event") == "ci"}
    assert len(logged) == 3 and not any("ghstate:log" in c["body"] for c in runner.comments[7])
    json_state = json.loads(run("resume", "7", "--format", "json").stdout)["verification"]
    assert {"status", "failure_type", "failure_detail", "suggested_focus", "attempt_count",
            "consecutive_failures"} <= set(json_state)
    run("ci", "--result", "success")
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert (v["status"], v["consecutive_failures"], v["attempt_count"]) == ("passing", 0, 4)
    assert labels(runner) == ["ghstate"]
    assert sections_outside_verification(runner.issues[7]["body"]) == before


def test_build_failure_and_cancelled(runner, run):
    seed(runner)
    (runner.workspace / "reports" / "ok.xml").write_bytes((FIXTURES / "all-pass.xml").read_bytes())
    run("ci", "--result", "failure", "--junit", "reports/ok.xml")
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert v["failure_type"] == "build" and v["status"] == "failing"
    run("ci", "--result", "cancelled")
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert (v["failure_type"], v["status"], v["consecutive_failures"]) == ("cancelled", "failing", 1)
    assert labels(runner) == ["ghstate", "ghstate:ci-failing"]


def test_no_checkpoint_is_a_notice(runner, run):
    out = run("ci", "--result", "success").stdout
    assert out.startswith("::notice::ghstate: no open checkpoint for branch feature/x; nothing recorded")
    assert outputs(runner) == {"issue": "", "status": ""}
    # no entry in the branch index, and GitHub's issue search finds none the index does not hold
    assert runner.operations() == ["BranchCheckpoint", "BranchSearch"] and len(runner.calls) == 2


def test_malformed_or_missing_reports_are_warnings(runner, run):
    seed(runner)
    (runner.workspace / "reports" / "bad.xml").write_bytes((FIXTURES / "malformed.xml").read_bytes())
    out = run("ci", "--result", "failure", "--junit", "reports/bad.xml\nnope/*.xml").stdout
    assert "::warning::ghstate: skipped reports/bad.xml: not well-formed XML" in out
    assert "::warning::ghstate: no JUnit report matches 'nope/*.xml'" in out
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert v["failure_type"] == "unknown" and v["counts"]["tests"] == 0 and v["status"] == "failing"


def test_a_report_declaring_a_document_type_is_one_warning_and_unread(runner, run):
    from test_junit import HOSTILE

    seed(runner)
    (runner.workspace / "reports" / "laughs.xml").write_bytes(HOSTILE["laughs.xml"])
    (runner.workspace / "reports" / "ok.xml").write_bytes((FIXTURES / "all-pass.xml").read_bytes())
    out = run("ci", "--result", "success", "--junit", "reports/*.xml").stdout
    about = [line for line in out.splitlines() if "laughs.xml" in line]
    assert about == ["::warning::ghstate: skipped reports/laughs.xml: declares a document type <!DOCTYPE lolz>, "
                     "which a JUnit report never needs; not read, and nothing in it expanded"]
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert v["counts"]["tests"] == 2  # the two of ok.xml, none of laughs.xml


def test_hostile_branch_name(runner, run, monkeypatch):
    hostile = 'x\n::error::pwned`$(touch /tmp/ghstate-pwned)`"; rm -rf ~ #%0A'
    monkeypatch.setenv("GITHUB_REF_NAME", hostile)
    out = run("ci", "--result", "failure").stdout
    assert out.count("\n") == 1 and out.startswith("::notice::")  # one command; the newline is escaped
    assert "%0A::error::pwned" in out and "%250A" in out
    assert outputs(runner) == {"issue": "", "status": ""}
    seed(runner, number=8, branch=hostile)
    runner.files["output"].write_text("")
    out = run("ci", "--result", "failure").stdout
    assert outputs(runner) == {"issue": "8", "status": "failing"}
    assert not any(line.startswith("::error::") for line in out.splitlines())
    assert not Path("/tmp/ghstate-pwned").exists()
    cp = parse(runner.issues[8]["body"]).checkpoint
    assert cp.verification_data.to_dict()["branch"] == hostile
    assert "\n::error::" not in cp.verification  # shown on one line inside a code span


def test_pull_request_branch_from_head_ref(runner, run, monkeypatch):
    seed(runner, branch="feature/pr-branch")
    monkeypatch.setenv("GITHUB_REF_NAME", "12/merge")
    monkeypatch.setenv("GITHUB_HEAD_REF", "feature/pr-branch")
    run("ci", "--result", "success")
    assert outputs(runner)["issue"] == "7"


def test_github_unreachable_is_a_warning(runner, run):
    seed(runner)
    runner.fail("*", r".*", None, times=99)
    result = run("ci", "--result", "success")
    assert result.stdout.startswith("::warning::ghstate: finding the checkpoint of branch feature/x in octo/hello "
                                    "failed: cannot reach")
    assert result.exit_code == 0


def test_no_token_is_a_warning(runner, run, monkeypatch):
    monkeypatch.delenv("GH_TOKEN")
    out = run("ci", "--result", "success").stdout
    assert out.startswith("::warning::ghstate: no GitHub token")


def test_explicit_issue_number(runner, run):
    seed(runner, number=9, branch="somewhere-else")
    run("ci", "--result", "failure", "--issue", "9")
    assert outputs(runner) == {"issue": "9", "status": "failing"}
    assert "no issue #10" in run("ci", "--result", "failure", "--issue", "10").stdout


# ---------------------------------------------------------------------------------- action.yml


def action() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_the_actions_install_pins_every_runtime_dependency():
    """action.yml installs ghstate with constraints.txt: every runtime dependency, and theirs in turn, has
    an exact version there that its requirement allows (a dependency added to pyproject.toml alone would
    install whatever version is newest on the day)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from ghstate.agents.hosts import tomllib

    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.split(";")[0].strip().partition("==")
            pinned[canonicalize_name(name)] = version
    todo = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    seen: set[str] = set()
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if (requirement.marker and not requirement.marker.evaluate({"extra": ""})) or name in seen:
            continue
        seen.add(name)
        assert name in pinned, f"{requirement.name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pinned[name], prereleases=True), f"{requirement} vs {pinned[name]}"
        todo += [Requirement(r) for r in metadata.requires(requirement.name) or ()]
    assert "defusedxml" in seen


def test_every_action_input_is_documented_and_used():
    spec = action()
    reference = (ROOT / "docs" / "action.md").read_text()  # the Action's inputs, as the README points to them
    steps_env = "\n".join(json.dumps(step.get("env", {})) for step in spec["runs"]["steps"])
    for name in spec["inputs"]:
        assert f"| `{name}` |" in reference, f"input {name} is not in docs/action.md's table"
        assert f"inputs.{name}" in steps_env, f"input {name} is not passed to the action's scripts"
    for name in spec["outputs"]:
        assert f"| `{name}` |" in reference, f"output {name} is not in docs/action.md"
    assert "docs/action.md" in (ROOT / "README.md").read_text()


def test_inputs_reach_scripts_only_through_env():
    spec = action()
    assert spec["runs"]["using"] == "composite"
    for step in spec["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), f"expression inside run: in step {step.get('name')}"


def test_workflows_pin_actions_and_hold_least_privilege():
    for path in (ROOT / ".github" / "workflows").glob("*.yml"):
        text = path.read_text()
        assert "permissions: {}" in text, path.name
        for uses in re.findall(r"uses:\s*(\S+)", text):
            assert uses == "./" or re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses}"


def test_a_result_landing_meanwhile_is_kept_beside_and_ours_stands(runner, run):
    seed(runner)

    def another_run_lands_first():
        from ghstate.ci.verdict import Run, next_verification

        cp = parse(runner.issues[7]["body"]).checkpoint
        data = next_verification(cp.verification_data, Run("failure", commit="", branch="feature/x", at="t"))
        runner.edit(7, render_body(cp._replace(verification="other run", verification_data=data)
                                   .with_meta(revision=cp.meta.revision + 1)))

    # between the read and the write
    runner.on("*", r"^/graphql AppendCheckpoint$", another_run_lands_first)
    run("ci", "--result", "failure")
    cp = parse(runner.issues[7]["body"]).checkpoint
    # The other result reached the body without a log entry (as a person's edit would): ours, made from
    # what it read, stands, and theirs is kept beside it. (Two logged results: the later one stands.)
    assert (cp.verification_data.attempt_count, cp.verification_data.consecutive_failures) == (1, 1)
    assert "Verification (concurrent edit)" in runner.issues[7]["body"] and "other run" in runner.issues[7]["body"]


def test_pull_request_commit_is_the_head_not_the_merge(runner, run, tmp_path, monkeypatch):
    seed(runner)
    event = tmp_path / "pr.json"
    event.write_text(json.dumps({"pull_request": {"head": {"ref": "feature/x", "sha": "feedface" * 5}}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REF_NAME", "12/merge")
    run("ci", "--result", "success")
    assert parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()["commit"] == "feedface" * 5


def test_action_metadata_has_expressions_only_where_they_are_evaluated():
    spec = action()

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                yield from walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, (*path, i))
        elif isinstance(node, str) and "${{" in node:
            yield path

    for path in walk(spec, ()):
        evaluated = path[-1] in ("default", "value") or "env" in path or "with" in path  # a used action's inputs
        assert evaluated, f"expression at {'.'.join(map(str, path))}"


HAND_EDITED = (
    '<!-- ghstate:v1 {"revision":5,"branch":"feature/x","id":"abcabcabcabc"} -->\r\n'
    "### Objective:\r\nShip the parser.\r\n\r\n## Open questions\r\n* should --fuzzy take a threshold?\r\n\r\n"
    "# Progress\r\n* [X] Phase 1: parser\r\n1. [ ] Phase 2: matcher\r\n   + [ ] sub-step\r\n\r\n"
    "<!-- a person's aside -->\r\n\r\n## CI\r\nnot run yet\r\n\r\n## Decisions\r\n+ keep v1\r\n\r\n"
    "## Next step:\r\nStart Phase 2."
)


def test_a_hand_edited_body_keeps_every_byte_outside_verification(runner, run):
    from test_update_in_place import untouched_lines

    runner.add_issue(7, HAND_EDITED, title="CLI refactor")
    run("ci", "--result", "failure")
    body = runner.issues[7]["body"]
    assert untouched_lines(HAND_EDITED, body, {"verification"}) == []
    assert body.count("\r\n") == body.count("\n")  # CRLF throughout, as the web UI wrote it
    assert parse(body).checkpoint.verification_data.to_dict()["status"] == "failing"
    run("ci", "--result", "success", "--phase", "2")  # a tick toggles the boxes where they stand, its steps' too
    body = runner.issues[7]["body"]
    assert "1. [x] Phase 2: matcher\r\n   + [x] sub-step\r\n" in body
    assert untouched_lines(HAND_EDITED, body, {"verification", "phases"}) == []


def failing_report(runner, name: str, message: str, count: int = 1) -> None:
    cases = "".join(f'<testcase classname="t" name="{name}{i}"><failure message="{message}"/></testcase>'
                    for i in range(count))
    (runner.workspace / "reports" / "r.xml").write_text(f"<testsuite>{cases}</testsuite>")


def test_a_credential_in_test_output_is_cut_short_and_the_result_recorded(runner, run):
    seed(runner)
    failing_report(runner, "test_login", "assert config == {'password': 'hunter2hunter2'}")
    out = run("ci", "--result", "failure", "--junit", "reports/*.xml").stdout
    body = runner.issues[7]["body"]
    assert "Recorded failure" in out and "hunter2hunter2" not in body and "'password': 'hunt…'" in body


def test_long_test_names_are_capped_and_the_result_recorded(runner, run):
    seed(runner)
    failing_report(runner, "test_param_" + "x" * 4000, "boom", count=10)
    assert "Recorded failure" in run("ci", "--result", "failure", "--junit", "reports/*.xml").stdout
    assert len(runner.issues[7]["body"]) < 20_000


def test_a_prompt_that_cannot_be_posted_is_a_warning_and_the_rest_is_written(runner, run):
    seed(runner)
    runner.fail("POST", r"/comments$", 403, times=99, message="Resource not accessible by integration")
    out = run("ci", "--result", "failure", "--block-after", "1", "--post-prompt", "true").stdout
    assert "the rehydration prompt could not be posted" in out and "Recorded failure on #7 (blocked)" in out
    assert outputs(runner) == {"issue": "7", "status": "blocked"} and "blocked" in runner.files["summary"].read_text()


def test_the_same_commit_failing_again_is_an_attempt_not_another_failure_in_a_row(runner, run):
    seed(runner)
    for _ in range(3):  # a re-run, and a second workflow, on one commit
        run("ci", "--result", "failure")
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert (v["status"], v["consecutive_failures"], v["attempt_count"]) == ("failing", 1, 3)


def test_a_cancelled_first_run_says_nothing_is_known(runner, run):
    seed(runner)
    run("ci", "--result", "cancelled")
    assert outputs(runner)["status"] == "unknown" and labels(runner) == ["ghstate"]


def test_an_issue_made_from_the_form_is_found_by_its_branch_field(runner, run):
    form = ("### Branch\n\nfeature/x\n\n### Goal\n\nShip it\n\n### Current status\n\n- [ ] Phase 1: do\n\n"
            "### Decisions locked\n\n_No response_\n\n### Resume instruction\n\nStart Phase 1")
    runner.add_issue(12, form, title="Checkpoint: ship it")
    run("ci", "--result", "success", "--phase", "1")
    cp = parse(runner.issues[12]["body"]).checkpoint
    assert cp.phases[0].done and cp.verification_data.status == "passing" and cp.meta.branch == "feature/x"


def test_a_cancelled_run_between_failures_does_not_hide_a_new_failing_commit(runner, run):
    seed(runner)
    run("ci", "--result", "failure", env={"GITHUB_SHA": "a" * 40})
    run("ci", "--result", "cancelled", env={"GITHUB_SHA": "b" * 40})
    run("ci", "--result", "failure", env={"GITHUB_SHA": "b" * 40})
    assert parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()["consecutive_failures"] == 2


def test_a_branch_name_that_looks_like_a_credential_does_not_stop_the_record(runner, run, monkeypatch):
    branch = "fix/token=Zx8Qw2Lp9Vb4Nm7Kt3Rs6Yh1"
    seed(runner, branch=branch)
    monkeypatch.setenv("GITHUB_REF_NAME", branch)
    assert "Recorded failure on #7" in run("ci", "--result", "failure").stdout


def test_the_form_branch_field_may_name_the_full_ref(runner, run):
    runner.add_issue(12, "### Branch\n\nrefs/heads/feature/x\n\n### Goal\n\nShip it\n", title="Checkpoint")
    assert "Recorded success on #12" in run("ci", "--result", "success").stdout


# ---------------------------------------------------------------------------------- the ledger, end to end


def report(runner, **outcomes: str) -> None:
    """reports/r.xml with one test case per keyword: passed, failed, or flaky (Surefire's flakyFailure)."""
    from xml.sax.saxutils import quoteattr

    cases = []
    for name, outcome in outcomes.items():
        inner = {"passed": "", "failed": '<failure message="boom">trace</failure>',
                 "flaky": '<flakyFailure message="first try timed out"/>'}[outcome]
        cases.append(f'<testcase classname="tests.t" name={quoteattr(name)}>{inner}</testcase>')
    (runner.workspace / "reports" / "r.xml").write_text(f"<testsuite>{''.join(cases)}</testsuite>")


def ci_run(run, runner, result: str, sha: str, *extra: str) -> dict:
    runner.calls.clear()
    run("ci", "--result", result, "--junit", "reports/*.xml", *extra, env={"GITHUB_SHA": sha})
    assert len(runner.calls) <= 6, [m for m, _, _ in runner.calls]  # lookup 2, write 2, label, comment
    return parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()


def test_a_flaky_test_is_named_and_does_not_block(runner, run):
    seed(runner)
    green, broken, later = "a1b2c3d" + "0" * 33, "b" * 40, "c" * 40
    report(runner, test_x="passed", test_y="passed")
    ci_run(run, runner, "success", green)
    report(runner, test_x="failed", test_y="passed")
    v = ci_run(run, runner, "failure", broken, "--block-after", "1")
    assert v["status"] == "blocked" and v["test_classes"] == {"new": ["tests.t::test_x"]}
    assert v["suggested_focus"].startswith("Fix tests.t::test_x first, new since a1b2c3d")
    report(runner, test_x="passed", test_y="passed")  # the re-run of the same commit passes
    v = ci_run(run, runner, "success", broken)
    assert v["status"] == "passing" and v["test_classes"] == {"flaky": ["tests.t::test_x"]}
    assert labels(runner) == ["ghstate"]
    report(runner, test_x="failed", test_y="passed")  # it fails again on the next commit: flaky, not blocked
    v = ci_run(run, runner, "failure", later, "--block-after", "1")
    assert (v["status"], v["consecutive_failures"]) == ("failing", 0)
    assert labels(runner) == ["ghstate", "ghstate:ci-failing"]
    assert [(t["name"], t["class"]) for t in v["failing_tests"]] == [("tests.t::test_x", "flaky")]
    cp = parse(runner.issues[7]["body"]).checkpoint
    assert "- flaky: `tests.t::test_x`: `boom`" in cp.verification
    summary = runner.files["summary"].read_text()
    assert "| flaky (1) | `tests.t::test_x` |" in summary
    state = json.loads(run("resume", "7", "--format", "json").stdout)["verification"]
    assert state["test_classes"] == {"flaky": ["tests.t::test_x"]} and state["class_counts"] == {"flaky": 1}
    assert "1 flaky: tests.t::test_x" in run("resume", "7").stdout


def test_new_and_persistent_failures_in_one_line_of_the_prompt(runner, run):
    seed(runner)
    report(runner, test_x="passed", test_y="passed", test_z="passed")
    ci_run(run, runner, "success", "a1b2c3d" + "0" * 33)
    report(runner, test_x="failed", test_y="passed", test_z="flaky")
    ci_run(run, runner, "failure", "b" * 40)
    report(runner, test_x="failed", test_y="failed", test_z="failed")
    v = ci_run(run, runner, "failure", "c" * 40)
    # the ledger costs no request: find (the branch's entry in the index, the checkpoint), the commit, and the
    # chain moved with the body written (the answer confirms nothing was saved between)
    assert runner.operations() == ["BranchCheckpoint", "Checkpoint", "AppendCheckpoint"]
    assert len(runner.calls) == 4
    assert v["test_classes"] == {"new": ["tests.t::test_y"], "persistent": ["tests.t::test_x"],
                                 "flaky": ["tests.t::test_z"]}
    assert [t["class"] for t in v["failing_tests"]] == ["new", "persistent", "flaky"]
    prompt = run("resume", "7").stdout
    assert ("1 new failure since a1b2c3d; 1 still failing from before; 1 flaky: tests.t::test_z") in prompt
    report(runner, test_x="passed", test_y="passed", test_z="passed")
    v = ci_run(run, runner, "success", "d" * 40)
    assert v["test_classes"] == {"fixed": ["tests.t::test_x", "tests.t::test_y"]}
    assert "Fixed: `tests.t::test_x`, `tests.t::test_y`" in parse(runner.issues[7]["body"]).checkpoint.verification


def test_the_body_stays_small_after_many_runs(runner, run):
    seed(runner)
    sizes = []
    stored = []
    for i in range(30):  # 60 tests failing in turn, with long names: the ledger keeps its bound
        names = {f"test_{'n' * 150}_{(i * 7 + k) % 60}": "failed" for k in range(15)}
        report(runner, **names)
        ci_run(run, runner, "failure" if i % 3 else "success", f"{i:040x}")
        sizes.append(len(chain.split(runner.issues[7]["body"])[0]))  # the body as a reader reads it
        stored.append(len(runner.issues[7]["body"]))  # with the write's log entry (its intent compressed)
    from ghstate.core.verification import LEDGER_MAX_CHARS

    marker = runner.issues[7]["body"].split("\n", 1)[0]
    ledger = json.loads(marker.removeprefix("<!-- ghstate:v1 ").removesuffix(" -->"))["verification"]["ledger"]
    assert len(json.dumps(ledger, separators=(",", ":"))) <= LEDGER_MAX_CHARS
    assert max(sizes) < 13_000 and max(sizes[20:]) <= max(sizes[10:20]) + 50, sizes  # no growth past the bound
    assert max(stored) < 15_000 and max(stored[20:]) <= max(stored[10:20]) + 100, stored


# ---------------------------------------------------------------------------------- what GitHub shows


def visible(markdown: str) -> str:
    """The text a person sees once GitHub's renderer (cmark-gfm with GitHub's extensions) is done."""
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from html import unescape

    html = cmarkgfm.github_flavored_markdown_to_html(markdown)
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_test_names_and_messages_show_as_written_on_github(runner, run):
    cmarkgfm = pytest.importorskip("cmarkgfm")
    seed(runner)
    name, message = "test_<Foo a=1>_`tick`_*x*", "assert <Foo a=1> == *bar* | ``two`` & __init__"
    from xml.sax.saxutils import quoteattr

    (runner.workspace / "reports" / "r.xml").write_text(
        f'<testsuite><testcase classname="tests.t" name={quoteattr(name)}>'
        f'<failure message={quoteattr(message)}/></testcase></testsuite>')
    run("ci", "--result", "failure", "--junit", "reports/*.xml")
    cp = parse(runner.issues[7]["body"]).checkpoint
    assert cp.verification_data.to_dict()["failing_tests"][0] == {"name": f"tests.t::{name}", "message": message,
                                                        "class": "new"}
    html = cmarkgfm.github_flavored_markdown_to_html(runner.issues[7]["body"])
    shown = visible(runner.issues[7]["body"])
    assert f"new: tests.t::{name}: {message}" in shown
    assert f"Failure (test): tests.t::{name}: {message}" in shown
    assert re.search(r"<p>Attempts: 1; failures in a row: 1", html), "Attempts: swallowed into the list"
    assert "ghstate:v1" not in shown  # the marker stays hidden
    summary = runner.files["summary"].read_text()
    cells = re.findall(r"<td>(.*?)</td>", cmarkgfm.github_flavored_markdown_to_html(summary), re.DOTALL)
    from html import unescape

    cells = [unescape(re.sub(r"<[^>]+>", "", c)) for c in cells]
    assert f"tests.t::{name}: {message}" in cells and f"tests.t::{name}" in cells


def test_action_metadata_is_valid_for_github():
    """action.yml against SchemaStore's schema for action metadata, as check-jsonschema vendors it."""
    import subprocess
    import sys

    pytest.importorskip("check_jsonschema")
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions",
                           str(ROOT / "action.yml")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_runner_is_read_once_into_one_value(tmp_path):
    from ghstate.config import ci_run

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"ref": "feature/pr", "sha": "feed" * 10}}}))
    env = {"GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "merge" * 8, "GITHUB_REF_NAME": "12/merge",
           "GITHUB_RUN_ID": "42", "GITHUB_EVENT_PATH": str(event), "GITHUB_SERVER_URL": "https://ghe.example/",
           "GHSTATE_DEBUG": "1"}
    runner = ci_run(env)
    assert (runner.branch, runner.commit, runner.debug) == ("feature/pr", "feed" * 10, True)
    assert runner.run_url == "https://ghe.example/o/r/actions/runs/42"
    event.write_text("{not json")
    runner = ci_run(env)
    assert (runner.branch, runner.commit) == ("12/merge", "merge" * 8)
    assert ci_run({"GITHUB_HEAD_REF": "feature/head", "GITHUB_REF_NAME": "x"}).branch == "feature/head"
    assert ci_run({}).run_url == "" and ci_run({}).workspace == "."


# ---------------------------------------------------------------------------------- verdicts and reports


def test_a_cancelled_run_with_failures_in_its_partial_report_is_recorded(runner, run):
    seed(runner)
    (runner.workspace / "reports" / "r.xml").write_bytes((FIXTURES / "pytest-rerunfailures.xml").read_bytes())
    out = run("ci", "--result", "cancelled", "--junit", "reports/*.xml").stdout
    assert "not recorded" not in out and "Recorded cancelled on #7" in out
    cp = parse(runner.issues[7]["body"]).checkpoint
    v = cp.verification_data.to_dict()
    assert v["failure_type"] == "cancelled" and v["failing_tests"][0]["name"] == "tests/test_api.py::test_always_fails"
    assert "- `tests/test_api.py::test_always_fails`: `assert 500 == 200`" in cp.verification
    assert labels(runner) == ["ghstate"]  # a cancelled run says nothing about the code


def test_a_failed_run_whose_tests_all_passed_after_re_runs_is_a_build_failure_naming_the_flaky_ones(runner, run):
    """No test failed in the end, so what failed the job is not a test: build, with the flaky ones named."""
    seed(runner)
    (runner.workspace / "reports" / "r.xml").write_bytes((FIXTURES / "surefire-all-flaky.xml").read_bytes())
    run("ci", "--result", "failure", "--junit", "reports/*.xml")
    cp = parse(runner.issues[7]["body"]).checkpoint
    v = cp.verification_data.to_dict()
    assert (v["failure_type"], v["counts"]["flaky"], v["class_counts"]) == ("build", 2, {"flaky": 2})
    assert "Tests: 3 passed (2 after a re-run), 0 failed" in cp.verification
    assert "- flaky: `example.PaymentTest::chargesCard`" in cp.verification
    assert v["failure_detail"].startswith("the job failed, but no test in the reports failed (2 tests passed only "
                                          "when re-run: example.PaymentTest::chargesCard")
    assert "| result | failure (build) |" in runner.files["summary"].read_text()
    assert "(0 failed of 3, 2 flaky)" in run("resume", "7").stdout


@pytest.mark.parametrize(("how", "failed", "flaky"),
                         [((), 1, 0), (("--retries",), 0, 1), ("GHSTATE_RETRIES=true", 0, 1)])
def test_repeated_test_cases_are_retries_only_when_the_workflow_says_so(runner, run, monkeypatch, how, failed, flaky):
    """Gradle without mergeReruns writes a failed attempt and its passing re-run as two test cases:
    two results (one failed), unless the workflow passes retries (the action's input, GHSTATE_RETRIES)."""
    seed(runner)
    (runner.workspace / "reports" / "r.xml").write_bytes((FIXTURES / "gradle-reruns-unmerged.xml").read_bytes())
    args = ("ci", "--result", "failure", "--junit", "reports/*.xml")
    if isinstance(how, str):
        monkeypatch.setenv(*how.split("="))
        how = ()
    run(*args, *how)
    v = parse(runner.issues[7]["body"]).checkpoint.verification_data.to_dict()
    assert (v["counts"]["failed"], v["counts"]["flaky"]) == (failed, flaky)
    assert v["counts"]["tests"] == 3 - flaky
    assert v["failing_tests"][0]["name"] == "example.CacheTest::evictsOldest()"
    assert v["failing_tests"][0].get("class") == ("flaky" if flaky else "new")


INVISIBLE = "\u0085\u009b\u200b\u200e\u2028\u202e\u2066\ufeff"


def test_control_and_invisible_characters_of_a_report_never_reach_the_issue_raw(runner, run):
    seed(runner)
    refs = "".join(f"&#x{ord(ch):x};" for ch in INVISIBLE)
    (runner.workspace / "reports" / "r.xml").write_text(
        f'<testsuite><testcase classname="tests.t" name="test_{refs}x"><failure message="boom{refs}!"/>'
        f'</testcase></testsuite>')
    out = run("ci", "--result", "failure", "--junit", "reports/*.xml").stdout
    assert "not recorded" not in out
    body, summary, prompt = runner.issues[7]["body"], runner.files["summary"].read_text(), run("resume", "7").stdout
    for where in (body, summary, prompt, *(c["body"] for c in runner.comments[7])):
        assert not any(ch in where for ch in INVISIBLE), [ch for ch in INVISIBLE if ch in where]
    v = parse(body).checkpoint.verification_data.to_dict()
    # NEL and LS are white space (one space each); the others are shown as escapes
    assert v["failing_tests"][0]["name"] == "tests.t::test_ \\u009b\\u200b\\u200e \\u202e\\u2066\\ufeffx"


def test_twenty_agent_writes_and_ten_green_runs_notify_no_one(runner, run):
    """Issue 19's day: 20 agent checkpoints and 10 green CI runs leave no comment (the one issue event
    that notifies subscribers), change no label, and every write is still in the body and its history."""
    seed(runner)
    (runner.workspace / "reports" / "ok.xml").write_bytes((FIXTURES / "all-pass.xml").read_bytes())
    for k in range(20):
        run("checkpoint", "7", "--decision", f"decision {k}", "--agent", "claude-code")
    for k in range(10):
        run("ci", "--result", "success", "--junit", "reports/*.xml", env={"GITHUB_SHA": f"{k}f2c1e9aa1b2c3d4e5f6"})
        runner.files["output"].write_text("")
    assert runner.comments[7] == [] and runner.count("POST", r"/comments$") == 0
    assert not [b for _, url, b in runner.calls if isinstance(b, dict) and "addComment" in str(b.get("query", ""))]
    assert labels(runner) == ["ghstate"]
    cp = parse(runner.issues[7]["body"]).checkpoint
    assert all(f"decision {k}" in cp.decisions for k in range(20))
    assert cp.verification_data.status == "passing" and cp.verification_data.attempt_count == 10
