"""The release as a user gets it: ``python -m build`` makes the sdist and, from it, the wheel; ``twine check
--strict`` passes both; the wheel installed into a fresh virtualenv, with no source tree near it, runs the
README's main job, ``ghstate init --agent claude`` in a scratch repository and ``ghstate doctor``, and finds
every template and GraphQL document it ships.

In the slow tier: the build installs its backend, and the virtualenv ghstate's dependencies, from the package
index pip is configured with (the versions of constraints.txt, as the Action's source build), as `.ci/run`'s
own install does just before."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ghstate

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """The sdist and wheel built from this checkout, checked, and the wheel installed into a fresh virtualenv
    made outside the checkout: (the virtualenv, the folder of the built files)."""
    scratch = tmp_path_factory.mktemp("wheel")
    dist = scratch / "dist"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_", "PYTHON"))}
    env["PIP_CONSTRAINT"] = str(ROOT / "constraints.txt")  # the backend the release workflow builds with
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=scratch, env=env)
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"ghstate-{ghstate.__version__}-py3-none-any.whl", f"ghstate-{ghstate.__version__}.tar.gz"]
    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())], cwd=scratch, env=env)
    venv = scratch / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=scratch, env=env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(dist / built[0])], cwd=scratch, env=env)
    return venv, dist


@pytest.fixture
def user(installed, tmp_path) -> tuple[dict[str, str], Path]:
    """A user's shell: the virtualenv's ghstate on PATH, a HOME and caches of its own, no token, no source tree
    on any path; and a scratch git repository, far from the checkout, as the current folder."""
    venv, _ = installed
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "test@example.com", "LANG": "C.UTF-8"}
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("a project\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
        _run(["git", *args], cwd=project, env=env)
    return env, project


def test_the_wheel_is_imported_from_the_virtualenv_not_the_checkout(installed, user):
    env, project = user
    venv, _ = installed
    where = _run(["python", "-c", "import ghstate; print(ghstate.__file__)"], cwd=project, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv) and not Path(where).is_relative_to(ROOT)
    assert _run(["ghstate", "--version"], cwd=project, env=env).stdout == f"ghstate {ghstate.__version__}\n"


def test_the_readmes_main_job_runs_from_the_wheel(user):
    """The README's first ``sh`` block, its install done already (the wheel above, in place of ``pip install
    .`` in a clone), in a repository that has the example checkpoint."""
    env, project = user
    block = re.search(r"^```sh\n(.*?)^```$", (ROOT / "README.md").read_text(), re.M | re.S).group(1).strip()
    install = "python3 -m venv .venv && .venv/bin/pip install . && "
    assert block.startswith(install), "the README's main job changed: update this test"
    job = block.removeprefix(install).replace(".venv/bin/ghstate", "ghstate")
    (project / "examples").mkdir()
    shutil.copy2(ROOT / "examples" / "checkpoint.md", project / "examples" / "checkpoint.md")
    out = _run(["bash", "-euo", "pipefail", "-c", job], cwd=project, env=env).stdout
    assert (project / ".git" / "ghstate" / "1.md").is_file()  # the clone's local store
    assert "Start at Phase 2" in out and "Refactor" in out  # the prompt, rendered by the shipped templates


def test_init_for_claude_then_doctor_find_every_file_the_wheel_ships(installed, user):
    env, project = user
    venv, _ = installed
    out = _run(["ghstate", "init", "--agent", "claude"], cwd=project, env=env).stdout
    assert "Error" not in out
    shipped = next(venv.glob("lib/python*/site-packages/ghstate/templates"))
    assert not shipped.is_relative_to(ROOT)
    for target, template in ((".claude/commands/checkpoint.md", "claude-checkpoint.md"),
                             (".claude/commands/ghstate-resume.md", "claude-resume.md"),
                             (".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml", "issue-form.yml")):
        assert (project / target).read_text() == (shipped / template).read_text(), target
    assert (project / ".claude" / "settings.json").is_file() and (project / ".ghstate" / ".gitignore").is_file()
    doctor = _run(["ghstate", "doctor"], cwd=project, env=env).stdout
    assert "FAILED" not in doctor and "Claude Code" in doctor
    names = sorted(p.name for p in (ROOT / "ghstate" / "github" / "graphql").rglob("*.graphql"))
    loaded = _run(["python", "-c", "from ghstate.github import graphql\n"
                   "print(len([graphql.document(n) for n in graphql.names()]))\n"
                   "import pathlib; print(sorted(p.name for p in graphql.FOLDER.rglob('*.graphql')))"],
                  cwd=project, env=env).stdout.splitlines()
    assert int(loaded[0]) == len(list((ROOT / "ghstate" / "github" / "graphql").glob("*.graphql")))
    assert loaded[1] == str(names)
    templates = sorted(p.name for p in (ROOT / "templates").iterdir())
    assert sorted(p.name for p in shipped.iterdir()) == templates
