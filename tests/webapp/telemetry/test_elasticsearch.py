"""The Elasticsearch/OpenSearch client against real-format answers served on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from pytest_httpserver import HTTPServer

from tests.webapp.telemetry.recorded import recorded
from webapp.telemetry import TelemetryError
from webapp.telemetry.elasticsearch import ElasticsearchBackend
from webapp.telemetry.http import HttpOptions

NOW = datetime(2026, 12, 1, 10, 30, tzinfo=timezone.utc)
START = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def elastic(server: HTTPServer, **fields: str) -> ElasticsearchBackend:
    options = HttpOptions(url=server.url_for("/").rstrip("/"), attempts=1, timeout_seconds=2)
    return ElasticsearchBackend(options, "logs-*", fields=fields, clock=lambda: NOW)


def test_hits_become_records_with_the_exact_total(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/logs-*/_search", method="POST").respond_with_json(
        recorded("elasticsearch-search.json")
    )
    answer = elastic(httpserver).query_logs(
        service="checkout", start=START, end=NOW, level="ERROR", keyword="timed out", limit=2
    )
    assert answer["total"] == 42 and answer["truncated"] is True
    assert answer["records"][0] == {
        "timestamp": "2026-12-01T10:22:00.123Z",
        "service": "checkout",
        "level": "ERROR",
        "message": "payment provider timed out after 3000ms",
        "trace_id": "4bf92f3577b34da6",
    }
    assert answer["records"][1]["trace_id"] is None
    body = json.loads(httpserver.log[0][0].get_data())
    assert body["size"] == 2 and body["track_total_hits"] is True
    assert body["sort"] == [{"@timestamp": {"order": "desc"}}]
    filters = body["query"]["bool"]["filter"]
    assert {"term": {"service.name": "checkout"}} in filters
    assert {"range": {"@timestamp": {"gte": START.isoformat(), "lt": NOW.isoformat()}}} in filters
    assert (
        "error" in filters[2]["terms"]["log.level"] and "ERROR" in filters[2]["terms"]["log.level"]
    )
    assert body["query"]["bool"]["must"] == [{"match_phrase": {"message": "timed out"}}]


def test_the_field_mapping_is_configurable(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/logs-*/_search", method="POST").respond_with_json(
        recorded("elasticsearch-services.json")
    )
    assert elastic(httpserver, service="kubernetes.labels.app").services() == [
        "cart",
        "checkout",
        "payments",
    ]
    body = json.loads(httpserver.log[0][0].get_data())
    assert body["aggs"]["services"]["terms"]["field"] == "kubernetes.labels.app"


def test_an_unknown_service_lists_the_known_ones(httpserver: HTTPServer) -> None:
    none = {
        "took": 1,
        "timed_out": False,
        "hits": {"total": {"value": 0, "relation": "eq"}, "hits": []},
    }
    httpserver.expect_ordered_request("/logs-*/_search").respond_with_json(none)
    httpserver.expect_ordered_request("/logs-*/_search").respond_with_json(
        recorded("elasticsearch-services.json")
    )
    with pytest.raises(TelemetryError, match="valid services: cart, checkout, payments"):
        elastic(httpserver).query_logs(service="nope", start=START, end=NOW)


def test_readiness_reports_an_opensearch_version(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/", method="GET").respond_with_json(recorded("opensearch-info.json"))
    probe = elastic(httpserver).probe()
    assert probe["reachable"] is True and probe["version"] == "2.11.1"


def test_bearer_tokens_and_basic_auth_are_sent(httpserver: HTTPServer) -> None:
    url = httpserver.url_for("/").rstrip("/")
    for options, header in (
        (HttpOptions(url=url, attempts=1, bearer_token="s3cret"), "Bearer s3cret"),
        (HttpOptions(url=url, attempts=1, username="u", password="p"), "Basic dTpw"),
    ):
        httpserver.expect_request(
            "/logs-*/_search", headers={"Authorization": header}
        ).respond_with_json(recorded("elasticsearch-services.json"))
        assert ElasticsearchBackend(options, "logs-*").services() == [
            "cart",
            "checkout",
            "payments",
        ]
        httpserver.clear()
