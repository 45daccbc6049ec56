"""How the working tree moved since a checkpoint was written (pure: git facts in, report out)."""


import fnmatch
from typing import Any, NamedTuple

from ghstate.core.model import Changes, Checkpoint, WorkTree


class Drift(NamedTuple):
    commits_since: int = 0
    changed_files: tuple[str, ...] = ()
    reread_changed: tuple[str, ...] = ()
    branch_changed: bool = False
    branch: str = ""
    recorded_branch: str = ""
    commit_missing: bool = False  # the recorded commit is not in this repository (rebased, or not fetched)
    rewritten: int = 0  # commits of the recorded history that HEAD no longer has
    known: bool = True  # False when there is no recorded commit or no repository to compare with
    detached: bool = False  # HEAD is detached now (and no rebase says which branch it belongs to)
    uncommitted: tuple[str, ...] = ()  # of changed_files, those with changes not committed (work in the tree)
    head: str = ""  # the commit checked out now ("" when unknown)

    @property
    def moved(self) -> bool:
        return bool(self.commits_since or self.changed_files or self.branch_changed or self.commit_missing
                    or self.rewritten or self.detached)

    def as_dict(self) -> dict[str, Any]:
        return {
            "commits_since": self.commits_since,
            "changed_files": list(self.changed_files[:MAX_LISTED]),
            "changed_files_total": len(self.changed_files),
            "reread_changed": list(self.reread_changed),
            "branch_changed": self.branch_changed,
            "branch": self.branch,
            "recorded_branch": self.recorded_branch,
            "commit_missing": self.commit_missing,
            "rewritten": self.rewritten,
            "known": self.known,
            "detached": self.detached,
            "uncommitted": list(self.uncommitted[:MAX_LISTED]),
            "head": self.head,
        }


MAX_LISTED = 200  # changed files listed in JSON; the total is given beside them


def matches(path: str, changed: str, root: str = "") -> bool:
    """A file to re-read is touched by a change to ``changed`` (same file, inside a folder, or glob); a path
    written absolute, inside the repository at ``root``, as the repository names it."""
    path = path.strip()
    if root and path.startswith("/") and (path + "/").startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")):].lstrip("/") or "."
    path = path.removeprefix("./")
    path = path.split(":", 1)[0] if ":" in path and path.rsplit(":", 1)[-1].isdigit() else path
    if not path:
        return False
    if any(ch in path for ch in "*?["):
        return fnmatch.fnmatchcase(changed, path)
    return changed == path or changed.startswith(path.rstrip("/") + "/")


def recorded_in_repository(cp: Checkpoint) -> bool:
    """Whether the checkpoint was written in a git repository (it has something to compare with)."""
    return bool(cp.meta.commit or cp.meta.branch or cp.meta.dirty or cp.meta.fingerprints)


def compute(cp: Checkpoint, tree: WorkTree, changes: Changes, fingerprints: dict[str, str],
            in_repository: bool = True, root: str = "") -> Drift:
    """``fingerprints`` are the current fingerprints of the paths the checkpoint recorded as dirty; ``root`` the
    repository's folder, against which an absolute path to re-read is matched."""
    recorded = cp.meta.fingerprints
    still = {p for p, sha in recorded.items() if fingerprints.get(p) == sha}  # dirty then, untouched since
    folders = tuple(p for p in still if p.endswith("/"))
    changed = [f for f in changes.changed_files if f not in still and not f.startswith(folders)]
    reread = tuple(p for p in cp.file_paths if any(matches(p, f, root) for f in changed))
    known = in_repository and recorded_in_repository(cp)
    detached = known and not tree.branch and bool(tree.commit)
    branch_changed = bool(cp.meta.branch and (tree.branch or detached) and cp.meta.branch != tree.branch)
    dirty = set(tree.dirty)
    dirty_folders = tuple(p for p in dirty if p.endswith("/"))
    uncommitted = tuple(f for f in changed if f in dirty or f.startswith(dirty_folders)) if dirty else ()
    return Drift(
        commits_since=changes.commits_since,
        changed_files=tuple(changed),
        reread_changed=reread,
        branch_changed=branch_changed,
        branch=tree.branch,
        recorded_branch=cp.meta.branch,
        commit_missing=known and bool(cp.meta.commit) and not changes.commit_known,
        rewritten=changes.commits_dropped,
        known=known,
        detached=detached,
        uncommitted=uncommitted,
        head=tree.commit,
    )
