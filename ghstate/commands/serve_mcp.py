"""``ghstate mcp``: serve the checkpoint over the Model Context Protocol (stdio), for any agent host."""

from __future__ import annotations

import importlib.util

import click

from ghstate import __version__
from ghstate.commands.common import make_app, store_options, usage_errors
from ghstate.errors import ConfigError
from ghstate.services.app import READ_BUDGET, build_app

INSTALL_HINT = "pip install 'ghstate[mcp]' (or pip install 'mcp>=2.3,<3' next to ghstate)"


@click.command()
@store_options
@click.option("--agent", metavar="NAME", help="Who writes checkpoints through this server (default: GHSTATE_AGENT, "
              "else the client's name, such as claude-code).")
@click.option("--role", metavar="ROLE", help="In which role: editor, reviewer, … (default: GHSTATE_ROLE).")
@click.option("--session", metavar="ID", help="The runtime session, a claim's holder with the agent (default: "
              "GHSTATE_SESSION, else the host's session id, else this server's own id).")
def mcp(agent: str | None, role: str | None, session: str | None) -> None:
    """Serve the checkpoint to any agent host as an MCP server over stdio.

    Tools: resume, checkpoint, show, lint; a resource per checkpoint (ghstate://checkpoint/N) and a
    resume prompt. Each tool works as its CLI command does, on the same store; a failure is a tool
    error with the command's one-line message. Hosts start it themselves: 'ghstate init --agent …'
    registers it.

    \b
    Example (what an MCP host runs):
      ghstate mcp --agent codex
    """
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError(f"the MCP server needs the MCP Python SDK, which is not installed: {INSTALL_HINT}")
    import os

    from ghstate.agents import mcp_server

    first = make_app(agent=agent, role=role, session=session)  # a broken configuration fails here, once
    options = dict(click.get_current_context().meta.get("store_options", {}))
    # a claim's holder is the agent in its session: the host's (Claude Code gives its servers one), else this
    # server's own, so that two sessions of one host never hold one claim (a pid alone repeats across machines)
    own = first.settings.session or f"mcp-{os.getpid()}-{os.urandom(3).hex()}"
    from ghstate.services.checkpoint import check_values

    with usage_errors():  # a session that cannot hold a claim fails here, not in each tool's call
        check_values({"agent": agent or "", "session": own})

    def app_for(client: str | None) -> object:
        """The App of one call (a call is one command: its own settings, GitHub budget and branch)."""
        # an agent waits on the call: GitHub's silence is not waited out (this machine's copy answers)
        return build_app(**options, agent=agent or os.environ.get("GHSTATE_AGENT") or client, role=role,
                         session=own, github=dict(READ_BUDGET))

    mcp_server.serve(app_for, version=__version__)
