"""OLD against NEW: does ``GitHubStore.append`` and ``GitHubStore.mirror`` behave the same over the same faults?

Run by hand (pytest does not collect it)::

    .venv/bin/python tests/compare_write_path.py --base REV [--new PATH]
    .venv/bin/python tests/compare_write_path.py --base HEAD            # the same code on both sides: all identical
    .venv/bin/python tests/compare_write_path.py --list                 # the scenarios' names
    .venv/bin/python tests/compare_write_path.py --only append/current/lost-after --keep
    .venv/bin/python tests/compare_write_path.py --effect             # what the writer acts on (see _effect)

``--base`` (default 584ee4b, the commit before the write path's refactor) is exported with ``git archive`` into
a scratch folder; ``--new`` (default: the checkout this script is in) is copied as mutants.py copies it (the files
git lists, uncommitted changes included). In each copy the same scenario driver (this file, ``--drive``) runs in a
subprocess with that copy first on sys.path (PYTHONPATH=copy, PYTHONHASHSEED=0), so each side imports its own
ghstate. The fake GitHub (tests/github_fake.py, github_fake_tasks.py, github_schema.py, bodies.py, conftest.py and
tests/fixtures/) is each side's own when those files are the same in both copies; when they differ, the NEW side's
fake is used for both (said before the run), so that only ghstate differs.

Each scenario is a fresh fake GitHub holding checkpoint #7 in some state of its chain (a current mirror, a stale
one, no chain yet with the tree there or not, a body written alone, a person's edit on top), read with
``store.get(7)``, then a fault injected with the fake's own mechanisms (``fail``, ``fail_op`` with ``type`` and
``field``, ``after=True`` for a lost answer, ``on``/``on_op`` for a person's save or another writer's move in
between, ``tasks.deny_refs``, ``history_lag``), then ``store.append(stored, link, title=, labels=)`` or
``store.mirror(stored, body, title=, labels=)``. The transport's waits are recorded, not slept, and move the
fake's clock (as tests/test_github_store.py's ``gh`` does). The driver prints one JSON line per scenario: every
request (method and path; REST bodies; GraphQL operation names and variables), the read, the result (the
NamedTuple's fields, whatever the class is called) or the exception (type, message, status, retryable,
overwritten), ``store.notices``, ``store.unprotected``, the waits, the issue and ref afterwards, and what GitHub's
API description says is wrong with the requests. Nothing is normalised: Git object ids are content hashes over
the fake's clock, which starts at the same instant in every scenario.

The script compares the two sides scenario by scenario and prints each difference in full (a unified diff of
the two records), then: N scenarios, identical K. Exit status 1 on any difference (or a scenario on one side
only), 0 when all are identical.
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
DEFAULT_BASE = "584ee4b"
FAKE_FILES = ("github_fake.py", "github_fake_tasks.py", "github_fake_projects.py", "github_schema.py",
              "github_http.py", "bodies.py", "conftest.py", "fixtures")
NUMBER = 7
REF = f"refs/ghstate/checkpoints/{NUMBER}"
TITLE = "CLI refactor"
AT = "2026-11-22T08:30:00Z"


# ====================================================================================== the driver (one side)
# Runs in the copy's interpreter: ghstate is that copy's, the fake is from ``--fake-dir``.


class Ctx:
    """What a scenario's setup made: the commits, the bodies, and what the write sends."""

    def __init__(self) -> None:
        self.commits: dict[str, str] = {}  # name -> oid
        self.bodies: dict[str, str] = {}


def _drive(fake_dir: str, only: list[str]) -> int:
    sys.path.insert(1, fake_dir)  # after the copy (PYTHONPATH): the copy's ghstate, the chosen fake
    import ghstate

    root = os.environ["PYTHONPATH"].split(os.pathsep)[0]
    if not Path(ghstate.__file__).resolve().is_relative_to(Path(root).resolve()):
        raise SystemExit(f"the driver imports ghstate from {ghstate.__file__}, not from {root}")
    scenarios = _scenarios()
    for name, run in scenarios:
        if only and name not in only:
            continue
        print(json.dumps({"scenario": name, **run()}, sort_keys=True, ensure_ascii=False), flush=True)
    return 0


