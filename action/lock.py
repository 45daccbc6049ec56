"""The GitHub Action's pinned install of a release: what it installs, and how it knows it is a release.

``action/requirements.txt`` (written by ``write``, checked by ``check``) pins ghstate's wheel and every runtime
dependency by version and sha256 hashes, and names the digest of the files that wheel is built from (the
package, the templates, pyproject.toml, README.md and LICENSE). The Action (``plan``) hashes its own copy of
those files: when they are the release's, it installs the release's wheel from the package index with
``--require-hashes``; else (a branch, a commit after the release) it builds its source, as before. The wheel
is reproducible (hatchling, with the pinned backend of constraints.txt), so the hash written before the tag
is the hash of the wheel the release workflow builds and publishes; ``check`` fails the release otherwise.

    python action/lock.py write dist/ghstate-X.Y.Z-py3-none-any.whl   # before tagging (asks the index)
    python action/lock.py check dist/ghstate-X.Y.Z-py3-none-any.whl   # the release workflow, before publishing
    python3 action/lock.py plan                                      # the Action: how= and key= lines

Standard library only, Python 3.10+: the Action runs ``plan`` with the runner's python3 before anything is
installed."""

from __future__ import annotations

import hashlib
import os
import platform
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "action" / "requirements.txt"
# What the wheel is built from (pyproject.toml's [tool.hatch.build.targets.wheel] and the metadata's files).
SOURCES = ("ghstate", "templates", "pyproject.toml", "README.md", "LICENSE")
CACHE_FORMAT = "2"  # raised when what the cache holds changes (2: a release's wheels, no longer a virtualenv)


def source_digest(root: Path = ROOT) -> str:
    """sha256 over the path and bytes of every file the wheel is built from (bytecode caches left out)."""
    digest = hashlib.sha256()
    files: list[Path] = []
    for name in SOURCES:
        path = root / name
        if path.is_dir():
            files += [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                      and p.suffix not in (".pyc", ".pyo")]
        elif path.is_file():
            files.append(path)
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return "sha256:" + digest.hexdigest()


def version(root: Path = ROOT) -> str:
    found = re.search(r'^__version__ = "([^"]+)"', (root / "ghstate" / "__init__.py").read_text(), re.M)
    if not found:
        raise SystemExit("ghstate/__init__.py has no __version__")
    return found.group(1)


