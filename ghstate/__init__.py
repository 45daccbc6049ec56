"""ghstate: durable working state for long AI coding sessions, kept in GitHub issues."""

__version__ = "0.1.0"