def _plain(value: Any) -> Any:
    """A value as JSON: a NamedTuple as the dict of its fields (its class's name left out: Appended and
    WriteOutcome, Saved and BodyVersion are the same answers), tuples as lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    return value


def _raised(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"raised": type(exc).__name__, "message": str(exc)}
    for attr in ("status", "retryable"):
        if hasattr(exc, attr):
            out[attr] = getattr(exc, attr)
    if getattr(exc, "overwritten", None):  # Unprotected's (newer code); absent and empty are the same
        out["overwritten"] = _plain(exc.overwritten)
    return out


def _requests(fake: Any) -> list[Any]:
    import re
    from urllib.parse import urlsplit

    out: list[Any] = []
    for method, url, body in fake.calls:
        parts = urlsplit(url)
        if re.fullmatch(fake.graphql_url, url):
            query = (body or {}).get("query") or ""
            named = re.search(r"^\s*(?:query|mutation)\s+(\w+)", query, re.MULTILINE)
            out.append([method, parts.path, named.group(1) if named else query[:80], (body or {}).get("variables")])
        else:
            out.append([method, parts.path + (f"?{parts.query}" if parts.query else ""), body])
    return out


def _scenario(chain: str, method: str, fault: str, change: str) -> Any:
    """One scenario's run, as a function: a fresh fake, the state, the read, the fault, the call, the record."""
    def run() -> dict[str, Any]:
        import inspect

        import responses
        from github_fake import FakeGitHub

        from ghstate.config import Policy
        from ghstate.core.chain import TREE_FILES
        from ghstate.github import transport
        from ghstate.github.store import GitHubStore
        from ghstate.github.transport import GitHubAPI

        record: dict[str, Any] = {}
        waits: list[float] = []
        with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
            fake = FakeGitHub(mock)

            def wait(seconds: float) -> None:  # recorded, not slept; GitHub's clock moves on (as the tests do)
                waits.append(seconds)
                fake.advance(seconds)

            transport._sleep = wait
            transport._now = fake.timestamp
            fake.labels.add("ghstate:ci-failing")  # a label the read brings the id of (its name holds "ghstate")
            if chain != "first":
                fake.tasks.add_tree(TREE_FILES)  # the repository's first chain commit wrote it
            ctx = Ctx()
            CHAINS[chain](fake, ctx)
            FAULTS[fault].before(fake, ctx)
            token = "ghp_" + "T0k3n" * 8
            if "client" in inspect.signature(GitHubAPI).parameters:  # an older side: PyGithub's client given
                from github import Auth, Github

                token = Github(auth=Auth.Token(token), retry=None, lazy=True, per_page=100,
                               seconds_between_requests=None, seconds_between_writes=None)
            store = GitHubStore(GitHubAPI(token, "octo/hello"), Policy())
            try:
                stored = store.get(NUMBER)
                record["read"] = _plain(stored)
            except Exception as exc:  # noqa: BLE001 - what the read did is part of the record
                record["read"] = _raised(exc)
                stored = None
            if stored is not None:
                FAULTS[fault].after(fake, ctx)
                title, labels = CHANGES[change]
                try:
                    if method == "append":
                        result = store.append(stored, _link(ctx, stored), title=title, labels=labels)
                    else:
                        result = store.mirror(stored, _mirror_body(chain, ctx, stored), title=title, labels=labels)
                    record["result"] = _plain(result)
                except Exception as exc:  # noqa: BLE001 - the exception is the answer to compare
                    record["result"] = _raised(exc)
            record["requests"] = _requests(fake)
            record["notices"] = list(store.notices)
            record["unprotected"] = store.unprotected
            record["waits"] = waits
            issue = fake.issues[NUMBER]
            record["after"] = {"body": issue["body"], "title": issue["title"],
                               "labels": [x["name"] for x in issue["labels"]], "ref": fake.tasks.refs.get(REF),
                               "versions": len(fake.history[NUMBER])}
            record["problems"] = fake.problems()
        return record
    return run


