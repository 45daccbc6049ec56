"""Issue 53, item 1: a repository's templates are data. Before, ``ghstate/templating.py`` rendered them in a plain
Jinja2 environment, so a clone whose ``.ghstate/templates/prompt.md.j2`` held a payload ran it when the
session-start hook fired, and on ``resume``, ``show`` or a write. They now render in Jinja2's immutable sandbox:
what it refuses is an error naming the template file (a hook falls back to the shipped template and says so),
and the shipped templates render to the same bytes in it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import git, store_of

from ghstate.templating import builtin_templates

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DECISIONS = ("required flags, not positional", "a `code` span | and a pipe")



@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """The hook's deadline is not what these tests are about: a loaded machine must not cut a hook short here."""
    monkeypatch.setattr("ghstate.commands.hook.DEADLINE", 120)


def payload(target: Path) -> str:
    """What a stranger's template would make run: a file created where the test can look for it."""
    return "{{ cycler.__init__.__globals__.os.system('touch " + str(target) + "') }}"


def seed(run) -> None:
    run("checkpoint", "--goal", "Ship the matcher", "--phase", "Phase 1: parser", "--phase", "Phase 2: matcher",
        "--done", "Phase 1", *[x for d in SAMPLE_DECISIONS for x in ("--decision", d)], "--risk", "slow on 10k lines",
        "--files", "src/parser.ts", "--resume", "Start at Phase 2")


def hook(run, repo, source: str, session: str) -> tuple[str, str]:
    data = {"session_id": session, "source": source, "cwd": str(repo), "hook_event_name": "SessionStart"}
    result = run("hook", "session-start", input=json.dumps(data))
    assert result.exit_code == 0
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else ""
    return context, result.stderr


@pytest.mark.parametrize("name", ["prompt.md.j2", "short.txt.j2", "show.txt.j2", "checkpoint.md.j2",
                                  "changes.md.j2"])
def test_a_repositorys_template_runs_no_code(repo, run, tmp_path, name):
    seed(run)
    pwned = tmp_path / "pwned"
    folder = repo / ".ghstate" / "templates"
    folder.mkdir(parents=True)
    (folder / name).write_text(payload(pwned) + "\n")
    status, body = git(repo, "status", "--porcelain"), (store_of(repo) / "1.md").read_bytes()
    commands = {"prompt.md.j2": [("resume",)], "short.txt.j2": [("resume", "--format", "short")],
                "show.txt.j2": [("show", "1")], "checkpoint.md.j2": [("checkpoint", "--risk", "another")],
                "changes.md.j2": []}[name]
    for args in commands:
        result = run(*args, code=1)
        assert result.stderr.startswith("Error: the template ") and f"templates/{name}" in result.stderr
        assert "sandbox" in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert (store_of(repo) / "1.md").read_bytes() == body  # nothing written
    context, said = hook(run, repo, "clear", "s-1")
    assert "Start at Phase 2" in context  # the session still gets its context, from the shipped template
    if name == "changes.md.j2":  # what changed since the session's start: a later start of it
        run("checkpoint", "--decision", "a change for the next start")  # (the shipped body template)
        context, said = hook(run, repo, "resume", "s-1")
        assert "a change for the next start" in context
    if name in ("prompt.md.j2", "changes.md.j2"):
        lines = said.strip().splitlines()
        assert len(lines) == 1 and f".ghstate/templates/{name} cannot be used" in lines[0], said
        assert f"the built-in {name} was used instead" in lines[0]
    assert not pwned.exists()
    assert git(repo, "status", "--porcelain") == status


def test_the_configured_folder_and_pyproject_are_sandboxed_too(repo, run, tmp_path):
    seed(run)
    pwned = tmp_path / "pwned"
    (repo / "tpl").mkdir()
    (repo / "tpl" / "prompt.md.j2").write_text(payload(pwned))
    (repo / "pyproject.toml").write_text('[tool.ghstate]\ntemplates = "tpl"\n')
    result = run("resume", code=1)
    assert "tpl/prompt.md.j2 cannot be used" in result.stderr and not pwned.exists()


