"""ghstate: durable working state for long AI coding sessions, kept in GitHub issues."""

__version__ = "0.1.0"

# Where ghstate is published, and the one command that installs it for daily use (the README's first
# screen says the same; a test keeps them equal). This checkout names no repository of its own (no
# remote, no project URL): OWNER stands for the account it is published under.
SOURCE = "https://github.com/OWNER/ghstate"
INSTALL = f"pipx install git+{SOURCE}"
