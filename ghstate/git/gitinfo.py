"""The only module that talks to git: where the repository is, what HEAD is, what changed since.

Reads that git can answer from files (the root, the origin URL) are done without a subprocess, since
ghstate runs inside agent loops and hooks where every fork counts. Nothing from an issue reaches a
git command line except a commit id, and only after it is checked to be hex.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ghstate.core.model import Changes, WorkTree

_HEX = re.compile(r"^[0-9a-f]{4,64}$")
_FULL_HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
TIMEOUT = 10.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # what a repository held before its first commit
MAX_DIRTY = 200  # dirty paths recorded (and fingerprinted) per revision; more are reported as changed
MAX_DIRTY_CHARS = 12_000  # what they take in the marker: it must leave the body room under GitHub's limit
DELETED = "-"  # the fingerprint of a dirty path that is not there (deleted, not yet committed)


def find_root(start: Path | None = None) -> Path | None:
    """The top of the git working tree containing ``start``, found by looking for ``.git``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _own_git_dir(root: Path) -> Path | None:
    """This working tree's own git folder (a linked worktree's, not the main repository's)."""
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
    return git_dir if git_dir.is_absolute() else (root / git_dir).resolve()


def common_dir(root: Path) -> Path | None:
    """The repository's git folder shared by all its worktrees (for a linked worktree, the main one's)."""
    return _git_dir(root)


def _git_dir(root: Path) -> Path | None:
    """The repository's git folder, where its config lives (for a linked worktree, the main one's)."""
    git_dir = _own_git_dir(root)
    common = git_dir / "commondir" if git_dir is not None else None
    if common is not None and common.is_file():
        shared = Path(common.read_text(encoding="utf-8").strip())
        return shared if shared.is_absolute() else (git_dir / shared).resolve()
    return git_dir


def recordable(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The dirty paths a revision records: at most MAX_DIRTY of them, taking MAX_DIRTY_CHARS of marker."""
    out: list[str] = []
    used = 0
    for path in paths[:MAX_DIRTY]:
        used += 2 * len(path) + 21  # the name in "dirty" and as its fingerprint's key, a hash, JSON punctuation
        if used > MAX_DIRTY_CHARS:
            break
        out.append(path)
    return tuple(out)


def head_tree(root: Path | None) -> WorkTree:
    """Branch (or, when HEAD is detached, its commit) read from HEAD without running git. During a
    rebase HEAD is detached but the branch being rebased is named. Empty outside a repository."""
    if root is None:
        return WorkTree()
    git_dir = _own_git_dir(root)
    try:
        ref = (git_dir / "HEAD").read_text(encoding="utf-8").strip() if git_dir else ""
    except OSError:
        return WorkTree()
    if ref.startswith("ref: refs/heads/"):
        return WorkTree(branch=ref[len("ref: refs/heads/") :])
    if _HEX.match(ref):
        return WorkTree(branch=rebasing_branch(git_dir), commit=ref)
    return WorkTree()


def head_commit(root: Path | None) -> str:
    """The commit HEAD points at, read from the git folder without running git (a loose ref, then
    packed-refs); "" when it cannot be told that way (no repository, an unborn branch, a reftable)."""
    git_dir = _own_git_dir(root) if root is not None else None
    if git_dir is None:
        return ""
    try:
        ref = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    if _FULL_HEX.match(ref):
        return ref
    if not ref.startswith("ref: refs/"):
        return ""
    name = ref[len("ref: ") :]
    shared = _git_dir(root) or git_dir
    for folder in dict.fromkeys((git_dir, shared)):
        try:
            value = (folder / name).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        return value if _FULL_HEX.match(value) else ""
    try:
        packed = (shared / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return ""
    for line in packed.splitlines():
        value, _, refname = line.partition(" ")
        if refname == name and _FULL_HEX.match(value):
            return value
    return ""


def rebasing_branch(git_dir: Path | None) -> str:
    """The branch a rebase in progress will move (HEAD is detached meanwhile), or ""."""
    if git_dir is None:
        return ""
    for folder in ("rebase-merge", "rebase-apply"):
        try:
            name = (git_dir / folder / "head-name").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if name.startswith("refs/heads/"):
            return name[len("refs/heads/") :]
    return ""


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


def version() -> str:
    """The git program's version ("" when git cannot be run)."""
    try:
        proc = _run(Path.cwd(), "--version")
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip().removeprefix("git version ") if proc.returncode == 0 else ""


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=TIMEOUT,
                          env=env, errors="replace", check=False)


