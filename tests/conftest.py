"""Test isolation: no network, no real GitHub settings, no `gh`, a throwaway git repository."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import responses
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from strategies import examples

from ghstate.cli import cli

CLEAN_ENV = ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "GHSTATE_DIR", "GHSTATE_STORE",
             "GHSTATE_AGENT", "GHSTATE_ROLE", "GHSTATE_SESSION", "GHSTATE_DEBUG", "GITHUB_ACTIONS",
             "GITHUB_EVENT_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_SHA", "GITHUB_REF_NAME",
             "GITHUB_HEAD_REF", "GITHUB_RUN_ID", "GITHUB_SERVER_URL", "GHSTATE_PROJECT", "GHSTATE_PROJECT_TOKEN",
             "GHSTATE_NO_CACHE", "GITHUB_WORKSPACE", "GITHUB_WORKFLOW", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "GH_REPO",
             "GH_HOST", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
             # the session ids agent hosts give what they run (a suite run inside one must not inherit it)
             "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "CODEX_SESSION_ID", "GEMINI_SESSION_ID")


# Hypothesis runs derandomized by default, so that CI and every developer see the same examples; a soak
# draws fresh ones, many more (HYPOTHESIS_PROFILE=soak, GHSTATE_SOAK=N multiplies each test's budget).
# Every counterexample a soak finds becomes an @example of its test before the fix.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True, max_examples=examples(100),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("soak", derandomize=False, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    """Say up front what recorded GitHub requests are checked against, and which tier runs."""
    folder = Path(__file__).resolve().parent / "fixtures" / "github-api"
    from strategies import TIER

    return [f"GitHub API description: {folder} (every recorded REST request is checked)",
            f"tier: {TIER} (GHSTATE_TIER: quick, the README's; thorough, what quick leaves; all; CONTRIBUTING.md)"]


def pytest_collection_modifyitems(config, items):
    """The tiers (CONTRIBUTING.md): ``quick`` (the default, the README's test command) runs every test but those
    marked ``thorough`` (the real agent hosts, GitHub's undocumented variants past the default, the longest process
    races), each Hypothesis test with a share of its examples (``strategies.examples``); ``thorough`` runs what
    quick leaves: the marked tests, and every Hypothesis test with all its examples; ``all`` runs both at once.
    ``.ci/run`` runs quick, then thorough, then the long races (``-m slow``): no test is left out."""
    from strategies import TIER

    if TIER == "all":
        return
    keep, drop = [], []
    for item in items:
        marked = item.get_closest_marker("thorough") is not None
        wanted = not marked if TIER == "quick" else marked or _hypothesis_test(item)
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _hypothesis_test(item) -> bool:
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


CHECKOUT = Path(__file__).resolve().parents[1]


def _checkout_store() -> Path:
    """The checkout's own local store, one per clone (``<git common dir>/ghstate``), where the README's main
    job writes; the checkout's ``.ghstate/`` when it is no git worktree."""
    from ghstate.git import gitinfo

    common = gitinfo.common_dir(CHECKOUT) if (CHECKOUT / ".git").exists() else None
    return common / "ghstate" if common is not None else CHECKOUT / ".ghstate"


CHECKOUT_STORE = _checkout_store()


def _files(folder: Path) -> tuple | None:
    if not folder.exists():
        return None
    return tuple(sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns, p.stat().st_size)
                        for p in folder.rglob("*") if p.is_file()))


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory):
    """Every test starts in an empty folder of its own with a HOME of its own, whatever it does with
    ``monkeypatch`` (this patch is apart from the test's: ``monkeypatch.undo()`` in a test cannot bring
    it back to the checkout). And no test may touch the checkout's own ``.ghstate/`` or its local store
    (``<git common dir>/ghstate``), which the README's main job writes in the very clone the tests then run in
    (``.ci/run`` does just that)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    patch.chdir(tmp_path_factory.mktemp("cwd"))
    before = _files(CHECKOUT / ".ghstate"), _files(CHECKOUT_STORE)
    try:
        yield
    finally:
        patch.undo()
    after = _files(CHECKOUT / ".ghstate"), _files(CHECKOUT_STORE)
    assert after[0] == before[0], "a test wrote to the checkout's own .ghstate/"
    assert after[1] == before[1], f"a test wrote to the checkout's own local store ({CHECKOUT_STORE})"


WAITS: list[float] = []  # what ghstate waited, in the running test (see ``isolated``)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path_factory, hermetic):
    """No test reaches the network (responses answers or refuses every request; no proxy variable is
    inherited), reads a real token, asks a real `gh`, reads a git configuration of the machine (every
    git a test or ghstate under test starts inherits this environment), or shares a cache folder."""
    for name in CLEAN_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)
    # ghstate's own waits (a contended write's backoff, the pacing of this machine's writes to GitHub) are
    # recorded, not slept: tests say what they wait for (tests/test_write_log.py)
    monkeypatch.setattr("ghstate.services.writer._sleep", WAITS.append)
    monkeypatch.setattr("ghstate.local.pace._sleep", WAITS.append)
    WAITS.clear()
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


class Clock:
    """The wall clock of time windows, standing still unless a test moves it: the seen-file's repeat
    window (``ghstate.local.seen._now``: a hook fired twice is a repeat however slowly the machine runs
    the test), the pacing of writes to GitHub (``ghstate.local.pace._now``: two writes are in one instant,
    the second waits its whole turn, recorded) and the leases of claimed tasks (``App.clock``: a claim
    made in a test is live to its end)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def utc(self) -> datetime:
        return datetime.fromtimestamp(self.now, timezone.utc)

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch) -> Clock:
    stopped = Clock(float(int(time.time())))  # the test's start: times near the writers' own
    monkeypatch.setattr("ghstate.local.seen._now", stopped)
    monkeypatch.setattr("ghstate.local.pace._now", stopped)
    monkeypatch.setattr("ghstate.services.app.utc_now", stopped.utc)
    return stopped


