"""What the commands do, apart from how they are asked: each takes an ``App`` and a request value and
gives text or a typed outcome. The CLI (``ghstate.commands``), the MCP server and the hooks call these;
nothing here imports click or a command module."""
