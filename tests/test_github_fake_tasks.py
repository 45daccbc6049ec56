"""The fake GitHub's sub-issues, issue dependencies, closeIssue and Git refs, checked like GitHub: one test
per behaviour, each naming where it comes from, and the variants where GitHub's documentation is silent.
These judge the fake, not ghstate."""

from __future__ import annotations

import pytest
import requests
from github_fake import FakeGitHub
from github_fake_tasks import VARIANTS, ZERO, Variant

API = "https://api.github.com"
GRAPHQL = f"{API}/graphql"
REPO = f"{API}/repos/octo/hello"
ISSUE = """query Issue($n: Int!) { repository(owner: "octo", name: "hello") { id
  issue(number: $n) { id number state stateReason parent { number }
    subIssues(first: 10) { totalCount nodes { number } } subIssuesSummary { total completed percentCompleted }
    blockedBy(first: 10) { totalCount nodes { number state } } blocking(first: 10) { nodes { number } }
    issueDependenciesSummary { blockedBy totalBlockedBy blocking totalBlocking } } } }"""
CREATE = """mutation Create($input: CreateIssueInput!) { createIssue(input: $input) { issue { number } } }"""
BLOCK = """mutation Block($input: AddBlockedByInput!) { addBlockedBy(input: $input) { issue { number } } }"""
CLOSE = """mutation Close($input: CloseIssueInput!) { closeIssue(input: $input) { issue { number state } } }"""
REFS = """mutation Refs($input: UpdateRefsInput!) { updateRefs(input: $input) { clientMutationId } }"""
CREATE_REF = """mutation CreateRef($input: CreateRefInput!) { createRef(input: $input) { ref { name } } }"""
READ_REFS = """query Refs($p: String!, $q: String!) { repository(owner: "octo", name: "hello") {
  refs(refPrefix: $p, first: 10) { nodes { name target { oid } } } ref(qualifiedName: $q) { target { oid } } } }"""


@pytest.fixture
def fake(isolated):
    fake = FakeGitHub(isolated)
    yield fake
    assert fake.problems() == [], "a request of these tests that GitHub's descriptions refuse"


def gql(query: str, **variables) -> dict:
    return requests.post(GRAPHQL, json={"query": query, "variables": variables}).json()


def issue(fake, n: int) -> dict:
    return gql(ISSUE, n=n)["data"]["repository"]["issue"]


def commit(fake, text: str, parents: tuple[str, ...] = ()) -> str:
    tree = requests.post(f"{REPO}/git/trees", json={"tree": [{"path": "f", "mode": "100644", "type": "blob",
                                                                "content": text}]}).json()["sha"]
    made = requests.post(f"{REPO}/git/commits", json={"message": text, "tree": tree, "parents": list(parents)})
    return made.json()["sha"]


def update(fake, *updates: dict) -> dict:
    return gql(REFS, input={"repositoryId": fake.repo_node_id, "refUpdates": list(updates)})


def test_an_issue_created_with_a_parent_is_its_sub_issue(fake):
    """GraphQL reference, ``CreateIssueInput.parentIssueId``: "The Node ID of the parent issue to add this new
    issue to"; ``subIssuesSummary`` counts completed ones (docs, "Adding sub-issues")."""
    fake.add_issue(1, "parent")
    parent = issue(fake, 1)["id"]
    label = fake.label_node_id("ghstate")
    for title in ("a", "b"):
        gql(CREATE, input={"repositoryId": fake.repo_node_id, "title": title, "parentIssueId": parent,
                           "labelIds": [label]})
    node = issue(fake, 1)
    assert [n["number"] for n in node["subIssues"]["nodes"]] == [2, 3] and issue(fake, 2)["parent"] == {"number": 1}
    assert [x["name"] for x in fake.issues[2]["labels"]] == ["ghstate"]
    gql(CLOSE, input={"issueId": issue(fake, 2)["id"], "stateReason": "COMPLETED"})
    assert issue(fake, 1)["subIssuesSummary"] == {"total": 2, "completed": 1, "percentCompleted": 50}
    assert issue(fake, 2)["state"] == "CLOSED" and issue(fake, 2)["stateReason"] == "COMPLETED"


