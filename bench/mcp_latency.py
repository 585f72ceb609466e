"""Benchmark: round-trip latency of ``detect_anomalies`` over MCP stdio (``make bench-mcp``).

Starts ``flask --app webapp mcp`` on the demo dataset with a scratch SQLite database and drives
it with the SDK's own client, as an MCP client application would. Reported: the start-up
(process start to an initialised session), then per call the whole round trip - request
framing, a run row, the tool, its invocation row, the result message - as the median of
``--calls`` calls, first those that compute (one per service: cold) and then repeats (the demo
backend keeps an analysis' output, so a repeat measures the MCP and recording overhead).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]


async def measure(calls: int, folder: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DATABASE_URL": f"sqlite:///{folder}/bench.db",
        "KNOWLEDGE_DB": f"{folder}/knowledge.db",
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "flask", "--app", "webapp", "mcp"], env=env, cwd=ROOT
    )
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        listed = (await client.list_tools()).tools
        print(f"start-up to a listed session: {time.perf_counter() - started:.2f} s")
        print("tools:", ", ".join(t.name for t in listed))
        tool = next(t for t in listed if t.name == "detect_anomalies")
        services = tool.input_schema["properties"]["service"]["enum"]
        for label, names in (("cold", services), ("repeat", [services[0]] * calls)):
            took = []
            for name in names[:calls]:
                began = time.perf_counter()
                result = await client.call_tool("detect_anomalies", {"service": name})
                took.append((time.perf_counter() - began) * 1000)
                assert not result.is_error, result.content
            print(
                f"detect_anomalies {label}: median {statistics.median(took):.1f} ms, "
                f"min {min(took):.1f}, max {max(took):.1f} (n={len(took)})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        anyio.run(measure, args.calls, folder)


if __name__ == "__main__":
    main()
