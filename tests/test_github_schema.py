"""The judge itself: GitHub's schema loads, and it refuses what GitHub would refuse."""

from github_schema import problems


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