def test_a_parent_has_at_most_100_sub_issues(fake):
    """Docs, "Adding sub-issues": up to 100 sub-issues per parent; closed ones count (community discussion
    #207865, where GitHub's API refused the 101st of a parent whose children were mostly closed)."""
    fake.add_issue(1, "parent")
    for n in range(2, 102):
        fake.add_issue(n, "child", state="closed")
        fake.tasks.link(1, n)
    answer = gql(CREATE, input={"repositoryId": fake.repo_node_id, "title": "one more",
                                "parentIssueId": issue(fake, 1)["id"]})
    assert answer["data"]["createIssue"] is None and answer["errors"][0]["type"] == "UNPROCESSABLE"


def test_blocked_by_links_and_their_summary(fake):
    """GraphQL reference, ``addBlockedBy`` (``issueId`` is blocked by ``blockingIssueId``) and
    ``IssueDependenciesSummary``: ``blockedBy`` counts open blockers, ``totalBlockedBy`` all of them."""
    for n in (1, 2, 3):
        fake.add_issue(n, str(n))
    ids = {n: issue(fake, n)["id"] for n in (1, 2, 3)}
    gql(BLOCK, input={"issueId": ids[3], "blockingIssueId": ids[1]})
    gql(BLOCK, input={"issueId": ids[3], "blockingIssueId": ids[2]})
    fake.tasks.close(1)
    node = issue(fake, 3)
    assert node["issueDependenciesSummary"] == {"blockedBy": 1, "totalBlockedBy": 2, "blocking": 0, "totalBlocking": 0}
    assert issue(fake, 2)["blocking"]["nodes"] == [{"number": 3}]
    assert [(n["number"], n["state"]) for n in node["blockedBy"]["nodes"]] == [(1, "CLOSED"), (2, "OPEN")]
    fake.tasks.use(Variant("closed-blockers-unlisted", lists_closed_blockers=False))
    assert [n["number"] for n in issue(fake, 3)["blockedBy"]["nodes"]] == [2]


def test_an_issue_is_blocked_by_at_most_50(fake):
    """Issue 29's reading of GitHub's "Creating issue dependencies" (50 per issue); GitHub's wording of the
    refusal is the fake's own."""
    for n in range(1, 53):
        fake.add_issue(n, str(n))
    for n in range(2, 52):
        fake.tasks.block(1, n)
    answer = gql(BLOCK, input={"issueId": issue(fake, 1)["id"], "blockingIssueId": issue(fake, 52)["id"]})
    assert answer["errors"][0]["type"] == "UNPROCESSABLE" and len(fake.tasks.blocked_by[1]) == 50


def test_update_refs_is_a_compare_and_swap_and_all_or_nothing(fake):
    """GraphQL reference, "Git" category, ``updateRefs``: "All updates are performed atomically, meaning that
    if one of them is rejected, no other ref will be modified"; ``beforeOid`` must be the ref's value
    (zeros: it must not exist); an ``afterOid`` of zeros deletes it; a move that is not a fast-forward needs
    ``force``."""
    a = commit(fake, "a")
    b = commit(fake, "b", (a,))
    c = commit(fake, "c")
    made = update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": ZERO, "afterOid": a})
    assert "errors" not in made and fake.tasks.refs == {"refs/ghstate/claims/7": a}
    again = update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": ZERO, "afterOid": b})
    assert again["data"]["updateRefs"] is None and "type" not in again["errors"][0]  # GitHub's generic error
    both = update(fake, {"name": "refs/ghstate/claims/8", "beforeOid": ZERO, "afterOid": a},
                  {"name": "refs/ghstate/claims/7", "beforeOid": c, "afterOid": b})
    assert both.get("errors") and fake.tasks.refs == {"refs/ghstate/claims/7": a}  # neither moved
    assert update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": a, "afterOid": c}).get("errors")  # no ff
    assert "errors" not in update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": a, "afterOid": c,
                                         "force": True})
    assert "errors" not in update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": c, "afterOid": ZERO})
    assert fake.tasks.refs == {}


