"""ghstate: durable working state for long AI coding sessions, kept in GitHub issues."""

# The one place the version is kept: the package's metadata (pyproject.toml, [tool.hatch.version]), the
# Action's pinned install (action/requirements.txt), the changelog's newest release and `ghstate --version`
# all follow it (tests/test_release.py). A release is cut as CONTRIBUTING.md says.
__version__ = "1.0.0"

# Where ghstate is published, and the one command that installs it for daily use (the README's first
# screen says the same; a test keeps them equal). The package index has the name; the repository's account
# is not named yet: OWNER stands for it (the Action's `uses:`, the project URLs in pyproject.toml).
SOURCE = "https://github.com/OWNER/ghstate"
INSTALL = "pipx install 'ghstate[mcp]'"
