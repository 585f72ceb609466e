"""The SDK's own client drives ``flask --app webapp mcp`` as a real process, over stdio and over
streamable HTTP: it lists the tools, calls each one, and every result's invocation id is a
recorded row of a run of flow MCP; ``diagnose`` answers with verified evidence of its run."""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from webapp.tools.mcp_client import in_own_loop

ROOT = Path(__file__).resolve().parents[3]
#: Tools every backend serves (others, such as ``triage``, are served when the registry has them).
EXPECTED = {"lookup_knowledge", "query_logs", "query_metrics", "query_alerts"}
EXPECTED |= {"detect_anomalies", "log_patterns", "diagnose"}
QUESTION = "Why is payment-service slow since 10:00?"
KEY = "mcp-test-key"


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: the demo data, the offline model, a database of the test's own."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'mcp.db'}",
        "KNOWLEDGE_DB": str(tmp_path / "knowledge.db"),
        **extra,
    }


def arguments(tool: Any) -> dict[str, Any]:
    """Valid arguments from the tool's schema: its required properties, nothing else."""
    schema = tool.input_schema
    found: dict[str, Any] = {}
    for name in schema.get("required", []):
        rules = schema["properties"][name]
        if "enum" in rules:
            known = [v for v in ("payment-service", "error_rate") if v in rules["enum"]]
            found[name] = known[0] if known else rules["enum"][0]
        elif name == "question":
            found[name] = QUESTION
        elif name == "metric":  # listed per service in the description, not enumerated
            found[name] = "error_rate"
        else:
            found[name] = "connection pool exhausted"
    return found


async def exercise(client: Client) -> dict[str, Any]:
    """List the tools and call each one; the results by tool name."""
    listed = (await client.list_tools()).tools
    results = {}
    for tool in listed:
        result = await client.call_tool(tool.name, arguments(tool))
        assert not result.is_error, (tool.name, result.content)
        results[tool.name] = result.structured_content
    return results


def check(results: dict[str, Any], database: Path) -> None:
    assert set(results) >= EXPECTED, sorted(results)
    with closing(sqlite3.connect(database)) as db:
        for name, message in results.items():
            if name == "diagnose":
                continue
            assert re.fullmatch(r"inv-[0-9a-f]{16}", message["invocation_id"])
            assert message["tool"] == name and "result" in message
            row = db.execute(
                "SELECT i.run_id, i.tool_name, i.status, r.agent_flow, r.flow, r.status "
                "FROM tool_invocation i JOIN diagnosis_run r ON r.run_id = i.run_id "
                "WHERE i.invocation_id = ?",
                (message["invocation_id"],),
            ).fetchone()
            assert row == (message["run_id"], name, "SUCCESS", "MCP", "tool", "SUCCESS"), name
        answer = results["diagnose"]
        assert answer["status"] == "SUCCESS" and "payment-service" in answer["answer"]
        assert answer["evidence"], answer
        cited = {e["invocation_id"] for e in answer["evidence"]}
        recorded = {
            r[0]
            for r in db.execute(
                "SELECT invocation_id FROM tool_invocation WHERE run_id = ?", (answer["run_id"],)
            )
        }
        assert cited <= recorded
        for item in answer["evidence"]:
            assert item["excerpt"] and item["raw_path"].startswith("$")


def test_the_sdk_client_calls_every_tool_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "flask", "--app", "webapp", "mcp"],
        env=environment(tmp_path),
        cwd=str(ROOT),
    )

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=300) as client:
            results = await exercise(client)
            bad = await client.call_tool("query_logs", {"service": "no-such-service"})
            assert bad.is_error and bad.structured_content["status"] == "BLOCKED"
            unknown = await client.call_tool("no_such_tool", {})
            assert unknown.is_error
            return results

    check(in_own_loop(main), tmp_path / "mcp.db")


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "webapp", "mcp", "--http", "--port", str(port)],
        cwd=ROOT,
        env=environment(tmp_path, API_KEY=KEY),
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, "the MCP server exited"
            with closing(socket.socket()) as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_sdk_client_calls_every_tool_over_http_with_the_api_key(
    http_server: str, tmp_path: Path
) -> None:
    refused = httpx.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401

    async def main() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {KEY}"}
        async with httpx2.AsyncClient(headers=headers, timeout=300) as http:
            transport = streamable_http_client(http_server, http_client=http)
            async with Client(transport, read_timeout_seconds=300) as client:
                return await exercise(client)

    check(in_own_loop(main), tmp_path / "mcp.db")