def ignored(root: Path, folder: Path) -> frozenset[str] | None:
    """The files under ``folder`` (a folder of the work tree) that git ignores, as paths relative to ``folder``:
    what is positively this machine's own there. Every other file is the repository's or one ``git status``
    shows, a file behind a symbolic link or inside a submodule included (git lists nothing there). None when git
    cannot tell (then no file is taken as this machine's)."""
    try:
        if folder.is_symlink():  # a committed link: nothing behind it is this machine's
            return frozenset()
        where = folder.resolve().relative_to(root.resolve()).as_posix()
        done = _run(root, "-c", "core.quotePath=false", "ls-files", "-z", "--others", "--ignored",
                    "--exclude-standard", "--", where)
    except (ValueError, OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    prefix = where.rstrip("/") + "/"
    return frozenset(name[len(prefix):] for name in done.stdout.split("\0") if name.startswith(prefix))


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    found = _PREFETCHED.pop((str(root), args), None)
    return found if found is not None else _spawn(root, *args)


def _spawn(root: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.Popen(["git", *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, errors="replace")


_PREFETCHED: dict[tuple[str, tuple[str, ...]], subprocess.Popen[str]] = {}


def prefetch(start: Path | None = None) -> None:
    """Start now the git processes every ``resume`` runs (the status and the untracked files of the tree
    around ``start``), so that git works while Python loads the rest of the command; ``_start`` hands
    them out. Any that is not asked for ends with this process."""
    root = find_root(start)
    if root is None:
        return
    for args in (_STATUS, _UNTRACKED):
        key = (str(root), args)
        if key not in _PREFETCHED:
            try:
                _PREFETCHED[key] = _spawn(root, *args)
            except OSError:  # no git: the command says so in its own time
                return


def discard_prefetched() -> None:
    """End the prefetched processes no one asked for (a resume that never looked at the tree)."""
    while _PREFETCHED:
        _, proc = _PREFETCHED.popitem()
        proc.kill()
        proc.communicate()


def work_tree(root: Path | None) -> WorkTree:
    """Branch, HEAD and dirty paths in one ``git status`` call. Empty outside a repository."""
    if root is None:
        return WorkTree()
    try:
        proc = _run(root, *_STATUS)
    except (OSError, subprocess.TimeoutExpired):
        return WorkTree()
    if proc.returncode != 0:
        return WorkTree()
    return _work_tree(root, proc.stdout)


_STATUS = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
_UNTRACKED = ("ls-files", "--others", "--exclude-standard", "-z")


def _work_tree(root: Path, status: str) -> WorkTree:
    branch = commit = ""
    dirty: list[str] = []
    for kind, value in _status_entries(status):
        if kind == "oid":
            commit = "" if value == "(initial)" else value
        elif kind == "head":
            branch = rebasing_branch(_own_git_dir(root)) if value == "(detached)" else value
        else:
            dirty.append(value)
    return WorkTree(branch, commit, tuple(sorted(set(dirty))))


def _status_entries(status: str) -> Iterator[tuple[str, str]]:
    """(kind, value) of ``git status --porcelain=v2 --branch -z``: "oid" and "head" of the branch
    headers, "tracked" for a changed tracked path (a rename's new one), "untracked"."""
    entries = status.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        if entry.startswith("# branch.oid "):
            yield "oid", entry[len("# branch.oid ") :]
        elif entry.startswith("# branch.head "):
            yield "head", entry[len("# branch.head ") :]
        elif entry.startswith(("1 ", "u ")):
            yield "tracked", entry.split(" ", 8 if entry[0] == "1" else 10)[-1]
        elif entry.startswith("2 "):
            yield "tracked", entry.split(" ", 9)[-1]
            i += 1  # the original path of a rename follows
        elif entry.startswith("? "):
            yield "untracked", entry[2:]
        i += 1


def commits_since(root: Path | None, commit: str) -> int | None:
    """How many commits HEAD is ahead of ``commit`` (a status line's figure): none asked of git while HEAD is
    ``commit``, else one process; None when it cannot be told (no repository, a commit this one lacks)."""
    if root is None or not _HEX.match(commit or ""):
        return None
    head = head_commit(root)
    if head and head.startswith(commit):
        return 0
    try:
        proc = _run(root, "rev-list", "--count", f"{commit}..HEAD", "--")
    except (OSError, subprocess.SubprocessError):
        return None
    return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip().isdigit() else None


def changes_since(root: Path | None, commit: str) -> Changes:
    """Commits and files changed since ``commit`` (committed, staged, unstaged and untracked).

    ``commit`` "" means the checkpoint was written before the first commit: everything committed
    since counts. A commit this repository does not have (rebased away, not fetched) leaves the
    commits unknown but still reports what is uncommitted now. The usual case costs three git
    processes run side by side; only a missing commit costs a fourth."""
    return changes_and_tree(root, commit, tree=False)[0]


def changes_and_tree(root: Path | None, commit: str, *, tree: bool = True) -> tuple[Changes, WorkTree]:
    """``changes_since`` and, with ``tree``, ``work_tree`` too, their git processes all run side by side
    (what ``resume`` asks of the tree: one process's wall time, not two)."""
    if root is None or not (commit == "" or _HEX.match(commit)):
        return Changes(commit_known=False), work_tree(root) if tree else WorkTree()
    if tree and len(commit) >= 7 and head_commit(root).startswith(commit):
        return _uncommitted_only(root)
    base = commit or EMPTY_TREE
    counts_args = ("rev-list", "--left-right", "--count", f"{commit}...HEAD", "--") if commit else (
        "rev-list", "--count", "HEAD", "--")
    outputs = _together(root, counts_args, ("diff", "--name-only", "-z", base, "--"),
                        _UNTRACKED, *((_STATUS,) if tree else ()))
    if outputs is None:
        return Changes(commit_known=False), WorkTree()
    (counts_ok, out_counts), (diff_ok, out_diff), (_, out_untracked) = outputs[:3]
    status = _work_tree(root, outputs[3][1]) if tree and outputs[3][0] else WorkTree()
    known = True
    if commit and not (counts_ok and diff_ok):  # the commit is not here: what is uncommitted, at least
        known, out_counts = False, ""
        fallback = _together(root, ("diff", "--name-only", "-z", "HEAD", "--"))
        diff_ok, out_diff = fallback[0] if fallback else (False, "")
    elif not commit and not counts_ok:  # still no commit at all
        out_counts = "0"
    if not diff_ok:
        out_diff = ""
    if "\t" in out_counts:
        dropped, _, since = out_counts.strip().partition("\t")
    else:
        dropped, since = "0", out_counts.strip()
    files = {f for f in out_diff.split("\0") if f} | {f for f in out_untracked.split("\0") if f}
    return Changes(known, int(since or 0), int(dropped or 0), tuple(sorted(files))), status


def _uncommitted_only(root: Path) -> tuple[Changes, WorkTree]:
    """HEAD is still the recorded commit (the usual case right after a checkpoint): no commits since,
    and what changed is what ``git status`` calls changed, plus each untracked file. Two git processes
    instead of four."""
    outputs = _together(root, _STATUS, _UNTRACKED)
    if outputs is None or not outputs[0][0]:
        return Changes(commit_known=False), WorkTree()
    status = _work_tree(root, outputs[0][1])
    tracked = {path for kind, path in _status_entries(outputs[0][1]) if kind == "tracked"}
    untracked = {f for f in outputs[1][1].split("\0") if f}
    return Changes(True, 0, 0, tuple(sorted(tracked | untracked))), status


def _together(root: Path, *commands: tuple[str, ...]) -> list[tuple[bool, str]] | None:
    """Run git commands side by side; (succeeded, stdout) of each, or None when they time out."""
    procs = [_start(root, *args) for args in commands]
    try:
        outs = [proc.communicate(timeout=TIMEOUT)[0] for proc in procs]
    except subprocess.TimeoutExpired:
        for proc in procs:
            proc.kill()
        return None
    return [(proc.returncode == 0, out) for proc, out in zip(procs, outs, strict=True)]


def safe_relative(root: Path, rel: str) -> Path | None:
    """``root / rel`` when ``rel`` is a plain relative path that stays inside ``root``; else None.
    Paths come from a checkpoint's marker, which anyone who can edit the issue can write."""
    if not rel or rel.startswith(("/", "\\")) or "\0" in rel or re.match(r"^[A-Za-z]:", rel):
        return None
    parts = Path(rel).parts
    if ".." in parts:
        return None
    path = root / rel
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    return path


def _folder_digest(path: Path, max_files: int) -> str:
    """A hash of the names, sizes and times of the files under ``path`` ("" past ``max_files``)."""
    import hashlib

    listing = hashlib.sha1(usedforsecurity=False)
    seen = 0
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > max_files:
                return ""
            full = os.path.join(folder, name)
            item = os.lstat(full)
            listing.update(f"{os.path.relpath(full, path)}\0{item.st_size}\0{item.st_mtime_ns}\n"
                           .encode("utf-8", "surrogateescape"))
    return "d" + listing.hexdigest()[:11]


def fingerprints(root: Path | None, paths: tuple[str, ...], limit: int = MAX_DIRTY,
                 max_bytes: int = 4 << 20, max_files: int = 20_000) -> dict[str, str]:
    """Short fingerprints of dirty paths, so that a later resume can tell whether they changed since:
    a file's content hash, a folder's hash of its files' names, sizes and times (git lists a folder
    that is wholly untracked as one path), and DELETED for a path that is not there."""
    import hashlib
    import stat

    if root is None:
        return {}
    out: dict[str, str] = {}
    for rel in paths[:limit]:
        path = safe_relative(root, rel)
        if path is None:
            continue
        try:
            info = path.lstat()
        except FileNotFoundError:
            out[rel] = DELETED
            continue
        except OSError:
            continue
        try:
            if stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes:
                with open(path, "rb") as fh:  # a regular file: never a FIFO or a device that blocks
                    out[rel] = hashlib.sha1(fh.read(max_bytes + 1), usedforsecurity=False).hexdigest()[:12]
            elif stat.S_ISDIR(info.st_mode):
                digest = _folder_digest(path, max_files)
                if digest:
                    out[rel] = digest
        except OSError:
            continue
    return out


_RENAMED = re.compile(r"^Branch: renamed refs/heads/(.+) to refs/heads/(.+)$")


def former_names(root: Path | None, branch: str) -> list[str]:
    """The names ``branch`` had before a ``git branch -m``, the latest first, as its reflog tells them (a
    reflog is this clone's: a rename made elsewhere is not in it); [] when none or not known."""
    if root is None or not branch:
        return []
    try:
        proc = _run(root, "reflog", "show", "--format=%gs", f"refs/heads/{branch}", "--")
    except (OSError, subprocess.SubprocessError):
        return []
    names: list[str] = []
    for line in proc.stdout.splitlines() if proc.returncode == 0 else ():
        m = _RENAMED.match(line.strip())
        if m and m.group(1) != branch and m.group(1) not in names:
            names.append(m.group(1))
    return names


def branches_at(root: Path | None, commit: str, most: int = 3) -> list[str]:
    """The local branches whose tip is ``commit`` (a detached HEAD checked out at one: ``git checkout --detach``,
    a tag of its tip), at most ``most``; [] when none or not known."""
    if root is None or not _FULL_HEX.match(commit or ""):
        return []
    try:
        proc = _run(root, "branch", "--points-at", commit, "--format=%(refname:short)")
    except (OSError, subprocess.SubprocessError):
        return []
    return [name for name in proc.stdout.splitlines() if name.strip()][:most] if proc.returncode == 0 else []


def in_history(root: Path | None, commit: str) -> bool:
    """Whether ``commit`` (a full object id, as a checkpoint records it) is HEAD or one of its ancestors."""
    if root is None or not _FULL_HEX.match(commit or ""):
        return False
    try:
        return _run(root, "merge-base", "--is-ancestor", commit, "HEAD").returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def default_branch(root: Path) -> str:
    """The repository's default branch, as a ref to compare with: ``origin/HEAD``'s target when the remote
    says it, else ``init.defaultBranch``, ``main`` or ``master``, whichever this clone has; "" when none."""
    proc = _run(root, "for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads", "refs/remotes/origin")
    if proc.returncode != 0:
        return ""
    refs = dict(line.split("\0", 1) for line in proc.stdout.splitlines() if "\0" in line)
    if refs.get("refs/remotes/origin/HEAD"):
        return refs["refs/remotes/origin/HEAD"]
    configured = _run(root, "config", "--get", "init.defaultBranch").stdout.strip()
    for name in (configured, "main", "master"):
        for ref in (f"refs/remotes/origin/{name}", f"refs/heads/{name}"):
            if name and ref in refs:
                return ref
    return ""


def branch_states(root: Path | None, branches: list[str]) -> dict[str, str]:
    """For each branch name: "" while it is here and not merged, ``gone`` when this clone has neither the
    branch nor a remote-tracking branch of that name, ``merged into NAME`` when its tip is on the default
    branch (and is not the default's tip itself: a branch with no commit of its own yet is not merged).
    Two or three git processes whatever the number of branches; no name from a checkpoint reaches a git
    command line. Empty outside git or when git cannot tell."""
    if root is None or not branches:
        return {}
    proc = _run(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes")
    if proc.returncode != 0:
        return {}
    tips = dict(line.rsplit(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    here: dict[str, str] = {}  # branch name -> its tip (the local branch's, else a remote-tracking one's)
    for ref, oid in tips.items():
        if ref.startswith("refs/remotes/") and ref.count("/") >= 3 and not ref.endswith("/HEAD"):
            here.setdefault(ref.split("/", 3)[3], oid)
    for ref, oid in tips.items():
        if ref.startswith("refs/heads/"):
            here[ref.removeprefix("refs/heads/")] = oid
    default = default_branch(root)
    merged: set[str] = set()
    if default and default in tips:
        proc = _run(root, "for-each-ref", f"--merged={tips[default]}", "--format=%(refname)", "refs/heads")
        merged = {r.removeprefix("refs/heads/") for r in proc.stdout.splitlines()} if proc.returncode == 0 else set()
    name = default.removeprefix("refs/remotes/origin/").removeprefix("refs/heads/")
    out = {}
    for branch in branches:
        if branch not in here:
            out[branch] = "gone"
        elif branch in merged and branch != name and here[branch] != tips.get(default):
            out[branch] = f"merged into {name}"
        else:
            out[branch] = ""
    return out
