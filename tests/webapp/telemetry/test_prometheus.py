"""Prometheus and VictoriaMetrics, real servers loaded with the demo dataset, read like the demo."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from tests.webapp.telemetry.conftest import metrics_backend
from tests.webapp.telemetry.servers import Server
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry import TelemetryError
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.prometheus import PrometheusOptions
from webapp.tools.catalog import METRICS_MARKER, diagnosis_tools, telemetry_tools
from webapp.tools.registry import ToolBox

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


def test_services_and_catalog_come_from_the_server(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo)
    assert backend.services() == demo.services()
    assert backend.metrics_by_service() == demo.metrics_by_service()


def test_every_series_reads_back_exactly_as_the_demo_backend_answers(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo)
    start, end = T0, T0 + timedelta(hours=1)
    for service, metrics in demo.metrics_by_service().items():
        for metric in metrics:
            want = demo.query_metrics(service=service, metric=metric, start=start, end=end)
            got = backend.query_metrics(service=service, metric=metric, start=start, end=end)
            assert got["series"] == want["series"], (service, metric)
            for key in ("min", "max", "last"):
                assert got["summary"][key] == want["summary"][key]
            assert got["summary"]["avg"] == pytest.approx(want["summary"]["avg"], abs=0.06)
            assert got["truncated"] is False


def test_units_follow_naming_conventions_without_metadata(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo)
    end = T0 + timedelta(minutes=5)
    latency = backend.query_metrics(
        service="payment-service", metric="latency_p95_ms", start=T0, end=end
    )
    ratio = backend.query_metrics(
        service="redis-cache", metric="redis_memory_used_ratio", start=T0, end=end
    )
    assert (latency["summary"]["unit"], ratio["summary"]["unit"]) == ("ms", "ratio")


def test_a_coarse_step_averages_and_a_wide_window_is_capped_and_flagged(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo, PrometheusOptions(max_points=20))
    start, end = T0 - timedelta(hours=1), T0 + timedelta(hours=2)
    answer = backend.query_metrics(
        service="payment-service", metric="latency_p95_ms", start=start, end=end
    )
    assert answer["truncated"] is True and answer["step_seconds"] == 540
    assert len(answer["series"][0]["points"]) <= 21
    assert answer["query"].startswith("avg_over_time(")
    raw = demo.query_metrics(
        service="payment-service", metric="latency_p95_ms", start=start, end=end
    )
    assert raw["summary"]["min"] <= answer["summary"]["avg"] <= raw["summary"]["max"]


def test_unknown_names_are_errors_that_list_what_is_valid(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo)
    with pytest.raises(TelemetryError, match="valid services: api-gateway"):
        backend.query_metrics(service="nope", metric="error_rate", start=T0, end=T0)
    with pytest.raises(TelemetryError, match=r"its metrics: .*latency_p95_ms"):
        backend.query_metrics(service="payment-service", metric="nope", start=T0, end=T0)


def test_query_promql_runs_a_bounded_query_the_server_checks(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = metrics_backend(metrics_server, demo, PrometheusOptions(max_series=3))
    answer = backend.query_promql(
        query="max by (service) (latency_p95_ms)", start=T0, end=T0 + timedelta(minutes=10)
    )
    assert len(answer["series"]) == 3 and answer["truncated"] is True
    assert all(len(s["points"]) == 11 for s in answer["series"])
    refused = r"refused the query \(HTTP 4\d\d\): "  # the server checks the query
    for query in ("sum(rate(x[5m])))", "  "):
        with pytest.raises(TelemetryError, match=refused):
            backend.query_promql(query=query, start=T0, end=T0 + timedelta(minutes=1))


def test_promql_the_server_rejects_is_an_error_invocation_the_model_reads(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = CompositeBackend(Signals(metrics=metrics_backend(metrics_server, demo)))
    tools = {t.name: t for t in diagnosis_tools(backend, index=_NoKnowledge(), tracker=None)}
    assert "query_promql" in tools
    audit = MemoryAudit()
    box = ToolBox(list(tools.values()), audit, "executor")
    with run_scope("s-1", "run-1"):
        result = box.call(
            "query_promql", json.dumps({"query": "no_such_function(latency_p95_ms)"}), None
        )
    assert result.status == "ERROR"
    assert "refused the query (HTTP 4" in json.loads(result.content)["error"]
    assert audit.invocations[-1]["status"] == "ERROR"


def test_the_tools_describe_the_server_catalog(
    metrics_server: Server, demo: DemoTelemetryBackend
) -> None:
    backend = CompositeBackend(Signals(metrics=metrics_backend(metrics_server, demo)))
    metrics = {t.name: t for t in telemetry_tools(backend)}["query_metrics"]
    assert metrics.parameters["properties"]["service"]["enum"] == demo.services()
    described = json.loads(metrics.detail.split(METRICS_MARKER, 1)[1])
    assert described == demo.metrics_by_service()


class _NoKnowledge:
    def search(self, query: str, top_k: int = 3) -> list[dict[str, object]]:
        return []
