"""Checkpoints on a GitHub Project (v2), on the fake GitHub: items, their five fields, Status, the board,
failures that never fail the write, and every document judged by GitHub's schema."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from bodies import render_body
from conftest import SAMPLE, git
from github_fake import FakeGitHub
from github_fake_projects import FakeProjects

from ghstate import config
from ghstate.core.marker import Execution
from ghstate.core.parse import parse
from ghstate.core.verification import Verification
from ghstate.github import projects as pure

TOKEN = "ghp_" + "Pr0j3ct" * 6
REPO = "octo/hello"


class Board:
    def __init__(self, fake: FakeGitHub, projects: FakeProjects) -> None:
        self.fake = fake
        self.projects = projects
        self.project = projects.project()

    def graphql(self) -> int:
        """The project's GraphQL requests (the checkpoint's own reads and writes are GraphQL too)."""
        return sum(1 for name in self.fake.operations() if name.startswith("Project"))

    def values(self, number: int = 1, repo: str = REPO) -> dict:
        return self.projects.values(self.project, repo, number)


@pytest.fixture
def gh(isolated, repo, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GHSTATE_PROJECT", "orgs/ACME/projects/7")
    fake = FakeGitHub(isolated)
    monkeypatch.setattr("ghstate.github.transport._sleep", fake.advance)
    monkeypatch.setattr("ghstate.github.transport._now", fake.timestamp)
    projects = FakeProjects(fake).install()
    projects.add_project()
    yield Board(fake, projects)
    assert fake.problems() == [], "requests GitHub's schema or API description does not allow"


def checkpointed(gh, number=1) -> str:
    return parse(gh.fake.issues[number]["body"]).checkpoint.meta.updated_at[:10]


def warnings(result) -> list[str]:
    """The warnings of a write, but for the advice on a resume instruction that names a phase done."""
    return [line for line in result.stderr.splitlines()
            if line.startswith("Warning:") and "resume instruction" not in line]


def test_a_new_checkpoint_is_an_item_with_its_five_fields(gh, run, sample_file):
    result = run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor", "--agent", "claude-code",
                 "--role", "editor")
    assert result.stderr == ""
    assert gh.values() == {"Next phase": "Phase 2: matcher abstraction", "Progress": 33, "CI": "none",
                           "Last writer": "claude-code (editor)", "Checkpointed": checkpointed(gh),
                           "Status": "In Progress"}
    # the fields were made with GitHub's types, CI with its four options
    fields = {f["name"]: f for f in gh.project["fields"]}
    assert [fields[n]["dataType"] for n in pure.FIELDS] == ["TEXT", "NUMBER", "SINGLE_SELECT", "TEXT", "DATE"]
    assert [o["name"] for o in fields["CI"]["options"]] == ["passing", "failing", "blocked", "none"]
    # 7 requests for the repository's first checkpoint (its branch's entry in the branch index, a look through
    # the open ones: none, create, the entry's commit, refused for want of the tree ghstate's commits share,
    # the tree, the commit again, the ref), 3 for the project: resolve, prepare (add the item and create the
    # five fields in one document), set the six values (one document)
    assert gh.graphql() == 3 and len(gh.fake.calls) == 10
    assert [m for m, _ in gh.projects.mutations] == ["addProjectV2ItemById", *["createProjectV2Field"] * 5,
                                                     *["updateProjectV2ItemFieldValue"] * 6]


def test_ticking_a_phase_moves_the_fields_in_two_requests(gh, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--agent", "claude-code", "--role", "editor")
    before, mutations = gh.graphql(), len(gh.projects.mutations)
    run("checkpoint", "--done", "Phase 2", "--agent", "codex", "--role", "reviewer")
    values = gh.values()
    assert values["Next phase"] == "Phase 3: wire config" and values["Progress"] == 67
    assert values["Last writer"] == "codex (reviewer)" and values["Status"] == "In Progress"
    assert gh.graphql() - before == 2  # resolve, then only the values that changed
    changed = {i["fieldId"] for _, i in gh.projects.mutations[mutations:]}
    names = {f["id"]: f["name"] for f in gh.project["fields"]}
    assert {names[f] for f in changed} == {"Next phase", "Progress", "Last writer"}
    assert len(gh.project["items"]) == 1  # added once
    run("checkpoint", "--done", "Phase 3")
    assert gh.values()["Next phase"] == pure.NO_NEXT and gh.values()["Progress"] == 100
    assert gh.values()["Status"] == "Done"  # every phase done and no CI result against it


def test_an_unchanged_write_costs_one_request(gh, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    before = gh.graphql()
    run("checkpoint", "--file", str(sample_file))
    assert gh.graphql() - before == 1  # the item is current: nothing to set


def test_without_a_project_no_graphql_request_is_made(gh, run, sample_file, monkeypatch):
    monkeypatch.delenv("GHSTATE_PROJECT")
    run("checkpoint", "--file", str(sample_file))
    assert gh.graphql() == 0 and gh.project["items"] == []


# ---------------------------------------------------------------------------------- CI


@pytest.fixture
def runner(gh, repo, tmp_path, monkeypatch):
    """The environment of a GitHub Actions step, on the repository's branch."""
    output = tmp_path / "output"
    output.write_text("")
    for key, value in {"GITHUB_ACTIONS": "true", "GITHUB_SHA": git(repo, "rev-parse", "HEAD"), "GITHUB_RUN_ID": "5",
                       "GITHUB_REF_NAME": "feature/x", "GITHUB_WORKSPACE": str(repo), "GITHUB_OUTPUT": str(output),
                       "GITHUB_WORKFLOW": "tests"}.items():
        monkeypatch.setenv(key, value)
    return gh


