"""Deliberate bugs, one at a time: does the suite catch each one it is meant to catch?

Run by hand (pytest does not collect it)::

    .venv/bin/python tests/mutants.py            # each mutant against the tests that name its subject
    .venv/bin/python tests/mutants.py --all      # each mutant against the whole suite (slow)
    .venv/bin/python tests/mutants.py --only rerun-counted-twice --keep

Every mutant is made in a scratch copy of the checkout (the files git lists, uncommitted changes
included), never in the checkout itself. A mutant names its file, the function it changes (found with
``ast``, so that moving code around does not matter) and a short snippet of that function; when the
function or the snippet is not there exactly once, the script stops and says so instead of testing
nothing. The unchanged copy must pass the same tests first. The table says, per mutant, what it breaks,
whether the tests failed (caught), which tests failed, and how long the run took; the exit status is 1
when a mutant survived.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

CHECKOUT = Path(__file__).resolve().parents[1]


class Mutant(NamedTuple):
    name: str
    breaks: str  # what the bug breaks, in a user's words
    path: str  # the file, relative to the checkout
    function: str  # the function or method it changes ("Class.method")
    old: str  # a snippet of that function, there exactly once
    new: str
    tests: tuple[str, ...]  # the tests that name what it breaks


MUTANTS = (
    Mutant("wrong-issue", "a write lands on another issue than the one asked (its GraphQL node id)",
           "ghstate/github/store.py", "GitHubStore._issue_input",
           'payload: dict[str, Any] = {"id": node["id"],',
           'payload: dict[str, Any] = {"id": next(iter(self._nodes.values()))["id"],',
           ("tests/test_github_store.py",)),
    Mutant("move-not-compared", "the chain's ref is moved whatever head it points at (no compare-and-swap)",
           "ghstate/github/chain_ref.py", "ChainRef.move_and_mirror",
           '"beforeOid": ZERO if archived else parent or ZERO}', '"force": True}',
           ("tests/test_write_log.py", "tests/test_github_store.py")),
    Mutant("local-generation-overwritten", "the local chain's next generation is written over another's",
           "ghstate/local/store.py", "LocalStore.append",
           'if not atomic_create(folder / f"{seen + 1}.json", json.dumps(record, ensure_ascii=False) + "\\n"):',
           'if atomic_write(folder / f"{seen + 1}.json", json.dumps(record, ensure_ascii=False) + "\\n"):',
           ("tests/test_local_chain.py",)),
    Mutant("person-edit-ignored", "a person's edit of the body is read as an older mirror: it is written over",
           "ghstate/services/reader.py", "_chained_view",
           'if found.kind == "edited" and found.digest not in {e.digest for e in edits}:', "if False:",
           ("tests/test_write_log.py", "tests/test_interleavings.py", "tests/test_writer.py")),
    Mutant("overwritten-save-ignored", "a person's save that lands while a write is under way is not merged",
           "ghstate/core/saves.py", "replaced_saves", "    found: dict[str, Version] = {}\n",
           "    return ()\n", ("tests/test_write_log.py", "tests/test_github_store.py")),
    Mutant("read-merged-again", "the body a write read is merged again under people's saves made from it",
           "ghstate/core/saves.py", "replaced_saves", "        if the_read and not direct:\n            break",
           "        if False:\n            break", ("tests/test_saves.py", "tests/test_write_log.py")),
    Mutant("alone-not-a-save", "a body written alone beside the chain, replaced by a mirror, is never merged",
           "ghstate/core/saves.py", "is_save", "return (key is not None and not key.digest) or not as_written(text)",
           "return not as_written(text)", ("tests/test_saves.py", "tests/test_write_log.py")),
    Mutant("history-not-read-back", "a save under others that came on top of a write is not looked for",
           "ghstate/github/body.py", "Body._since", "for page in range(HISTORY_PAGES):", "for page in range(0):",
           ("tests/test_write_log.py", "tests/test_github_store.py")),
    Mutant("saves-taken-together", "people's saves read by a plain read are one entry, credited to the last editor",
           "ghstate/github/body.py", "Body.saves", "for v, mixed in saves_in(_listed(issue), read, merged, complete))",
           "for v, mixed in saves_in([], read, merged, complete))", ("tests/test_write_log.py",)),
    Mutant("unindexed-taken-for-none", "a branch whose checkpoint the index does not hold is taken for one with none",
           "ghstate/github/branches.py", "BranchIndex.find",
           "            return self.search(branch)  # (a token", "            return None  # (a token",
           ("tests/test_branch_index.py",)),
    Mutant("archive-not-compared", "a close moves the archive over another close's fold (its chain unreachable)",
           "ghstate/github/archive.py", "Archive._updates",
           '"beforeOid": state.archive or ZERO}', '"force": True}', ("tests/test_archive.py",)),
    Mutant("lost-answer-resent-blindly", "a write whose answer was lost is sent again though it landed",
           "ghstate/github/chain_ref.py", "send_looking",
           "if fresh.body != stored.body or not as_read(fresh):", "if False:",
           ("tests/test_write_log.py", "tests/test_github_store.py")),
    Mutant("rerun-counted-twice", "a test re-run within a CI run counts as two tests",
           "ghstate/ci/junit.py", "merge", "attempts.setdefault(case.key, []).append(case)",
           "attempts.setdefault((*case.key, len(attempts)), []).append(case)",
           ("tests/test_junit.py", "tests/test_ci.py", "tests/test_verify.py")),
    Mutant("oversize-body-accepted", "a body over GitHub's limit, even without ghstate's metadata, is written",
           "ghstate/core/checks.py", "fit_size", "    text = MARKER_LINE.sub(\"\", lightest)\n",
           "    return lightest, \"\"\n",
           ("tests/test_writer.py", "tests/test_github_store.py", "tests/test_cli_local.py", "tests/test_ci.py")),
    Mutant("secret-not-refused", "a credential in what a write adds is written to GitHub",
           "ghstate/core/checks.py", "check_secrets", "    if found:\n        raise SecretFound",
           "    if False:\n        raise SecretFound",
           ("tests/test_secrets.py", "tests/test_github_store.py", "tests/test_cli_local.py")),
    Mutant("escape-accepted", "a terminal escape (ESC) in given text is taken as text",
           "ghstate/core/markup.py", "control_at", 'if m.lastgroup == "cc":',
           'if m.lastgroup == "cc" and m.group() != "\\x1b":',
           ("tests/test_cli_local.py", "tests/test_markup.py", "tests/test_literal_text.py", "tests/test_mcp.py")),
    Mutant("lint-error-as-warning", "a body without a resume instruction passes lint as a warning",
           "ghstate/core/lint.py", "", '"GS001": ("error",', '"GS001": ("warning",',
           ("tests/test_lint.py",)),
    Mutant("dtd-accepted", "a JUnit report's document type declaration is read (entities refused only)",
           "ghstate/ci/junit.py", "_xml", "forbid_dtd=True", "forbid_dtd=False",
           ("tests/test_junit.py", "tests/test_ci.py")),
    Mutant("compaction-not-forgotten", "after a compaction, a session is told it still has what it was given",
           "ghstate/local/seen.py", "forget", "if session and (directory / FILE).exists():", "if False:",
           ("tests/test_hooks.py",)),
    Mutant("repeat-window-short", "a SessionStart fired again at the window's end gives the whole prompt again",
           "ghstate/local/seen.py", "repeated", "-1.0 <= elapsed <= REPEAT_SECONDS", "-1.0 <= elapsed < REPEAT_SECONDS",
           ("tests/test_hooks.py",)),
    Mutant("store-per-worktree", "the local store is found per worktree: a split in one is not in another's queue",
           "ghstate/config.py", "Settings.store_dir", "return self.machine_dir or self.state_dir",
           "return self.state_dir", ("tests/test_local_worktrees.py", "tests/test_github_store.py")),
    Mutant("number-with-a-chain-reused", "a new local checkpoint takes a number whose chain is still there",
           "ghstate/local/store.py", "LocalStore.taken", '*_numbered(self.directory / "chain", _DIGITS),', "",
           ("tests/test_local_history.py",)),
    Mutant("mirror-rolled-back", "N.md newer than its chain is read as the chain's older head",
           "ghstate/local/store.py", "LocalStore._caught_up", "int(key.head) > int(head.oid)", "False",
           ("tests/test_local_history.py",)),
    Mutant("fallback-removed", "without GitHub, resume and the hooks fail where this machine saw the checkpoint",
           "ghstate/services/outage.py", "read",
           "        if not exc.unreachable or not app.reads_last_seen:\n            raise",
           "        raise", ("tests/test_outage.py",)),
    Mutant("kept-writes-not-sent-first", "a write lands over this machine's kept write to its checkpoint, which "
           "stays unsent until someone thinks of push", "ghstate/services/kept.py", "send_first",
           "    if not app.store.remote:\n        return Sent()", "    if True:\n        return Sent()",
           ("tests/test_outage.py",)),
    Mutant("saves-on-one-page", "people's saves in turn are all merged against the page they share (a later "
           "save's deletion of an earlier one's line is lost)", "ghstate/services/reader.py", "_chained_view",
           "merged, conflicts = _merged(store, stored, found, cp, on if person else None)",
           "merged, conflicts = _merged(store, stored, found, cp, None)", ("tests/test_write_log.py",)),
    Mutant("lagging-body-folded", "a close folds a chain whose body names an older head (its writes since hidden)",
           "ghstate/github/archive.py", "Archive.fold",
           "if state.chain and _named_head(stored) != state.chain:", "if False:", ("tests/test_archive.py",)),
    Mutant("committed-kept-write-taken", "a kept-write file git tracks is taken as this machine's, and sent",
           "ghstate/local/worktrees.py", "_move_pending",
           'mine = [name for name in names if not name.startswith(".") and not left(f"pending/{name}")]',
           'mine = [name for name in names if not name.startswith(".")]', ("tests/test_committed_store.py",)),
    Mutant("kept-write-any-github", "a kept write is sent to any GitHub whose repository has its name",
           "ghstate/services/kept.py", "here",
           "and github_of(record.api_url) == github_of(app.settings.api_url)", "",
           ("tests/test_committed_store.py",)),
    Mutant("refused-kept-write-holds", "a kept write GitHub refused for good stays first in line, every later "
           "write kept behind it", "ghstate/services/kept.py", "for_good",
           "    return isinstance(exc, (InputError, NotFound, SecretFound))", "    return False",
           ("tests/test_kept_writes.py",)),
    Mutant("replica-steps-back", "this machine's copy of a checkpoint is replaced by an older revision's",
           "ghstate/local/replica.py", "Replica.keep", "if there is not None and there.revision > seen.revision:",
           "if False:", ("tests/test_outage.py",)),
    Mutant("lost-answer-look-unsaid", "a lost answer's look for replaced saves reads a lagging history once",
           "ghstate/github/body.py", "Body.replaced",
           "listed = self._shown(stored, written, since) if since is not None else self._unread(stored, written)",
           "listed = since or []", ("tests/test_write_log.py",)),
    Mutant("stale-dry-run-closes", "close --stale --dry-run closes what it says it would close",
           "ghstate/commands/close.py", "_close_stale", "        if not dry_run:\n", "        if True:\n",
           ("tests/test_lifecycle.py", "tests/test_lifecycle_github.py")),
)


class Missing(Exception):
    """A mutant's function or snippet is not in the code (any more): nothing would be tested."""


