"""``ghstate init``: set a repository up for ghstate. Safe to run again: it only adds what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ghstate.commands.common import make_app, store_options
from ghstate.errors import InputError
from ghstate.stores.local import atomic_write
from ghstate.templating import builtin_templates

HOOKS = (
    ("SessionStart", "startup|resume|clear|compact", "ghstate hook session-start"),
    ("PreCompact", "manual|auto", "ghstate hook pre-compact"),
)
FILES = (
    ("issue-form.yml", ".github/ISSUE_TEMPLATE/ghstate-checkpoint.yml"),
    ("claude-checkpoint.md", ".claude/commands/checkpoint.md"),
    ("claude-resume.md", ".claude/commands/resume.md"),
)


def write_file(target: Path, text: str, force: bool) -> str:
    if target.exists():
        if target.read_text(encoding="utf-8", errors="replace") == text:
            return "unchanged"
        if not force:
            return "exists, kept as it is (--force replaces it)"
    atomic_write(target, text)
    return "written"


def ghstate_command() -> str:
    """How a hook should call ghstate: ``ghstate`` when that is on PATH, else this program's own path
    (installed in a virtualenv that is not activated, the bare name would fail), or ``python -m``."""
    import shlex
    import shutil
    import sys

    argv0 = sys.argv[0] if sys.argv else ""
    found = shutil.which("ghstate")
    if argv0.endswith("__main__.py"):  # python -m ghstate
        return "ghstate" if found else f"{shlex.quote(sys.executable)} -m ghstate"
    if not argv0 or Path(argv0).stem != "ghstate":
        return "ghstate"
    me = Path(argv0).resolve()
    return "ghstate" if found and Path(found).resolve() == me else shlex.quote(str(me))


def _ours(command: object, sub: str) -> list[str] | None:
    """The words of a hook command that runs ``ghstate hook SUB`` (however ghstate is named), else None."""
    import shlex

    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[-2:] != ["hook", sub] or not any(Path(w).stem == "ghstate" for w in words[:-2]):
        return None
    return words


def merge_hooks(settings: dict[str, Any], origin: str, program: str = "ghstate") -> bool:
    """Add ghstate's hooks to Claude Code settings, touching nothing else; a bare ``ghstate`` hook
    that cannot run here (ghstate is not on PATH) is pointed at ``program``. True when it changed them."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"'hooks' in {origin} is not an object; fix it, then run 'ghstate init' again")
    changed = False
    for event, matcher, command in HOOKS:
        sub = command.rsplit(" ", 1)[-1]
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise InputError(f"'hooks.{event}' in {origin} is not a list; fix it, then run 'ghstate init' again")
        present = False
        for entry in entries:
            listed = entry.get("hooks") if isinstance(entry, dict) else None
            for hook in listed if isinstance(listed, list) else []:
                words = _ours(hook.get("command") if isinstance(hook, dict) else None, sub)
                if words is None:
                    continue
                present = True
                if words[0] == "ghstate" and program != "ghstate":
                    hook["command"] = f"{program} hook {sub}"
                    changed = True
        if not present:
            entries.append({"matcher": matcher, "hooks": [{"type": "command", "command": f"{program} hook {sub}",
                                                           "timeout": 15}]})
            changed = True
    return changed


def read_settings(path: Path) -> dict[str, Any]:
    """Claude Code's settings file as it is (empty when there is none); a clear error when unusable."""
    if not path.exists():
        return {}
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not valid JSON ({exc}); fix it, then run 'ghstate init' again "
                         "(nothing was changed)") from None
    if not isinstance(settings, dict):
        raise InputError(f"{path} is not a JSON object; fix it, then run 'ghstate init' again (nothing was changed)")
    return settings


@click.command()
@store_options
@click.option("--force", is_flag=True, help="Replace the issue form and command files even if they were edited.")
def init(force: bool) -> None:
    """Set a repository up: labels, issue form, Claude Code hooks and command files.

    Creates the ghstate labels (GitHub store), writes .github/ISSUE_TEMPLATE/ghstate-checkpoint.yml,
    adds the SessionStart and PreCompact hooks to .claude/settings.json without touching your other
    settings, and writes .claude/commands/checkpoint.md and resume.md. Running it again changes nothing.

    \b
    Example:
      ghstate init
    """
    app = make_app()
    root = app.settings.root
    policy = app.settings.policy
    report: list[tuple[str, str]] = []
    settings_path = root / ".claude" / "settings.json"
    settings = read_settings(settings_path)
    program = ghstate_command()
    changed_hooks = merge_hooks(settings, str(settings_path), program)  # a problem with the file stops init first
    if app.store.kind == "github":
        labels = [(policy.label, "1d76db", "Working state kept by ghstate"),
                  (policy.ci_failing_label, "d93f0b", "ghstate: CI is failing on this task"),
                  (policy.blocked_label, "b60205", "ghstate: CI failed too often in a row; needs a person")]
        created = set(app.store.ensure_labels(labels))  # type: ignore[attr-defined]
        for name, _, _ in labels:
            report.append((f"label {name}", "created" if name in created else "exists"))
    else:
        report.append(("labels", "skipped: the local store has none (run with a GitHub token to create them)"))

    for source, target in FILES:
        text = (builtin_templates() / source).read_text(encoding="utf-8")
        report.append((target, write_file(root / target, text, force)))

    if changed_hooks:
        atomic_write(settings_path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
        report.append((".claude/settings.json", "hooks added"))
    else:
        report.append((".claude/settings.json", "hooks already there"))

    if program != "ghstate":
        report.append(("note", f"ghstate is not on PATH here: the hooks call {program}"))
    width = max(len(name) for name, _ in report)
    for name, outcome in report:
        click.echo(f"{name:<{width}}  {outcome}")