# ------------------------------------------------------------------------------ bodies, commits, links


def _body(revision: int, *, decision: str = "", risk: str = "") -> str:
    from bodies import render_body
    from conftest import SAMPLE

    from ghstate.core.model import with_digests
    from ghstate.core.parse import parse

    text = SAMPLE
    if decision:
        text = text.replace("## Open questions\n", f"- {decision}\n\n## Open questions\n", 1)
    if risk:
        text = text.replace("## Files to re-read\n", f"- {risk}\n\n## Files to re-read\n", 1)
    cp = parse(text).checkpoint.with_meta(revision=revision, branch="feature/x", id="abc123abc123",
                                          updated_at="2026-11-20T10:00:00Z")
    return render_body(with_digests(cp))  # as a write renders it: its sections' digests in its marker


def _entry(revision: int, write: str, change: str) -> Any:
    from ghstate.core.chain import Entry
    from ghstate.core.model import Revision

    return Entry(Revision(revision, at=AT, agent="driver", changes=(change,)), write=write)


def _commit(fake: Any, link: Any, parents: list[str]) -> str:
    """A chain commit in the fake's repository, made as the fake makes one (``FakeTasks.index``, and its REST
    ``POST git/commits``: the Git id of message, tree, parents and the fake's clock)."""
    from github_fake_tasks import _git_sha

    from ghstate.core.chain import TREE_FILES

    tree = fake.tasks.add_tree(TREE_FILES)
    message, when = link.to_message(), fake.now()
    sha = _git_sha("commit", json.dumps([message, tree, parents, when]))
    fake.tasks.objects[sha] = {"type": "commit", "message": message, "tree": tree, "parents": list(parents),
                               "at": when}
    return sha


def _chained(fake: Any, ctx: Ctx, *, stale: bool = False) -> None:
    from ghstate.core.chain import Link

    b1 = ctx.bodies["b1"] = _body(1)
    c1 = ctx.commits["c1"] = _commit(fake, Link(NUMBER, b1, (_entry(1, "w1w1w1w1w1w1", "created"),), TITLE), [])
    fake.tasks.refs[REF] = c1
    if stale:  # a second write whose mirror never landed
        b2 = ctx.bodies["b2"] = _body(2, risk="second, its mirror lost")
        ctx.commits["c2"] = _commit(fake, Link(NUMBER, b2, (_entry(2, "w2w2w2w2w2w2", "+1 risk"),), TITLE, root=c1),
                                    [c1])
        fake.tasks.refs[REF] = ctx.commits["c2"]


def _chain_current(fake: Any, ctx: Ctx) -> None:
    from ghstate.core.chain import embed

    _chained(fake, ctx)
    fake.add_issue(NUMBER, _body(1), title=TITLE)
    fake.edit(NUMBER, embed(ctx.bodies["b1"], ctx.commits["c1"]), login="octocat")  # the first write's mirror


def _chain_stale(fake: Any, ctx: Ctx) -> None:
    from ghstate.core.chain import embed

    _chained(fake, ctx, stale=True)
    fake.add_issue(NUMBER, _body(1), title=TITLE)
    fake.edit(NUMBER, embed(ctx.bodies["b1"], ctx.commits["c1"]), login="octocat")


def _chain_none(fake: Any, ctx: Ctx) -> None:
    """A checkpoint an earlier ghstate wrote, no chain yet (its first write starts it)."""
    fake.add_issue(NUMBER, _body(1), title=TITLE)


def _chain_alone(fake: Any, ctx: Ctx) -> None:
    """A body written without the chain (a token without Contents: write) on top of the chain's head."""
    from ghstate.core.chain import embed

    _chain_current(fake, ctx)
    fake.edit(NUMBER, embed(_body(2, risk="written alone"), ctx.commits["c1"], protected=False), login="octocat")