def test_a_red_run_and_a_green_one_move_ci_and_status(runner, run, sample_file):
    gh = runner
    run("checkpoint", "--file", str(sample_file), "--agent", "claude-code", "--role", "editor")
    run("checkpoint", "--done", "Phase 2", "--done", "Phase 3")
    assert gh.values()["Status"] == "Done"
    before = gh.graphql()
    red = run("ci", "--result", "failure")
    assert "Recorded failure on #1" in red.stdout and "::warning::" not in red.stdout
    assert gh.graphql() - before == 2
    values = gh.values()
    assert values["CI"] == "failing" and values["Status"] == "In Progress"
    assert values["Last writer"] == "github-actions (ci)"
    green = run("ci", "--result", "success")
    assert "::warning::" not in green.stdout
    assert gh.values()["CI"] == "passing" and gh.values()["Status"] == "Done"


def test_ci_with_a_project_flag(runner, run, sample_file, monkeypatch):
    gh = runner
    monkeypatch.delenv("GHSTATE_PROJECT")
    run("checkpoint", "--file", str(sample_file))
    assert gh.project["items"] == []
    run("ci", "--result", "failure", "--project", "https://github.com/orgs/ACME/projects/7/views/1")
    assert gh.values()["CI"] == "failing"


# ---------------------------------------------------------------------------------- failures


def test_a_forbidden_project_leaves_the_write_done_and_says_why_once(gh, run, sample_file):
    gh.projects.deny_writes = True
    result = run("checkpoint", "--file", str(sample_file))
    assert result.stdout.startswith("Created checkpoint #1")
    assert gh.fake.issues[1]["body"] and gh.project["items"] == []
    said = warnings(result)
    assert len(said) == 1, result.stderr
    assert "project orgs/ACME/projects/7 was not updated for #1" in said[0]
    assert "Resource not accessible by integration" in said[0] and "GITHUB_TOKEN cannot reach" in said[0]
    assert TOKEN not in result.stderr + result.stdout
    gh.projects.deny_writes = False  # permission granted: the next write catches up
    result = run("checkpoint", "--risk", "slow matcher")
    assert warnings(result) == [] and gh.values()["Progress"] == 33