def read_lock(path: Path = LOCK) -> tuple[str, dict[str, tuple[str, list[str]]]]:
    """The source digest the lock names, and each pinned requirement's (version, hashes) by name."""
    if not path.is_file():
        return "", {}
    text = path.read_text().replace("\\\n", " ")
    source = (re.search(r"^# source: (\S+)$", text, re.M) or [None, ""])[1]
    pins = {}
    for line in text.splitlines():
        found = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if found:
            pins[found.group(1).lower()] = (found.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", line))
    return source, pins


def plan(out=sys.stdout) -> None:
    """How the Action installs (``release``: this release's wheels, by the hashes of action/requirements.txt;
    ``source``: a build of its files), and, for a release, the key its wheels are kept under in the Actions
    cache: the runner's OS and machine, the Python's version, and the release. A source build keeps nothing
    (no key): what another job of the repository may have put in the cache is run only when it is checked
    against hashes the Action ships, and a source build has none."""
    source, pins = read_lock()
    digest = source_digest()
    release = bool(source) and source == digest and pins.get("ghstate", ("",))[0] == version()
    system = f"{os.environ.get('RUNNER_OS') or platform.system()}-{platform.machine()}"
    print(f"how={'release' if release else 'source'}", file=out)
    print(f"version={version()}", file=out)
    key = f"ghstate-wheels-{CACHE_FORMAT}-{system}-py{platform.python_version()}-{version()}" if release else ""
    print(f"key={key}", file=out)


def runtime_requirements() -> list[tuple[str, str]]:
    """ghstate's runtime dependencies and theirs, as (name, marker): read from the installed distributions'
    metadata (run this in a virtualenv where ghstate is installed). A dependency behind an extra comes in when
    its parent is asked for with that extra (PyGithub asks for ``pyjwt[crypto]``: cryptography); other markers
    (a Python version, an implementation) are kept, for pip to evaluate where the Action runs."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    # (a requirement, the marker it inherits from its parent, the extras its parent was asked for with)
    todo: list[tuple[Requirement, str, set[str]]] = [(Requirement(r), "", set()) for r in metadata.requires("ghstate")
                                                     or ()]
    while todo:
        requirement, inherited, asked = todo.pop()
        marker = str(requirement.marker) if requirement.marker else ""
        if "extra" in marker:
            if not any(requirement.marker.evaluate({"extra": e}) for e in asked):
                continue
            marker = ""  # asked for by its parent's extra: the parent's own marker decides
        marker = " and ".join(f"({m})" if " or " in m else m for m in (inherited, marker) if m)
        name = canonicalize_name(requirement.name)
        if name in found:
            found[name] = "" if not marker or not found[name] else found[name]
            continue
        found[name] = marker
        try:
            children = metadata.requires(requirement.name) or ()
        except metadata.PackageNotFoundError:
            continue  # not installed on this Python (a marker excludes it here): it has no dependencies to add
        todo += [(Requirement(text), marker, set(requirement.extras)) for text in children]
    return sorted(found.items())


def constraints() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, exact = line.split(";")[0].strip().partition("==")
            pinned[canonicalize_name(name)] = exact
    return pinned


def wheel_hashes(name: str, exact: str) -> list[str]:
    """Every wheel's sha256 of NAME==EXACT on the package index, read from its simple page (PEP 503: each
    file's link carries its hash), as pip reads it."""
    import html
    import urllib.request

    from packaging.utils import canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    request = urllib.request.Request(f"https://pypi.org/simple/{canonicalize_name(name)}/", headers={
        "Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        page = answer.read().decode()
    hashes = []
    for href in re.findall(r'href="([^"]+)"', page):
        filename, _, fragment = html.unescape(href).rpartition("/")[2].partition("#")
        if filename.endswith(".whl") and fragment.startswith("sha256="):
            _, found, _, _ = parse_wheel_filename(filename)
            if found == Version(exact):
                hashes.append(fragment.removeprefix("sha256="))
    if not hashes:
        raise SystemExit(f"{name}=={exact} has no wheel on the package index: the Action installs wheels only")
    return sorted(set(hashes))


def write(wheel: Path) -> None:
    pinned = constraints()
    lines = ["# The GitHub Action installs this when its own files are this release's (action/lock.py plan):",
             "# ghstate's wheel and every runtime dependency, by version and hashes. Written by",
             "# `python action/lock.py write dist/ghstate-X.Y.Z-py3-none-any.whl` (CONTRIBUTING.md, cutting a",
             "# release); the release workflow checks it against the wheel it publishes. Do not edit by hand.",
             f"# source: {source_digest()}",
             f"ghstate=={_wheel_version(wheel)} \\",
             f"    --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}"]
    for name, marker in runtime_requirements():
        if name not in pinned:
            raise SystemExit(f"{name} is not pinned in constraints.txt")
        hashes = wheel_hashes(name, pinned[name])
        lines.append(f"{name}=={pinned[name]}{' ; ' + marker if marker else ''} \\")
        more = " \\"
        lines += [f"    --hash=sha256:{h}{more if i < len(hashes) - 1 else ''}" for i, h in enumerate(hashes)]
    LOCK.write_text("\n".join(lines) + "\n")
    print(f"wrote {LOCK.relative_to(ROOT)}: ghstate {_wheel_version(wheel)} and {len(runtime_requirements())} "
          "dependencies")


def _wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def check(wheel: Path) -> None:
    """The lock is this release's: its ghstate line is the wheel (version and hash), its source digest these
    files, its dependencies constraints.txt's versions."""
    source, pins = read_lock()
    problems = []
    got = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if pins.get("ghstate") != (version(), [got]) or _wheel_version(wheel) != version():
        problems.append(f"ghstate: the lock pins {pins.get('ghstate')}, the wheel is {version()} {got}")
    if source != source_digest():
        problems.append("the lock's source digest is not these files': run action/lock.py write again")
    pinned = constraints()
    for name, (exact, _) in pins.items():
        if name != "ghstate" and pinned.get(name) != exact:
            problems.append(f"{name}: the lock pins {exact}, constraints.txt {pinned.get(name)}")
    if problems:
        raise SystemExit("action/requirements.txt is not this release's:\n  " + "\n  ".join(problems))
    print(f"action/requirements.txt is ghstate {version()}'s")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "plan":
        plan()
    elif command in ("write", "check") and len(sys.argv) == 3:
        (write if command == "write" else check)(Path(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