def _chain_edited(fake: Any, ctx: Ctx) -> None:
    """A person's save on top of the current mirror (a question added)."""
    _chain_current(fake, ctx)
    _person(fake, "- asked by mona before the read")


CHAINS = {"current": _chain_current, "stale": _chain_stale, "none": _chain_none, "first": _chain_none,
          "alone": _chain_alone, "edited": _chain_edited}


def _person(fake: Any, line: str = "- from mona", login: str = "mona") -> None:
    body = fake.issues[NUMBER]["body"].replace("\r\n", "\n")
    fake.edit(NUMBER, body.replace("## Open questions\n", f"## Open questions\n{line}\n", 1).replace("\n", "\r\n"),
              login=login)  # the web UI sends CRLF


def _other_writer(fake: Any) -> None:
    """Another writer's write lands: its commit on the head, the ref moved, its mirror written."""
    from ghstate.core.chain import Link, embed

    parent = fake.tasks.refs.get(REF)
    body = _body(5, decision="from the other writer")
    oid = _commit(fake, Link(NUMBER, body, (_entry(5, "0the0other0w", "+1 decision"),), TITLE),
                  [parent] if parent else [])
    fake.tasks.refs[REF] = oid
    fake.edit(NUMBER, embed(body, oid), login="octocat")


def _link(ctx: Ctx, stored: Any) -> Any:
    """The commit a writer makes on the read: it records as merged what the writer merged of the read (the
    body the chain starts from, or a person's edit of the body), as ``services.writer`` records it."""
    from ghstate.core.chain import Link, classify, merged_after

    head = stored.head.link if stored.head is not None else None
    mirror = classify(stored.body, stored.head)
    merged = merged_after(head, "" if head else mirror.digest, mirror.digest if mirror.kind == "edited" else "")
    revision = (head.revision if head is not None else 1) + 1
    return Link(NUMBER, _body(revision, decision="from the driver"),
                (_entry(revision, "d1d2d3d4d5d6", "+1 decision"),), TITLE, merged,
                root=ctx.commits.get("c1", ""))


def _mirror_body(chain: str, ctx: Ctx, stored: Any) -> str:
    """What ``mirror`` writes: the head's mirror (a repair) where there is a head, else a body written alone."""
    from ghstate.core.chain import embed

    if stored.head is not None and stored.head.link is not None and chain == "stale":
        return embed(stored.head.link.body, stored.head.oid)  # the stale mirror repaired
    if stored.head is not None:  # a write where the chain cannot be written: on the head, without its digest
        return embed(_body(3, decision="written alone"), stored.head.oid, protected=False)
    return _body(2, decision="written alone")


# ------------------------------------------------------------------------------ faults


class Fault:
    """``before``: done before the read; ``after``: between the read and the write."""

    def __init__(self, after: Any = None, before: Any = None) -> None:
        self._after, self._before = after, before

    def before(self, fake: Any, ctx: Ctx) -> None:
        if self._before:
            self._before(fake)

    def after(self, fake: Any, ctx: Ctx) -> None:
        if self._after:
            self._after(fake)


