"""The Model Context Protocol server, with the official ``mcp`` SDK.

:mod:`.server` offers this app's tools and ``diagnose`` to any MCP client (``flask --app webapp
mcp``). The other way, :mod:`webapp.tools.mcp_client` offers the tools of the MCP servers named
by ``MCP_SERVERS`` to the executor, as recorded invocations like those of its own tools. See
``docs/mcp.md``.
"""
