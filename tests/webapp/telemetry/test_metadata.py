"""Metric metadata is reloaded like the catalog: a failed load is tried again, not kept forever."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.prometheus import PrometheusBackend, PrometheusOptions
from webapp.telemetry.units import spoken_unit

NOW = datetime(2026, 12, 1, 10, 30, tzinfo=timezone.utc)
METRIC = "rpc_duration_seconds_count"


def test_metadata_that_failed_to_load_is_loaded_again(httpserver: HTTPServer) -> None:
    ok = {"status": "success"}
    httpserver.expect_request("/api/v1/label/service/values").respond_with_json(
        {**ok, "data": ["checkout"]}
    )
    httpserver.expect_request("/api/v1/label/__name__/values").respond_with_json(
        {**ok, "data": [METRIC]}
    )
    loads: list[int] = []

    def metadata(request: Request) -> Response:
        loads.append(1)
        if len(loads) == 1:
            return Response("busy", status=503)
        family = {"rpc_duration_seconds": [{"type": "summary", "help": "", "unit": ""}]}
        return Response(json.dumps({**ok, "data": family}), content_type="application/json")

    httpserver.expect_request("/api/v1/metadata").respond_with_handler(metadata)
    httpserver.expect_request("/api/v1/query_range").respond_with_json(
        {**ok, "data": {"resultType": "matrix", "result": []}}
    )
    options = PrometheusOptions(catalog_ttl_seconds=0)  # every read reloads
    http = HttpSource("Prometheus", HttpOptions(httpserver.url_for("/"), attempts=1))
    backend = PrometheusBackend(http, options, clock=lambda: NOW)
    window: dict[str, Any] = {
        "service": "checkout",
        "metric": METRIC,
        "start": NOW - timedelta(minutes=5),
    }
    first = backend.query_metrics(end=NOW, **window)
    second = backend.query_metrics(end=NOW, **window)
    assert not first["query"].startswith("rate(")  # no metadata yet: read as it is
    assert second["query"].startswith("rate(") and second["summary"]["unit"] == "/s"
    assert len(loads) == 2


def test_a_unit_comes_from_the_metadata_unit_else_its_help_text(httpserver: HTTPServer) -> None:
    ok = {"status": "success"}
    names = ["queue_wait", "payload_size", "pool_in_use"]
    httpserver.expect_request("/api/v1/label/service/values").respond_with_json(
        {**ok, "data": ["checkout"]}
    )
    httpserver.expect_request("/api/v1/label/__name__/values").respond_with_json(
        {**ok, "data": names}
    )
    family = {
        "queue_wait": [{"type": "gauge", "help": "Time spent waiting in seconds.", "unit": ""}],
        "payload_size": [{"type": "gauge", "help": "Payload (bytes)", "unit": ""}],
        "pool_in_use": [{"type": "gauge", "help": "Connections in use.", "unit": ""}],
    }
    httpserver.expect_request("/api/v1/metadata").respond_with_json({**ok, "data": family})
    httpserver.expect_request("/api/v1/query_range").respond_with_json(
        {**ok, "data": {"resultType": "matrix", "result": []}}
    )
    http = HttpSource("Prometheus", HttpOptions(httpserver.url_for("/"), attempts=1))
    backend = PrometheusBackend(http, PrometheusOptions(), clock=lambda: NOW)
    units = [
        backend.query_metrics(
            service="checkout", metric=name, start=NOW - timedelta(minutes=5), end=NOW
        )["summary"]["unit"]
        for name in names
    ]
    assert units == ["s", "bytes", ""]


def test_an_answer_writes_units_of_measure_and_leaves_count_nouns_to_the_name() -> None:
    assert [spoken_unit(u) for u in ("seconds", "ms", "bytes/s", "%", "Percent")] == [
        "s",
        "ms",
        "bytes/s",
        "%",
        "%",
    ]
    assert [spoken_unit(u) for u in ("requests", "queries/s", "/s", "ratio", "", None)] == [
        "",
        "",
        "",
        "",
        "",
        "",
    ]
