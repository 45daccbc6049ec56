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
