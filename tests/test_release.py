"""Shipped as a release: one version in one place, a changelog whose newest release is that version, complete
package metadata, the workflows that test and release it (every action pinned by commit, each job holding the
least it needs), and the Action's pinned install of a release (action/requirements.txt, action/lock.py)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import ghstate
from ghstate.agents.hosts import tomllib

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


notes = _module(ROOT / ".github" / "scripts" / "release_notes.py")
lock = _module(ROOT / "action" / "lock.py")


# ------------------------------------------------------------------------------ one version, one changelog


def test_the_version_is_kept_in_one_place_and_printed_by_version(run):
    assert PYPROJECT["project"]["dynamic"] == ["version"] and "version" not in PYPROJECT["project"]
    assert PYPROJECT["tool"]["hatch"]["version"] == {"path": "ghstate/__init__.py"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", ghstate.__version__), "a release version: X.Y.Z"
    assert run("--version").stdout == f"ghstate {ghstate.__version__}\n"


def test_the_newest_released_section_of_the_changelog_names_the_package_version():
    released = [s for s in notes.sections((ROOT / "CHANGELOG.md").read_text()) if s[0] != "Unreleased"]
    assert released and released[0][0] == ghstate.__version__, (released[:1], ghstate.__version__)


def test_the_changelog_keeps_a_changelog():
    """An Unreleased section on top, then each release with its date, newest first, none empty, and the link
    references Keep a Changelog puts under them."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = notes.sections(text)
    assert found[0][0] == "Unreleased" and not found[0][1]
    versions = [tuple(map(int, v.split("."))) for v, _, _ in found[1:]]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    for version, date, body in found[1:]:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), version
        assert re.search(r"^### (Added|Changed|Deprecated|Removed|Fixed|Security)$", body, re.M), version
        assert re.search(rf"^\[{re.escape(version)}\]: \S+$", text, re.M), f"no link reference for {version}"
    assert re.search(r"^\[Unreleased\]: \S+$", text, re.M)


def test_the_release_notes_are_the_versions_section_and_a_missing_one_stops_the_release():
    text = "# Changelog\n\n## [Unreleased]\n\n## [1.1.0] - 2027-01-02\n\n### Fixed\n\n- a\n\n" \
           "## [1.0.0] - 2026-11-28\n\n### Added\n\n- b\n\n[Unreleased]: x\n[1.1.0]: y\n[1.0.0]: z\n"
    assert notes.notes("1.1.0", text) == "### Fixed\n\n- a\n"
    assert notes.notes("1.0.0", text) == "### Added\n\n- b\n"
    with pytest.raises(SystemExit, match="no section"):
        notes.notes("1.2.0", text)
    with pytest.raises(SystemExit, match="empty"):
        notes.notes("1.1.0", text.replace("### Fixed\n\n- a\n\n", ""))
    assert "ghstate" in notes.notes(ghstate.__version__, (ROOT / "CHANGELOG.md").read_text())


# ------------------------------------------------------------------------------ the package's metadata


def test_the_package_metadata_is_complete():
    project = PYPROJECT["project"]
    classifiers = set(project["classifiers"])
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in range(10, 15)} <= classifiers
    assert project["requires-python"] == ">=3.10"
    assert not any("Windows" in c for c in classifiers) and "Operating System :: POSIX :: Linux" in classifiers
    assert all((ROOT / name).is_file() for name in project["license-files"]) and project["license"] == "MIT"
    assert len(project["keywords"]) >= 5 and project["readme"] == "README.md"
    owner = ghstate.SOURCE.removeprefix("https://github.com/").split("/")[0]
    assert project["urls"] and all(label.endswith("(placeholder)") and url.startswith(f"https://github.com/{owner}/")
                                   for label, url in project["urls"].items())
    assert owner == "OWNER"  # a placeholder named as such, until the account is known


# ------------------------------------------------------------------------------ the workflows


def _load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def _pins(path: Path) -> list[tuple[str, str, str]]:
    """Every ``uses:`` of a workflow or action: (action, ref, the comment after it)."""
    return [(m[1], m[2], m[3].strip()) for m in re.finditer(r"^\s*(?:-\s*)?uses:\s*([^@\s]+)@(\S+)(.*)$",
                                                              path.read_text(), re.M)]


