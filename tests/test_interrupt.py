"""Ctrl-C: exit 130 and one line that says whether the write landed (and its revision) or was not made;
never "internal error", a traceback or click's "Aborted!". Interrupted at each step of a write, on the
local store and on the fake GitHub, and once with a real SIGINT to a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import FAKE_TOKEN, SAMPLE

from ghstate.core.parse import parse

ROOT = Path(__file__).resolve().parents[1]
TOKEN = FAKE_TOKEN  # the conftest's gh fixture reaches the fake with it


def ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt


def interrupted(result) -> str:
    """The one line a Ctrl-C leaves; nothing else on stderr."""
    assert result.exit_code == 130, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: interrupted"), result.stderr
    assert "Traceback" not in result.output and "Aborted!" not in result.stderr
    assert "internal error" not in result.stderr
    return lines[0]


@pytest.fixture
def local(repo, run):
    (repo / "cp.md").write_text(SAMPLE)
    run("checkpoint", "--store", "local", "--file", "cp.md")
    return repo / ".git" / "ghstate"


def revision(path: Path) -> int:
    return parse(path.read_text()).checkpoint.meta.revision


# --------------------------------------------------------------------------------- the local store


def test_before_the_store_call_nothing_was_written(local, run, monkeypatch):
    monkeypatch.setattr("ghstate.services.draft.Drafter.body", ctrl_c)
    line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
    assert line == "Error: interrupted; nothing was written"
    assert revision(local / "1.md") == 1


@pytest.mark.parametrize("where", ["body", "chain and body"])
def test_during_the_store_call_before_anything_was_kept_the_write_was_not_made(local, run, monkeypatch, where):
    target = "ghstate.local.store.atomic_create" if where == "chain and body" else \
        "ghstate.local.store.atomic_write"
    if where == "body":  # the chain's next generation is the write: made, it landed (every reader reads it)
        monkeypatch.setattr(target, ctrl_c)
        line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
        assert line == "Error: interrupted; the write landed: local #1 is at revision 2"
        assert "r" in json.loads(run("show", "1", "--store", "local", "--json").stdout)["risks"]
        return
    monkeypatch.setattr(target, ctrl_c)
    line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
    assert line == "Error: interrupted; the write to local #1 was not made: nothing was written"
    assert revision(local / "1.md") == 1
    assert "r" not in json.loads(run("show", "1", "--store", "local", "--json").stdout)["risks"]


def test_during_the_store_call_after_it_wrote_the_write_landed(local, run, monkeypatch):
    from ghstate.local.store import LocalStore

    real = LocalStore.append

    def append_then_ctrl_c(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalStore, "append", append_then_ctrl_c)
    line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
    assert line == "Error: interrupted; the write landed: local #1 is at revision 2"
    assert revision(local / "1.md") == 2


def test_after_it_landed_the_line_says_so_with_its_revision(local, run, monkeypatch):
    monkeypatch.setattr("ghstate.services.checkpoint.findings.write_warning", ctrl_c)
    line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
    assert line == "Error: interrupted after the write landed: local #1 is at revision 2"


def test_a_create_interrupted_during_its_store_call(repo, run, monkeypatch):
    from ghstate.local.store import LocalStore

    real = LocalStore.create

    def create_then_ctrl_c(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalStore, "create", create_then_ctrl_c)
    line = interrupted(run("checkpoint", "--store", "local", "--goal", "g", "--phase", "p", code=None))
    assert line == "Error: interrupted; the write landed: local #1 is at revision 1"
    monkeypatch.setattr(LocalStore, "create", ctrl_c)
    line = interrupted(run("checkpoint", "--new", "--store", "local", "--goal", "h", "--phase", "p", code=None))
    assert line == "Error: interrupted; the write to a new checkpoint was not made: nothing was written"


def test_a_failure_that_ctrl_c_caused_is_said_as_the_interruption(local, run, monkeypatch):
    """Ctrl-C reaches git too: the git that died of it fails the command first. Still the one line."""
    import ghstate.cli

    def git_killed(*args, **kwargs):
        ghstate.cli._SIGINT.append(True)
        raise RuntimeError("git died of SIGINT")

    monkeypatch.setattr(ghstate.cli, "_SIGINT", [])
    monkeypatch.setattr("ghstate.services.draft.Drafter.body", git_killed)
    line = interrupted(run("checkpoint", "--store", "local", "--risk", "r", code=None))
    assert line == "Error: interrupted; nothing was written"


def test_a_read_interrupted_wrote_nothing(local, run, monkeypatch):
    monkeypatch.setattr("ghstate.commands.resume.rehydrate", ctrl_c)
    assert interrupted(run("resume", "--store", "local", code=None)) == "Error: interrupted; nothing was written"


# --------------------------------------------------------------------------------- the fake GitHub


@pytest.fixture
def issue(gh, run, repo):
    (repo / "cp.md").write_text(SAMPLE)
    run("checkpoint", "--file", "cp.md")
    return 1


def test_github_before_the_write_nothing_was_written(gh, issue, run, monkeypatch):
    monkeypatch.setattr("ghstate.services.draft.Drafter.body", ctrl_c)
    assert interrupted(run("checkpoint", "--risk", "r", code=None)) == "Error: interrupted; nothing was written"


def test_github_during_the_write_before_github_took_it(gh, issue, run):
    gh.on_op("AppendCheckpoint", ctrl_c)
    line = interrupted(run("checkpoint", "--risk", "r", code=None))
    assert line == "Error: interrupted; the write to #1 was not made: nothing was written"
    assert parse(gh.issues[1]["body"]).checkpoint.meta.revision == 1


def test_github_during_the_write_after_github_took_it(gh, issue, run):
    gh.fail_op("AppendCheckpoint", status=None, after=True, exception=KeyboardInterrupt)
    line = interrupted(run("checkpoint", "--risk", "r", code=None))
    assert line == "Error: interrupted; the write landed: #1 is at revision 2"
    assert parse(gh.issues[1]["body"]).checkpoint.meta.revision == 2


def test_github_after_the_write_landed(gh, issue, run, monkeypatch):
    monkeypatch.setattr("ghstate.services.checkpoint.findings.write_warning", ctrl_c)
    line = interrupted(run("checkpoint", "--risk", "r", code=None))
    assert line == "Error: interrupted after the write landed: #1 is at revision 2"


@pytest.mark.parametrize("after", [False, True])
def test_github_a_create_interrupted_during_its_request(gh, run, after):
    if after:
        gh.fail("POST", r"^/issues$", status=None, after=True, exception=KeyboardInterrupt)
    else:
        gh.on("POST", r"^/issues$", ctrl_c)
    line = interrupted(run("checkpoint", "--goal", "g", "--phase", "p", code=None))
    assert line == ("Error: interrupted; the write landed: #1 is at revision 1" if after else
                    "Error: interrupted; the write to a new checkpoint was not made: nothing was written")


def test_github_unreachable_when_asked_whether_it_landed(gh, issue, run):
    def unreachable_then_ctrl_c():
        gh.fail("*", r".*", status=None, times=50)
        raise KeyboardInterrupt

    gh.on_op("AppendCheckpoint", unreachable_then_ctrl_c)
    line = interrupted(run("checkpoint", "--risk", "r", code=None))
    assert line.startswith("Error: interrupted while writing #1 (revision 2); whether it landed could not be "
                           "checked (")


# --------------------------------------------------------------------------------- a real SIGINT


def waiting_on_lock(pid: int) -> bool:
    """Whether process ``pid`` waits for a file lock (a "->" line of /proc/locks names the waiters)."""
    return any(line.split()[1:2] == ["->"] and f" {pid} " in line
               for line in Path("/proc/locks").read_text().splitlines())


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks")
def test_a_real_sigint_while_the_write_waits_for_the_store(local):
    """A second writer holds the local store's lock; ours waits for it, gets SIGINT, and says that
    nothing was written, exit 130. No clock: the test waits until the kernel shows ours waiting."""
    import fcntl

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))}
    env["PYTHONPATH"] = str(ROOT)
    with open(local / ".lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        proc = subprocess.Popen([sys.executable, "-m", "ghstate", "checkpoint", "--store", "local", "--risk", "r"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a shell's
        try:
            deadline = time.monotonic() + 60
            while not waiting_on_lock(proc.pid):
                assert proc.poll() is None and time.monotonic() < deadline, "never waited for the lock"
                time.sleep(0.01)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert err.splitlines() == ["Error: interrupted; nothing was written"] and out == ""
    assert revision(local / "1.md") == 1


# --------------------------------------------------------------------------------- progress on a terminal


class Terminal:
    def __init__(self) -> None:
        self.written = ""

    def write(self, text: str) -> int:
        self.written += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_the_ticker_says_the_stage_and_gives_way_to_what_else_is_written(monkeypatch):
    from ghstate import progress
    from ghstate.cli import Ticker

    monkeypatch.setattr(progress, "_STAGE", [""])
    terminal = Terminal()
    ticker = Ticker(terminal)
    ticker.show(2.4)
    assert terminal.written == "\r\033[Kghstate: working… 2 s"
    progress.stage("merging and writing the checkpoint")
    ticker.show(3.6)
    assert terminal.written.endswith("\r\033[Kghstate: merging and writing the checkpoint… 4 s")
    ticker.write("Warning: something\n")  # stderr while it runs: the line is erased first
    assert terminal.written.endswith("… 4 s\r\033[KWarning: something\n")
    ticker.erase()
    assert terminal.written.endswith("Warning: something\n")  # nothing more to erase


def test_the_ticker_runs_only_on_a_terminal_and_leaves_stderr_as_it_was(monkeypatch):
    import contextlib

    from ghstate import cli

    class Pipe(Terminal):
        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stderr", Pipe())
    assert isinstance(cli._ticking(["checkpoint"]), contextlib.nullcontext)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert not isinstance(cli._ticking(["checkpoint", "--file", "x.md"]), contextlib.nullcontext)
    assert isinstance(cli._ticking(["mcp", "--agent", "codex"]), contextlib.nullcontext)  # runs until stopped
    with cli.Ticker(terminal, after=3600).running():
        assert isinstance(sys.stderr, cli.Ticker)
        print("Warning: x", file=sys.stderr)
    assert sys.stderr is terminal and terminal.written == "Warning: x\n"  # a fast command shows no ticker


# --------------------------------------------------------------------------------- while starting


def test_a_ctrl_c_while_python_loads_ghstate_is_one_line_and_130(tmp_path):
    """The interrupt arrives while the CLI's modules are still being imported (here: as click is
    imported, made certain by an import hook in ``sitecustomize``): one ``Error:`` line, exit 130, no
    traceback, both for ``python -m ghstate`` and for the installed ``ghstate`` command's entry point."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "ghstate"]
    assert script.value == "ghstate.__main__:run"
    for argv in (["-m", "ghstate", "--version"], ["-c", "from ghstate.__main__ import run; run()", "--version"]):
        proc = subprocess.run([sys.executable, *argv], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)
        assert (proc.returncode, proc.stdout) == (130, ""), proc.stderr
        assert proc.stderr.splitlines() == ["Error: interrupted while starting; nothing was written"]


