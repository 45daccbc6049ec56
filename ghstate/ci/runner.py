"""The GitHub Actions runner's side of ``ghstate ci``: workflow commands, step outputs, the job summary.

The runner's environment itself is read once, in ``ghstate.config.ci_run``; these write what the
runner reads back (stdout commands and the files it named).
"""

from __future__ import annotations

import secrets as _random

import click

from ghstate.config import CiRun


def command_escape(text: str) -> str:
    """A value safe inside a workflow command (``::warning::…``): no newline can start a new command."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotate(kind: str, message: str) -> None:
    click.echo(f"::{kind}::{command_escape('ghstate: ' + message)}")


def append_file(path: str, name: str, text: str) -> None:
    """Append to one of the runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), when it gave one."""
    if path:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:  # the result is recorded on the issue; only the runner's file is missing
            annotate("warning", f"cannot write {name} ({exc.strerror or exc})")


def write_outputs(runner: CiRun, values: dict[str, str]) -> None:
    lines = []
    for key, value in values.items():
        delimiter = f"ghstate_{_random.token_hex(8)}"  # a value can never contain it
        lines.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
    append_file(runner.output_path, "GITHUB_OUTPUT", "".join(lines))
