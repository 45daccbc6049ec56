"""A checkpoint's life on GitHub beside its branch: whether branches are still in the repository (many in one
request), and why GitHub says an issue was closed. Over a ``GitHubStore``'s requests (``store.graphql``);
what to do with the answers is ``ghstate.services.lifecycle``'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.store import GitHubStore

BATCH = 100  # branches asked about in one request (GitHub's node limit leaves room; the answer stays small)


def branches_exist(store: GitHubStore, branches: list[str]) -> dict[str, bool]:
    """Whether each branch is in the repository (``refs/heads/NAME``), one GraphQL request per 100 branches.
    A name with slashes or any Unicode is asked as it is: GitHub answers null for a ref it does not have."""
    names = list(dict.fromkeys(b for b in branches if b))
    out: dict[str, bool] = {}
    owner, _, name = store.repo_name.partition("/")
    for start in range(0, len(names), BATCH):
        chunk = names[start:start + BATCH]
        variables = {"owner": owner, "name": name, **{f"ref_{i}": f"refs/heads/{b}" for i, b in enumerate(chunk)}}
        answer = store.graphql("branch_refs", variables, count=len(chunk),
                               what=f"reading the branches of {store.repo_name}")
        repository = answer.get("repository") or {}
        out.update((b, repository.get(f"ref_{i}") is not None) for i, b in enumerate(chunk))
    return out


def state_reason(store: GitHubStore, number: int) -> str:
    """Why GitHub closed issue ``number`` (``completed``, ``not_planned``), as the read that found it answered;
    "" when that read did not ask (no request of its own)."""
    return str((store.node(number) or {}).get("stateReason") or "").lower()
