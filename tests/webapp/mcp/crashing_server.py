"""An MCP server (stdio) whose process dies in the middle of a call, or never answers one.

Started by the client tests as a real subprocess: ``crash`` exits the process while the call is
in flight, ``hang`` sleeps past any timeout, ``echo`` answers.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent, Tool

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}


async def list_tools(_: Any, __: Any) -> ListToolsResult:
    return ListToolsResult(
        tools=[Tool(name=n, description=n, input_schema=OBJECT) for n in ("crash", "hang", "echo")]
    )


async def call_tool(_: Any, params: CallToolRequestParams) -> CallToolResult:
    if params.name == "crash":
        os._exit(3)
    if params.name == "hang":
        await anyio.sleep(3600)
    text = str((params.arguments or {}).get("text", ""))
    return CallToolResult(content=[TextContent(type="text", text=text)])


async def main() -> None:
    server = Server("crashing", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