def _faults() -> dict[str, Fault]:
    from github_fake import NOT_ACCESSIBLE, QUERY_TIMEOUT, SECONDARY_LIMIT

    def both(*fns: Any) -> Any:
        def run(fake: Any) -> None:
            for fn in fns:
                fn(fake)
        return run

    def write_fail(*args: Any, **kwargs: Any) -> Any:  # the write's own request (whichever method: see _OP)
        return lambda fake: fake.fail_op(_OP[0], *args, **kwargs)

    def on_write(action: Any) -> Any:
        return lambda fake: fake.on_op(_OP[0], lambda: action(fake))

    lost = write_fail(None, after=True)
    person = on_write(lambda fake: _person(fake))
    race = lambda fake: fake.on("POST", r"^/git/commits$", lambda: _other_writer(fake))  # noqa: E731
    look_fails = on_write(lambda fake: fake.fail_op("Checkpoint", None, times=99))

    def saved_after_the_write(fake: Any) -> None:
        """A person saves right after the write lands, before GitHub reads its answer (its edit history then
        lists that save above the write's version), as test_write_log.py's AFTER_THE_WRITE does."""
        edits = fake._gql_edits

        def first_a_save(number: int, first: Any, after: Any) -> Any:
            fake._gql_edits = edits
            _person(fake, "- saved right after the write", "lisa")
            return edits(number, first, after)

        fake._gql_edits = first_a_save

    def variant(name: str) -> Any:  # one of GitHub's undocumented behaviours (tests/github_fake_tasks.VARIANTS)
        from github_fake_tasks import VARIANTS

        chosen = next(v for v in VARIANTS if v.name == name)
        return lambda fake: fake.tasks.use(chosen)

    return {
        "ok": Fault(),
        "forbidden-mutation": Fault(write_fail(type="FORBIDDEN", message=NOT_ACCESSIBLE)),
        "forbidden-labels": Fault(write_fail(type="FORBIDDEN", message=NOT_ACCESSIBLE, field="labels")),
        "forbidden-head-read": Fault(before=lambda fake: fake.fail_op("Checkpoint", type="FORBIDDEN",
                                                                      message=NOT_ACCESSIBLE, field="head")),
        "forbidden-updateRefs": Fault(write_fail(type="FORBIDDEN", message=NOT_ACCESSIBLE, field="updateRefs")),
        "forbidden-updateIssue": Fault(write_fail(type="FORBIDDEN", message=NOT_ACCESSIBLE, field="updateIssue")),
        "deny-refs": Fault(lambda fake: setattr(fake.tasks, "deny_refs", True)),
        "not-found-mutation": Fault(write_fail(type="NOT_FOUND", message="Could not resolve to a node with the "
                                               "global id of 'I_kwDOABCD'.")),
        "not-found-updateIssue": Fault(write_fail(type="NOT_FOUND", field="updateIssue",
                                                  message="Could not resolve to a node with the global id of 'x'.")),
        "unprocessable-updateIssue": Fault(write_fail(type="UNPROCESSABLE", message="Something went wrong",
                                                      field="updateIssue")),
        "unprocessable-updateRefs": Fault(write_fail(type="UNPROCESSABLE", message="Something went wrong",
                                                     field="updateRefs")),
        "no-updateRefs": Fault(write_fail(200, message="Field 'updateRefs' doesn't exist on type 'Mutation'")),
        "502-then-ok": Fault(write_fail(502)),
        "504-applied": Fault(write_fail(504, after=True)),
        "timeout-then-ok": Fault(write_fail(200, message=QUERY_TIMEOUT)),
        "timeout-applied": Fault(write_fail(200, message=QUERY_TIMEOUT, after=True)),
        "secondary-limit": Fault(write_fail(403, headers={"Retry-After": "7"}, message=SECONDARY_LIMIT)),
        "rate-limited": Fault(write_fail(type="RATE_LIMITED", times=9)),
        "commit-500-then-ok": Fault(lambda fake: fake.fail("POST", r"^/git/commits$", 500)),
        "commit-lost-after": Fault(lambda fake: fake.fail("POST", r"^/git/commits$", None, after=True)),
        "lost-after": Fault(lost),
        "lost-before": Fault(write_fail(None)),
        "lost-after-look-fails": Fault(both(lost, look_fails)),
        "lost-after-look-head-forbidden": Fault(both(lost, on_write(lambda fake: fake.fail_op(
            "Checkpoint", type="FORBIDDEN", message=NOT_ACCESSIBLE, field="head", times=9)))),
        "person-between": Fault(person),
        "person-before-commit": Fault(lambda fake: fake.on("POST", r"^/git/commits$", lambda: _person(fake))),
        "person-before-lost": Fault(both(person, lost)),
        "person-before-lost-history-fails": Fault(both(person, lost, lambda fake: fake.fail_op(
            "BodyEdits", 502, times=99))),
        "person-before-lagging-answer": Fault(on_write(lambda fake: (_person(fake),
                                                                     setattr(fake, "history_lag", 1)))),
        "person-then-history-fails": Fault(both(on_write(lambda fake: (_person(fake), setattr(fake, "history_lag", 1))),
                                                lambda fake: fake.fail_op("BodyEdits", 502, times=99))),
        "person-after-write": Fault(on_write(saved_after_the_write)),
        "person-before-and-after-write": Fault(on_write(lambda fake: (_person(fake), saved_after_the_write(fake)))),
        "person-between-coalesced": Fault(both(person, lambda fake: setattr(fake, "coalesce_seconds", 3600))),
        "lost-race": Fault(race),
        "lost-race-person": Fault(both(race, person)),
        "lost-race-typed-ref-errors": Fault(both(race, variant("typed-ref-errors"))),
        "lost-race-stops-after-error": Fault(both(race, variant("stops-after-error"))),
        "forbidden-updateRefs-stops-after-error": Fault(both(variant("stops-after-error"), write_fail(
            type="FORBIDDEN", message=NOT_ACCESSIBLE, field="updateRefs"))),
        "lost-race-lost-answer": Fault(both(race, lost)),
        "lost-race-head-forbidden": Fault(both(race, lambda fake: fake.fail_op(
            "Checkpoint", type="FORBIDDEN", message=NOT_ACCESSIBLE, field="head", times=9))),
        "race-before-look": Fault(both(lost, on_write(lambda fake: fake.on_op("Checkpoint",
                                                                              lambda: _other_writer(fake))))),
        "other-writer-between": Fault(on_write(lambda fake: _other_writer(fake))),
        "labels-rest-refused": Fault(lambda fake: fake.fail("PATCH", rf"^/issues/{NUMBER}$", 403,
                                                            message=NOT_ACCESSIBLE)),
    }


