"""The local path stays light: no PyGithub import, templates shipped in the wheel, concurrent writers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from conftest import SAMPLE

import ghstate
from ghstate import templating
from ghstate.core.parse import parse


def _run(args, cwd, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_REPOSITORY")}
    full.update(env)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=full, timeout=60)


def imported_modules(importtime_stderr: str) -> set[str]:
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_local_resume_never_imports_pygithub(repo, tmp_path):
    (tmp_path / "c.md").write_text(SAMPLE)
    created = _run(["-m", "ghstate", "checkpoint", "--file", str(tmp_path / "c.md")], repo)
    assert created.returncode == 0, created.stderr
    for args in (["resume"], ["resume", "--format", "json"], ["show"], ["list"], ["--version"], ["init", "--remove"]):
        proc = _run(["-X", "importtime", "-m", "ghstate", *args], repo)
        assert proc.returncode == 0, proc.stderr
        modules = imported_modules(proc.stderr)
        assert "ghstate.cli" in modules
        assert not {m for m in modules if m == "github" or m.startswith(("github.", "requests", "urllib3"))}, args


def test_what_an_agent_waits_for_on_github_never_imports_pygithub(repo, tmp_path):
    """Issue 56: PyGithub's import alone took longer than a whole `resume` by number. Reading a checkpoint
    (by number, by branch, the session-start hook) and writing one go over the transport's own session; PyGithub
    is imported for the REST calls of its own only (an issue opened: the first write)."""
    import json

    from github_http import serve_fake

    (tmp_path / "c.md").write_text(SAMPLE)
    with serve_fake() as fake:
        env = {"GH_TOKEN": "ghp_" + "T0k3n" * 8, "GITHUB_REPOSITORY": "octo/hello", "GITHUB_API_URL": fake.base}
        created = _run(["-X", "importtime", "-m", "ghstate", "checkpoint", "--file", str(tmp_path / "c.md")], repo,
                       **env)
        assert created.returncode == 0, created.stderr
        assert "github" in imported_modules(created.stderr)  # (the issue is opened over REST, by PyGithub)
        event = json.dumps({"hook_event_name": "SessionStart", "source": "clear", "cwd": str(repo)})
        for args, stdin in ((["resume", "1"], None), (["resume"], None), (["show", "1"], None),
                            (["hook", "session-start"], event), (["checkpoint", "--risk", "one more"], None)):
            proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "ghstate", *args], cwd=repo, input=stdin,
                                  capture_output=True, text=True, timeout=60, env={**os.environ, **env})
            assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr
            modules = imported_modules(proc.stderr)
            assert "requests" in modules and not {m for m in modules if m == "github" or m.startswith("github.")}, args


def test_templates_ship_inside_the_package():
    package = Path(ghstate.__file__).resolve().parent
    templates = templating.builtin_templates()
    assert (templates / "checkpoint.md.j2").is_file() and (templates / "prompt.md.j2").is_file()
    source_checkout = (package.parent / "pyproject.toml").is_file()
    if not source_checkout:  # an installed wheel (how .ci/run tests): the templates must be inside it
        assert templates == package / "templates"


def test_repository_templates_override_the_shipped_ones(repo, run, sample_file):
    override = repo / ".ghstate" / "templates"
    override.mkdir(parents=True)
    (override / "short.txt.j2").write_text("custom {{ label }} {{ next }}\n")
    run("checkpoint", "--file", str(sample_file))
    assert run("resume", "--format", "short").stdout == "custom local #1 Phase 2: matcher abstraction\n"


def test_concurrent_local_writers_lose_nothing(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file))
    from ghstate.services.app import App  # noqa: F401  (imported for its side-effect free check)

    errors = []

    def add(i):
        try:
            proc = _run(["-m", "ghstate", "checkpoint", "--decision", f"decision {i}"], repo)
            assert proc.returncode == 0, proc.stderr
        except AssertionError as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert {f"decision {i}" for i in range(6)} <= set(cp.decisions)
    assert cp.meta.revision == 7
    chain = sorted((repo / ".git" / "ghstate" / "chain" / "1").glob("*.json"), key=lambda p: int(p.stem))
    assert [p.name for p in chain] == [f"{g}.json" for g in range(1, 8)]  # one generation a write, its creation too


def test_state_dir_override(repo, run, sample_file, tmp_path, monkeypatch):
    monkeypatch.setenv("GHSTATE_DIR", str(tmp_path / "elsewhere"))
    run("checkpoint", "--file", str(sample_file))
    assert (tmp_path / "elsewhere" / "1.md").is_file()
    assert not (repo / ".ghstate").exists()


def test_outside_git_uses_the_current_folder(tmp_path, monkeypatch, run, sample_file):
    folder = tmp_path / "plain"
    folder.mkdir()
    monkeypatch.chdir(folder)
    run("checkpoint", "--file", str(sample_file))
    assert (folder / ".ghstate" / "1.md").is_file()  # outside git: the current folder's
    assert "Phase 2" in run("resume", "1").stdout


# ----------------------------------------------------------------------------- the hot path (#18.7)


def test_an_unchanged_body_is_parsed_once_across_runs(repo, tmp_path):
    """The second resume (and a repeated hook) of an unchanged body reads the parse cache: it never loads
    the markdown parser, nor the secret scanner, the write log or the seen-file it does not use."""
    (tmp_path / "c.md").write_text(SAMPLE)
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert _run(["-m", "ghstate", "checkpoint", "--file", str(tmp_path / "c.md")], repo, **cache).returncode == 0
    first = _run(["-X", "importtime", "-m", "ghstate", "resume"], repo, **cache)
    second = _run(["-X", "importtime", "-m", "ghstate", "resume"], repo, **cache)
    assert first.returncode == second.returncode == 0 and first.stdout == second.stdout
    again = imported_modules(second.stderr)
    assert not {m for m in again if m.startswith("markdown_it")}, "an unchanged body was parsed again"
    assert not again & {"ghstate.core.secrets", "ghstate.core.writelog", "ghstate.core.intent", "ghstate.local.seen",
                        "ghstate.services.writer"}
    for i in range(2):  # two sessions (the same one again at once would be a repeat, answered with nothing)
        event = f'{{"hook_event_name":"SessionStart","source":"clear","session_id":"s-{i}","cwd":"."}}'
        hook = subprocess.run([sys.executable, "-X", "importtime", "-m", "ghstate", "hook", "session-start"],
                              cwd=repo, input=event, capture_output=True, text=True, timeout=60,
                              env={**os.environ, **cache})
        assert hook.returncode == 0 and "additionalContext" in hook.stdout
        assert not {m for m in imported_modules(hook.stderr) if m.startswith("markdown_it")}
    off = _run(["-X", "importtime", "-m", "ghstate", "resume"], repo, GHSTATE_NO_CACHE="1", **cache)
    assert off.stdout == first.stdout and "markdown_it" in imported_modules(off.stderr)


def test_the_parse_cache_builds_checkpoints_and_nothing_else(tmp_path, monkeypatch):
    """An entry is read back by an unpickler that can build ghstate's record types only: a file put there
    to run code is a miss (parsed anew), never run; a changed body is a miss too."""
    import pickle

    from ghstate.local import parsecache

    monkeypatch.setattr(parsecache, "_folder", None)
    parsecache.use(str(tmp_path / "cache" / "ghstate" / "templates-x"))
    assert parsecache.checkpoint(SAMPLE) == parse(SAMPLE).checkpoint
    entries = list(parsecache._folder.glob("*.pickle"))
    assert len(entries) == 1
    assert parsecache.checkpoint(SAMPLE) == parse(SAMPLE).checkpoint  # from the entry

    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "ran"),))

    entries[0].write_bytes(pickle.dumps(Boom()))
    assert parsecache.checkpoint(SAMPLE) == parse(SAMPLE).checkpoint
    assert not (tmp_path / "ran").exists()
    changed = SAMPLE.replace("Phase 2", "Phase Two")
    assert parsecache.checkpoint(changed) == parse(changed).checkpoint
    assert len(list(parsecache._folder.glob("*.pickle"))) == 2
    parsecache.use(None)
    assert parsecache._folder is None


def test_the_parse_cache_hits_for_a_checkpoint_with_ci_and_heals_a_damaged_entry(tmp_path, monkeypatch):
    """A checkpoint CI wrote to (its verification holds a ledger) is read from the cache the second time;
    a damaged entry (a frame length past any size) is a miss that is written anew, never an error."""
    from ghstate.local import parsecache

    body = ('<!-- ghstate:v1 {"revision":2,"verification":{"status":"failing","commit":"4f2c1e9a01aa",'
            '"ledger":{"runs":["4f2c1e9a01aa:1"],"tests":[["t::a","F"]],"green":""}}} -->\n' + SAMPLE)
    want = parse(body).checkpoint
    assert want.verification_data is not None  # and with it a Ledger, a record of ghstate.ci.ledger
    monkeypatch.setattr(parsecache, "_folder", None)
    parsecache.use(str(tmp_path / "cache" / "ghstate" / "templates-x"))
    assert parsecache.checkpoint(body) == want
    (entry,) = parsecache._folder.glob("*.pickle")

    def no_parse(text):
        raise AssertionError("parsed again: the cache missed")

    with monkeypatch.context() as patched:
        patched.setattr(parsecache, "_parse", no_parse)
        assert parsecache.checkpoint(body) == want
    entry.write_bytes(b"\x80\x05\x95\xff\xff\xff\xff\xff\xff\xff\xff")
    assert parsecache.checkpoint(body) == want  # a miss, parsed
    with monkeypatch.context() as patched:
        patched.setattr(parsecache, "_parse", no_parse)
        assert parsecache.checkpoint(body) == want  # and written anew
    parsecache.use(None)
