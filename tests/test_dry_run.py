"""A dry run writes nothing anywhere: no issue, no ref, no lease, no project item, no local file.

Every command and flag that takes ``--dry-run`` (``checkpoint``, ``close --stale``, ``push``) and the MCP
``checkpoint`` tool's ``dry_run``, on the local store, on the fake GitHub, and on the fake GitHub with a
Project (v2) configured (issue 39, bug 1: an update's dry run moved the project item). Each case seeds a
state with real writes, takes a snapshot of everything a write could touch (the fake's issues, history,
labels, comments, refs, git objects, sub-issues and project items; the test repository's ``.ghstate/``
byte for byte, pending writes and claims included, its other files and its git refs; the pacing's record
of this machine's last write to GitHub), makes the dry run, and asks: the request log since holds no
GraphQL mutation and no REST POST/PATCH/PUT/DELETE, the dry run exits 0 and says what it would write, and
the snapshot is the same. Then the same command without ``--dry-run`` must write, and write what the case
is about (``reaches``: the claim renewed, the project's item moved): a control, so that no case passes for
having reached nothing a dry run must leave alone.

A case whose dry run reaches a knob of the fake (``tests/variants.py``) names it in ``changed_by`` and runs
under that knob's variant too. A dry run found to write is an expected failure (``WRITES``), not a fix.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import FAKE_TOKEN, SAMPLE, git
from graphql import OperationDefinitionNode, OperationType, parse

MODES = ("local", "github", "project")  # the local store; the fake GitHub; the fake GitHub with a Project
GITHUB = ("github", "project")
PROJECT = "orgs/ACME/projects/7"
REWRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})

OTHER = SAMPLE.replace("- fuzzy matcher may be slow on 10k-line inputs", "- the --file risk") \
    .replace("Start at Phase 2.", "Start at Phase 2, from the file.")
FORM = """### Goal

Ship the form-made task.

### Current status

- [ ] Phase 1: first
- [ ] Phase 2: second

### Resume instruction

Start at Phase 1.
"""
PLAN = """## Goal
Ship the parser.

## Current status
- [x] Phase 1: parser
- [ ] Phase 2: matcher
- [ ] Phase 3: config (after Phase 2)

## Resume instruction
Start at Phase 2.
"""
SECRET = "AKIA" + "Q" * 16  # an AWS access key id's shape, refused unless --allow-secrets


@functools.cache
def is_mutation(document: str) -> bool:
    """Whether a GraphQL document holds a mutation (parsed, not guessed from its first word)."""
    return any(isinstance(d, OperationDefinitionNode) and d.operation == OperationType.MUTATION
               for d in parse(document).definitions)


def _tree(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes | None] | None:
    """Every file and folder under ``folder`` but those under its folders named in ``skip``, files with their
    bytes (None: the folder is not there)."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*")) if p.relative_to(folder).parts[0] not in skip}