def _span(source: str, function: str, path: str) -> tuple[int, int]:
    """Character offsets of ``function`` ("name" or "Class.method") in ``source``; the whole module for ""."""
    if not function:
        return 0, len(source)
    scope: list[ast.stmt] = ast.parse(source).body
    node: ast.AST | None = None
    for part in function.split("."):
        node = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise Missing(f"{path}: no {function} (looked for {part!r})")
        scope = node.body  # type: ignore[attr-defined]
    assert node is not None and node.end_lineno is not None
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts[node.lineno - 1], starts[node.end_lineno]  # type: ignore[attr-defined]


def mutated(source: str, mutant: Mutant) -> str:
    start, end = _span(source, mutant.function, mutant.path)
    found = source.count(mutant.old, start, end)
    if found != 1:
        where = mutant.function or "the module"
        raise Missing(f"{mutant.path}: {mutant.old!r} is in {where} {found} times, not once: update mutant "
                      f"{mutant.name!r}")
    changed = source[:start] + source[start:end].replace(mutant.old, mutant.new) + source[end:]
    compile(changed, mutant.path, "exec")  # a mutant that does not compile would be caught by anything
    return changed


def copy_checkout(checkout: Path, root: Path) -> Path:
    """A copy in ``root`` of ``checkout``'s files as git lists them (tracked and untracked, not ignored):
    uncommitted changes included."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=checkout,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = checkout / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    return root


@contextlib.contextmanager
def scratch_folder(prefix: str, keep: bool) -> Iterator[Path]:
    """A scratch folder, removed afterwards unless ``keep`` (its path is then printed)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        if keep:
            print(f"kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def scratch(into: Path) -> Path:
    """A copy of the checkout (``copy_checkout``), with the checkout's sibling ``shared`` folder beside it when
    there is one (the JUnit corpus)."""
    root = copy_checkout(CHECKOUT, into / CHECKOUT.name)
    if (CHECKOUT.parent / "shared").is_dir():
        (into / "shared").symlink_to(CHECKOUT.parent / "shared")
    return root


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    found = subprocess.run([sys.executable, "-c", "import ghstate; print(ghstate.__file__)"], cwd=root, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).is_relative_to(root):
        raise SystemExit(f"the scratch copy imports ghstate from {found}, not from {root}: nothing would be tested")
    return env


class Outcome(NamedTuple):
    passed: bool
    failed: tuple[str, ...]
    seconds: float
    summary: str


def run_tests(root: Path, env: dict[str, str], tests: tuple[str, ...]) -> Outcome:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *tests],
                          cwd=root, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode not in (0, 1):  # interrupted, an internal error, a usage error, no tests collected
        raise SystemExit(f"pytest could not run {' '.join(tests)} (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                         f"\n{proc.stderr[-2000:]}")
    failed = tuple(dict.fromkeys(m.group(1) for m in re.finditer(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", proc.stdout,
                                                                  re.M)))
    lines = proc.stdout.strip().splitlines()
    return Outcome(proc.returncode == 0, failed, seconds, lines[-1] if lines else "")


def short(test: str) -> str:
    return test.removeprefix("tests/").replace(".py::", "::")


def table(rows: list[tuple[Mutant, Outcome]], width: int = 4) -> str:
    out = [f"{'mutant':<24} {'caught':<7} {'time':>7}  what it breaks / caught by"]
    for mutant, outcome in rows:
        caught = "yes" if not outcome.passed else "NO"
        by = ", ".join(short(t) for t in outcome.failed[:width])
        more = f" (+{len(outcome.failed) - width} more)" if len(outcome.failed) > width else ""
        out.append(f"{mutant.name:<24} {caught:<7} {outcome.seconds:>6.1f}s  {mutant.breaks}")
        out.append(f"{'':<24} {'':<7} {'':>7}  {len(outcome.failed)} failed: {by}{more}" if outcome.failed
                   else f"{'':<24} {'':<7} {'':>7}  no test failed ({outcome.summary})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="run the whole suite against each mutant")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="this mutant only (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if not chosen:
        parser.error(f"no mutant named {args.only}; known: {', '.join(m.name for m in MUTANTS)}")
    for mutant in chosen:  # every mutant applies to the checkout as it is, before anything runs
        mutated((CHECKOUT / mutant.path).read_text(), mutant)
    with scratch_folder("ghstate-mutants-", args.keep) as folder:
        root = scratch(folder)
        env = environment(root)
        selections = {m.name: (("tests",) if args.all else m.tests) for m in chosen}
        every = tuple(dict.fromkeys(t for tests in selections.values() for t in tests))
        print(f"scratch copy: {root}\nunchanged, first: {' '.join(every)}", flush=True)
        base = run_tests(root, env, every)
        print(f"  {base.summary} in {base.seconds:.1f}s", flush=True)
        if not base.passed:
            raise SystemExit(f"the unchanged copy fails: {', '.join(base.failed)}; no mutant can be judged")
        rows = []
        for mutant in chosen:
            path = root / mutant.path
            original = path.read_text()
            path.write_text(mutated(original, mutant))
            try:
                print(f"{mutant.name}: {' '.join(selections[mutant.name])}", flush=True)
                rows.append((mutant, run_tests(root, env, selections[mutant.name])))
            finally:
                path.write_text(original)
        print("\n" + table(rows))
        survived = [m.name for m, o in rows if o.passed]
        print(f"\n{len(rows) - len(survived)} of {len(rows)} mutants caught"
              + (f"; survived: {', '.join(survived)}" if survived else ""))
        return 1 if survived else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Missing as exc:
        sys.exit(f"Error: {exc}")