_OP = ["AppendCheckpoint"]  # the operation ``write_fail`` and ``on_write`` aim at (set per scenario)

CHANGES: dict[str, tuple[str | None, tuple[str, ...] | None]] = {
    "same": (None, None),
    "same-labels": (None, ("ghstate",)),
    "title": ("CLI refactor, renamed", None),
    "labels-known": (None, ("ghstate", "ghstate:ci-failing")),  # ids read with the checkpoint: updateIssue sets them
    "labels-unknown": (None, ("ghstate", "brand-new")),  # not read (no id): set by REST afterwards
    "title-labels": ("CLI refactor, renamed", ("ghstate", "ghstate:ci-failing", "brand-new")),
}
FAULTS: dict[str, Fault] = {}

# Append: every fault over every chain state; mirror: the faults that reach updateIssue
APPEND_CHAINS = ("current", "stale", "none", "first", "alone", "edited")
APPEND_FAULTS = ("ok", "forbidden-mutation", "forbidden-labels", "forbidden-head-read", "forbidden-updateRefs",
                 "forbidden-updateIssue", "deny-refs", "not-found-mutation", "not-found-updateIssue",
                 "unprocessable-updateIssue", "unprocessable-updateRefs", "no-updateRefs", "502-then-ok", "504-applied",
                 "timeout-then-ok", "timeout-applied", "secondary-limit", "rate-limited", "commit-500-then-ok",
                 "commit-lost-after", "lost-after", "lost-before", "lost-after-look-fails",
                 "lost-after-look-head-forbidden", "person-between", "person-before-commit", "person-before-lost",
                 "person-before-lost-history-fails", "person-before-lagging-answer", "person-then-history-fails",
                 "person-after-write", "person-before-and-after-write", "person-between-coalesced", "lost-race",
                 "lost-race-person", "lost-race-typed-ref-errors", "lost-race-stops-after-error",
                 "forbidden-updateRefs-stops-after-error", "lost-race-lost-answer", "lost-race-head-forbidden",
                 "race-before-look")
APPEND_CHANGED = ("ok", "forbidden-labels", "forbidden-mutation", "forbidden-updateRefs", "lost-after",
                  "person-between", "lost-race", "labels-rest-refused")