class World:
    """The store a case writes to (``mode``), what a write could touch there, and the request log."""

    def __init__(self, mode: str, repo: Path, fake: Any = None, projects: Any = None, variant: Any = None) -> None:
        self.mode, self.repo, self.fake, self.projects, self.variant = mode, repo, fake, projects, variant

    @property
    def remote(self) -> bool:
        return self.fake is not None

    def mark(self) -> int:
        return len(self.fake.calls) if self.fake is not None else 0

    def writes(self, start: int) -> list[str]:
        """The requests since ``start`` that write: GraphQL mutations and REST requests other than GET."""
        if self.fake is None:
            return []
        out = []
        for method, url, body in self.fake.calls[start:]:
            if re.fullmatch(self.fake.graphql_url, url):
                document = (body or {}).get("query") or ""
                if is_mutation(document):
                    name = re.search(r"mutation\s+(\w+)", document)
                    out.append(f"mutation {name.group(1) if name else document[:60]}")
            elif method in REWRITES:
                out.append(f"{method} {urlsplit(url).path}")
        return out

    def snapshot(self) -> dict[str, Any]:
        """What a write could change: the store's files (pending writes and claims among them) byte for byte,
        the test repository's other files and its refs, the pacing's record of the last write to GitHub, and
        on GitHub the fake's issues, labels, comments, refs, git objects, sub-issues and project items."""
        git_dir = self.repo / ".git"
        cache = Path(os.environ["XDG_CACHE_HOME"])  # the test's own (conftest's ``isolated``)
        out: dict[str, Any] = {
            "ghstate": _tree(self.repo / ".ghstate"),
            "store": _tree(git_dir / "ghstate"),
            "work tree": _tree(self.repo, skip=(".git", ".ghstate")),
            # the time of this machine's last write to GitHub (ghstate.local.pace), not its lock file
            "pace": {str(p): p.read_bytes() for p in cache.rglob("pace-*") if p.suffix != ".writing"},
            "git refs": (_tree(git_dir / "refs"), (git_dir / "HEAD").read_bytes(),
                         (git_dir / "packed-refs").read_bytes() if (git_dir / "packed-refs").exists() else None),
        }
        fake = self.fake
        if fake is not None:
            out.update(issues=copy.deepcopy(fake.issues), history=copy.deepcopy(fake.history),
                       comments=copy.deepcopy(fake.comments), labels=set(fake.labels),
                       refs=dict(fake.tasks.refs), objects=set(fake.tasks.objects),
                       sub_issues=copy.deepcopy(fake.tasks.children), blocked=copy.deepcopy(fake.tasks.blocked_by))
        if self.projects is not None:
            out.update(projects=copy.deepcopy(self.projects.projects), project_mutations=len(self.projects.mutations))
        return out


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two snapshots, named down to the file, issue or ref."""
    out = []
    for key in before:
        was, now = before[key], after[key]
        if was == now:
            continue
        if isinstance(was, dict) and isinstance(now, dict):
            out.extend(f"{key}: {k} {'added' if k not in was else 'removed' if k not in now else 'changed'}"
                       for k in sorted(set(was) | set(now), key=str) if was.get(k) != now.get(k))
        elif isinstance(was, set) and isinstance(now, set):
            out.append(f"{key}: added {sorted(now - was)[:5]}, removed {sorted(was - now)[:5]}")
        elif was is None and isinstance(now, dict):
            out.append(f"{key}: created, with {sorted(now)}")
        else:
            out.append(f"{key}: {'removed' if now is None else 'changed'}")
    return out


@pytest.fixture
def world(request, isolated, repo, monkeypatch, clock) -> World:
    """The local store, the fake GitHub, or the fake GitHub with a Project (v2) that ghstate keeps current;
    ``request.param``: (mode, the fake's variant, or None for the default)."""
    mode, variant = request.param
    # the writer's clock (the time it stamps, and the lease it renews when due) is the stopped one of the
    # claims (conftest's ``clock`` stops App.clock, not the writer's own)
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: clock.utc().strftime("%Y-%m-%dT%H:%M:%SZ"))
    if mode == "local":
        monkeypatch.setenv("GHSTATE_STORE", "local")
        yield World(mode, repo)
        return
    from github_fake import FakeGitHub

    monkeypatch.setenv("GH_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    if variant is not None:
        fake.tasks.use(variant)
    projects = None
    if mode == "project":
        from github_fake_projects import FakeProjects

        monkeypatch.setenv("GHSTATE_PROJECT", PROJECT)
        projects = FakeProjects(fake).install()
        projects.add_project()
    yield World(mode, repo, fake, projects, variant)
    assert fake.problems() == [], "requests that GitHub's API description or schema does not allow"


# ------------------------------------------------------------------------------------------ seeds
# What a case starts from, made by real (not dry) writes where ghstate makes it.


def seed_none(world: World, run, tmp_path: Path, clock) -> None:
    """No checkpoint yet: a dry run would create one."""


def seed_one(world: World, run, tmp_path: Path, clock) -> None:
    """Checkpoint #1 of branch feature/x, written by ghstate (on GitHub: its chain's first commit too)."""
    run("checkpoint", "--file", "-", "--title", "CLI refactor", input=SAMPLE)
    run("checkpoint", "--decision", "a second revision, on the chain")  # the chain has a head to build on
    (tmp_path / "other.md").write_text(OTHER)


def seed_edited(world: World, run, tmp_path: Path, clock) -> None:
    """#1, then a person's save of its body: a write would merge it onto the chain, as their entry."""
    seed_one(world, run, tmp_path, clock)
    if world.remote:
        body = world.fake.issues[1]["body"]
        world.fake.edit(1, body.replace("may be slow on", "is slow on"), login="mona")
    else:
        path = world.repo / ".git" / "ghstate" / "1.md"
        path.write_text(path.read_text().replace("may be slow on", "is slow on"))


def seed_elsewhere(world: World, run, tmp_path: Path, clock) -> None:
    """#1 of feature/x, and the repository now on branch other (a write by number would move it with --move)."""
    seed_one(world, run, tmp_path, clock)
    git(world.repo, "checkout", "-q", "-b", "other")


def seed_unlabelled(world: World, run, tmp_path: Path, clock) -> None:
    """#1, whose checkpoint label a person took off, and #11, a bug report that is no checkpoint (--adopt)."""
    seed_one(world, run, tmp_path, clock)
    world.fake.issues[1]["labels"] = []
    world.fake.add_issue(11, "The parser crashes on empty input.\n", title="Parser crash", labels=("bug",))


def seed_form(world: World, run, tmp_path: Path, clock) -> None:
    """#1 made by hand (an issue form on GitHub, a file in the local store): no marker, no chain yet."""
    if world.remote:
        world.fake.add_issue(1, FORM, title="Form task")
    else:
        (world.repo / ".git" / "ghstate").mkdir()
        (world.repo / ".git" / "ghstate" / "1.md").write_text(FORM)


def seed_claimed(world: World, run, tmp_path: Path, clock) -> None:
    """#1 split into children, #2 claimed by agent a1, and 20 of its 30 minutes gone: a1's next write renews."""
    run("checkpoint", "--file", "-", "--title", "Parser", input=PLAN)
    run("split", "1")
    run("claim", "2", "--agent", "a1")
    clock.advance(20 * 60)
    if world.fake is not None:  # GitHub's clock, which leases are measured by there, moves the same
        world.fake.advance(20 * 60)


def seed_stale(world: World, run, tmp_path: Path, clock) -> None:
    """#1, and 40 days without a write since: ``close --stale`` would close it."""
    seed_one(world, run, tmp_path, clock)
    clock.advance(40 * 86400)


def seed_pending(world: World, run, tmp_path: Path, clock) -> None:
    """Two writes GitHub could not take, kept in the store's pending/: an update of #1 and a new checkpoint."""
    seed_one(world, run, tmp_path, clock)
    world.fake.fail("*", r".*", None, times=99)
    run("checkpoint", "1", "--risk", "kept while GitHub was away", code=1)
    run("checkpoint", "--new", "--file", str(tmp_path / "other.md"), "--title", "Second", code=1)
    world.fake.faults.clear()
    assert len(list((world.repo / ".git" / "ghstate" / "pending").glob("*.json"))) == 2


@dataclass(frozen=True)
class Case:
    """One dry run: the state it starts from, the command (without ``--dry-run``) or the MCP ``checkpoint``
    tool's arguments (without ``dry_run``), and what its output holds (what it would write)."""

    id: str
    seed: Callable[..., None]
    args: tuple[str, ...]  # the command, without --dry-run; () for the MCP tool
    said: str  # what the dry run's output holds: what it would write
    modes: tuple[str, ...] = MODES
    stdin: str | None = None
    tool: dict[str, Any] | None = None  # the MCP checkpoint tool's arguments (then ``args`` is empty)
    agent: str = "claude-code"  # the MCP server's agent
    changed_by: frozenset[str] = frozenset()  # the fake's knobs the dry run reaches (tests/variants.py)
    reaches: tuple[str, ...] = ()  # what the command, not dry, writes (a line of ``changes``; BOARD: with a project)


C = "checkpoint"
HISTORY = frozenset({"cursors", "history_lag"})  # the knobs a read of a body people edited reaches
BOARD = "project_mutations: changed"  # the project's item added or a field of it set (in the project mode only)
CLAIM = "claims/2"  # the claim on child #2 renewed: its ref moved (GitHub), a generation added (local)
CASES = (
    # creation, by branch (the branch has no checkpoint) and with --new beside one
    Case("create-file", seed_none, (C, "--file", "-", "--title", "CLI refactor"), "matcher abstraction",
         stdin=SAMPLE, reaches=(BOARD,)),
    Case("create-flags", seed_none, (C, "--goal", "Ship it", "--phase", "Phase 1: one", "--resume", "Begin"),
         "Ship it", reaches=(BOARD,)),
    Case("create-allow-empty", seed_none, (C, "--allow-empty", "--title", "Empty task"), "ghstate:v1",
         reaches=(BOARD,)),
    Case("create-json", seed_none, (C, "--goal", "Ship it as JSON", "--json"), '"created"', reaches=(BOARD,)),
    Case("create-new", seed_one, (C, "--new", "--file", "{tmp}/other.md", "--title", "Second"), "the --file risk",
         reaches=(BOARD,)),
    # updates, by number and by branch, one flag each
    *(Case(f"update-{how}{flag}", seed_one, (C, *where, flag, *value), said, reaches=board)
      for how, where in (("1", ("1",)), ("branch", ()))
      for flag, value, said, board in (  # board: the flag moves a field of the project's item (Next phase, Progress)
          ("--done", ("Phase 2",), "- [x] Phase 2", (BOARD,)),
          ("--undo", ("Phase 1",), "- [ ] Phase 1", (BOARD,)),
          ("--phase", ("Phase 4: docs",), "Phase 4: docs", (BOARD,)),
          ("--decision", ("keep the v1 API",), "keep the v1 API", ()),
          ("--question", ("which matcher?",), "which matcher?", ()),
          ("--risk", ("a dry risk",), "a dry risk", ()),
          ("--files", ("src/matcher.ts",), "src/matcher.ts", ()),
          ("--resume", ("Start at Phase 3",), "Start at Phase 3", ()),
          ("--goal", ("A new goal",), "A new goal", ()),
          ("--title", ("Renamed task",), "ghstate:v1", ()),
          ("--file", ("{tmp}/other.md",), "the --file risk", ()),
      )),
    Case("update-1--file-force", seed_one, (C, "1", "--file", "{tmp}/other.md", "--force"), "the --file risk"),
    Case("update-1--file-stdin", seed_one, (C, "1", "--file", "-"), "the --file risk", stdin=OTHER),
    Case("update-1--json", seed_one, (C, "1", "--risk", "a dry risk", "--json"), '"updated"'),
    Case("update-branch--json", seed_one, (C, "--done", "Phase 2", "--json"), '"updated"', reaches=(BOARD,)),
    Case("update-1-execution", seed_one,
         (C, "1", "--risk", "a dry risk", "--agent", "codex", "--role", "editor", "--session", "s-9"), "a dry risk",
         reaches=(BOARD,)),
    Case("update-branch-reviewer", seed_one, (C, "--question", "why?", "--agent", "codex", "--role", "reviewer"),
         "why?", reaches=(BOARD,)),
    Case("update-1--allow-secrets", seed_one, (C, "1", "--risk", f"key {SECRET}", "--allow-secrets"), SECRET),
    Case("update-1--project", seed_one, (C, "1", "--done", "Phase 2", "--project", PROJECT), "- [x] Phase 2",
         modes=("project",), reaches=(BOARD,)),
    # over a person's save of the body: a write would merge it (one more entry on the chain)
    # (its edit history read, to tell the saves apart: issue 44)
    Case("edited-1", seed_edited, (C, "1", "--risk", "a dry risk"), "is slow on", changed_by=HISTORY),
    Case("edited-branch", seed_edited, (C, "--done", "Phase 2"), "is slow on", reaches=(BOARD,), changed_by=HISTORY),
    # a write by number from another branch: --move would make it that branch's
    Case("elsewhere-1", seed_elsewhere, (C, "1", "--risk", "a dry risk"), "a dry risk"),
    Case("elsewhere-1--move", seed_elsewhere, (C, "1", "--risk", "a dry risk", "--move"), "a dry risk"),
    Case("elsewhere-new-branch", seed_elsewhere, (C, "--goal", "Other work", "--resume", "Begin"), "Other work",
         reaches=(BOARD,)),
    # --adopt: a checkpoint label given back, an issue made a checkpoint
    Case("adopt-label", seed_unlabelled, (C, "1", "--risk", "a dry risk", "--adopt"), "a dry risk", modes=GITHUB),
    Case("adopt-issue", seed_unlabelled, (C, "11", "--goal", "Fix the crash", "--adopt"), "Fix the crash",
         modes=GITHUB, reaches=(BOARD,)),
    # a checkpoint made by hand: no marker, no chain (a write would start its chain)
    Case("form-1", seed_form, (C, "1", "--done", "Phase 1"), "- [x] Phase 1", reaches=(BOARD,)),
    # a holder's write to its child renews its lease when due
    Case("lease", seed_claimed, (C, "2", "--risk", "a dry risk", "--agent", "a1"), "a dry risk",
         changed_by=frozenset({"lists_custom_refs"}), reaches=(CLAIM, BOARD)),
    # close --stale and push
    Case("close-stale", seed_stale, ("close", "--stale"), "Would close"),
    Case("close-stale-days", seed_stale, ("close", "--stale", "--days", "30", "--json"), '"stale"'),
    Case("push", seed_pending, ("push",), "Would publish", modes=GITHUB, reaches=(BOARD,)),
    Case("push-json", seed_pending, ("push", "--json"), '"would publish"', modes=GITHUB, reaches=(BOARD,)),
    # the MCP server's checkpoint tool, dry_run: true
    Case("mcp-create", seed_none, (), "matcher abstraction", tool={"body": SAMPLE, "title": "CLI refactor"},
         reaches=(BOARD,)),
    Case("mcp-new", seed_one, (), "the --file risk", tool={"body": OTHER, "new": True}, reaches=(BOARD,)),
    Case("mcp-update-1", seed_one, (), "a dry risk", tool={"issue": 1, "risk": ["a dry risk"], "done": ["Phase 2"]},
         reaches=(BOARD,)),
    Case("mcp-update-branch", seed_one, (), "keep the v1 API",
         tool={"decision": ["keep the v1 API"], "resume": "Start at Phase 3", "question": ["q?"], "files": ["a.ts"],
               "goal": "A new goal", "phase": ["Phase 4: docs"], "undo": ["Phase 1"], "title": "Renamed"},
         reaches=(BOARD,)),
    Case("mcp-edited", seed_edited, (), "is slow on", tool={"issue": 1, "question": ["which matcher?"]},
         reaches=(BOARD,), changed_by=HISTORY),
    Case("mcp-lease", seed_claimed, (), "a dry risk", tool={"issue": 2, "risk": ["a dry risk"]}, agent="a1",
         changed_by=frozenset({"lists_custom_refs"}), reaches=(CLAIM, BOARD)),
)

# Cases whose dry run was found to write: (case id, mode) -> what it writes, each an expected failure (strict: it
# fails once the dry run writes nothing, and then leaves this table). Empty since the writer takes no lock for a
# dry run (the local store's created .ghstate/, .gitignore and .lock; the machine's write turn a file in the cache).
WRITES: dict[tuple[str, str], str] = {}


def _params():
    from github_fake_tasks import VARIANTS
    from variants import knob

    for case in CASES:
        for mode in case.modes:
            turned = [v for v in VARIANTS if knob(v) in case.changed_by] if mode != "local" else []
            for variant in (None, *turned):
                found = WRITES.get((case.id, mode))
                marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=found)] if found else []
                marks += [pytest.mark.thorough] if variant is not None else []  # (the default in every tier)
                name = f"{case.id}-{mode}" + (f"-{variant.name}" if variant else "")
                yield pytest.param(case, (mode, variant), id=name, marks=marks)


