"""Every HTTP backend's failures reach the model as recorded ERROR invocations, never a crash.

Failure modes: server down, 5xx, slow (client timeout), malformed body, rejected credentials;
served by pytest-httpserver on 127.0.0.1 (a closed port for "down").
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.webapp.telemetry.servers import free_port
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry import TelemetryError
from webapp.telemetry.alertmanager import AlertmanagerBackend
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.elasticsearch import ElasticsearchBackend
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.loki import LokiBackend
from webapp.telemetry.port import TelemetryBackend
from webapp.telemetry.prometheus import PrometheusBackend
from webapp.tools.catalog import telemetry_tools
from webapp.tools.registry import ToolBox

TIMEOUT = 0.5
WINDOW = {"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T10:30:00Z"}


def _prometheus(options: HttpOptions) -> TelemetryBackend:
    return CompositeBackend(Signals(metrics=PrometheusBackend(HttpSource("Prometheus", options))))


def _alertmanager(options: HttpOptions) -> TelemetryBackend:
    return CompositeBackend(
        Signals(alerts=AlertmanagerBackend(HttpSource("Alertmanager", options)))
    )


def _loki(options: HttpOptions) -> TelemetryBackend:
    return CompositeBackend(Signals(logs=LokiBackend(HttpSource("Loki", options))))


def _elastic(options: HttpOptions) -> TelemetryBackend:
    return CompositeBackend(Signals(logs=ElasticsearchBackend(options, "logs-*")))


BACKENDS: dict[str, tuple[Callable[[HttpOptions], TelemetryBackend], str, dict[str, Any]]] = {
    "prometheus": (_prometheus, "query_metrics", {"service": "checkout", "metric": "up", **WINDOW}),
    "alertmanager": (_alertmanager, "query_alerts", {"state": "firing"}),
    "loki": (_loki, "query_logs", {"service": "checkout", **WINDOW}),
    "elasticsearch": (_elastic, "query_logs", {"service": "checkout", **WINDOW}),
}


def _slow(request: Request) -> Response:
    time.sleep(TIMEOUT * 3)
    return Response("{}", content_type="application/json")


MODES: dict[str, tuple[Callable[[HTTPServer], None] | None, str]] = {
    "down": (None, r"unreachable"),
    "5xx": (
        lambda s: s.expect_request(re.compile(".*")).respond_with_json(
            {"status": "error", "error": "upstream unavailable"}, status=503
        ),
        r"HTTP 503",
    ),
    "slow": (
        lambda s: s.expect_request(re.compile(".*")).respond_with_handler(_slow),
        r"did not answer within 0.5 s",
    ),
    "malformed": (
        lambda s: s.expect_request(re.compile(".*")).respond_with_data(
            "<html>proxy error</html>", content_type="application/json"
        ),
        r"not JSON|malformed|unexpected body|no hits",
    ),
    "auth": (
        lambda s: s.expect_request(re.compile(".*")).respond_with_json(
            {"error": "unauthorized"}, status=401
        ),
        r"rejected the credentials \(HTTP 401\)",
    ),
}


@pytest.fixture
def server() -> Iterator[HTTPServer]:
    """A threaded server of its own, so a slow handler delays no other test."""
    found = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    found.start()
    yield found
    found.clear()
    if found.is_running():
        found.stop()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("system", list(BACKENDS))
def test_a_failing_server_is_an_error_invocation_the_model_reads(
    system: str, mode: str, server: HTTPServer
) -> None:
    arrange, expected = MODES[mode]
    url = server.url_for("/").rstrip("/")
    if arrange is None:
        url = f"http://127.0.0.1:{free_port()}"
    else:
        arrange(server)
    factory, tool, arguments = BACKENDS[system]
    backend = factory(HttpOptions(url=url, timeout_seconds=TIMEOUT, attempts=1))
    audit = MemoryAudit()
    box = ToolBox(telemetry_tools(backend), audit, "executor")
    with run_scope("s-err", "run-err"):
        result = box.call(tool, json.dumps(arguments), None)
    assert result.status == "ERROR"
    message = json.loads(result.content)["error"]
    assert re.search(expected, message), message
    row = audit.invocations[-1]
    assert row["status"] == "ERROR" and row["raw_output"] == {"error": message}
    assert "failed: " not in message  # a readable reason, not the generic crash message


def test_transient_server_errors_are_retried_up_to_the_attempt_budget(
    httpserver: HTTPServer,
) -> None:
    httpserver.expect_ordered_request("/api/v2/alerts").respond_with_data("busy", status=502)
    httpserver.expect_ordered_request("/api/v2/alerts").respond_with_json([])
    options = HttpOptions(url=httpserver.url_for("/"), attempts=3)
    backend = AlertmanagerBackend(HttpSource("Alertmanager", options))
    assert backend.query_alerts() == {"alerts": []}
    assert len(httpserver.log) == 2
    httpserver.clear()
    httpserver.expect_request("/api/v2/alerts").respond_with_data("busy", status=503)
    with pytest.raises(Exception, match="after 3 attempt"):
        backend.query_alerts()
    assert len(httpserver.log) == 3


def test_elasticsearch_retries_transient_errors(httpserver: HTTPServer) -> None:
    answers = [Response("busy", status=503), Response("busy", status=502)]
    empty = {"hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}}

    def search(request: Request) -> Response:
        if answers:
            return answers.pop(0)
        return Response(json.dumps(empty), content_type="application/json")

    httpserver.expect_request("/logs-*/_search").respond_with_handler(search)
    options = HttpOptions(url=httpserver.url_for("/").rstrip("/"), attempts=3)
    backend = ElasticsearchBackend(options, "logs-*")
    moment = datetime(2026, 12, 1, 10, tzinfo=timezone.utc)
    answer = backend.query_logs(service="checkout", start=moment, end=moment)
    assert answer == {"records": [], "total": 0, "truncated": False}
    assert len(httpserver.log) == 3 + 1  # two failures, the answer, then the service catalog
    httpserver.clear()
    httpserver.expect_request("/logs-*/_search").respond_with_data("busy", status=503)
    with pytest.raises(TelemetryError, match="HTTP 503"):
        backend.query_logs(service="checkout", start=moment, end=moment)
    assert len(httpserver.log) == 3
