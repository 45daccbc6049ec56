"""``ghstate mcp``: the checkpoint as Model Context Protocol tools, a resource and a prompt, over stdio.

Every host that speaks MCP (Claude Code, Codex CLI, Gemini CLI, Cursor, …) calls the same four tools
instead of composing shell commands. This is the only module that imports the SDK (``mcp``, 2.x),
and only when the server starts; what the tools do is ``mcp_tools``. Nothing but protocol messages
reaches stdout.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ghstate.agents.mcp_tools import (
    PROMPT_DESCRIPTION,
    TOOLS,
    URI_TEMPLATE,
    call,
    input_schema,
    one_line,
    open_checkpoints,
    prompt_text,
    read_checkpoint,
)
from ghstate.core.markup import CONTROL
from ghstate.errors import GhstateError

# ------------------------------------------------------------------------------------ the server


def serve(make_app: Callable[[str | None], Any], *, version: str) -> None:
    """Serve the tools over stdin/stdout until the client goes away. ``make_app(client)`` builds the
    App of one call; ``client`` is the name the client gave (the agent to record when none was set)."""
    import contextlib

    import anyio
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    handlers = _Handlers(make_app)
    server = Server("ghstate", version=version, instructions=(
        "ghstate keeps this task's working state in a checkpoint (a GitHub issue, or a local store file). In a "
        "fresh or compacted session call resume first; call checkpoint before the context is cleared."),
        on_list_tools=handlers.list_tools, on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources, on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource, on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            # The transport has taken the real stdout; anything printed from here on (a library, a
            # stray print) goes to stderr instead of corrupting the protocol.
            with contextlib.redirect_stdout(sys.stderr):
                await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a worker thread, so that the server answers other requests meanwhile."""
    import anyio

    return await anyio.to_thread.run_sync(fn, *args)


class _Handlers:
    """The server's answers, each over ``mcp_tools`` (the SDK is imported when the server starts)."""

    def __init__(self, make_app: Callable[[str | None], Any]) -> None:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        self.make_app = make_app
        self.types = mcp_types
        self.error = MCPError

    def app_for(self, ctx: Any) -> Callable[[], Any]:
        info = getattr(ctx.session.client_params, "client_info", None)
        client = CONTROL.sub("", " ".join(str(getattr(info, "name", "") or "").split()))[:100] or None
        return lambda: self.make_app(client)

    async def list_tools(self, ctx: Any, params: Any) -> Any:
        types = self.types
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=tool["description"], input_schema=input_schema(name),
                       annotations=types.ToolAnnotations(
                           read_only_hint=tool["read_only"],
                           destructive_hint=None if tool["read_only"] else tool.get("destructive", False),
                           idempotent_hint=None if tool["read_only"] else tool.get("idempotent"),
                           open_world_hint=False))
            for name, tool in TOOLS.items()])

    async def call_tool(self, ctx: Any, params: Any) -> Any:
        # in a worker thread: a call waiting on GitHub (a claim, a write) does not hold up another session's
        # calls to this server (each call has its own App: settings, store and GitHub connection)
        answer = await _in_thread(call, params.name, params.arguments, self.app_for(ctx))
        return self.types.CallToolResult(content=[self.types.TextContent(text=answer.text)], is_error=answer.error)

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        try:
            found = await _in_thread(open_checkpoints, self.app_for(ctx))
        except GhstateError as exc:  # a host lists resources at start-up: an outage must not fail it
            print(f"ghstate mcp: cannot list checkpoints: {' '.join(str(exc).split())}", file=sys.stderr)
            found = []
        return self.types.ListResourcesResult(resources=[
            self.types.Resource(uri=uri, name=title, mime_type="text/markdown") for uri, title in found])

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        return self.types.ListResourceTemplatesResult(resource_templates=[self.types.ResourceTemplate(
            name="checkpoint", uri_template=URI_TEMPLATE, mime_type="text/markdown",
            description="A ghstate checkpoint's markdown body, as stored.")])

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        try:
            text = await _in_thread(read_checkpoint, str(params.uri), self.app_for(ctx))
        except GhstateError as exc:
            raise self.error(code=self.types.INVALID_PARAMS, message=one_line(exc)) from None
        return self.types.ReadResourceResult(contents=[
            self.types.TextResourceContents(uri=str(params.uri), mime_type="text/markdown", text=text)])

    async def list_prompts(self, ctx: Any, params: Any) -> Any:
        types = self.types
        return types.ListPromptsResult(prompts=[types.Prompt(
            name="resume", description=PROMPT_DESCRIPTION,
            arguments=[types.PromptArgument(name="issue", description="Checkpoint number (default: the branch's)",
                                            required=False)])])

    async def get_prompt(self, ctx: Any, params: Any) -> Any:
        types = self.types
        if params.name != "resume":
            raise self.error(code=types.INVALID_PARAMS, message=f"no prompt {params.name!r}; the prompt is resume")
        try:
            text = await _in_thread(prompt_text, (params.arguments or {}).get("issue"), self.app_for(ctx))
        except GhstateError as exc:
            raise self.error(code=types.INVALID_PARAMS, message=one_line(exc)) from None
        return types.GetPromptResult(description=PROMPT_DESCRIPTION, messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=text))])