MIRROR_CHAINS = ("stale", "current", "none", "edited")
MIRROR_FAULTS = ("ok", "forbidden-mutation", "forbidden-labels", "forbidden-head-read", "not-found-mutation",
                 "unprocessable-updateIssue", "502-then-ok", "504-applied", "timeout-then-ok", "timeout-applied",
                 "secondary-limit", "rate-limited", "lost-after", "lost-before", "lost-after-look-fails",
                 "person-between", "person-before-lost", "person-before-lost-history-fails",
                 "person-before-lagging-answer", "person-then-history-fails", "person-after-write",
                 "person-before-and-after-write", "person-between-coalesced", "other-writer-between",
                 "race-before-look")
MIRROR_CHANGED = ("ok", "forbidden-labels", "lost-after", "person-between", "labels-rest-refused")


def _scenarios() -> list[tuple[str, Any]]:
    FAULTS.update(_faults())
    out: list[tuple[str, Any]] = []

    def add(method: str, chain: str, fault: str, change: str = "same") -> None:
        name = f"{method}/{chain}/{fault}" + (f"/{change}" if change != "same" else "")
        scenario = _scenario(chain, method, fault, change)

        def run() -> dict[str, Any]:
            _OP[0] = "AppendCheckpoint" if method == "append" else "UpdateCheckpoint"
            random.seed(name)  # the transport's backoff jitter: the same waits on both sides, whatever runs before
            return scenario()
        out.append((name, run))

    for method, chains, faults, changed_chains, changed_faults in (
            ("append", APPEND_CHAINS, APPEND_FAULTS, ("current", "none"), APPEND_CHANGED),
            ("mirror", MIRROR_CHAINS, MIRROR_FAULTS, ("stale", "current"), MIRROR_CHANGED)):
        for chain in chains:
            for fault in faults:
                add(method, chain, fault)
        for chain in changed_chains:  # each title and label change, under the faults that can tell them apart
            for fault in changed_faults:
                for change in CHANGES:
                    if change != "same" or fault == "labels-rest-refused":
                        add(method, chain, fault, change)
    return out


# ====================================================================================== the comparison


