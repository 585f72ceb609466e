"""Tools of other MCP servers (``MCP_SERVERS``: a JSON or TOML file in the shared
``mcpServers`` shape, plus a ``role`` per server, ``reference`` by default), offered to the
executor as tool specs named ``<server>_<tool>``, recorded and checked like ours.

Each call opens its own connection within ``MCP_TIMEOUT_SECONDS``; tool lists are kept once
read, and a server that cannot be listed is reported (:meth:`McpTools.errors`) and asked again
after :data:`RELIST_SECONDS`.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent, Tool

from .registry import REFERENCE, ROLES, ToolError, ToolOutput, ToolSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

log = logging.getLogger(__name__)
T = TypeVar("T")

#: A server whose tools could not be listed is asked again after this long.
RELIST_SECONDS = 60.0
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


class McpConfigError(ValueError):
    """``MCP_SERVERS`` names a file that cannot be read or a server that cannot be used."""


@dataclass(frozen=True)
class McpServer:
    """One configured server: a command to start (stdio) or a streamable-HTTP URL."""

    name: str
    role: str = REFERENCE
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """How the server is reached, for error messages (no headers: they may hold secrets)."""
        return self.url or " ".join([self.command or "", *self.args]).strip()


def load_servers(path: str | Path) -> list[McpServer]:
    """The servers of an ``MCP_SERVERS`` file (``.toml`` is TOML, anything else JSON)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as exc:
        raise McpConfigError(f"MCP_SERVERS {str(path)!r}: {exc}") from None
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise McpConfigError(f"MCP_SERVERS {str(path)!r} has no mcpServers table")
    return [_server(str(path), name, entry) for name, entry in entries.items()]


def _server(path: str, name: str, entry: Any) -> McpServer:
    where = f"MCP_SERVERS {path!r}, server {name!r}"
    if not _NAME.fullmatch(name):
        raise McpConfigError(f"{where}: a name is 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, dict) or bool(entry.get("command")) == bool(entry.get("url")):
        raise McpConfigError(f"{where}: give either a command or a url")
    role = entry.get("role", REFERENCE)
    if role not in ROLES:
        raise McpConfigError(f"{where}: role must be one of {', '.join(ROLES)}")
    url = entry.get("url")
    if url is not None and not re.match(r"^https?://[^\s/]+", str(url)):
        raise McpConfigError(f"{where}: url must be an http:// or https:// URL")
    args, env, headers = entry.get("args", []), entry.get("env", {}), entry.get("headers", {})
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise McpConfigError(f"{where}: args must be a list of strings")
    for label, table in (("env", env), ("headers", headers)):
        if not (isinstance(table, dict) and all(isinstance(v, str) for v in table.values())):
            raise McpConfigError(f"{where}: {label} must map names to strings")
    return McpServer(
        name, role, entry.get("command"), tuple(args), env, entry.get("cwd"), url, headers
    )


def raw_output(result: CallToolResult) -> Any:
    """What a call is recorded with: structured content, else its JSON text, else its texts."""
    if isinstance(result.structured_content, dict):
        return result.structured_content
    texts = _texts(result)
    if len(texts) == 1:
        try:
            parsed = json.loads(texts[0])
        except ValueError:
            parsed = None
        if isinstance(parsed, (dict, list)):
            return parsed
    return {"content": texts}


def _texts(result: CallToolResult) -> list[str]:
    return [item.text for item in result.content if isinstance(item, TextContent)]


class McpTools:
    """The tools of the configured servers, as tool specs; calls bounded by ``timeout``."""

    def __init__(self, servers: list[McpServer], timeout_seconds: float = 30.0) -> None:
        self.servers = servers
        self.timeout = timeout_seconds
        self._listed: dict[str, list[ToolSpec]] = {}
        self._failed: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def specs(self) -> list[ToolSpec]:
        """Every listed tool; servers not listed yet (or due again) are asked now."""
        with self._lock:
            for server in self.servers:
                failed_at = self._failed.get(server.name, (-math.inf, ""))[0]
                if (
                    server.name not in self._listed
                    and time.monotonic() - failed_at >= RELIST_SECONDS
                ):
                    self._list(server)
            return [spec for s in self.servers for spec in self._listed.get(s.name, [])]

    def errors(self) -> list[str]:
        """Why each server that could not be listed was not (as an unreadable backend's)."""
        with self._lock:
            return [error for _, error in self._failed.values()]

    def _list(self, server: McpServer) -> None:
        try:
            tools = self._run(server, _all_tools)
        except ToolError as exc:
            log.warning("%s", exc)
            self._failed[server.name] = (time.monotonic(), str(exc))
            return
        self._failed.pop(server.name, None)
        self._listed[server.name] = [self._spec(server, tool) for tool in tools]

    def _spec(self, server: McpServer, tool: Tool) -> ToolSpec:
        def handler(arguments: dict[str, Any]) -> ToolOutput:
            result = self._run(server, lambda c: c.call_tool(tool.name, arguments))
            if result.is_error:
                text = " ".join(_texts(result))[:2000]
                raise ToolError(f"MCP server {server.name}: {text}")
            return ToolOutput(raw_output(result))

        name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server.name}_{tool.name}")[:64]
        return ToolSpec(
            name,
            f"[MCP server {server.name}] {tool.description or tool.name}",
            tool.input_schema or {"type": "object", "properties": {}},
            handler,
            server.role,
        )

    def _run(self, server: McpServer, work: Callable[[Client], Awaitable[T]]) -> T:
        """``work`` on a fresh connection to ``server``; any failure or timeout a ToolError."""

        async def connected() -> T:
            with anyio.fail_after(self.timeout):
                if server.url is None:
                    params = StdioServerParameters(
                        command=server.command or "",
                        args=list(server.args),
                        env={**get_default_environment(), **server.env},
                        cwd=server.cwd,
                    )
                    async with Client(params, read_timeout_seconds=self.timeout) as client:
                        return await work(client)
                async with httpx2.AsyncClient(headers=server.headers, timeout=self.timeout) as h:
                    transport = streamable_http_client(server.url, http_client=h)
                    async with Client(transport, read_timeout_seconds=self.timeout) as client:
                        return await work(client)

        try:
            return in_own_loop(connected)
        except TimeoutError:
            raise ToolError(
                f"MCP server {server.name} ({server.describe()}) did not answer within "
                f"{self.timeout:g} s"
            ) from None
        except Exception as exc:
            raise ToolError(
                f"MCP server {server.name} ({server.describe()}) failed: {_cause(exc)}"
            ) from None


async def _all_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


def _cause(exc: BaseException) -> str:
    """The innermost cause of an (exception group of an) error, in one line."""
    while getattr(exc, "exceptions", None):  # an exception group: its first member
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}"[:500]


def in_own_loop(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` on an event loop of its own, in a short-lived thread (the calling thread
    may already run a loop)."""
    with ThreadPoolExecutor(1, thread_name_prefix="mcp-call") as pool:
        return pool.submit(anyio.run, work).result()
