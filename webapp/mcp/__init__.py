"""The Model Context Protocol server (:mod:`.server`); the client is
:mod:`webapp.tools.mcp_client`. See ``docs/mcp.md``."""
