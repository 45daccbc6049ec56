"""What ``init``, ``init --remove --github`` and ``doctor`` ask of the repository itself, apart from its
checkpoints: whether it is public (its checkpoints are then public issues), and taking ghstate's labels and
refs (``refs/ghstate/``: the checkpoints' chains, the claims, the doctor's probes) away again. Through
``transport``, like every request."""

from __future__ import annotations

from typing import Any

from ghstate.core.chain import ZERO
from ghstate.errors import RemoteError
from ghstate.github.transport import GitHubAPI

PREFIX = "refs/ghstate/"
ROUNDS = 50  # lists of 100 refs deleted, at most, before giving up (5,000 refs)

PUBLIC_NOTE = ("{repo} is public: its checkpoints are public issues, and their write logs refs anyone can "
               "fetch; keep what must stay private out of them (or use a private repository)")


def _owner_name(api: GitHubAPI) -> dict[str, str]:
    owner, _, name = api.repo_name.partition("/")
    return {"owner": owner, "name": name}


def visibility(api: GitHubAPI) -> str:
    """``PUBLIC``, ``PRIVATE`` or ``INTERNAL``: one request."""
    return visibility_and_viewer(api)[0]


def visibility_and_viewer(api: GitHubAPI) -> tuple[str, str]:
    """The repository's visibility and the login of the token's account (``name[bot]`` for a GitHub App's):
    one request."""
    data = api.graphql("repository_visibility", _owner_name(api), what=f"reading whether {api.repo_name} is public")
    return (str((data.get("repository") or {}).get("visibility") or ""),
            str((data.get("viewer") or {}).get("login") or ""))


OWN_TOKEN = ("the token is the account {login}'s: if a person also edits checkpoints on github.com as {login}, "
             "GitHub keeps a save of theirs made within a moment of an agent's write and that write as one "
             "version, and the save can be lost unseen; give agents a token of their own (a GitHub App's, or a "
             "bot account's)")


def delete_labels(api: GitHubAPI, names: list[str]) -> list[tuple[str, bool]]:
    """Each label deleted (True), or not there (False); GitHub takes it off every issue that had it. Two
    requests: the labels found by name, then deleted together."""
    data = api.graphql("find_labels", {**_owner_name(api), **{f"label_{i}": n for i, n in enumerate(names)}},
                       count=len(names), what="reading ghstate's labels")
    repository = data.get("repository") or {}
    found = {i: (repository.get(f"label_{i}") or {}).get("id") for i in range(len(names))}
    ids = [found[i] for i in range(len(names)) if found[i]]
    if ids:
        api.graphql("delete_labels", {f"label_{k}": {"id": label} for k, label in enumerate(ids)}, count=len(ids),
                    what=f"deleting {len(ids)} labels")
    return [(name, bool(found[i])) for i, name in enumerate(names)]


def ghstate_refs(api: GitHubAPI) -> tuple[str, list[tuple[str, str]]]:
    """The repository's node id, and up to 100 refs under ``refs/ghstate/`` with what each points at."""
    data = api.graphql("ghstate_refs", {**_owner_name(api), "prefix": PREFIX}, what=f"listing {PREFIX} refs")
    repository = data.get("repository") or {}
    refs = []
    for node in ((repository.get("refs") or {}).get("nodes") or ()):
        if not node:
            continue
        prefix, name = str(node.get("prefix") or PREFIX), str(node.get("name") or "")
        oid = str(((node.get("target") or {}).get("oid")) or "")
        if name and oid:
            refs.append((name if name.startswith("refs/") else prefix + name, oid))
    return str(repository.get("id") or ""), refs


def delete_refs(api: GitHubAPI) -> int:
    """Delete every ref under ``refs/ghstate/``, a listing at a time, each only from the value listed (a
    ref a writer moved meanwhile is listed again and deleted then); the number deleted. A refusal that a
    second listing does not explain (the same refs, the same values) is GitHub's answer, said."""
    from ghstate.github.transport import describe_errors

    deleted, refused, errors = 0, None, []
    for _ in range(ROUNDS):
        repository, refs = ghstate_refs(api)
        if not refs:
            return deleted
        if refs == refused:
            raise RemoteError(f"deleting the refs under {PREFIX} failed ({describe_errors(errors)}; {deleted} "
                              "deleted): the token needs Contents: write on the repository")
        answer: dict[str, Any] = api.graphql("update_refs", {"input": {"repositoryId": repository, "refUpdates": [
            {"name": name, "beforeOid": oid, "afterOid": ZERO} for name, oid in refs]}}, partial=True,
            what=f"deleting {len(refs)} refs under {PREFIX}")
        errors = list(answer.get("errors") or [])
        if errors:
            refused = refs
        else:
            deleted += len(refs)
    raise RemoteError(f"the refs under {PREFIX} kept moving while they were deleted ({deleted} deleted): stop the "
                      "writers (agents, CI) and run 'ghstate init --remove --github' again")
