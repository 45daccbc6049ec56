"""Tasks that split on the fake GitHub, under every variant of what GitHub's documentation leaves open
(``github_fake_tasks.VARIANTS``) that can change the case (the others give it the very same answers:
tests/variants.py): split's request budget and idempotence, ready in one request, the roll-up at no cost,
racing agents with exactly one winner per child (deterministic schedules), leases taken over, done, the
fallback without ``contents: write``, and no comment posted by any of it."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from github_fake import FakeGitHub
from github_fake_tasks import VARIANTS
from turnstile import SCHEDULES, Turnstile
from variants import changed_by, check, knob, parametrize

from ghstate.core.chain import TREE_FILES
from ghstate.core.parse import parse
from ghstate.errors import HeldByAnother, NothingReady
from ghstate.services.app import build_app
from ghstate.services.claims import ClaimRequest, DoneRequest, run_claim, run_done

TOKEN = "ghp_" + "T0k3n" * 8
T0 = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
PLAN = """## Goal
Ship the parser.

## Current status
- [x] Phase 1: parser
- [ ] Phase 2: matcher
  - [ ] write the matcher
- [ ] Phase 3: config (after Phase 2)
- [ ] Phase 4: docs (after Phase 2)
- [ ] Phase 5: release (after Phase 3, Phase 4)

## Decisions locked
- required flags, not positional

## Resume instruction
Start at Phase 2.
"""


def pytest_generate_tests(metafunc):
    # each case runs under the default and the variants that can change it (tests/variants.py: its @changed_by)
    parametrize(metafunc, [(v.name, v, knob(v)) for v in VARIANTS])


@pytest.fixture
def gh(request, isolated, repo, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    fake.tasks.use(request.param.how)
    fake.tasks.add_tree(TREE_FILES)  # a repository whose first chain commit was written (its tree is there)
    GITHUB[:] = [fake]
    yield fake
    assert fake.problems() == [], "requests that GitHub's API description does not allow"
    assert not any(m == "POST" and u.endswith("/comments") for m, u, _ in fake.calls), "a comment was posted"
    assert all(not c for c in fake.comments.values())
    check(fake, request.param, request.node.originalname)


def make_plan(gh, run, tmp_path, text: str = PLAN, *more: str) -> None:
    (tmp_path / "plan.md").write_text(text)
    run("checkpoint", "--file", str(tmp_path / "plan.md"), "--title", "Parser", *more)


def claim_refs(gh) -> dict[str, str]:
    """The claim refs (``refs/ghstate/claims/N``), apart from the checkpoints' chains."""
    return {name: oid for name, oid in gh.tasks.refs.items() if name.startswith("refs/ghstate/claims/")}


def since(gh, start: int) -> list[str]:
    out = []
    for method, url, body in gh.calls[start:]:
        if url.endswith("/graphql"):
            out.append(re.search(r"^\s*(?:query|mutation)\s+(\w+)", body["query"], re.MULTILINE).group(1))
        else:
            out.append(f"{method} {url.split('/hello')[1]}")
    return out


GITHUB: list = []  # the test's fake GitHub: its clock is the one leases are measured by


def app_at(when: datetime):
    """An App at ``when``: this machine's clock and GitHub's (its answers' Date, the date it gives a commit)
    both, as on a machine whose clock is right; a test of a skewed clock sets them apart."""
    GITHUB[0].clock = when
    app = build_app(store="github")
    app.clock = lambda: when
    return app


# ------------------------------------------------------------------------------------ split


@changed_by("newest_sub_issue_first")
def test_twenty_children_and_their_links_in_at_most_five_requests_and_a_split_again_makes_none(gh, run, tmp_path):
    phases = "\n".join(f"- [ ] Phase {i}: step {i}" + (f" (after Phase {i - 1})" if i > 1 else "")
                       for i in range(1, 21))
    make_plan(gh, run, tmp_path, PLAN.split("## Current status")[0] + f"## Current status\n{phases}\n\n"
              "## Resume instruction\nStart.\n")
    start = len(gh.calls)
    out = run("split", "1").stdout
    made = since(gh, start)
    assert made == ["Checkpoint", "CreateChildren", "AddBlockedBy", "POST /git/commits", "AppendCheckpoint"]
    assert out.startswith("Split #1 into 20 new children:")
    assert sorted(gh.tasks.children[1]) == list(range(2, 22))
    assert all(gh.tasks.parent[n] == 1 and [x["name"] for x in gh.issues[n]["labels"]] == ["ghstate"]
               for n in range(2, 22))
    assert {n: gh.tasks.blocked_by.get(n) for n in (2, 3, 21)} == {2: None, 3: [2], 21: [20]}
    parent = parse(gh.issues[1]["body"]).checkpoint
    assert parent.phases[0].name == "Phase 1: step 1 (#2)" and parent.phases[19].name.endswith("(#21)")
    child = parse(gh.issues[3]["body"]).checkpoint
    assert child.meta.task.parent == 1 and child.title == gh.issues[3]["title"] == "Phase 2: step 2"
    start = len(gh.calls)
    assert run("split", "1").stdout.startswith("Nothing to split")
    assert since(gh, start) == ["Checkpoint"]


@changed_by()
def test_a_split_refused_writes_nothing(gh, run, tmp_path):
    phases = "\n".join(f"- [ ] P{i}" for i in range(101))
    make_plan(gh, run, tmp_path, f"## Current status\n{phases}\n\n## Resume instruction\nGo.\n")
    start = len(gh.calls)
    result = run("split", "1", code=1)
    assert result.stderr.startswith("Error: the split would give the parent 101 sub-issues; GitHub keeps at most 100")
    assert since(gh, start) == ["Checkpoint"]
    make_plan(gh, run, tmp_path, PLAN.replace("Phase 2: matcher", "Phase 2: matcher (after Phase 5)"), "--new")
    start = len(gh.calls)
    assert "circle" in run("split", "2", code=1).stderr and since(gh, start) == ["Checkpoint"]


