"""ghstate: durable working state for long AI coding sessions, kept in GitHub issues."""

__version__ = "0.1.0"

# Where ghstate is published, and the one command that installs it for daily use (the README's first
# screen says the same; a test keeps them equal). This checkout names no repository of its own (no
# remote, no project URL, no package on an index): OWNER stands for the account it is published under
# (the Action's `uses:`), and the daily install is run in a clone, which works as written today.
SOURCE = "https://github.com/OWNER/ghstate"
INSTALL = "pipx install ."