def _git(*args: str, cwd: Path = CHECKOUT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _export(rev: str, into: Path) -> Path:
    """The revision's files, as ``git archive`` exports them."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=CHECKOUT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _same_fake(a: Path, b: Path) -> list[str]:
    """The fake's files that differ between two copies' tests/ folders."""
    differ = []
    for name in FAKE_FILES:
        x, y = a / "tests" / name, b / "tests" / name
        if x.is_dir() or y.is_dir():
            cmp = filecmp.dircmp(x, y) if x.is_dir() and y.is_dir() else None
            if cmp is None or _dir_differs(cmp):
                differ.append(name + "/")
        elif x.exists() != y.exists() or (x.exists() and not filecmp.cmp(x, y, shallow=False)):
            differ.append(name)
    return differ


def _dir_differs(cmp: filecmp.dircmp) -> bool:
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return True
    if filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)[1]:
        return True
    return any(_dir_differs(sub) for sub in cmp.subdirs.values())


def _start(root: Path, fake_dir: Path, only: list[str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL=os.devnull, HOME=str(root.parent / "home"))
    for name in [n for n in env if n.lower().endswith("_proxy") or n in ("GH_TOKEN", "GITHUB_TOKEN")]:
        del env[name]
    (root.parent / "home").mkdir(exist_ok=True)
    args = [sys.executable, str(Path(__file__).resolve()), "--drive", "--fake-dir", str(fake_dir)]
    for name in only:
        args += ["--only", name]
    return subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(proc: subprocess.Popen, side: str) -> dict[str, dict[str, Any]]:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the {side} side's driver failed (exit {proc.returncode}):\n{err[-4000:]}")
    records = {}
    for line in out.splitlines():
        record = json.loads(line)
        records[record.pop("scenario")] = record
    return records


def _effect(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A record as the writer acts on it (``--effect``): of the saves a write reports it replaced, those it merges
    (people's, and bodies written alone beside the chain: ``saves.is_save``; a mirror ghstate wrote is never
    merged, every reader reads it as the chain's, ``chain.classify``); no
    waits (they take time, not requests); and the checkpoint a write answers without who last edited it and
    when (issue 39 had the write's answer name them; before, it named no one)."""
    from ghstate.core.chain import as_written

    try:  # a version the writer merges: a person's save, or a body written alone beside the chain
        from ghstate.core.saves import is_save
    except ImportError:  # pragma: no cover - a checkout from before the rule
        def is_save(text: str) -> bool:
            return not as_written(text)

    if record is None:
        return None
    record = {k: v for k, v in record.items() if k != "waits"}
    result = dict(record.get("result") or {})
    if isinstance(result.get("stored"), dict):  # a write's answer names who last edited the body, and when (since
        result["stored"] = {k: v for k, v in result["stored"].items() if k not in ("editor", "edited_at")}  # bug 2)
    if result.get("overwritten"):
        result["overwritten"] = [v for v in result["overwritten"] if is_save(v["body"])]
    record["result"] = result
    return record


def _difference(name: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    if old is None or new is None:
        return f"--- {name}: only on the {'new' if old is None else 'old'} side"
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    lines = [f"--- {name}: differs in {', '.join(keys)}"]
    for key in keys:
        a = json.dumps(old.get(key), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        b = json.dumps(new.get(key), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        lines += [f"  [{key}]", *("    " + x for x in difflib.unified_diff(a, b, "old", "new", lineterm="", n=4))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help=f"the OLD side: a git revision (default {DEFAULT_BASE})")
    parser.add_argument("--new", default=str(CHECKOUT), help="the NEW side: a checkout, uncommitted changes "
                        "included (default: the one this script is in)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="this scenario only (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and stop")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies (their path is printed)")
    parser.add_argument("--effect", action="store_true", help="compare what the writer acts on: people's saves "
                        "among those reported replaced (bodies ghstate wrote left out), without the waits")
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)  # the driver, in a copy
    parser.add_argument("--fake-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        return _drive(args.fake_dir, args.only)
    if args.list:
        sys.path[:0] = [str(CHECKOUT), str(CHECKOUT / "tests")]
        for name, _ in _scenarios():
            print(name)
        return 0
    from mutants import copy_checkout, scratch_folder  # beside this script, as the copies are made there too

    started = time.monotonic()
    with scratch_folder("ghstate-compare-", args.keep) as folder:
        new_checkout = Path(args.new).resolve()
        old = _export(args.base, folder / "old" / "ghstate")
        new = copy_checkout(new_checkout, folder / "new" / "ghstate")
        differ = _same_fake(old, new)
        if differ:
            print(f"the fake GitHub differs between the sides ({', '.join(differ)}): the NEW side's fake is used "
                  "for both")
            fakes = (new / "tests", new / "tests")
        else:
            print("the fake GitHub is the same on both sides: each side uses its own")
            fakes = (old / "tests", new / "tests")
        print(f"OLD: {args.base} ({_git('rev-parse', '--short', args.base)}) in {old}\nNEW: {new_checkout} "
              f"(working tree) in {new}", flush=True)
        procs = (_start(old, fakes[0], args.only), _start(new, fakes[1], args.only))  # both sides at once
        olds, news = _collect(procs[0], "old"), _collect(procs[1], "new")
        if args.effect:
            sys.path.insert(0, str(new_checkout))
            olds, news = ({k: _effect(v) for k, v in side.items()} for side in (olds, news))
        names = list(dict.fromkeys([*olds, *news]))
        differences = [_difference(n, olds.get(n), news.get(n)) for n in names if olds.get(n) != news.get(n)]
        for text in differences:
            print(text)
        if args.only and not names:
            print(f"no scenario named {args.only}")
            return 1
        print(f"\n{len(names)} scenarios, identical {len(names) - len(differences)}, different {len(differences)} "
              f"({time.monotonic() - started:.1f}s)")
        return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