@changed_by("newest_sub_issue_first")
def test_a_parent_holding_an_allowed_credential_splits_with_allow_secrets(gh, run, tmp_path):
    """The children carry the parent's decisions: one the parent's write was allowed (--allow-secrets) makes
    split refuse, writing nothing, and naming the override, which split takes."""
    make_plan(gh, run, tmp_path, PLAN.replace("- required flags", "- password=hunter2hunter2\n- required flags"),
              "--allow-secrets")
    start = len(gh.calls)
    result = run("split", "1", code=1)
    assert "'password'" in result.stderr and "--allow-secrets" in result.stderr
    assert since(gh, start) == ["Checkpoint"] and 2 not in gh.issues
    assert run("split", "1", "--allow-secrets").stdout.startswith("Split #1 into 4 new children:")
    assert "password=hunter2hunter2" in gh.issues[2]["body"]

@changed_by("newest_sub_issue_first")
def test_a_split_cut_short_is_made_whole_by_the_next(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    gh.fail_op("CreateChildren", type="UNPROCESSABLE", field="child_2", message="Something went wrong.")
    result = run("split", "1", code=1)
    assert "of the 4 children of #1 could not be created (UNPROCESSABLE Something went wrong.)" in result.stderr
    assert "run 'ghstate split 1' again" in result.stderr
    made = len(gh.tasks.children[1])
    assert made in (2, 3)  # the ones after the refused one are made, or not (stops-after-error)
    run("split", "1")
    titles = sorted(gh.issues[n]["title"] for n in gh.tasks.children[1])
    assert titles == ["Phase 2: matcher", "Phase 3: config", "Phase 4: docs", "Phase 5: release"]
    by_title = {gh.issues[n]["title"]: n for n in gh.tasks.children[1]}
    assert sorted(gh.tasks.blocked_by[by_title["Phase 5: release"]]) == sorted(
        [by_title["Phase 3: config"], by_title["Phase 4: docs"]])
    assert [linked for linked in re.findall(r"\(#(\d+)\)", gh.issues[1]["body"])] == [
        str(by_title[t]) for t in ("Phase 2: matcher", "Phase 3: config", "Phase 4: docs", "Phase 5: release")]


# ------------------------------------------------------------------------------------ ready and the roll-up


@changed_by("lists_custom_refs", "lists_closed_blockers", "newest_sub_issue_first")
def test_ready_is_one_request_and_right(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    start = len(gh.calls)
    assert run("ready", "1").stdout == "#2\tPhase 2: matcher\t(of #1)\n"
    assert since(gh, start) == ["Checkpoint"]
    run("claim", "2", "--agent", "a1")
    gh.tasks.close(3)  # a person closed Phase 3's child on github.com
    rows = json.loads(run("ready", "1", "--json").stdout)
    assert [r["claimed_by"] for r in rows] == ["a1", None, None, None]
    states = {r["number"]: (r["state"], r["blocked_by"]) for r in rows}
    assert states == {2: ("claimed", []), 3: ("done", [2]), 4: ("blocked", [2]), 5: ("blocked", [4])}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rows[0]["lease_until"])


@changed_by("lists_custom_refs", "lists_closed_blockers", "newest_sub_issue_first")
def test_closing_a_claimed_child_takes_its_claim_ref_out_in_the_close_s_own_requests(gh, run, tmp_path):
    """A parent's read lists the repository's claim refs (the first 100): a child closed while claimed
    (``ghstate close``, the Action, a duplicate) took its ref along nowhere, so a month of such closes pushed the
    open children's claims out of that window. Its close deletes it now, in the updateRefs that folds its
    chain (compared with what was read), and costs no request more."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("claim", "2", "--agent", "a1")
    assert set(claim_refs(gh)) == {"refs/ghstate/claims/2"}
    start = len(gh.calls)
    run("close", "2")
    assert since(gh, start) == ["Checkpoint", "CloseCheckpoint", "ArchiveState", "POST /git/commits", "UpdateRefs"]
    assert claim_refs(gh) == {}
    assert run("claim", "3", "--agent", "a2").stdout == "#3\n"  # what waited for it is free to take
    rows = {r["number"]: r for r in json.loads(run("ready", "1", "--json").stdout)}
    assert rows[2]["state"] == "done" and rows[3]["claimed_by"] == "a2"

@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_the_roll_up_adds_no_request_to_resume(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("claim", "2", "--agent", "a1")
    start = len(gh.calls)
    prompt = run("resume", "1").stdout
    assert since(gh, start) == ["Checkpoint"]
    assert "Sub-tasks: 0 of 4 done (0%)" in prompt and "claimed: #2 Phase 2: matcher (by a1 until" in prompt
    assert "blocked: #3 Phase 3: config (waits for #2); #4 Phase 4: docs (waits for #2)" in prompt
    start = len(gh.calls)
    child = run("resume", "3").stdout
    assert since(gh, start) == ["Checkpoint"]
    assert "Part of #1 (Parser); its locked decisions hold here too (all are among this one's)." in child
    gh.issues[1]["body"] = gh.issues[1]["body"].replace("- required flags, not positional",
                                                        "- required flags, not positional\n- no regex")
    assert "hold here too:\n- no regex\n" in run("resume", "3").stdout
    assert "Tasks\n  Sub-tasks: 0 of 4 done (0%)" in run("show", "1").stdout
    start = len(gh.calls)
    by_branch = run("resume").stdout  # the branch's checkpoint is the parent, never a child
    # its entry in the branch index, then it; and, as its body was edited above, its edit history (who saved what)
    assert since(gh, start) == ["BranchCheckpoint", "Checkpoint", "BodyEdits"]
    assert "Resuming a task from GitHub issue #1 " in by_branch
    assert "Sub-tasks: 0 of 4 done (0%)" in by_branch


# ------------------------------------------------------------------------------------ claims


def claimer(agent: str, parent: int = 1, when: datetime = T0):
    def claim() -> int | None:
        return run_claim(app_at(when), ClaimRequest(next=parent, agent=agent)).claimed
    return claim


@pytest.mark.parametrize("schedule", SCHEDULES)
@changed_by("typed_ref_errors", "lists_custom_refs", "newest_sub_issue_first")
def test_racing_agents_claim_each_ready_child_exactly_once(gh, run, tmp_path, schedule):
    make_plan(gh, run, tmp_path, PLAN.replace(" (after Phase 2)", ""))
    run("split", "1", "--phase", "Phase 2", "--phase", "Phase 3")
    results = Turnstile(gh).run({f"agent-{i}": claimer(f"agent-{i}") for i in range(4)}, SCHEDULES[schedule]())
    winners = {name: n for name, n in results.items() if isinstance(n, int)}
    assert sorted(winners.values()) == [2, 3], results
    losers = [r for r in results.values() if not isinstance(r, int)]
    assert len(losers) == 2 and all(isinstance(r, NothingReady) for r in losers), results
    assert all("#2 claimed by agent-" in str(r) and "#3 claimed by agent-" in str(r) for r in losers), results
    assert {n: gh.tasks.claim_of(n)["agent"] for n in (2, 3)} == {n: a for a, n in winners.items()}


@pytest.mark.parametrize("schedule", SCHEDULES)
@changed_by("typed_ref_errors", "lists_custom_refs", "newest_sub_issue_first")
def test_racing_sessions_of_one_host_claim_each_ready_child_exactly_once(gh, run, tmp_path, schedule):
    """Issue 57: four sessions with the agent name init writes (``claude-code``), each its own session as Claude
    Code gives it: two children, two winners; before, a session's claim of another's child was its renewal."""
    make_plan(gh, run, tmp_path, PLAN.replace(" (after Phase 2)", ""))
    run("split", "1", "--phase", "Phase 2", "--phase", "Phase 3")

    def session(name: str):
        return lambda: run_claim(app_at(T0), ClaimRequest(next=1, agent="claude-code", session=name)).claimed

    results = Turnstile(gh).run({f"s-{i}": session(f"s-{i}") for i in range(4)}, SCHEDULES[schedule]())
    winners = {name: n for name, n in results.items() if isinstance(n, int)}
    assert sorted(winners.values()) == [2, 3], results
    assert all(isinstance(r, NothingReady) for r in results.values() if not isinstance(r, int)), results
    assert {n: gh.tasks.claim_of(n)["session"] for n in (2, 3)} == {n: s for s, n in winners.items()}


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_held_child_refuses_another_agent_naming_the_holder_and_the_lease(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    assert run("claim", "2", "--agent", "a1").stdout == "#2\n"
    refused = run("claim", "2", "--agent", "a2", code=4)
    assert re.fullmatch(r"Error: #2 is claimed by a1 until \d{4}-\d\d-\d\d \d\d:\d\d UTC; claim another "
                        r"\(ghstate claim --next PARENT\), or wait for the lease to end\n", refused.stderr)
    body = gh.issues[2]["body"]
    assert "> **Claimed** by `a1` until " in body  # shown for people
    assert run("claim", "2", "--agent", "a1", "--lease", "2h").stderr.startswith("Renewed #2")


@changed_by("typed_ref_errors", "lists_custom_refs", "newest_sub_issue_first")
def test_an_expired_lease_goes_to_exactly_one_of_two_agents_taking_it_over(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run_claim(app_at(T0), ClaimRequest(child=2, agent="a1", lease="90s"))
    later = T0 + timedelta(minutes=10)

    def take(agent: str):
        return lambda: run_claim(app_at(later), ClaimRequest(child=2, agent=agent)).claimed

    results = Turnstile(gh).run({"a2": take("a2"), "a3": take("a3")}, SCHEDULES["round-robin"]())
    won = [a for a, r in results.items() if r == 2]
    assert len(won) == 1, results
    lost = next(r for a, r in results.items() if a not in won)
    assert isinstance(lost, HeldByAnother) and f"claimed by {won[0]} until 2026-11-22 08:40 UTC" in str(lost)
    assert gh.tasks.claim_of(2)["agent"] == won[0]


@changed_by("lists_custom_refs", "lists_closed_blockers", "newest_sub_issue_first")
def test_done_closes_ticks_releases_and_names_what_it_unblocked(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("claim", "2", "--agent", "a1")
    with pytest.raises(HeldByAnother):
        run_done(build_app(store="github"), DoneRequest(child=2, agent="a2"))
    out = run("done", "2", "--agent", "a1").stdout.splitlines()
    assert out == ["Closed #2 Phase 2: matcher as completed.", "Ticked its phase in #1.", "Released the claim of a1.",
                   "Unblocked: #3 Phase 3: config; #4 Phase 4: docs"]
    assert gh.issues[2]["state"] == "closed" and gh.issues[2]["state_reason"] == "completed"
    assert parse(gh.issues[1]["body"]).checkpoint.phases[1].done
    assert gh.tasks.claim_of(2) is None and "Claimed" not in gh.issues[2]["body"]
    assert run("claim", "--next", "1", "--agent", "a1").stdout == "#3\n"


@changed_by("lists_closed_blockers", "newest_sub_issue_first")
def test_done_again_closes_nothing_twice_and_says_what_is_ready(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("done", "2")
    start = len(gh.calls)
    out = run("done", "2").stdout.splitlines()
    assert out == ["Closed #2 Phase 2: matcher as completed (it was closed already).",
                   "Ticked its phase in #1 (it was ticked already).", "Ready now: #3 Phase 3: config; #4 Phase 4: docs"]
    assert "CloseIssue" not in since(gh, start)


@changed_by("newest_sub_issue_first")
def test_done_and_claim_refuse_an_issue_that_is_no_child_in_one_request(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    for command in (["done", "1"], ["claim", "1", "--agent", "a1"]):
        start = len(gh.calls)
        result = run(*command, code=1)
        assert result.stderr == ("Error: #1 is not a child task: claim, release and done take a child that 'ghstate "
                                 "split' made ('ghstate ready PARENT' lists them)\n")
        assert len(gh.calls) - start == 1
    assert gh.issues[1]["state"] == "open" and gh.tasks.claim_of(1) is None


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_persons_sub_issue_is_never_claimed_closed_or_offered(gh, run, tmp_path):
    """Issue 57: any issue with a GitHub parent was taken for a child: ``done 10`` closed a person's plain
    sub-issue of their plan, the MCP tool with no force, and ``claim 10`` made a claim ref for it. Only the
    children split made (their marker) or carrying ghstate's label are ghstate's."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.add_issue(10, "Ask legal about the licence.", title="Ask legal", labels=())
    gh.tasks.link(1, 10)
    said = ("Error: #10 is a sub-issue of #1 that no 'ghstate split' made (without the 'ghstate' label): claim, "
            "release and done take a child that 'ghstate split' made ('ghstate ready PARENT' lists them)\n")
    for command in (["done", "10"], ["done", "10", "--force"], ["claim", "10", "--agent", "a1"],
                    ["release", "10", "--force"]):
        assert run(*command, code=1).stderr == said, command
    from ghstate.agents.mcp_tools import call

    refused = call("done", {"child": 10, "agent": "a1"}, lambda: build_app(store="github"))
    assert refused.error and refused.text.startswith("Error: #10 is a sub-issue of #1 that no 'ghstate split' made")
    assert [r["number"] for r in json.loads(run("ready", "1", "--json").stdout)] == [2, 3, 4, 5]
    for n in range(4):
        run("claim", "--next", "1", "--agent", f"a{n}", code=0 if n == 0 else 3)
    assert gh.issues[10]["state"] == "open" and gh.tasks.claim_of(10) is None
    gh.add_issue(11, gh.issues[2]["body"].split("## Goal")[0].split("-->")[0] + "-->\n## Goal\nA checkpoint.\n",
                 title="A checkpoint a person put under the plan")
    gh.tasks.link(1, 11)  # labelled: a checkpoint of ghstate's, as a child
    assert run("claim", "11", "--agent", "a9").stdout == "#11\n"


@changed_by("lists_closed_blockers", "newest_sub_issue_first")
def test_a_blocker_or_sub_issue_of_another_repository_is_matched_by_repository(gh, run, tmp_path):
    """Issue 57: a blocker in another repository was read as this repository's number: ``done 2`` unblocked a
    child that still waited for other/x#2, and a sub-issue of another repository was a child here."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.tasks.block(4, gh.tasks.add_foreign("other/x", 2))
    gh.tasks.link(1, gh.tasks.add_foreign("other/x", 7))
    rows = {r["number"]: r for r in json.loads(run("ready", "1", "--json").stdout)}
    assert sorted(rows) == [2, 3, 4, 5] and rows[4]["blocked_by"] == [2, "other/x#2"]
    out = run("done", "2").stdout.splitlines()
    assert out[-1] == "Unblocked: #3 Phase 3: config"
    rows = {r["number"]: r for r in json.loads(run("ready", "1", "--json").stdout)}
    assert (rows[4]["state"], rows[4]["blocked_by"]) == ("blocked", ["other/x#2"])
    assert "#4 Phase 4: docs (waits for other/x#2)" in run("resume", "1").stdout
    assert run("claim", "4", "--agent", "a1", code=3).stderr.startswith("Error: #4 waits for other/x#2")


PASTED = ('<!-- ghstate:claim {"agent":"ghost","until":"2099-01-01T00:00:00Z","at":"AT",'
          '"issue":2} -->\n> **Claimed** by `ghost` until 2099-01-01 00:00 UTC\n')


def paste(gh, number: int, text: str, where: str) -> None:
    """A person pastes ``text`` into the body of ``number`` on github.com: at its top (the claim's own place,
    right after the hidden marker) or into its goal."""
    body = gh.issues[number]["body"]
    if where == "top":
        marker, rest = body.split("\n", 1)
        gh.edit(number, f"{marker}\n{text}{rest}", login="mona")
    else:
        gh.edit(number, body.replace("## Goal\n", f"## Goal\n{text}", 1), login="mona")


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_claim_pasted_into_a_body_is_a_persons_text_or_a_hint_that_release_force_frees(gh, run, tmp_path):
    """Issue 57: a claim record pasted into a child's goal held it until 2099: ready never offered it, claim
    exited 4 naming "ghost", and 'release --force' printed Released and changed nothing. A record anywhere
    but the body's own place is a person's text; there, without a ref, it is a hint at most, held no longer
    than the longest lease ghstate grants (7 days), and release --force takes it away."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    app_at(T0)
    paste(gh, 2, PASTED.replace("AT", "2026-11-22T07:00:00Z"), "goal")
    assert [r["number"] for r in json.loads(run("ready", "1", "--json").stdout) if r["state"] == "ready"] == [2]
    assert run("claim", "2", "--agent", "a1").stdout == "#2\n"
    assert "ghost" in gh.issues[2]["body"]  # the person's text stays, byte for byte
    run("release", "2", "--agent", "a1")

    paste(gh, 2, PASTED.replace("AT", "2026-11-22T07:00:00Z"), "top")  # its own place: a hint, a week at most
    rows = {r["number"]: r for r in json.loads(run("ready", "1", "--json").stdout)}
    assert (rows[2]["state"], rows[2]["claimed_by"], rows[2]["lease_until"]) == (
        "claimed", "ghost", "2026-11-29T07:00:00Z")
    assert run("claim", "2", "--agent", "a1", code=4).stderr.startswith(
        "Error: #2 is claimed by ghost until 2026-11-29 07:00 UTC")
    released = run("release", "2", "--force")
    assert released.stdout == "Released #2 (claimed by ghost until 2026-11-29 07:00 UTC).\n"
    body = gh.issues[2]["body"]
    assert body.count("ghstate:claim") == 1 and "## Goal\n<!-- ghstate:claim" in body  # the goal's stays
    assert claim_refs(gh) == {}
    assert run("claim", "2", "--agent", "a1").stdout == "#2\n"  # free, as release said
    run("release", "2", "--agent", "a1")

    paste(gh, 2, PASTED.replace("AT", "2099-01-01T00:00:00Z"), "top")  # dated in the future: refused
    assert json.loads(run("ready", "1", "--json").stdout)[0]["state"] == "ready"
    app_at(T0 + timedelta(days=8))
    paste(gh, 3, PASTED.replace("AT", "2026-11-22T07:00:00Z").replace('"issue":2', '"issue":3'), "top")
    assert json.loads(run("ready", "1", "--json").stdout)[1]["claimed_by"] is None  # its week is over


@changed_by("newest_sub_issue_first")
def test_a_claim_only_a_body_shows_is_not_said_released_when_its_body_cannot_be_written(gh, run, tmp_path):
    """With no ref, the body's line is all there is to free: when its write fails, release says it released
    nothing (exit 1), never "Released"."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    app_at(T0)
    paste(gh, 2, PASTED.replace("AT", "2026-11-22T07:00:00Z"), "top")
    gh.fail("POST", r"^/graphql AppendCheckpoint$", 502, times=99)
    failed = run("release", "2", "--force", code=1)
    assert failed.stdout == "" and failed.stderr.startswith(
        "Error: #2 was not released: its body still shows the claim of ghost until 2026-11-29 07:00 UTC (")


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_leases_are_measured_by_githubs_clock_whatever_a_machines_says(gh, run, tmp_path):
    """Issue 57: leases ran on each machine's clock: a machine 20 minutes slow claimed for 10 minutes in truth,
    and one 15 minutes fast took a fresh claim over at once. GitHub's clock measures them now: the Date of its
    answers, and the date it gives the claim's commit."""
    make_plan(gh, run, tmp_path)
    run("split", "1")

    def machine(skew: timedelta, github: datetime):  # a machine whose clock is ``skew`` off GitHub's
        app = app_at(github + skew)
        gh.clock = github
        return app

    won = run_claim(machine(-timedelta(minutes=20), T0), ClaimRequest(child=2, agent="slow"))
    assert won.claim.until == "2026-11-22T08:30:00Z"  # GitHub's 08:00, not the machine's 07:40
    with pytest.raises(HeldByAnother, match="claimed by slow until 2026-11-22 08:30 UTC"):
        run_claim(machine(timedelta(minutes=15), T0 + timedelta(minutes=1)), ClaimRequest(child=2, agent="fast"))
    with pytest.raises(HeldByAnother, match="claimed by slow until 2026-11-22 08:30 UTC"):
        run_claim(machine(timedelta(0), T0 + timedelta(minutes=11)), ClaimRequest(child=2, agent="right"))
    rows = json.loads(run("ready", "1", "--json").stdout)
    if gh.tasks.variant.lists_custom_refs:  # GitHub dated the claim's commit a second after its Date said 08:00
        assert (rows[0]["state"], rows[0]["lease_until"]) == ("claimed", "2026-11-22T08:30:01Z")
    taken = run_claim(machine(-timedelta(minutes=20), T0 + timedelta(minutes=31)), ClaimRequest(child=2, agent="fast"))
    assert taken.said[0].startswith("Took over (the lease of slow ended 2026-11-22 08:30 UTC)")


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_claim_dated_in_the_future_is_refused(gh, run, tmp_path):
    """A claim whose commit GitHub dated after its own now (a commit written with a date of its choosing) is no
    claim: the first agent that reads it takes the child. Within the margin (60 s) it is one."""
    from ghstate.core.claims import claimed, lease_of

    make_plan(gh, run, tmp_path, PLAN.replace(" (after Phase 2)", ""))
    run("split", "1")
    killed_after_its_ref_moved(gh, 2, "early", T0 + timedelta(seconds=30))
    killed_after_its_ref_moved(gh, 3, "forger", T0 + timedelta(days=2))
    gh.clock = T0
    assert run_claim(app_at(T0), ClaimRequest(child=3, agent="a1")).said[0].startswith("Took over (the lease of "
                                                                                        "forger")
    killed_after_its_ref_moved(gh, 4, "forger", T0 + timedelta(days=2))
    gh.clock = T0
    rows = {r["number"]: r["state"] for r in json.loads(run("ready", "1", "--json").stdout)}
    assert rows[4] == "ready" and rows[2] == ("claimed" if gh.tasks.variant.lists_custom_refs else "ready")
    assert claimed("x", "", T0, lease_of("30m"), 3).live(T0 - timedelta(seconds=59))
    assert not claimed("x", "", T0, lease_of("30m"), 3).live(T0 - timedelta(seconds=61))


@changed_by("lists_closed_blockers", "newest_sub_issue_first")
def test_closing_a_plan_with_open_children_says_so_at_no_request_and_offers_them_no_more(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("done", "2")
    start = len(gh.calls)
    closed = run("close", "1")
    assert "CloseCheckpoint" in since(gh, start) and since(gh, start)[0] == "Checkpoint"
    assert sum(name == "Checkpoint" for name in since(gh, start)) == 1  # the family came with the read
    assert closed.stderr.startswith("Warning: #1 has 3 open children (#3, #4, #5): they stay open")
    assert run("claim", "--next", "1", "--agent", "a1", code=3).stderr.startswith(
        "Error: nothing ready in #1 (Parser): it is closed: its open children (#3, #4, #5) are offered no more")
    assert run("claim", "3", "--agent", "a1", code=3).stderr == (
        "Error: #3 is a child of #1, which is closed: nothing to claim there\n")


@changed_by("newest_sub_issue_first")
def test_without_contents_write_claims_fall_back_to_the_body_said_once(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.tasks.deny_refs = True
    first = run("claim", "--next", "1", "--agent", "a1")
    assert first.stdout == "#2\n"
    warnings = [line for line in first.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "contents: write" in warnings[0] and "best effort" in warnings[0]
    assert claim_refs(gh) == {} and "> **Claimed** by `a1`" in gh.issues[2]["body"]
    refused = run("claim", "2", "--agent", "a2", code=4)
    assert refused.stderr.count("Warning:") <= 1 and "claimed by a1" in refused.stderr
    assert run("claim", "--next", "1", "--agent", "a2", code=3).exit_code == 3
    run("release", "2", "--agent", "a1")
    assert "Claimed" not in gh.issues[2]["body"]


# ------------------------------------------------------------------------------------ doctor


# ------------------------------------------------------------------------------------ a family people rearrange

OTHER = "## Goal\nRelease it.\n\n## Current status\n- [ ] Phase 1: tag\n\n## Resume instruction\nTag it.\n"


def other_parent(gh, run, tmp_path) -> int:
    (tmp_path / "other.md").write_text(OTHER)
    run("checkpoint", "--file", str(tmp_path / "other.md"), "--title", "Release", "--new")
    return max(gh.issues)


@changed_by("lists_closed_blockers", "newest_sub_issue_first")
def test_a_child_closed_by_hand_is_done_for_the_parents_next_phase_at_no_request(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.tasks.close(2)  # a person closed Phase 2's child on github.com; its box in #1 stays unticked
    start = len(gh.calls)
    state = json.loads(run("resume", "1", "--format", "json").stdout)
    assert since(gh, start) == ["Checkpoint"]
    assert state["next_phase"] == "Phase 3: config (after Phase 2) (#3)"
    assert [p["status"] for p in state["phases"][:3]] == ["done", "done", "pending"]
    assert "Next phase: Phase 3: config" in run("resume", "1").stdout
    assert "✓ Phase 2" in run("show", "1").stdout
    assert json.loads(run("show", "1", "--json").stdout)["next_phase"].startswith("Phase 3: config")
    assert "- [ ] Phase 2: matcher (#2)" in gh.issues[1]["body"]  # a reading writes nothing


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_child_moved_to_another_parent_is_named_as_moved_with_where(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    other = other_parent(gh, run, tmp_path)
    gh.tasks.move(2, other)  # removeSubIssue + addSubIssue on github.com
    start = len(gh.calls)
    result = run("ready", "1")
    assert since(gh, start) == ["Checkpoint", "ChildrenElsewhere"]
    assert result.stdout == ""
    assert result.stderr.startswith(f"Nothing ready in #1 (Parser): #2 moved to #{other}; #3 waits for #2;")
    rows = {r["number"]: r for r in json.loads(run("ready", "1", "--json").stdout)}
    assert (rows[2]["parent"], rows[2]["moved"], rows[2]["moved_to"], rows[2]["phase"]) == (
        1, True, other, "Phase 2: matcher")
    assert (rows[3]["parent"], rows[3]["moved"], rows[3]["moved_to"]) == (1, False, None)
    prompt = run("resume", "1").stdout
    assert f"moved: #2 Phase 2: matcher (to #{other})" in prompt and "Next phase: Phase 2: matcher" in prompt
    everywhere = run("ready").stdout  # every open checkpoint that has children: the new parent too
    assert f"#2\tPhase 2: matcher\t(of #{other})\n" in everywhere
    claimed = run("claim", "--next", "1", "--agent", "a1", code=3)  # not offered by the parent it left
    assert f"#2 moved to #{other}" in claimed.stderr


@changed_by("lists_closed_blockers", "newest_sub_issue_first")
def test_split_again_never_duplicates_a_moved_child_and_done_ticks_the_parent_it_came_from(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    other = other_parent(gh, run, tmp_path)
    gh.tasks.move(2, other)
    issues = sorted(gh.issues)
    start = len(gh.calls)
    assert run("split", "1").stdout.startswith("Nothing to split")
    assert sorted(gh.issues) == issues and since(gh, start) == ["Checkpoint", "ChildrenElsewhere"]
    out = run("done", "2").stdout.splitlines()
    assert out[:2] == ["Closed #2 Phase 2: matcher as completed.",
                       f"Ticked its phase in #1, which it was split from (on GitHub it is a sub-issue of #{other} "
                       "now)."]
    assert out[2] == "Unblocked: #3 Phase 3: config; #4 Phase 4: docs"
    assert parse(gh.issues[1]["body"]).checkpoint.phases[1].done
    assert run("split", "1").stdout.startswith("Nothing to split") and sorted(gh.issues) == issues
    gh.tasks.move(3, None)  # removed from #1, in no parent now: still #1's child by its marker
    assert "Nothing to split" in run("split", "1").stdout and sorted(gh.issues) == issues
    assert "#3 Phase 3: config is no sub-issue of #1 any more.\n" in run("ready", "1").stderr


@changed_by("newest_sub_issue_first")
def test_a_phase_line_linking_an_issue_that_no_split_made_is_no_moved_child(gh, run, tmp_path):
    """A person's ``(#N)`` on a phase line that names an ordinary issue: not a child of this plan."""
    gh.add_issue(1, "A crash", "a bug report")
    make_plan(gh, run, tmp_path, PLAN.replace("Phase 4: docs (after Phase 2)", "Phase 4: docs of the fix (#1)"))
    start = len(gh.calls)
    assert "moved" not in run("resume", "2").stdout
    assert since(gh, start) == ["Checkpoint"]  # only a checkpoint that has children looks further
    run("split", "2")
    assert "moved" not in run("ready", "2").stderr
    run("checkpoint", "2", "--phase", "Phase 6: a bug fixed (#1)", "--done", "Phase 6")
    start = len(gh.calls)
    run("resume", "2")
    assert since(gh, start) == ["Checkpoint"]  # a phase done that names an issue: nothing to look at
    assert sorted(gh.issues[n]["title"] for n in gh.tasks.children[2]) == [
        "Phase 2: matcher", "Phase 3: config", "Phase 4: docs of the fix", "Phase 5: release"]


# ------------------------------------------------------------------------------------ leases and claims


@changed_by("lists_custom_refs", "lists_closed_blockers", "newest_sub_issue_first")
def test_done_claim_next_says_the_done_on_stderr_and_prints_the_claimed_child_alone(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    run("claim", "2", "--agent", "a1")
    result = run("done", "2", "--agent", "a1", "--claim-next")
    assert result.stdout == "#3\n"
    lines = [line for line in result.stderr.splitlines() if not line.startswith("Warning:")]
    assert lines[:4] == ["Closed #2 Phase 2: matcher as completed.", "Ticked its phase in #1.",
                         "Released the claim of a1.", "Unblocked: #3 Phase 3: config; #4 Phase 4: docs"]
    assert lines[4].startswith("Claimed #3 Phase 3: config for a1 until ") and len(lines) == 5
    assert gh.tasks.claim_of(3)["agent"] == "a1"


@changed_by()
def test_done_claim_next_with_nothing_ready_reports_the_done_and_exits_3(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1", "--phase", "Phase 2")
    result = run("done", "2", "--agent", "a1", "--claim-next", code=3)
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["Closed #2 Phase 2: matcher as completed.", "Ticked its phase in #1.",
                                          "Unblocked: nothing", "Error: nothing ready in #1 (Parser): #2 done"]
    assert gh.issues[2]["state"] == "closed" and parse(gh.issues[1]["body"]).checkpoint.phases[1].done


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_lost_update_refs_answer_that_cannot_be_checked_says_what_to_run(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.fail_op("UpdateRefs", 502, after=True)  # the ref moves; its answer is lost …
    gh.on_op("UpdateRefs", lambda: gh.fail_op("RefState", 502, times=99))  # … and reading it fails too
    result = run("claim", "2", "--agent", "a1", code=1)
    error = result.stderr.splitlines()[-1]
    assert "whether it reached GitHub cannot be checked now, so it was not sent again" in error
    assert error.endswith("; run 'ghstate claim 2 --agent a1' again to find out whether #2 is yours: it renews the "
                          "claim if it landed, or names who holds it")
    gh.faults.clear()
    assert gh.tasks.claim_of(2)["agent"] == "a1"  # it had landed
    again = run("claim", "2", "--agent", "a1")
    assert again.stdout == "#2\n" and again.stderr.startswith("Renewed #2")
    assert "> **Claimed** by `a1`" in gh.issues[2]["body"]


def killed_after_its_ref_moved(gh, child: int, agent: str, when: datetime = T0) -> None:
    """A claimer moves the claim ref of ``child`` and is killed before it writes the child's body."""
    from ghstate.core.claims import claimed, lease_of
    from ghstate.github.tasks import GitHubTasks

    gh.clock = when  # GitHub dates the claim's commit
    tasks = GitHubTasks(build_app(store="github").github())
    seen = tasks.held(child)
    assert tasks.swap(child, seen, claimed(agent, "", when, lease_of("30m"), child)) is None


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_claim_its_body_does_not_show_is_shown_by_the_next_agent_that_reads_it(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    killed_after_its_ref_moved(gh, 2, "a1", datetime.now(timezone.utc))
    assert "Claimed" not in gh.issues[2]["body"]
    refused = run("claim", "2", "--agent", "a2", code=4)
    assert refused.stderr.startswith("Error: #2 is claimed by a1 until ")
    assert "> **Claimed** by `a1`" in gh.issues[2]["body"]  # repaired, in every variant: the read names its ref


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_ready_repairs_a_body_line_that_is_missing_or_stale_and_resume_only_says_it(gh, run, tmp_path):
    make_plan(gh, run, tmp_path)
    run("split", "1")
    # at a minute's start: GitHub dates the claim's commit a few seconds on, and its lease's end is said by the minute
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    killed_after_its_ref_moved(gh, 2, "a1", now)
    prompt = run("resume", "1").stdout  # a reading writes nothing: it says so
    listed = gh.tasks.variant.lists_custom_refs
    assert ("its body does not show it yet: 'ghstate ready' shows it" in prompt) == listed
    assert "Claimed" not in gh.issues[2]["body"]
    start = len(gh.calls)
    result = run("ready", "1")
    if not listed:  # ready reads the claims from the bodies: nothing to tell apart
        assert since(gh, start) == ["Checkpoint"] and "Claimed" not in gh.issues[2]["body"]
        return
    assert since(gh, start) == ["Checkpoint", "Checkpoint", "POST /git/commits", "AppendCheckpoint"]
    assert result.stderr.endswith("#2's body now shows the claim of a1 until "
                                  f"{(now + timedelta(minutes=30)).strftime('%Y-%m-%d %H:%M')} UTC, as its claim ref "
                                  "holds it.\n")
    assert "> **Claimed** by `a1`" in gh.issues[2]["body"]
    killed_after_its_ref_moved(gh, 2, "a2", now + timedelta(hours=1))  # a2 took the lease over after it ran out
    assert "a2" in run("ready", "1", "--json").stderr and "> **Claimed** by `a2`" in gh.issues[2]["body"]
    start = len(gh.calls)
    run("ready", "1")
    assert since(gh, start) == ["Checkpoint"]  # nothing wrong: nothing written


def ended_claims(gh, numbers, when: datetime) -> None:
    """Claim refs of ``numbers`` whose leases ended an hour before ``when`` (claims left behind by agents long
    gone, as refs accumulate in a repository), written straight into the fake's Git."""
    from github_fake_tasks import _git_sha

    from ghstate.core.claims import claimed, lease_of, stamp

    tree = gh.tasks.add_tree({"claim.json": "{}\n"})
    for n in numbers:
        claim = claimed("gone", "", when - timedelta(minutes=90), lease_of("30m"), n)
        sha = _git_sha("commit", claim.message())
        gh.tasks.objects[sha] = {"type": "commit", "message": claim.message(), "tree": tree, "parents": [],
                                 "at": stamp(when - timedelta(minutes=90))}
        gh.tasks.refs[f"refs/ghstate/claims/{n}"] = sha


@changed_by("lists_custom_refs", "lists_closed_blockers", "newest_sub_issue_first")
def test_claim_refs_past_the_first_hundred_are_read_and_those_that_hold_nothing_deleted(gh, run, tmp_path):
    """Issue 57: claim refs were listed 100 a repository, by name, and never deleted: past 100 a child's claim
    was read from its body (a claim whose body does not show it was no claim), and they only grew. The listing
    reads the next pages while a child's ref is not on those read; the refs of ended claims and of closed
    children go, in one request, when a task command finds them."""
    make_plan(gh, run, tmp_path)
    run("split", "1")
    ended_claims(gh, range(1000, 1150), T0 + timedelta(minutes=5))  # "1000" … sort before "2"
    killed_after_its_ref_moved(gh, 2, "a1", T0 + timedelta(minutes=5))  # its body does not show it
    start = len(gh.calls)
    rows = json.loads(run("ready", "1", "--json").stdout)
    if not gh.tasks.variant.lists_custom_refs:  # no listing: the ref is read by the claim itself
        assert rows[0]["state"] == "ready" and since(gh, start) == ["Checkpoint"]
        assert run("claim", "2", "--agent", "a2", code=4).stderr.startswith("Error: #2 is claimed by a1")
        return
    assert (rows[0]["state"], rows[0]["claimed_by"]) == ("claimed", "a1")
    assert since(gh, start) == ["Checkpoint", "ClaimRefs", "Checkpoint", "POST /git/commits", "AppendCheckpoint",
                                "UpdateRefs"]  # the next page; the body shown the claim; 150 ended refs deleted
    assert sorted(claim_refs(gh)) == ["refs/ghstate/claims/2"]
    start = len(gh.calls)
    run("ready", "1")
    assert since(gh, start) == ["Checkpoint"]
    killed_after_its_ref_moved(gh, 3, "a4", T0 + timedelta(minutes=6))
    gh.tasks.close(3)  # a person closes a child that has a claim: its ref holds nothing now
    run("ready", "1")
    assert sorted(claim_refs(gh)) == ["refs/ghstate/claims/2"]


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_holders_write_renews_its_lease_at_three_requests_and_shows_it_in_the_write(gh, run, tmp_path):
    from ghstate.core.intent import Intent
    from ghstate.core.tasks import TaskEdit
    from ghstate.services.leases import renew_if_held
    from ghstate.services.tasks import write_task

    make_plan(gh, run, tmp_path)
    run("split", "1")
    run_claim(app_at(T0), ClaimRequest(child=2, agent="a1"))
    app = app_at(T0 + timedelta(minutes=20))
    stored = app.store.get(2)  # the writer's read
    cp = parse(stored.body).checkpoint
    start = len(gh.calls)
    assert renew_if_held(app.store, stored, cp, "a1", now=T0 + timedelta(minutes=10)) is None
    assert renew_if_held(app.store, stored, cp, "a2", now=T0 + timedelta(minutes=20)) is None
    assert since(gh, start) == []  # nothing to do: no request
    renewed = renew_if_held(app.store, stored, cp, "a1", now=T0 + timedelta(minutes=20))
    listed = [] if gh.tasks.variant.lists_custom_refs else ["RefState"]
    assert since(gh, start) == [*listed, "POST /git/trees", "POST /git/commits", "UpdateRefs"]
    assert renewed.claim.until == gh.tasks.claim_of(2)["until"] == "2026-11-22T08:50:00Z"
    write_task(app, 2, Intent(task=TaskEdit(mirror=renewed.mirror)), agent="a1")  # what the writer folds in
    assert "> **Claimed** by `a1` until 2026-11-22 08:50 UTC" in gh.issues[2]["body"]


@changed_by("typed_ref_errors", "lists_custom_refs", "newest_sub_issue_first")
def test_a_lease_taken_over_meanwhile_is_left_to_its_new_holder(gh, run, tmp_path):
    from ghstate.services.leases import renew_if_held

    make_plan(gh, run, tmp_path)
    run("split", "1")
    run_claim(app_at(T0), ClaimRequest(child=2, agent="a1", lease="90s"))
    app = app_at(T0 + timedelta(hours=1))
    stored = app.store.get(2)
    run_claim(app_at(T0 + timedelta(hours=1)), ClaimRequest(child=2, agent="a2"))
    lost = renew_if_held(app.store, stored, parse(stored.body).checkpoint, "a1", now=T0 + timedelta(hours=1))
    assert lost.claim is None and "#2 is claimed by a2 until 2026-11-22 09:30 UTC now" in lost.warning
    assert gh.tasks.claim_of(2)["agent"] == "a2"


@changed_by("newest_sub_issue_first")
def test_without_contents_write_the_renewal_is_the_bodys(gh, run, tmp_path):
    from ghstate.services.leases import renew_if_held

    make_plan(gh, run, tmp_path)
    run("split", "1")
    gh.tasks.deny_refs = True
    run_claim(app_at(T0), ClaimRequest(child=2, agent="a1"))
    app = app_at(T0 + timedelta(minutes=20))
    stored = app.store.get(2)
    start = len(gh.calls)
    renewed = renew_if_held(app.store, stored, parse(stored.body).checkpoint, "a1", now=T0 + timedelta(minutes=20))
    assert renewed.mirror.claim == renewed.claim and not renewed.mirror.force and claim_refs(gh) == {}
    assert since(gh, start) == ["RefState"]


@changed_by("lists_custom_refs", "newest_sub_issue_first")
def test_a_renewal_that_github_refuses_never_fails_the_write_and_says_what_renews_it(gh, run, tmp_path):
    from ghstate.services.leases import renew_if_held

    make_plan(gh, run, tmp_path)
    run("split", "1")
    run_claim(app_at(T0), ClaimRequest(child=2, agent="a1"))
    app = app_at(T0 + timedelta(minutes=25))
    stored = app.store.get(2)
    gh.fail("POST", r"/git/trees$", 422, message="Invalid tree info")
    failed = renew_if_held(app.store, stored, parse(stored.body).checkpoint, "a1", now=T0 + timedelta(minutes=25))
    assert failed.claim is None and failed.mirror is None
    assert failed.warning.startswith("the lease of a1 on #2 could not be renewed (")
    assert failed.warning.endswith("'ghstate claim 2 --agent a1' renews it")
    assert gh.tasks.claim_of(2)["until"] == "2026-11-22T08:30:00Z"