def test_without_an_interrupt_the_entry_point_runs_the_cli(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", "from ghstate.__main__ import run; run()", "--version"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("ghstate ")


# --------------------------------------------------------------------------------- the task commands

PLAN = """## Goal
Ship the parser.

## Current status
- [ ] Phase 1: parser
- [ ] Phase 2: docs (after Phase 1)

## Resume instruction
Start at Phase 1.
"""


@pytest.fixture
def plan(repo, run, tmp_path) -> Path:
    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--store", "local", "--file", str(tmp_path / "plan.md"), "--title", "Parser")
    return repo / ".git" / "ghstate"


@contextmanager
def after_then_ctrl_c(owner, name):
    """``owner.name`` does its work, then Ctrl-C; as it was after the block."""
    real = getattr(owner, name)

    def wrapped(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(owner, name, wrapped)
        yield


def test_a_split_interrupted_after_its_children_says_to_run_it_again_which_adds_nothing_twice(plan, run):
    from ghstate.local.store import LocalStore

    with pytest.MonkeyPatch.context() as patch:  # the children made, then Ctrl-C as the parent is written
        patch.setattr(LocalStore, "append", ctrl_c)
        line = interrupted(run("split", "1", "--store", "local", code=None))
    assert line == ("Error: interrupted; the write to local #1 was not made; 'ghstate split 1' made local #2, local #3 "
                    "and stopped before it finished: run it again, it makes only the children and links that are "
                    "missing")
    assert sorted(p.name for p in plan.glob("*.md")) == ["1.md", "2.md", "3.md"]  # the children were made
    run("split", "1", "--store", "local")
    assert sorted(p.name for p in plan.glob("*.md")) == ["1.md", "2.md", "3.md"]
    assert [p.name for p in parse((plan / "1.md").read_text()).checkpoint.phases] == [
        "Phase 1: parser (#2)", "Phase 2: docs (after Phase 1) (#3)"]


def test_a_claim_interrupted_after_it_landed_says_how_to_tell(plan, run):
    from ghstate.local.claims import LocalClaims

    run("split", "1", "--store", "local")
    with after_then_ctrl_c(LocalClaims, "swap"):
        line = interrupted(run("claim", "2", "--store", "local", "--agent", "a1", code=None))
    assert line == ("Error: interrupted; whether the claim of local #2 landed could not be told: 'ghstate claim 2' "
                    "again, as a1, renews it if it is yours or names its holder")
    assert run("claim", "2", "--store", "local", "--agent", "a1").stderr.startswith("Renewed local #2 ")


def test_a_release_interrupted_says_how_to_tell(plan, run):
    from ghstate.local.claims import LocalClaims

    run("split", "1", "--store", "local")
    run("claim", "2", "--store", "local", "--agent", "a1")
    with after_then_ctrl_c(LocalClaims, "swap"):
        line = interrupted(run("release", "2", "--store", "local", "--agent", "a1", code=None))
    assert line == ("Error: interrupted; whether local #2 was released could not be told: 'ghstate release 2' again "
                    "says")
    again = run("release", "2", "--store", "local", "--agent", "a1")
    assert again.stdout == "local #2 is not claimed: nothing to release.\n"


def test_done_interrupted_between_its_steps_says_what_landed_and_to_run_it_again(plan, run):
    import ghstate.services.claims as claims

    run("split", "1", "--store", "local")
    run("claim", "2", "--store", "local", "--agent", "a1")
    real = claims.write_task

    def tick_interrupted(app, number, *args, **kwargs):
        if number == 1:
            raise KeyboardInterrupt
        return real(app, number, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claims, "write_task", tick_interrupted)
        line = interrupted(run("done", "2", "--store", "local", "--agent", "a1", code=None))
    closed = parse((plan / "closed" / "2.md").read_text()).checkpoint.meta
    assert closed.task.closed
    assert line == (f"Error: interrupted after the write landed: local #2 is at revision {closed.revision}; 'ghstate "
                    "done 2' stopped before it finished: run it again, it does only what is left")
    assert not parse((plan / "1.md").read_text()).checkpoint.phases[0].done
    assert run("done", "2", "--store", "local", "--agent", "a1").stdout.splitlines() == [
        "Closed local #2 Phase 1: parser as completed (it was closed already).", "Ticked its phase in local #1.",
        "Released the claim of a1.", "Ready now: local #3 Phase 2: docs"]
    assert parse((plan / "1.md").read_text()).checkpoint.phases[0].done


def test_ctrl_c_after_the_command_finished_says_what_landed(local, monkeypatch, capsys):
    """Found by a newcomer: Ctrl-C after a write had finished (the ticker stopping, the process exiting)
    exited 130 with no line. It says the write landed, with its revision."""
    import contextlib

    import ghstate.cli

    @contextlib.contextmanager
    def ctrl_c_on_the_way_out(args):
        yield
        raise KeyboardInterrupt

    monkeypatch.setattr(ghstate.cli, "_ticking", ctrl_c_on_the_way_out)
    monkeypatch.setattr("sys.argv", ["ghstate", "checkpoint", "--store", "local", "--risk", "r"])
    with pytest.raises(SystemExit) as done:
        ghstate.cli.main()
    assert done.value.code == 130
    err = capsys.readouterr().err.splitlines()
    assert err == ["Error: interrupted after the write landed: local #1 is at revision 2"]