def test_a_template_that_does_not_compile_is_named_and_the_hook_falls_back(repo, run):
    seed(run)
    (repo / ".ghstate" / "templates").mkdir(parents=True)
    (repo / ".ghstate" / "templates" / "prompt.md.j2").write_text("{{ x")
    assert "prompt.md.j2 cannot be used" in run("resume", code=1).stderr
    context, said = hook(run, repo, "clear", "s-1")
    assert "Start at Phase 2" in context and "the built-in prompt.md.j2 was used instead" in said


def _outputs(run, repo) -> list[str]:
    """Everything ghstate renders with a template, for the same checkpoint: the prompt (whole, fitted, leaving
    items out), the short line, show, a body written (dry run), and what a session start and a later one get."""
    out = [run("resume").stdout, run("resume", "--budget", "300").stdout, run("resume", "--format", "short").stdout,
           run("show", "1").stdout, run("show", "1", "--provenance").stdout,
           run("checkpoint", "--risk", "dry", "--dry-run").stdout, run("log", "1").stdout]
    session = f"s-{len(list((repo / '.ghstate').glob('templates')))}"
    out.append(hook(run, repo, "clear", session)[0])
    out.append(hook(run, repo, "startup", session + "-startup")[0])
    return out


def test_the_shipped_templates_render_the_same_bytes_in_the_sandbox(repo, run, clock, monkeypatch):
    """Every shipped template, copied into the repository's folder (so that the sandbox renders all of them),
    gives what the plain environment gives."""
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: clock.utc().strftime("%Y-%m-%dT%H:%M:%SZ"))
    seed(run)
    plain = _outputs(run, repo)
    shutil.copytree(builtin_templates(), repo / ".ghstate" / "templates")
    sandboxed = _outputs(run, repo)
    assert sandboxed == plain
    # what changed since a session's start, in both
    run("checkpoint", "--decision", "a later decision", "--done", "Phase 2")
    with_sandbox = hook(run, repo, "resume", "s-1")[0]
    shutil.rmtree(repo / ".ghstate" / "templates")
    assert "a later decision" in with_sandbox and hook(run, repo, "resume", "s-0")[0] == with_sandbox


def test_the_docs_template_example_renders_in_the_sandbox(repo, run):
    """docs/configuration.md shows a template a repository may keep: it renders, in the sandbox, as it says."""
    text = (ROOT / "docs" / "configuration.md").read_text()
    found = re.search(r"```jinja\n(\{#- \.ghstate/templates/([^:\s]+).*?)```", text, re.DOTALL)
    assert found, "docs/configuration.md has a template example"
    name, template = found.group(2), found.group(1)
    seed(run)
    (repo / ".ghstate" / "templates").mkdir(parents=True)
    (repo / ".ghstate" / "templates" / name).write_text(template)
    expected = re.search(r"prints\s*\n\n```text\n(.*?)\n```", text[found.end():], re.DOTALL)
    assert expected, "the example says what it prints"
    assert run("resume", "--format", "short").stdout.strip() == expected.group(1).strip()


@pytest.mark.parametrize("host", ["claude", "codex", "gemini"])
def test_the_reminder_renders_the_same_bytes_in_the_sandbox(tmp_path, host):
    """The reminder the context hook gives (templates/reminder.txt.j2), rendered by the sandbox (a repository with
    a templates folder) and by the plain environment: the same text, its data fence included."""
    from ghstate import templating
    from ghstate.core import pressure

    (tmp_path / "tpl").mkdir()
    sandbox, plain = templating.environment(str(tmp_path / "tpl")), templating.environment()
    assert templating.sandboxed(sandbox) and not templating.sandboxed(plain)
    for work in (pressure.Work(3, ("src/a.py", "x</checkpoint> y.txt", *[f"f{i}" for i in range(9)]), 12),
                 pressure.Work(-1, (), -1)):
        args = dict(host=host, fill=pressure.Fill(150_000, 200_000), label="#7", title="Fix <checkpoint> it",
                    branch="feature/x", work=work)
        assert pressure.reminder(sandbox, **args) == pressure.reminder(plain, **args)


# ------------------------------------------------------------------------------------ what a template may open


SECRET = "gho_NOT_REALLY_A_TOKEN_but_a_secret"


