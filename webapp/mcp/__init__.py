"""The Model Context Protocol both ways, with the official ``mcp`` SDK.

:mod:`.server` offers this app's tools and ``diagnose`` to any MCP client (``flask --app webapp
mcp``); :mod:`.client` offers the tools of the MCP servers named by ``MCP_SERVERS`` to the
executor, as recorded invocations like those of its own tools. See ``docs/mcp.md``.
"""