def test_every_third_party_action_is_pinned_by_commit_with_its_version_beside_it():
    seen: dict[tuple[str, str], str] = {}
    files = [*sorted(WORKFLOWS.glob("*.yml")), ROOT / "action.yml"]
    for path in files:
        for action, ref, comment in _pins(path):
            assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{path.name}: {action}@{ref} is not pinned by commit"
            version = re.fullmatch(r"#\s*(v\d+\.\d+\.\d+)", comment)
            assert version, f"{path.name}: {action}@{ref} has no '# vX.Y.Z' beside it"
            repository = "/".join(action.split("/")[:2])  # actions/cache/restore and /save: one repository
            assert seen.setdefault((repository, version[1]), ref) == ref, f"{repository} {version[1]}: two commits"
    assert any(a == "pypa/gh-action-pypi-publish" for path in files for a, _, _ in _pins(path))


# The permissions each job needs, and no more (none at the top of every workflow).
LEAST = {
    "tests.yml": {"test": {"contents": "read"}, "slow": {"contents": "read"}},
    "release.yml": {"test": {"contents": "read"}, "build": {"contents": "read"}, "publish": {"id-token": "write"},
                    "github-release": {"contents": "write"}},
    "checkpoint-ci.yml": {"test": {"contents": "read"}, "record": {"contents": "write", "issues": "write"}},
}


def test_each_job_holds_the_least_it_needs():
    assert {p.name for p in WORKFLOWS.glob("*.yml")} == set(LEAST)
    for name, jobs in LEAST.items():
        workflow = _load(WORKFLOWS / name)
        assert workflow["permissions"] == {}, name
        assert {job: spec.get("permissions") for job, spec in workflow["jobs"].items()} == jobs, name


def test_the_publish_job_alone_may_ask_for_an_oidc_token_and_runs_no_code_of_the_repository():
    for path in WORKFLOWS.glob("*.yml"):
        for job, spec in _load(path)["jobs"].items():
            if "id-token" in (spec.get("permissions") or {}):
                assert (path.name, job) == ("release.yml", "publish")
    publish = _load(WORKFLOWS / "release.yml")["jobs"]["publish"]
    uses = [step.get("uses", "").split("@")[0] for step in publish["steps"]]
    assert uses == ["actions/download-artifact", "pypa/gh-action-pypi-publish"]
    assert not any("run" in step or "password" in (step.get("with") or {}) for step in publish["steps"])
    assert publish["environment"]["name"] == "pypi"