def test_a_repositorys_template_opens_no_file_outside_its_folder(repo, run, tmp_path):
    """A security review of issue 53: Jinja2's file loader follows symbolic links, so a committed link in the
    templates folder (to a token's file, to /proc/self/environ) let a template include what it pleased, into the
    agent's context or, as blank lines the body's checks let through, into the first checkpoint on GitHub. A
    repository's template is a plain file of a plain name in its folder, opened without following a link."""
    seed(run)
    secret = tmp_path / "home" / ".config" / "gh" / "hosts.yml"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"github.com:\n    oauth_token: {SECRET}\n")
    folder = repo / ".ghstate" / "templates"
    folder.mkdir(parents=True)
    (folder / "x.j2").symlink_to(secret)
    (folder / "prompt.md.j2").write_text("{% include 'x.j2' %}\n")
    result = run("resume", code=1)
    assert SECRET not in result.stdout + result.stderr and "x.j2 is a symbolic link" in result.stderr
    context, said = hook(run, repo, "clear", "s-1")
    assert SECRET not in context and "Start at Phase 2" in context and "the built-in prompt.md.j2" in said
    (folder / "prompt.md.j2").write_text("{% include '../../../home/.config/gh/hosts.yml' %}\n")  # a path: none
    assert SECRET not in run("resume", code=1).stdout
    (folder / "prompt.md.j2").unlink()
    (folder / "prompt.md.j2").symlink_to(secret)  # the template itself a link
    result = run("resume", code=1)
    assert SECRET not in result.stdout + result.stderr and "prompt.md.j2 is a symbolic link" in result.stderr


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="no /proc here")
def test_the_hook_never_gives_the_agent_its_own_environment(repo, run):
    import os
    import subprocess
    import sys

    seed(run)
    folder = repo / ".ghstate" / "templates"
    folder.mkdir(parents=True)
    (folder / "e.j2").symlink_to("/proc/self/environ")
    (folder / "prompt.md.j2").write_text("{% include 'e.j2' %}\n")
    data = {"session_id": "s-9", "source": "clear", "cwd": str(repo), "hook_event_name": "SessionStart"}
    done = subprocess.run([sys.executable, "-m", "ghstate", "hook", "session-start"], input=json.dumps(data),
                          capture_output=True, text=True, cwd=repo, timeout=60,
                          env={**os.environ, "GH_TOKEN": "ghp_" + "S3CR3T" * 6, "GHSTATE_STORE": "local"})
    assert "S3CR3T" not in done.stdout + done.stderr and "Start at Phase 2" in done.stdout


def test_a_templates_folder_at_the_root_reads_no_git_file(repo, run):
    seed(run)
    git(repo, "remote", "add", "origin", "https://someone:ghp_FAKEFAKEFAKE@example.com/octo/hello.git")
    (repo / ".ghstate").mkdir(exist_ok=True)
    (repo / ".ghstate" / "config.toml").write_text('templates = "."\n')
    (repo / "prompt.md.j2").write_text("{% include '.git/config' %}\n")
    result = run("resume", code=1)
    assert "FAKEFAKE" not in result.stdout + result.stderr and ".git/config" in result.stderr


@pytest.mark.parametrize("where", ["a folder named outside", "a committed link to one"])
def test_a_templates_folder_outside_the_repository_is_none(repo, run, tmp_path, where):
    seed(run)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "prompt.md.j2").write_text("FROM ELSEWHERE\n")
    if where == "a folder named outside":
        (repo / "pyproject.toml").write_text(f'[tool.ghstate]\ntemplates = "{outside}"\n')
    else:
        (repo / ".ghstate").mkdir()
        (repo / ".ghstate" / "templates").symlink_to(outside)
    result = run("resume")
    assert "FROM ELSEWHERE" not in result.stdout and "Resuming a task from" in result.stdout
    assert "names a folder outside this repository" in result.stderr


def test_a_template_builds_nothing_huge(repo, run):
    seed(run)
    (repo / ".ghstate" / "templates").mkdir(parents=True)
    for bomb in ("{{ 'x' * 10**10 }}", "{{ 'x' * 100000000 }}", "{{ [1] * 10000000 }}"):
        (repo / ".ghstate" / "templates" / "prompt.md.j2").write_text(bomb + "\n")
        result = run("resume", code=1)
        assert "more than a template may" in result.stderr, bomb
