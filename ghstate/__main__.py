"""The ``ghstate`` command's entry point (``[project.scripts]`` and ``python -m ghstate``).

It imports the CLI only inside :func:`run`, so that a Ctrl-C while Python is still loading ghstate (the
first tenth of a second of every run) ends as every other interruption does: one ``Error:`` line and
exit 130, never a traceback. Nothing is written before the CLI has loaded."""

from __future__ import annotations

import sys


def run() -> None:
    try:
        from ghstate.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("Error: interrupted while starting; nothing was written\n")
        sys.exit(130)
    main()


if __name__ == "__main__":
    run()
