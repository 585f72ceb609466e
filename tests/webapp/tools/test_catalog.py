"""The four tools over the demo backend: schemas sent to the model, windows, errors, de-dup."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.catalog import METRICS_MARKER, diagnosis_tools, promql_tool, telemetry_tools
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.tools.knowledge import KnowledgeIndex
from webapp.tools.registry import ToolBox, ToolOutput, ToolSpec, tool_roles


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


@pytest.fixture
def box(backend: DemoTelemetryBackend) -> ToolBox:
    index = KnowledgeIndex(":memory:")
    index.sync_directory(backend.runbook_dir())  # type: ignore[arg-type]
    tools = diagnosis_tools(backend, index, RetrievedDocTracker()) + telemetry_tools(backend)[2:]
    return ToolBox(tools, MemoryAudit(), "executor")


def call(box: ToolBox, name: str, **arguments: Any) -> dict[str, Any]:
    with run_scope("s1", "run-1"):
        result = box.call(name, json.dumps(arguments), None)
    body: dict[str, Any] = json.loads(result.content)
    body["_status"] = result.status
    return body


def test_schemas_enumerate_the_backends_services_and_metrics(
    box: ToolBox, backend: DemoTelemetryBackend
) -> None:
    definitions = {d["function"]["name"]: d["function"] for d in box.definitions()}
    assert set(definitions) == {
        "lookup_knowledge",
        "query_logs",
        "query_metrics",
        "query_alerts",
        "detect_anomalies",
        "log_patterns",
        "triage",
    }
    logs = definitions["query_logs"]["parameters"]
    assert logs["properties"]["service"]["enum"] == backend.services()
    assert logs["required"] == ["service"] and logs["properties"]["limit"]["maximum"] == 200
    metrics = definitions["query_metrics"]
    listed = json.loads(metrics["description"].split(METRICS_MARKER, 1)[1])
    assert listed["payment-service"] == backend.metrics_by_service()["payment-service"]
    # A model running the queries is sent no catalog: a wrong metric name gets the list.
    lean = {
        d["function"]["name"]: d["function"]
        for d in ToolBox(
            list(box.specs.values()), box.recorder, "executor", detail=False
        ).definitions()
    }
    assert METRICS_MARKER not in lean["query_metrics"]["description"]
    assert lean["query_logs"] == definitions["query_logs"]
    body = call(box, "query_metrics", service="payment-service", metric="cache_hit_ratio")
    assert body["_status"] == "ERROR"
    assert "its metrics: " + ", ".join(listed["payment-service"]) in body["error"]
    assert definitions["lookup_knowledge"]["parameters"]["properties"]["top_k"]["maximum"] == 10


def test_windows_default_to_the_hour_before_the_datasets_now(box: ToolBox) -> None:
    body = call(box, "query_logs", service="payment-service", level="ERROR")
    times = [r["timestamp"] for r in body["result"]["records"]]
    assert times and all("2026-11-30T11:00:00" <= t < "2026-11-30T12:00:00.001" for t in times)
    assert times == sorted(times, reverse=True)


def test_explicit_window_and_metric_summary(box: ToolBox) -> None:
    body = call(
        box,
        "query_metrics",
        service="payment-service",
        metric="latency_p95_ms",
        start="2026-11-30T09:00:00Z",
        end="2026-11-30T09:59:00Z",
    )
    points = body["result"]["series"][0]["points"]
    assert points[0][0] == "2026-11-30T09:00:00Z" and points[-1][0] == "2026-11-30T09:59:00Z"
    assert body["result"]["summary"]["max"] < 300 and body["result"]["summary"]["unit"] == "ms"


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        ({"service": "payment-service", "start": "yesterday"}, "ERROR", "not an ISO-8601"),
        (
            {
                "service": "payment-service",
                "start": "2026-11-30T11:00:00Z",
                "end": "2026-11-30T10:00:00Z",
            },
            "ERROR",
            "must be before end",
        ),
        (
            {"service": "payment-service", "start": "2026-10-01T00:00:00Z"},
            "ERROR",
            "at most 7 days",
        ),
        ({"service": "nope-service"}, "BLOCKED", "is not one of"),
        (
            {"service": "payment-service", "limit": 500},
            "BLOCKED",
            "greater than the maximum of 200",
        ),
        ({"service": "payment-service", "level": "DEBUG"}, "BLOCKED", "is not one of"),
    ],
)
def test_bad_arguments_come_back_as_data(
    box: ToolBox, arguments: dict[str, Any], status: str, message: str
) -> None:
    body = call(box, "query_logs", **arguments)
    assert body["_status"] == status and message in body["error"]


def test_an_unknown_metric_for_a_service_is_an_error_listing_its_metrics(box: ToolBox) -> None:
    body = call(box, "query_metrics", service="mysql-primary", metric="latency_p95_ms")
    assert body["_status"] == "ERROR" and "mysql_slow_queries_per_sec" in body["error"]


def test_alerts_tool_lists_firing_alerts(box: ToolBox) -> None:
    body = call(box, "query_alerts")
    alerts = body["result"]["alerts"]
    assert alerts and {a["state"] for a in alerts} == {"firing"}


def test_knowledge_lookups_are_deduplicated_within_a_run(box: ToolBox) -> None:
    first = call(box, "lookup_knowledge", query="connection pool exhausted", top_k=2)
    again = call(box, "lookup_knowledge", query="connection pool exhausted", top_k=2)
    assert first["result"]["documents"][0]["title"].startswith("Database connection pool")
    assert all(d.get("already_retrieved") for d in again["result"]["documents"])
    recorded = box.recorder.invocations[-1]  # type: ignore[attr-defined]
    assert (
        recorded["retrieval_details"]["already_retrieved"]
        == recorded["retrieval_details"]["doc_ids"]
    )


def test_every_tool_declares_the_source_role_of_spec_section_3(
    backend: DemoTelemetryBackend,
) -> None:
    tools = [*diagnosis_tools(backend, KnowledgeIndex(":memory:"), None), promql_tool(backend)]
    assert tool_roles(tools) == {
        "lookup_knowledge": "reference",
        "query_logs": "telemetry",
        "query_metrics": "telemetry",
        "query_alerts": "telemetry",
        "detect_anomalies": "telemetry",
        "log_patterns": "telemetry",
        "triage": "telemetry",
        "query_promql": "telemetry",
    }


def test_a_tool_without_a_known_role_is_refused() -> None:
    with pytest.raises(ValueError, match="role must be one of"):
        ToolSpec("guess", "A tool of no declared kind.", {"type": "object"}, nothing, "data")


def nothing(arguments: dict[str, Any]) -> ToolOutput:
    return ToolOutput(None)


def test_a_tool_whose_own_schema_is_broken_is_blocked_not_raised() -> None:
    def never(arguments: dict[str, Any]) -> ToolOutput:
        raise AssertionError("a call the schema cannot check must not run")

    broken = {"type": "object", "properties": {"a": {"type": "strnig"}}}
    box = ToolBox([ToolSpec("odd", "An MCP tool.", broken, never, "reference")], MemoryAudit(), "x")
    body = call(box, "odd", a="x")
    assert body["_status"] == "BLOCKED" and "schema cannot be checked" in body["error"]