def test_a_second_create_of_a_ref_fails(fake):
    """REST "Create a reference": 422 "Reference already exists" (tests/fixtures/github-api/README.md); for
    GraphQL's ``createRef`` the error's shape is not documented: a variant."""
    a = commit(fake, "a")
    ok = gql(CREATE_REF, input={"repositoryId": fake.repo_node_id, "name": "refs/ghstate/doctor/x", "oid": a})
    assert ok["data"]["createRef"]["ref"]["name"] == "x"
    fake.tasks.use(Variant("typed", typed_ref_errors=True))
    second = gql(CREATE_REF, input={"repositoryId": fake.repo_node_id, "name": "refs/ghstate/doctor/x", "oid": a})
    assert second["data"]["createRef"] is None and second["errors"][0]["type"] == "UNPROCESSABLE"


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_ref_is_read_by_its_full_name_and_listed_as_the_variant_says(fake, variant):
    """GraphQL reference, ``Repository.ref(qualifiedName:)``: "Fully qualified matches are checked in order
    … before falling back onto checks for short name matches"; whether ``refs(refPrefix:)`` lists refs
    outside refs/heads/ and refs/tags/ is not documented: a variant."""
    fake.tasks.use(variant)
    a = commit(fake, "a")
    update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": ZERO, "afterOid": a})
    data = gql(READ_REFS, p="refs/ghstate/claims/", q="refs/ghstate/claims/7")["data"]["repository"]
    assert data["ref"] == {"target": {"oid": a}}
    listed = [n["name"] for n in data["refs"]["nodes"]]
    assert listed == (["7"] if variant.lists_custom_refs else [])


def test_without_contents_write_git_objects_and_refs_are_refused(fake):
    """Docs, fine-grained tokens: "Contents" write is what Git database writes and ref updates need; a
    token without it gets 403 "Resource not accessible by integration" (REST, with
    ``X-Accepted-GitHub-Permissions``) and FORBIDDEN (GraphQL)."""
    a = commit(fake, "a")
    fake.tasks.deny_refs = True
    refused = requests.post(f"{REPO}/git/trees", json={"tree": [{"path": "f", "mode": "100644", "type": "blob",
                                                                  "content": "x"}]})
    assert refused.status_code == 403 and refused.headers["X-Accepted-GitHub-Permissions"] == "contents=write"
    answer = update(fake, {"name": "refs/ghstate/claims/7", "beforeOid": ZERO, "afterOid": a})
    assert answer["errors"][0]["type"] == "FORBIDDEN" and fake.tasks.refs == {}


def test_mutations_after_a_failed_one_run_or_not_as_the_variant_says(fake):
    """The GraphQL spec executes a mutation's root fields in order, each on its own ("Executing Selection
    Sets", serial execution); whether GitHub stops after one fails is not documented: a variant."""
    fake.add_issue(1, "parent")
    doc = """mutation M($a: CreateIssueInput!, $b: CreateIssueInput!) {
      a: createIssue(input: $a) { issue { number } } b: createIssue(input: $b) { issue { number } } }"""
    bad = {"repositoryId": "R_nope", "title": "a"}
    good = {"repositoryId": fake.repo_node_id, "title": "b"}
    assert gql(doc, a=bad, b=good)["data"]["b"] == {"issue": {"number": 2}}
    fake.tasks.use(Variant("stops", stops_after_error=True))
    assert gql(doc, a=bad, b=good)["data"]["b"] is None and 3 not in fake.issues
