"""A log source that fails mid-diagnosis is a recorded ERROR invocation in the trace, never a 500.

Loki and Elasticsearch answer their catalog (the services) and then fail every log query:
5xx, a body that is not JSON, or rejected credentials. The chat is still HTTP 200 with a run,
and the run's trace holds each failed log read (``query_logs`` or an analysis tool over the
logs) with the reason the model read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from peewee import Database
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from webapp import create_app
from webapp.config import Settings
from webapp.wiring import build_services, telemetry_backend

SERVICES = ["checkout", "payments"]
#: The tools that read logs (the analysis tools read them through the same backend).
LOG_READERS = ("query_logs", "detect_anomalies", "log_patterns")
FAILURES: dict[str, tuple[Callable[[], Response], str]] = {
    "5xx": (
        lambda: Response('{"error": "upstream unavailable"}', 503, content_type="application/json"),
        r"HTTP 503",
    ),
    "malformed": (
        lambda: Response("<html>proxy error</html>", 200, content_type="application/json"),
        r"not JSON|malformed",
    ),
    "auth": (
        lambda: Response('{"error": "unauthorized"}', 401, content_type="application/json"),
        r"rejected the credentials \(HTTP 401\)",
    ),
}


def _json(body: object) -> Response:
    return Response(json.dumps(body), content_type="application/json")


def _loki(server: HTTPServer, failure: Callable[[], Response]) -> dict[str, str]:
    server.expect_request("/loki/api/v1/label/service_name/values").respond_with_json(
        {"status": "success", "data": SERVICES}
    )
    server.expect_request(re.compile("/loki/api/v1/query.*")).respond_with_handler(
        lambda request: failure()
    )
    return {"LOKI_URL": server.url_for("/").rstrip("/")}


def _elasticsearch(server: HTTPServer, failure: Callable[[], Response]) -> dict[str, str]:
    def search(request: Request) -> Response:
        body = json.loads(request.get_data() or b"{}")
        if "aggs" in body:  # the service catalog answers; log queries fail
            buckets = [{"key": name, "doc_count": 1} for name in SERVICES]
            return _json(
                {
                    "hits": {"total": {"value": 2}, "hits": []},
                    "aggregations": {"services": {"buckets": buckets}},
                }
            )
        return failure()

    server.expect_request("/logs-*/_search").respond_with_handler(search)
    return {"ELASTICSEARCH_URL": server.url_for("/").rstrip("/")}


SOURCES = {"loki": _loki, "elasticsearch": _elasticsearch}


def client_for(database: Database, tmp_path: Path, environ: dict[str, str]) -> FlaskClient:
    settings = Settings.from_env(
        {"TELEMETRY_BACKEND": "live", "TELEMETRY_ATTEMPTS": "1", **environ},
        overrides={"knowledge_db": str(tmp_path / "k.db")},
    )
    services = build_services(
        settings,
        database=database,
        backend=telemetry_backend(settings),
    )
    return create_app(services=services).test_client()


@pytest.mark.parametrize("mode", list(FAILURES))
@pytest.mark.parametrize("source", list(SOURCES))
def test_a_failing_log_source_is_an_error_invocation_in_the_trace(
    source: str, mode: str, database: Database, tmp_path: Path, httpserver: HTTPServer
) -> None:
    failure, reason = FAILURES[mode]
    client = client_for(database, tmp_path, SOURCES[source](httpserver, failure))
    chat = client.post(
        "/api/chat", json={"Question": "Why does checkout fail since 10:00?", "mode": "complex"}
    )
    assert chat.status_code == 200, chat.json
    data = chat.json["data"]
    trace = client.get(f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}")
    assert trace.status_code == 200
    calls = [c for c in trace.json["data"]["toolInvocations"] if c["toolName"] in LOG_READERS]
    assert calls and all(c["status"] == "ERROR" for c in calls), calls
    assert data["runId"] and data["degraded"] is True
    for call in calls:
        assert re.search(reason, call["rawOutput"]["error"]), call["rawOutput"]
    # the degraded answer says which telemetry could not be read, and why
    answer = data["answer"]
    assert answer.startswith("**Diagnosis incomplete: part of the telemetry could not be read")
    failed = answer.split("**Could not be read:**\n\n", 1)[1].split("\n\n")[0]
    tool = calls[0]["toolName"].replace("_", "\\_")  # Markdown-escaped as rendered
    assert f"({tool} checkout" in failed, answer
    assert re.search(reason, failed)
