"""The only module that talks to git: where the repository is, what HEAD is, what changed since.

Reads that git can answer from files (the root, the origin URL) are done without a subprocess, since
ghstate runs inside agent loops and hooks where every fork counts. Nothing from an issue reaches a
git command line except a commit id, and only after it is checked to be hex.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

_HEX = re.compile(r"^[0-9a-f]{4,64}$")
TIMEOUT = 10.0


class WorkTree(NamedTuple):
    """What the working tree looks like now."""

    branch: str = ""  # "" when HEAD is detached or there is no repository
    commit: str = ""
    dirty: tuple[str, ...] = ()  # changed, staged or untracked paths


class Changes(NamedTuple):
    """What happened between a recorded commit and the working tree now."""

    commit_known: bool = True
    commits_since: int = 0
    commits_dropped: int = 0  # commits of the recorded one that HEAD no longer contains (rebase, reset)
    changed_files: tuple[str, ...] = ()


def find_root(start: Path | None = None) -> Path | None:
    """The top of the git working tree containing ``start``, found by looking for ``.git``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:") :].strip())
    git_dir = git_dir if git_dir.is_absolute() else (root / git_dir).resolve()
    common = git_dir / "commondir"
    if common.is_file():  # a linked worktree: the config lives in the main repository's .git
        shared = Path(common.read_text(encoding="utf-8").strip())
        return shared if shared.is_absolute() else (git_dir / shared).resolve()
    return git_dir


def head_branch(root: Path | None) -> str:
    """The checked-out branch, read from HEAD without running git ("" when detached or unknown)."""
    if root is None:
        return ""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():  # a linked worktree keeps its own HEAD in its gitdir
            text = dot_git.read_text(encoding="utf-8").strip()
            git_dir = Path(text[len("gitdir:") :].strip()) if text.startswith("gitdir:") else None
            if git_dir is None:
                return ""
            head = ((root / git_dir) if not git_dir.is_absolute() else git_dir) / "HEAD"
        else:
            head = dot_git / "HEAD"
        ref = head.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return ref[len("ref: refs/heads/") :] if ref.startswith("ref: refs/heads/") else ""


def origin_url(root: Path) -> str | None:
    """The URL of the ``origin`` remote, read from the repository's config file."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    in_origin = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_origin = re.fullmatch(r'\[remote\s+"origin"\]', line) is not None
        elif in_origin:
            m = re.match(r"url\s*=\s*(.+)$", line)
            if m:
                return m.group(1).strip().strip('"')
    return None


def repo_from_url(url: str, hosts: tuple[str, ...] = ("github.com",)) -> str | None:
    """``owner/name`` from a GitHub remote URL in any of its forms (ssh, scp-like, https)."""
    url = url.strip()
    m = re.match(r"^(?:[\w.+-]+://)?(?:[^@/]+@)?([^/:]+)(?::\d+)?[:/](.+?)(?:\.git)?/?$", url)
    if not m:
        return None
    host, path = m.group(1).lower(), m.group(2).strip("/")
    if host not in hosts and host != "ssh.github.com":
        return None
    parts = path.split("/")
    if len(parts) != 2 or not all(re.fullmatch(r"[\w.-]+", p) for p in parts):
        return None
    return f"{parts[0]}/{parts[1]}"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=TIMEOUT,
                          env=env, errors="replace", check=False)


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.Popen(["git", *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, errors="replace")


def work_tree(root: Path | None) -> WorkTree:
    """Branch, HEAD and dirty paths in one ``git status`` call. Empty outside a repository."""
    if root is None:
        return WorkTree()
    try:
        proc = _run(root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
    except (OSError, subprocess.TimeoutExpired):
        return WorkTree()
    if proc.returncode != 0:
        return WorkTree()
    branch = commit = ""
    dirty: list[str] = []
    entries = proc.stdout.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid ") :]
            commit = "" if oid == "(initial)" else oid
        elif entry.startswith("# branch.head "):
            head = entry[len("# branch.head ") :]
            branch = "" if head == "(detached)" else head
        elif entry.startswith(("1 ", "u ")):
            dirty.append(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            i += 1  # the original path of a rename follows
        elif entry.startswith("? "):
            dirty.append(entry[2:])
        i += 1
    return WorkTree(branch, commit, tuple(sorted(set(dirty))))


def changes_since(root: Path | None, commit: str) -> Changes:
    """Commits and files changed since ``commit`` (committed, staged, unstaged and untracked)."""
    if root is None or not _HEX.match(commit or ""):
        return Changes(commit_known=False)
    counts = _start(root, "rev-list", "--left-right", "--count", f"{commit}...HEAD", "--")
    diff = _start(root, "diff", "--name-only", "-z", commit, "--")
    untracked = _start(root, "ls-files", "--others", "--exclude-standard", "-z")
    try:
        out_counts, _ = counts.communicate(timeout=TIMEOUT)
        out_diff, _ = diff.communicate(timeout=TIMEOUT)
        out_untracked, _ = untracked.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        for proc in (counts, diff, untracked):
            proc.kill()
        return Changes(commit_known=False)
    if counts.returncode != 0 or diff.returncode != 0:
        return Changes(commit_known=False)
    dropped, _, since = out_counts.strip().partition("\t")
    files = {f for f in out_diff.split("\0") if f} | {f for f in out_untracked.split("\0") if f}
    return Changes(True, int(since or 0), int(dropped or 0), tuple(sorted(files)))


def fingerprints(root: Path | None, paths: tuple[str, ...], limit: int = 100,
                 max_bytes: int = 4 << 20) -> dict[str, str]:
    """Short content hashes of dirty files, so that a later resume can tell whether they changed since."""
    import hashlib

    if root is None:
        return {}
    out: dict[str, str] = {}
    for rel in paths[:limit]:
        path = root / rel
        try:
            if not path.is_file() or path.stat().st_size > max_bytes:
                continue
            out[rel] = hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest()[:12]
        except OSError:
            continue
    return out