def act(case: Case, world: World, tmp_path: Path, run, *, dry: bool) -> str:
    """Run the case's command (or MCP tool call), dry or not; what it printed (stdout, then stderr)."""
    if case.tool is None:
        args = tuple(a.replace("{tmp}", str(tmp_path)) for a in case.args)
        result = run(*args, *(["--dry-run"] if dry else []), input=case.stdin)
        if dry and "--json" in args:
            json.loads(result.stdout)  # the state or rows that would be written, as JSON
        return result.stdout + result.stderr
    from ghstate.agents import mcp_tools
    from ghstate.services.app import build_app

    answer = mcp_tools.call("checkpoint", {**case.tool, **({"dry_run": True} if dry else {})},
                            lambda: build_app(agent=case.agent))
    assert not answer.error, answer.text
    return answer.text


@pytest.mark.parametrize(("case", "world"), list(_params()), indirect=["world"])
def test_a_dry_run_writes_nothing_anywhere(case: Case, world: World, run, tmp_path, clock):
    case.seed(world, run, tmp_path, clock)
    before, start = world.snapshot(), world.mark()
    if world.fake is not None:
        world.fake.reached = set()  # the knobs the dry run alone reaches
    said = act(case, world, tmp_path, run, dry=True)
    assert world.writes(start) == [], "the dry run sent writes"
    assert case.said in said, said
    if world.fake is not None and world.variant is None:
        missed = sorted(world.fake.reached - case.changed_by)
        assert not missed, f"the dry run reaches {missed}: add it to the case's changed_by (tests/variants.py)"
    after = world.snapshot()
    assert changes(before, after) == [], "the dry run changed what a write changes"
    # the control: the same command, not dry, does write (the case reaches what its dry run must not do)
    start = world.mark()
    act(case, world, tmp_path, run, dry=False)
    wrote = changes(after, world.snapshot())
    assert world.writes(start) or wrote, "the command wrote nothing: the case tests nothing"
    for wanted in case.reaches:
        if wanted != BOARD or world.mode == "project":
            assert any(wanted in line for line in wrote), f"the command did not write {wanted!r}: {wrote}"