# ghstate run as a process with the seen-file's clock stopped, as the ``clock`` fixture stops it in process
FROZEN = ("import sys; from ghstate.local import seen; seen._now = lambda: 2e9; sys.argv[0] = 'ghstate'; "
          "from ghstate.cli import main; main()")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def store_of(root: Path) -> Path:
    """The local store of the clone whose worktree ``root`` is: ``<git common dir>/ghstate``, one for every
    worktree of the clone (``Settings.store_dir``)."""
    from ghstate.git import gitinfo

    common = gitinfo.common_dir(root)
    assert common is not None, f"{root} is no git worktree"
    return common / "ghstate"


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory) -> Path:
    """The repository every ``repo`` is a copy of, made once per process with the environment ``isolated``
    gives git (three git processes per test were a tenth of the suite's time)."""
    root = tmp_path_factory.mktemp("repo-template") / "work"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV and not k.lower().endswith("_proxy")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Test",
               GIT_AUTHOR_EMAIL="test@example.com", GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.com",
               HOME=str(tmp_path_factory.mktemp("home")))
    for args in (["init", "-q", "-b", "feature/x"], ["add", "."], ["commit", "-q", "-m", "init"]):
        if args[0] == "add":
            (root / "src").mkdir()
            (root / "src" / "parser.ts").write_text("export const parse = () => 1;\n")
            (root / "README.md").write_text("demo\n")
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    for sample in (root / ".git" / "hooks").glob("*.sample"):  # git's inert examples: nothing reads them
        sample.unlink()
    return root


@pytest.fixture
def repo(tmp_path, monkeypatch, repo_template) -> Path:
    """A git repository on branch feature/x with one commit, as the current folder."""
    root = tmp_path / "work"
    shutil.copytree(repo_template, root, symlinks=True)
    monkeypatch.chdir(root)
    return root


class Run:
    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | bytes | None = None, env: dict | None = None, code: int | None = 0):
        result = self.runner.invoke(cli, list(args), input=input, env=env, catch_exceptions=False)
        if code is not None:
            assert result.exit_code == code, (
                f"exit {result.exit_code} != {code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        return result


@pytest.fixture
def run() -> Run:
    return Run()


SAMPLE = """\
## Goal
Refactor the CLI parser to required options with strict matching.

## Current status
- [x] Phase 1: parser changes
  - [x] add parser opts
  - [x] validate mutually exclusive flags
- [ ] Phase 2: matcher abstraction
- [ ] Phase 3: wire config

## Decisions locked
- required flags, not positional

## Open questions
- should --fuzzy accept a threshold?

## Remaining risks
- fuzzy matcher may be slow on 10k-line inputs

## Files to re-read
- `src/parser.ts`
- `src/parser.test.ts`

## Resume instruction
Start at Phase 2. Re-read parser module and tests before editing matcher code.
"""


@pytest.fixture
def sample_file(tmp_path) -> Path:
    path = tmp_path / "checkpoint.md"
    path.write_text(SAMPLE)
    return path


@pytest.fixture
def trickle_port():
    """A loopback server that accepts, starts an HTTP answer, then sends one byte every 0.2 s forever:
    per-read timeouts never fire against it; only an overall deadline ends a client's wait."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            while not stop.is_set():
                conn.sendall(b"a")
                time.sleep(0.2)
        except OSError:
            pass
        finally:
            conn.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


FAKE_TOKEN = "ghp_" + "T0k3n" * 8  # a token of GitHub's shape, for the fake GitHub only


@pytest.fixture
def gh(isolated, repo, monkeypatch):
    """The fake GitHub (``github_fake``) as ``octo/hello``, reached with ``FAKE_TOKEN``; its waits are not
    waited, and every request it took must be one GitHub's API description allows. Modules that need a
    different GitHub (a clock of its own, projects, task variants) define their own ``gh``."""
    from github_fake import FakeGitHub

    monkeypatch.setenv("GH_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/hello")
    monkeypatch.setattr("ghstate.github.transport._sleep", lambda seconds: None)
    fake = FakeGitHub(isolated)
    monkeypatch.setattr("ghstate.github.probes._sleep", fake.advance)  # doctor's waits pass on GitHub's clock
    monkeypatch.setattr("ghstate.github.probes._clock", fake.timestamp)
    yield fake
    assert fake.problems() == [], "requests that GitHub's API description does not allow"