def test_a_project_the_token_cannot_read(gh, run, sample_file):
    gh.projects.denied = "INSUFFICIENT_SCOPES"
    result = run("checkpoint", "--file", str(sample_file))
    assert result.exit_code == 0 and len(warnings(result)) == 1
    assert "read:project" in result.stderr and "project scope" in result.stderr


def test_a_field_deleted_meanwhile_leaves_the_write_done_and_the_next_write_recreates_it(gh, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    # someone deletes the Progress field between this write's resolve and its update
    gh.fake.on("POST", r"^/graphql Project", lambda: gh.projects.delete_field(gh.project, "Progress"), skip=1)
    result = run("checkpoint", "--done", "Phase 2")
    assert result.stdout.startswith("Updated checkpoint #1")
    said = warnings(result)
    assert len(said) == 1 and "NOT_FOUND" in said[0] and "next write" in said[0]
    result = run("checkpoint", "--risk", "more")
    assert warnings(result) == []
    assert gh.values()["Progress"] == 67 and gh.values()["Next phase"] == "Phase 3: wire config"


def test_a_rate_limited_project_is_one_warning(gh, run, sample_file):
    """GraphQL's primary limit used up for the project's requests, until long after the budget: one
    warning that says when it resets, and the checkpoint written. Fails if the write is lost or the
    limit said more than once."""
    reset = int(gh.fake.timestamp()) + 3600
    gh.fake.fail("POST", r"^/graphql Project", type="RATE_LIMITED", times=9,
                 headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
    result = run("checkpoint", "--file", str(sample_file))
    assert result.stdout.startswith("Created checkpoint #1")
    said = warnings(result)
    assert len(said) == 1 and "GitHub's GraphQL rate limit is used up (RATE_LIMITED: API rate limit exceeded" in \
        said[0] and "it resets at 09:00 UTC (in about 60 min)" in said[0], said


def test_a_project_request_rate_limited_until_soon_is_waited_out(gh, run, sample_file):
    """The reset a few seconds away: the request waits for it and the project is kept current. Fails if
    the limit is a warning while the budget allows the wait."""
    reset = int(gh.fake.timestamp()) + 5
    gh.fake.fail("POST", r"^/graphql Project", type="RATE_LIMITED",
                 headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
    result = run("checkpoint", "--file", str(sample_file))
    assert warnings(result) == [] and gh.values()["Next phase"] == "Phase 2: matcher abstraction"
    assert gh.fake.timestamp() >= reset


def test_a_field_of_another_type_is_left_alone_and_reported(gh, run, sample_file):
    gh.projects.add_field(gh.project, "Progress", "TEXT")
    result = run("checkpoint", "--file", str(sample_file))
    said = warnings(result)
    assert len(said) == 1 and "'Progress'" in said[0] and "a text field, not a number field" in said[0]
    values = gh.values()
    assert "Progress" not in values and values["Next phase"] == "Phase 2: matcher abstraction"
    assert [i["name"] for m, i in gh.projects.mutations if m == "createProjectV2Field"] == [
        "Next phase", "CI", "Last writer", "Checkpointed"]


def test_status_options_that_differ_are_left_alone_and_said_once(isolated, gh, run, sample_file, monkeypatch):
    other = gh.projects.add_project("ACME", 8, status=("Backlog", "Doing", "Shipped"))
    monkeypatch.setenv("GHSTATE_PROJECT", "orgs/ACME/projects/8")
    result = run("checkpoint", "--file", str(sample_file))
    said = warnings(result)
    assert len(said) == 1 and "Status" in said[0] and "'Backlog', 'Doing', 'Shipped'" in said[0]
    values = gh.projects.values(other, REPO, 1)
    assert "Status" not in values and values["Progress"] == 33


def test_a_project_without_status_is_fine(gh, run, sample_file, monkeypatch):
    other = gh.projects.add_project("octo", 2, kind="users", status=None)
    result = run("checkpoint", "--file", str(sample_file), "--project", "users/octo/projects/2")
    assert warnings(result) == [] and gh.projects.values(other, REPO, 1)["CI"] == "none"


def test_a_bad_project_name_is_one_error_line(gh, run, sample_file, tmp_path):
    result = run("checkpoint", "--file", str(sample_file), "--project", "ACME/7", code=1)
    assert result.stderr.startswith("Error: --project must name a GitHub Project") and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_config_key(gh, run, sample_file, repo, monkeypatch):
    monkeypatch.delenv("GHSTATE_PROJECT")
    (repo / ".ghstate").mkdir()
    (repo / ".ghstate" / "config.toml").write_text('project = "https://github.com/orgs/ACME/projects/7"\n')
    run("checkpoint", "--file", str(sample_file))
    assert gh.values()["CI"] == "none"
    (repo / ".ghstate" / "config.toml").write_text('project = "orgs/ACME"\n')
    result = run("checkpoint", "--risk", "x", code=1)
    assert "project in" in result.stderr and "must name a GitHub Project" in result.stderr


# ---------------------------------------------------------------------------------- board


def body(phases_done: int, *, branch: str, days_ago: float, ci: str | None = None, agent: str = "claude-code") -> str:
    cp = parse(SAMPLE).checkpoint
    phases = tuple(p._replace(done=i < phases_done) for i, p in enumerate(cp.phases))
    at = (datetime.now(timezone.utc) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cp = cp._replace(phases=phases, executions=(Execution(agent=agent, role="editor", revision=2),),
                     verification_data=Verification(status=ci) if ci else None)
    return render_body(cp.with_meta(revision=2, branch=branch, updated_at=at, id="0123456789ab"))


@pytest.fixture
def two_repos(gh):
    """A project with checkpoints of octo/hello and ACME/api: fresh, stale, blocked, failing, plus a closed
    one, an issue that is no checkpoint, and one of a repository the token cannot see."""
    p = gh.projects
    gh.fake.add_issue(3, body(1, branch="feature/fresh", days_ago=0.1))
    gh.fake.add_issue(4, body(2, branch="feature/old", days_ago=10))
    p.add_issue("ACME/api", 11, body(1, branch="fix/blocked", days_ago=0.5, ci="blocked", agent="codex"))
    p.add_issue("ACME/api", 12, body(0, branch="fix/red", days_ago=1, ci="failing"))
    p.add_issue("ACME/api", 13, body(3, branch="done", days_ago=1), state="CLOSED")
    p.add_issue("ACME/api", 14, "just an issue", labels=())
    p.add_issue("ACME/secret", 1, body(1, branch="x", days_ago=1))
    p.hidden_repos.add("ACME/secret")
    for repo, number in ((REPO, 3), (REPO, 4), ("ACME/api", 11), ("ACME/api", 12), ("ACME/api", 13),
                         ("ACME/api", 14), ("ACME/secret", 1)):
        p.add_item(gh.project, repo, number)
    return gh


def test_the_board_lists_two_repositories_in_one_request_blocked_failing_stale_first(two_repos, run):
    gh = two_repos
    out = run("board").stdout.splitlines()
    assert [re.search(r"\S+#\d+", line).group(0) for line in out] == [
        "ACME/api#11", "ACME/api#12", "octo/hello#4", "octo/hello#3"]
    assert out[0].startswith("!BLOCKED") and out[1].startswith("!FAILING") and out[2].startswith("!STALE")
    assert not out[3].startswith("!")
    assert "fix/blocked" in out[0] and "1/3 33%" in out[0] and "next: Phase 2: matcher abstraction" in out[0]
    assert "CI blocked" in out[0] and "codex (editor)" in out[0] and "12h ago" in out[0]
    assert "10d ago" in out[2] and "CI none" in out[3]
    assert len(gh.fake.calls) == 1 and gh.graphql() == 1


def test_the_board_as_json(two_repos, run):
    data = json.loads(run("board", "--json", "--stale", "0.9").stdout)
    assert json.loads(run("board", "--json", "--days", "0.9").stdout) == data  # --days, as list's; --stale: alias
    assert data["source"] == "orgs/ACME/projects/7" and data["hidden"] == 1
    from ghstate.commands.json_output import json_fields  # what --json FIELD,… may name: what it prints

    assert list(data) == list(json_fields("board"))
    assert json.loads(run("board", "--json", "hidden,source").stdout) == {"hidden": 1, "source": data["source"]}
    rows = data["checkpoints"]
    assert [(r["repo"], r["number"], r["marks"]) for r in rows] == [
        ("ACME/api", 11, ["blocked"]), ("ACME/api", 12, ["failing", "stale"]), ("octo/hello", 4, ["stale"]),
        ("octo/hello", 3, [])]
    first = rows[0]
    assert first["branch"] == "fix/blocked" and first["progress"] == 33 and first["done"] == 1
    assert first["next_phase"] == "Phase 2: matcher abstraction" and first["ci"] == "blocked"
    assert first["last_writer"] == "codex (editor)" and first["url"] == "https://github.com/ACME/api/issues/11"


def test_the_board_reads_a_page_of_100_items_a_request(gh, run):
    for number in range(1, 151):
        gh.projects.add_issue("ACME/api", number, body(1, branch=f"b{number}", days_ago=0.2))
        gh.projects.add_item(gh.project, "ACME/api", number)
    out = run("board").stdout.splitlines()
    assert len(out) == 150 and gh.graphql() == 2


def test_the_board_of_an_organization(two_repos, run):
    gh = two_repos
    data = json.loads(run("board", "--org", "ACME", "--json").stdout)
    assert [(r["repo"], r["number"]) for r in data["checkpoints"]] == [("ACME/api", 11), ("ACME/api", 12)]
    assert gh.graphql() == 1


def test_the_board_without_access_is_one_error_line(gh, run):
    gh.projects.denied = "FORBIDDEN"
    result = run("board", code=1)
    assert result.stderr.startswith("Error: cannot read project orgs/ACME/projects/7")
    assert len(result.stderr.splitlines()) == 1 and "project scope" in result.stderr


def test_the_board_needs_a_project(gh, run, monkeypatch):
    monkeypatch.delenv("GHSTATE_PROJECT")
    result = run("board", code=1)
    assert result.stderr.startswith("Error: no project")
    assert run("board", "--project", "orgs/ACME/projects/7", "--org", "ACME", code=2).exit_code == 2


def test_untrusted_text_on_the_board_is_printable(gh, run):
    hostile = body(1, branch="x", days_ago=0.1).replace("Phase 2: matcher abstraction", "Phase 2 \x1b[31mred")
    gh.projects.add_issue("ACME/api", 5, hostile)
    gh.projects.add_item(gh.project, "ACME/api", 5)
    out = run("board").stdout
    assert "\x1b" not in out and "ACME/api#5" in out


# ---------------------------------------------------------------------------------- pure


@pytest.mark.parametrize("text", ["orgs/ACME/projects/7", "https://github.com/orgs/ACME/projects/7",
                                  "https://github.com/orgs/ACME/projects/7/views/2",
                                  "https://ghe.example.com/orgs/ACME/projects/7?query=x"])
def test_a_project_is_named_three_ways(text):
    assert config.parse_ref(text) == config.ProjectRef("orgs", "ACME", 7)


@pytest.mark.parametrize("text", ["ACME/7", "orgs/ACME/projects/0", "orgs//projects/1", "users/a b/projects/1", ""])
def test_what_names_no_project(text):
    assert config.parse_ref(text) is None


def test_status_is_done_only_when_every_phase_is_done_and_ci_does_not_fail():
    cp = parse(SAMPLE).checkpoint
    done = cp._replace(phases=tuple(p._replace(done=True) for p in cp.phases))
    assert pure.status_of(cp) == "in progress"
    assert pure.status_of(done) == "done"
    assert pure.status_of(done._replace(verification_data=Verification(status="failing"))) == "in progress"
    assert pure.status_of(done._replace(verification_data=Verification(status="passing"))) == "done"
    assert pure.status_of(cp._replace(phases=())) == "in progress"


# ---------------------------------------------------------------------------------- push, tokens


def test_a_write_kept_during_an_outage_reaches_the_project_with_push(gh, run, sample_file):
    gh.fake.fail("*", r".*", None, times=99)
    run("checkpoint", "--file", str(sample_file), code=1)
    assert gh.project["items"] == [] and gh.graphql() == 0
    gh.fake.faults.clear()
    result = run("push")
    assert "created #1" in result.stdout and warnings(result) == []
    assert gh.values()["Next phase"] == "Phase 2: matcher abstraction"


def test_a_token_for_the_project_only(gh, run, sample_file, isolated, monkeypatch):
    project_token = "ghs_" + "Pr0j" * 9
    monkeypatch.setenv("GHSTATE_PROJECT_TOKEN", project_token)
    result = run("checkpoint", "--file", str(sample_file))
    assert gh.values()["Progress"] == 33
    sent = [(c.request.url, c.request.headers.get("Authorization", ""),
             c.request.body if isinstance(c.request.body, bytes) else (c.request.body or "").encode())
            for c in isolated.calls]
    project = b"query Project|mutation Project"
    graphql = [auth for url, auth, body in sent if url.endswith("/graphql") and re.search(project, body)]
    rest = [auth for url, auth, body in sent if "/repos/" in url
            or (url.endswith("/graphql") and not re.search(project, body))]  # the checkpoint's own
    assert graphql and all(project_token in auth for auth in graphql)
    assert rest and all(TOKEN in auth for auth in rest)
    assert project_token not in result.stdout + result.stderr


def test_the_board_needs_no_repository(two_repos, run, monkeypatch):
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert len(run("board").stdout.splitlines()) == 4


def test_the_board_shows_children_under_their_parent(two_repos, run):
    """``ghstate split``'s children are sub-issues: the board reads each one's parent with it (no request
    more) and shows it under its parent, wherever the sort would have put it."""
    gh = two_repos
    for number, days in ((5, 20), (6, 0.2)):
        gh.fake.add_issue(number, body(0, branch="feature/fresh", days_ago=days))
        gh.fake.tasks.link(3, number)
        gh.projects.add_item(gh.project, REPO, number)
    start = len(gh.fake.calls)
    out = run("board").stdout.splitlines()
    assert len(gh.fake.calls) - start == 1
    names = [re.search(r"(└ )?\S+#\d+", line).group(0) for line in out]
    assert names == ["ACME/api#11", "ACME/api#12", "octo/hello#4", "octo/hello#3", "└ octo/hello#5",
                     "└ octo/hello#6"]
    rows = {r["number"]: r["parent"] for r in json.loads(run("board", "--json").stdout)["checkpoints"]}
    assert rows[5] == rows[6] == "octo/hello#3" and rows[3] is None


def test_the_board_limit_keeps_its_order_and_says_more_are_left(two_repos, run):
    result = run("board", "--limit", "2")
    assert [re.search(r"\S+#\d+", line).group(0) for line in result.stdout.splitlines()] == [
        "ACME/api#11", "ACME/api#12"]
    assert "More open checkpoints in orgs/ACME/projects/7 than these 2: --limit 12 shows more." in result.stderr
    data = json.loads(run("board", "--json", "--limit", "3").stdout)
    assert list(data) == ["source", "stale_days", "hidden", "checkpoints"] and len(data["checkpoints"]) == 3
    assert "More" not in run("board", "--limit", "4").stderr


def test_a_dry_run_of_an_update_writes_nothing_anywhere(gh, run, sample_file):
    """Issue 39, bug 1: an update's dry run returns the checkpoint as read, which was taken for a write, and
    the project item was moved on while the issue was not written."""
    run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor")
    mutations, start = list(gh.projects.mutations), len(gh.fake.calls)
    for flags in (["--done", "Phase 2"], ["--decision", "X"], ["--risk", "R", "--json"]):
        run("checkpoint", "1", *flags, "--dry-run")
        run("checkpoint", *flags, "--dry-run")  # by branch too
    assert gh.projects.mutations == mutations
    sent = gh.fake.calls[start:]
    assert not any(body and "mutation" in str(body.get("query", "")).split("(")[0] for _, _, body in sent)
    assert not any(m in ("POST", "PATCH", "PUT", "DELETE") and "/graphql" not in url for m, url, _ in sent)


from test_json_output import PLAN  # noqa: E402 - a plan of three phases, the third after the second


def test_the_board_follows_split_and_done(gh, run, tmp_path):
    """Issue 57: split and done never touched the project: its children were no items, so the board did not
    list them. split makes each child an item as it makes it (createIssue's projectV2Ids: one request more,
    the project's id); done costs the project nothing: the board reads each checkpoint's body, so the
    parent's progress is its tick at once, and a closed child is off the board."""
    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--file", str(tmp_path / "plan.md"), "--title", "Parser")
    before = gh.graphql()
    split = run("split", "1")
    assert "Warning" not in split.stderr, split.stderr
    assert gh.graphql() - before == 1  # ProjectId: the children join as they are made
    assert {i["content"] for i in gh.project["items"]} == {(REPO, 1), (REPO, 2), (REPO, 3)}
    names = [re.search(r"(└ )?\S+#\d+", line).group(0) for line in run("board").stdout.splitlines()]
    assert names == ["octo/hello#1", "└ octo/hello#2", "└ octo/hello#3"]
    before = gh.graphql()
    run("done", "2")
    assert gh.graphql() == before  # no project request
    board = run("board").stdout.splitlines()
    assert [re.search(r"\S+#\d+", line).group(0) for line in board] == ["octo/hello#1", "octo/hello#3"]
    assert "2/3 67%" in board[0] and "next: Phase 3: config" in board[0]


def test_split_says_why_its_children_are_not_on_the_project(gh, run, tmp_path, monkeypatch):
    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--file", str(tmp_path / "plan.md"), "--title", "Parser")
    gh.projects.deny_writes = True
    split = run("split", "1")
    assert "were not added to project orgs/ACME/projects/7 (the token may not add items to it" in split.stderr
    assert gh.fake.issues[3]["state"] == "open" and len(gh.project["items"]) == 1
    monkeypatch.setenv("GHSTATE_PROJECT_TOKEN", "ghp_" + "0nly" * 9)
    gh.projects.deny_writes = False
    run("checkpoint", "1", "--phase", "Phase 4: docs")
    assert "join project orgs/ACME/projects/7 at their first write" in run("split", "1").stderr


def test_a_board_past_two_thousand_items_says_so(gh, run):
    """Issue 57: the board read 20 pages of 100 items and stopped there without a word."""
    for number in range(1, 2004):
        gh.projects.add_issue("ACME/api", number, body(1, branch=f"b{number}", days_ago=0.2))
        gh.projects.add_item(gh.project, "ACME/api", number)
    result = run("board", "--json")
    assert len(json.loads(result.stdout)["checkpoints"]) == 2000 and gh.graphql() == 20
    assert ("The board read the first 2,000 items of orgs/ACME/projects/7 (20 requests) and no more: 3 items "
            "were not read") in result.stderr
