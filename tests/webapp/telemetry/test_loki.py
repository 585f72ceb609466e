"""The Loki client against real-format Loki answers served on 127.0.0.1 (no Loki runs here)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pytest_httpserver import HTTPServer

from tests.webapp.telemetry.recorded import recorded
from webapp.telemetry import TelemetryError
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.loki import LokiBackend

NOW = datetime(2026, 12, 1, 10, 30, tzinfo=timezone.utc)
START = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def loki(
    server: HTTPServer,
    bearer_token: str | None = None,
    username: str | None = None,
    password: str | None = None,
) -> LokiBackend:
    options = HttpOptions(
        url=server.url_for("/"),
        attempts=1,
        bearer_token=bearer_token,
        username=username,
        password=password,
    )
    http = HttpSource("Loki", options)
    return LokiBackend(http, clock=lambda: NOW)


def test_logs_come_newest_first_with_the_server_count(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/loki/api/v1/query_range").respond_with_json(
        recorded("loki-query-range.json")
    )
    httpserver.expect_request("/loki/api/v1/query").respond_with_json(recorded("loki-count.json"))
    answer = loki(httpserver).query_logs(service="checkout", start=START, end=NOW, limit=2)
    assert answer["total"] == 17 and answer["truncated"] is True
    assert answer["records"] == [
        {
            "timestamp": "2026-12-01T10:22:00.123Z",
            "service": "checkout",
            "level": "ERROR",
            "message": "payment provider timed out after 3000ms",
            "trace_id": "4bf92f3577b34da6",
        },
        {
            "timestamp": "2026-12-01T10:21:00.500Z",
            "service": "checkout",
            "level": "WARN",
            "message": "retrying request to payments (attempt 2)",
            "trace_id": None,
        },
    ]
    query = httpserver.log[0][0].args
    assert query["query"] == '{service_name="checkout"}'
    assert query["direction"] == "backward" and query["limit"] == "2"
    assert query["start"] == str(int(START.timestamp()) * 10**9)


def test_level_and_keyword_become_label_matchers_and_a_line_filter(
    httpserver: HTTPServer,
) -> None:
    httpserver.expect_request("/loki/api/v1/query_range").respond_with_json(
        recorded("loki-query-range.json")
    )
    httpserver.expect_request("/loki/api/v1/query").respond_with_json(recorded("loki-count.json"))
    answer = loki(httpserver).query_logs(
        service="checkout", start=START, end=NOW, level="error", keyword="timed out"
    )
    assert answer["records"][-1]["trace_id"] == "00f067aa0ba902b7"  # structured metadata
    sent = httpserver.log[0][0].args["query"]
    assert sent.startswith('{service_name="checkout", level=~"(?i)(')
    assert "error" in sent and "fatal" in sent and sent.endswith('|~ "(?i)timed\\\\ out"')
    counted = httpserver.log[1][0].args["query"]
    assert counted == f"sum(count_over_time({sent} [1800s]))"


def test_services_are_label_values_and_an_unknown_one_is_named(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/loki/api/v1/label/service_name/values").respond_with_json(
        recorded("loki-label-values.json")
    )
    empty = {"status": "success", "data": {"resultType": "streams", "result": []}}
    httpserver.expect_request("/loki/api/v1/query_range").respond_with_json(empty)
    backend = loki(httpserver)
    assert backend.services() == ["cart", "checkout", "payments"]
    with pytest.raises(TelemetryError, match="valid services: cart, checkout, payments"):
        backend.query_logs(service="nope", start=START, end=NOW)


def test_readiness_reports_the_version(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/loki/api/v1/status/buildinfo").respond_with_json(
        recorded("loki-buildinfo.json")
    )
    probe = loki(httpserver).probe()
    assert probe["reachable"] is True and probe["version"] == "3.0.0"
    assert probe["latencyMs"] >= 0


def test_bearer_tokens_and_basic_auth_are_sent(httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        "/loki/api/v1/label/service_name/values", headers={"Authorization": "Bearer s3cret"}
    ).respond_with_json(recorded("loki-label-values.json"))
    assert loki(httpserver, bearer_token="s3cret").services() == ["cart", "checkout", "payments"]
    httpserver.clear()
    httpserver.expect_request(
        "/loki/api/v1/label/service_name/values", headers={"Authorization": "Basic dTpw"}
    ).respond_with_json(recorded("loki-label-values.json"))
    assert loki(httpserver, username="u", password="p").services()[0] == "cart"


def test_records_stand_when_the_count_query_fails(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/loki/api/v1/query_range").respond_with_json(
        recorded("loki-query-range.json")
    )
    httpserver.expect_request("/loki/api/v1/query").respond_with_json(
        {"status": "error", "error": "query too large"}, status=400
    )
    answer = loki(httpserver).query_logs(service="checkout", start=START, end=NOW, limit=2)
    assert len(answer["records"]) == 2 and answer["records"][0]["level"] == "ERROR"
    assert answer["truncated"] is True and answer["total_unknown"] is True


def test_a_json_line_is_read_as_a_log_files_json_line_would_be(httpserver: HTTPServer) -> None:
    line = (
        '{"level":50,"msg":"charge failed","err":{"stack":"Error: charge failed\\n    at pay"},'
        '"traceId":"abc123def456"}'
    )
    streams = [
        {"stream": {"service_name": "checkout"}, "values": [["1796120520123000000", line]]},
        {"stream": {"service_name": "checkout", "level": "warn"}, "values": [["1", line]]},
    ]
    httpserver.expect_request("/loki/api/v1/query_range").respond_with_json(
        {"status": "success", "data": {"resultType": "streams", "result": streams}}
    )
    httpserver.expect_request("/loki/api/v1/query").respond_with_json(recorded("loki-count.json"))
    records = loki(httpserver).query_logs(service="checkout", start=START, end=NOW)["records"]
    assert [(r["level"], r["message"], r["trace_id"]) for r in records] == [
        ("ERROR", "charge failed\n    at pay", "abc123def456"),  # bunyan's level, its stack
        ("WARN", "charge failed\n    at pay", "abc123def456"),  # the level label wins
    ]