def test_the_release_workflow_tests_builds_once_publishes_then_releases_and_moves_the_major_tag():
    release = _load(WORKFLOWS / "release.yml")
    assert release["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    jobs = release["jobs"]
    assert [jobs[j].get("needs") for j in ("test", "build", "publish", "github-release")] == [
        None, "test", "build", "publish"]
    assert any(step.get("run") == ".ci/run" for step in jobs["test"]["steps"])
    built = "\n".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert built.count("python -m build") == 1 and "twine check --strict dist/*" in built
    assert "action/lock.py check" in built and "release_notes.py" in built and '"v$version"' in built
    assert not any("python -m build" in step.get("run", "") for j in ("publish", "github-release")
                   for step in jobs[j]["steps"])  # the artifact built once is what is published and released
    released = "\n".join(step.get("run", "") for step in jobs["github-release"]["steps"])
    assert "gh release create" in released and "--notes-file release/notes.md" in released
    assert 'major="${TAG%%.*}"' in released and "refs/tags/$major" in released


def test_the_test_workflow_runs_the_test_command_on_the_oldest_and_newest_python_on_linux_and_macos():
    tests = _load(WORKFLOWS / "tests.yml")["jobs"]
    matrix = tests["test"]["strategy"]["matrix"]
    assert (sorted(matrix["os"]), matrix["python"]) == (["macos-latest", "ubuntu-latest"], ["3.10", "3.14"])
    readme = (ROOT / "README.md").read_text()
    test_command = re.findall(r"^```sh\n(.*?)^```$", readme, re.M | re.S)[1].strip()
    assert [step["run"] for step in tests["test"]["steps"] if "run" in step] == [test_command]
    assert [step["run"] for step in tests["slow"]["steps"] if "run" in step] == [".ci/run"]
    assert "-m slow" in (ROOT / ".ci" / "run").read_text()


# ------------------------------------------------------------------------------ the Action's pinned install


def test_the_actions_lock_pins_this_version_and_constraints_with_hashes():
    source, pins = lock.read_lock()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", source)
    assert pins["ghstate"][0] == ghstate.__version__, "the version moved: run action/lock.py write (CONTRIBUTING)"
    pinned = lock.constraints()
    assert {n for n in pins if n != "ghstate"} == {n for n, _ in lock.runtime_requirements()}
    for name, (exact, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
        assert name == "ghstate" or pinned[name] == exact, name
    assert len(pins["ghstate"][1]) == 1  # one wheel, pure Python
    # a dependency behind an extra its parent asks for: PyGithub needs pyjwt[crypto], so cryptography (the
    # Action's install takes no dependency the lock does not name: --no-deps)
    assert "cryptography" in pins and "cryptography" in dict(lock.runtime_requirements())


def _copy_action(tmp_path: Path) -> Path:
    copy = tmp_path / "action-copy"
    for name in (*lock.SOURCES, "action", "constraints.txt"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    return copy


def _plan(root: Path, **env: str) -> dict[str, str]:
    proc = subprocess.run([sys.executable, str(root / "action" / "lock.py"), "plan"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env}, check=True)
    return dict(line.split("=", 1) for line in proc.stdout.splitlines())


def test_the_action_takes_the_release_only_when_its_files_are_the_releases(tmp_path):
    """``plan`` says ``release`` where the lock names the digest of the Action's own files (whatever the ref it
    was used by: a tag, a commit), ``source`` once any file the wheel is built from differs; a release's wheels
    are kept under a key of the runner's OS, the Python and the release; a source build keeps nothing."""
    copy = _copy_action(tmp_path)
    text = (copy / "action" / "requirements.txt").read_text()
    digest = _module(copy / "action" / "lock.py").source_digest(copy)
    (copy / "action" / "requirements.txt").write_text(re.sub(r"^# source: \S+$", f"# source: {digest}", text,
                                                             flags=re.M))
    import platform

    planned = _plan(copy, RUNNER_OS="macOS")
    assert planned["how"] == "release" and planned["version"] == ghstate.__version__
    assert planned["key"].startswith("ghstate-wheels-") and planned["key"].endswith(f"-{ghstate.__version__}")
    assert f"-macOS-{platform.machine()}-py{platform.python_version()}-" in planned["key"]
    assert _plan(copy, RUNNER_OS="Linux")["key"] != planned["key"]
    (copy / "templates" / "prompt.md.j2").write_text((copy / "templates" / "prompt.md.j2").read_text() + " ")
    changed = _plan(copy, RUNNER_OS="macOS")
    assert changed["how"] == "source" and changed["key"] == ""  # nothing restored: no hashes to check it by
    (copy / "action" / "requirements.txt").unlink()
    assert _plan(copy)["how"] == "source"


def test_the_lock_check_refuses_a_wheel_that_is_not_the_locks(tmp_path):
    wheel = tmp_path / f"ghstate-{ghstate.__version__}-py3-none-any.whl"
    wheel.write_bytes(b"not the release's wheel")
    with pytest.raises(SystemExit, match="not this release's"):
        lock.check(wheel)


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_the_action_installs_the_release_by_hashes_and_keeps_only_its_wheels_in_the_cache():
    """Issue 53, items 4 and 7: a virtualenv found at a known path (planted by an earlier step of the job) or
    restored from the cache (which the read-only test job, running the code under test, may have written under
    the same public key) was run with the write token. Now no virtualenv is restored or found: it is made anew at
    a path no earlier step can know, from the release's wheels, which pip checks against the hashes the Action
    ships; only the wheels are cached, and only what the cache step restored is looked at."""
    steps = {step["name"]: step for step in _action()["runs"]["steps"]}
    install = steps["Install ghstate"]["run"]
    assert "--require-hashes" in install and "--only-binary :all:" in install and "--no-deps" in install
    assert "action/requirements.txt" in install and 'PIP_CONSTRAINT="$GHSTATE_ACTION_PATH/constraints.txt"' in install
    restore, save = steps["Restore the release's wheels"], steps["Keep the release's wheels for the next job"]
    assert restore["uses"].startswith("actions/cache/restore@") and save["uses"].startswith("actions/cache/save@")
    for step in (restore, save):
        assert step["with"] == {"path": "${{ runner.temp }}/ghstate-wheels", "key": "${{ steps.plan.outputs.key }}"}
    assert steps["Install ghstate"]["env"]["GHSTATE_RESTORED"] == "${{ steps.cache.outputs.cache-hit }}"
    assert 'venv="$(mktemp -d "$RUNNER_TEMP/ghstate-venv.XXXXXXXX")"' in install
    assert re.search(r'if \[ "\$GHSTATE_RESTORED" != true \]; then\s+rm -rf "\$wheels"', install)
    assert 'fill --no-index --find-links "$wheels" "${pinned[@]}"' in install
    assert save["if"] == "steps.install.outputs.installed == 'release' && steps.plan.outputs.key != ''"
    record = steps["Record the result on the checkpoint"]
    assert record["env"]["GHSTATE_VENV"] == "${{ steps.install.outputs.venv }}"
    assert '"$GHSTATE_VENV/bin/ghstate" ci' in record["run"] and "ghstate-venv/" not in record["run"]
    assert not any("ghstate-venv" in str(step.get("with", {})) for step in steps.values())


def _step_script(name: str) -> str:
    return next(s for s in _action()["runs"]["steps"] if s["name"] == name)["run"]


@pytest.mark.slow
def test_a_planted_virtualenv_or_a_poisoned_wheel_never_runs(tmp_path):
    """The install step as the runner runs it, offline: a virtualenv planted where the Action used to keep its
    own, and a wheels folder the cache step says it restored holding a tampered wheel (named as a pinned one, a
    .pth file in it that would run at every start of Python). pip refuses the wheel by its hash; the planted
    virtualenv is never looked at; nothing of either runs (offline, nothing else installs: no virtualenv)."""
    import os
    import zipfile

    temp = tmp_path / "runner-temp"
    ran = tmp_path / "ran"
    planted = temp / "ghstate-venv" / "bin"
    planted.mkdir(parents=True)
    (planted / "ghstate").write_text(f"#!/bin/sh\ntouch {ran}-planted\n")
    (planted / "ghstate").chmod(0o755)
    (planted / "python").symlink_to(sys.executable)
    _, pins = lock.read_lock()
    action = _copy_action(tmp_path)  # the Action with one pinned requirement, click (the rest is not the point)
    lines = (action / "action" / "requirements.txt").read_text().replace("\\\n", " ").splitlines()
    (action / "action" / "requirements.txt").write_text("".join(f"{line}\n" for line in lines
                                                                if line.startswith("click==")))
    wheels = temp / "ghstate-wheels"
    wheels.mkdir()
    version = pins["click"][0]
    with zipfile.ZipFile(wheels / f"click-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("evil.pth", f"import os; open({str(ran) + '-wheel'!r}, 'w')\n")
        wheel.writestr(f"click-{version}.dist-info/METADATA",
                       f"Metadata-Version: 2.1\nName: click\nVersion: {version}\n")
    output = tmp_path / "output"
    output.write_text("")
    script = tmp_path / "install.sh"
    script.write_text(_step_script("Install ghstate"))
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RUNNER_TEMP": str(temp),
               "GITHUB_OUTPUT": str(output), "GHSTATE_ACTION_PATH": str(action), "GHSTATE_HOW": "release",
               "GHSTATE_VERSION": ghstate.__version__, "GHSTATE_RESTORED": "true", "PIP_NO_INDEX": "1",
               "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=environ,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "do not match the hashes" in proc.stderr.lower(), proc.stderr  # pip refused the tampered wheel
    assert "could not be installed" in proc.stdout  # offline, nothing else could be installed
    assert "venv=" not in output.read_text()  # nothing for the record step to run
    assert not list(tmp_path.glob("ran*")), "a planted virtualenv or a tampered wheel ran"
    assert (planted / "ghstate").exists()  # left alone, never run
