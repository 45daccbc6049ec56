"""The agent hosts: what ``init`` writes into each host's files (``setup`` decides, over ``hosts``' pure text
transforms) and what ``init --remove`` takes out again (``removal``), and the MCP server (``mcp_server``,
the only importer of the SDK) with its tools (``mcp_tools``). It sits on ``ghstate.services`` and may
import everything below it, never ``ghstate.commands`` or the CLI.
"""
