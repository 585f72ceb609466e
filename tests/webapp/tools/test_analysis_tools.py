"""detect_anomalies and log_patterns as tools: schemas, defaults, errors, recorded outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.analysis_tools import analysis_tools, forget_outputs
from webapp.tools.catalog import ALIASES_MARKER, diagnosis_tools
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.tools.knowledge import KnowledgeIndex
from webapp.tools.registry import ToolBox

from ..analysis.synthetic import world


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


def call(box: ToolBox, name: str, **arguments: Any) -> dict[str, Any]:
    with run_scope("s1", "run-1"):
        result = box.call(name, json.dumps(arguments), None)
    body: dict[str, Any] = json.loads(result.content)
    body["_status"] = result.status
    return body


def test_every_model_is_offered_the_analysis_tools(backend: DemoTelemetryBackend) -> None:
    tools = diagnosis_tools(backend, KnowledgeIndex(":memory:"), RetrievedDocTracker())
    names = [t.name for t in tools]
    assert names == [
        "lookup_knowledge",
        "query_logs",
        "query_metrics",
        "query_alerts",
        "detect_anomalies",
        "log_patterns",
        "triage",
    ]
    schemas = {t.name: t.definition()["function"]["parameters"] for t in tools}
    assert set(schemas["triage"]["properties"]) == {"start", "end", "hint"}
    assert schemas["detect_anomalies"]["required"] == ["service"]
    assert set(schemas["detect_anomalies"]["properties"]) == {"service", "start", "end"}
    assert set(schemas["log_patterns"]["properties"]) == {"service", "start", "end", "level"}
    assert schemas["log_patterns"]["properties"]["service"]["enum"] == backend.services()


def test_detect_anomalies_defaults_to_the_recent_range_and_is_recorded(
    backend: DemoTelemetryBackend,
) -> None:
    audit = MemoryAudit()
    box = ToolBox(analysis_tools(backend), audit, "executor")
    body = call(box, "detect_anomalies", service="payment-service")
    assert body["_status"] == "SUCCESS"
    result = body["result"]
    assert set(result) == {"window", "findings", "healthy_signals", "signals_without_data"}
    assert result["window"]["start"] == "2026-11-30T06:00:00Z"
    assert result["window"]["end"] == "2026-11-30T12:00:00Z"
    assert any(f["signal"] == "latency_p95_ms" for f in result["findings"])
    recorded = audit.invocations_for_run("run-1")[-1]
    assert recorded.tool_name == "detect_anomalies" and recorded.raw_output == result
    assert body["invocation_id"] == recorded.invocation_id


def test_an_explicit_window_is_used(backend: DemoTelemetryBackend) -> None:
    box = ToolBox(analysis_tools(backend), MemoryAudit(), "executor")
    body = call(
        box,
        "log_patterns",
        service="order-service",
        start="2026-11-30T10:00:00Z",
        end="2026-11-30T12:00:00Z",
        level="ERROR",
    )
    result = body["result"]
    assert result["window"]["start"] == "2026-11-30T10:00:00Z"
    assert result["window"]["onset"] == "2026-11-30T10:45:00Z"
    assert result["patterns"][0]["new"] and "inventory-service" in result["patterns"][0]["template"]


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        ({"service": "search-service"}, "BLOCKED", "is not one of"),
        ({}, "BLOCKED", "is a required property"),
        ({"service": "order-service", "start": "yesterday"}, "ERROR", "not an ISO-8601"),
        (
            {
                "service": "order-service",
                "start": "2026-11-30T12:00:00Z",
                "end": "2026-11-30T10:00:00Z",
            },
            "ERROR",
            "must be before",
        ),
        (
            {
                "service": "order-service",
                "start": "2026-11-01T00:00:00Z",
                "end": "2026-11-30T10:00:00Z",
            },
            "ERROR",
            "at most 7 days",
        ),
    ],
)
def test_bad_arguments_come_back_as_data(
    backend: DemoTelemetryBackend, arguments: dict[str, Any], status: str, message: str
) -> None:
    box = ToolBox(analysis_tools(backend), MemoryAudit(), "executor")
    body = call(box, "detect_anomalies", **arguments)
    assert body["_status"] == status and message in body["error"]


def test_the_tools_work_on_any_backend_through_the_port() -> None:
    synthetic = world()
    box = ToolBox(analysis_tools(synthetic), MemoryAudit(), "executor")
    found = call(box, "detect_anomalies", service="ledger-writer")["result"]["findings"]
    assert {f["signal"] for f in found} >= {"disk_used_ratio", "ERROR"}
    patterns = call(box, "log_patterns", service="ledger-writer")["result"]["patterns"]
    assert patterns[0]["new"] and "No space left on device" in patterns[0]["template"]
    assert set(synthetic.calls) == {"query_logs", "query_metrics"}


def test_declared_aliases_are_told_to_the_model() -> None:
    tools = {t.name: t for t in diagnosis_tools(world(), KnowledgeIndex(":memory:"), None)}
    description = tools["query_logs"].description
    listed = json.loads(description.split(ALIASES_MARKER, 1)[1])
    assert listed == {"ledger-writer": ["账本服务"]}


def test_the_demo_backend_reads_aliases_from_its_dataset(tmp_path: Path) -> None:
    source = DemoTelemetryBackend().data_dir
    for name in ("dataset.json", "metrics.json", "alerts.json"):
        shutil.copy(source / name, tmp_path / name)
    dataset = json.loads((tmp_path / "dataset.json").read_text(encoding="utf-8"))
    dataset.pop("aliases", None)
    (tmp_path / "dataset.json").write_text(json.dumps(dataset), encoding="utf-8")
    assert DemoTelemetryBackend(tmp_path).service_aliases() == {}
    dataset["aliases"] = {"order-service": ["订单服务"], "no-such-service": ["x"]}
    (tmp_path / "dataset.json").write_text(json.dumps(dataset), encoding="utf-8")
    assert DemoTelemetryBackend(tmp_path).service_aliases() == {"order-service": ["订单服务"]}


def test_outputs_over_an_immutable_backend_are_computed_once_and_copied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import webapp.tools.analysis_tools as module

    calls: list[str] = []
    real = module.service_anomalies

    def counted(backend: Any, service: str, start: Any, end: Any) -> dict[str, Any]:
        calls.append(service)
        return real(backend, service, start, end)

    monkeypatch.setattr(module, "service_anomalies", counted)
    forget_outputs()
    arguments = {"service": "payment-service", "start": "2026-11-30T09:00:00Z"}
    immutable = {t.name: t for t in analysis_tools(DemoTelemetryBackend())}["detect_anomalies"]
    first = immutable.handler(dict(arguments)).raw_output
    first["findings"].clear()  # a caller's change does not reach the kept output
    second = immutable.handler(dict(arguments)).raw_output
    assert calls == ["payment-service"] and second["findings"]
    live = world()  # a backend that does not declare its data immutable is asked every time
    assert getattr(live, "immutable", False) is False
    tool = {t.name: t for t in analysis_tools(live)}["detect_anomalies"]
    tool.handler({"service": "ledger-writer"})
    tool.handler({"service": "ledger-writer"})
    assert calls == ["payment-service", "ledger-writer", "ledger-writer"]
    forget_outputs()
    immutable.handler(dict(arguments))
    assert calls[-1] == "payment-service" and len(calls) == 4


def test_a_kept_outputs_json_is_embedded_as_json_dumps_writes_the_message() -> None:
    forget_outputs()
    audit = MemoryAudit()
    box = ToolBox(analysis_tools(DemoTelemetryBackend()), audit, "executor")
    arguments = json.dumps({"service": "payment-service", "start": "2026-11-30T09:00:00Z"})
    for _ in ("computed", "kept"):
        with run_scope("s1", "run-1"):
            result = box.call("detect_anomalies", arguments, None)
        body = json.loads(result.content)
        assert body["result"]["findings"] and body["invocation_id"] == result.invocation_id
        assert result.content == json.dumps(body, ensure_ascii=False)
        assert audit.invocations[-1]["raw_output"] == body["result"]
    output = analysis_tools(DemoTelemetryBackend())[1].handler({"service": "payment-service"})
    assert output.raw_json == json.dumps(output.raw_output, ensure_ascii=False)


def test_both_tools_read_a_levels_lines_once_over_an_immutable_backend() -> None:
    class Counting(DemoTelemetryBackend):
        def __init__(self) -> None:
            super().__init__()
            self.reads: list[tuple[str, str | None]] = []

        def query_logs(self, **kwargs: Any) -> dict[str, Any]:
            if kwargs.get("limit", 50) > 1:  # a read of lines, not a count-only query
                self.reads.append((kwargs["service"], kwargs.get("level")))
            return super().query_logs(**kwargs)

    forget_outputs()
    backend = Counting()
    tools = {t.name: t for t in analysis_tools(backend)}
    arguments = {"service": "payment-service", "start": "2026-11-30T09:00:00Z"}
    found = tools["detect_anomalies"].handler(dict(arguments)).raw_output
    patterns = tools["log_patterns"].handler(dict(arguments)).raw_output
    assert found["findings"] and patterns["patterns"]
    assert sorted(backend.reads) == [("payment-service", "ERROR"), ("payment-service", "WARN")]
    forget_outputs()  # the kept reads go with the kept outputs
    tools["log_patterns"].handler(dict(arguments))
    assert len(backend.reads) == 4
