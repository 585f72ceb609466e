"""What the offline model reads from tool results: signals and service mentions."""

from __future__ import annotations

from typing import Any

from webapp.llm.offline.conversation import Done
from webapp.llm.offline.findings import read_mentions, read_signals


def detect(result: dict[str, Any]) -> Done:
    return Done("detect_anomalies", {"service": "api"}, "inv-1", "SUCCESS", result)


def finding(signal: str) -> dict[str, Any]:
    return {"signal": signal, "kind": "metric", "onset": "2026-11-30T10:00:00Z"}


def test_each_result_is_read_as_it_is_even_under_an_invocation_id_seen_before() -> None:
    first = detect({"findings": [finding("latency_p99")]})
    assert [s.signal for s in read_signals(first)] == ["latency_p99"]
    again = read_signals(first)
    again.clear()  # the caller's list is its own
    assert [s.signal for s in read_signals(first)] == ["latency_p99"]
    other = detect({"findings": [finding("error_rate"), {"signal": "x", "onset": "never"}]})
    assert [s.signal for s in read_signals(other)] == ["error_rate"]


def test_mentions_name_only_known_services_as_whole_names() -> None:
    lines = [
        {"message": "call to DB-Primary timed out"},
        {"message": "db-primary-replica lag"},  # a longer name: not db-primary
        {"message": "nothing here"},
        {"message": "retrying pg now"},  # an alias: named, not spelled
    ]
    done = Done("query_logs", {"service": "api"}, "inv-9", "SUCCESS", {"records": lines})
    found = read_mentions(done, ["api", "db-primary", "cache"], {"db-primary": ["pg"]})
    assert [(m.other, m.path, m.literal) for m in found] == [
        ("db-primary", "$.records[0].message", True),
        ("db-primary", "$.records[3].message", False),
    ]
    quiet = Done("query_logs", {"service": "api"}, "inv-10", "SUCCESS", {"records": lines[2:3]})
    assert read_mentions(quiet, ["api", "db-primary"], {}) == []


def test_a_count_of_work_that_moved_alone_follows_traffic_and_is_no_symptom() -> None:
    from webapp.llm.offline.findings import Reading

    def reading(*names: str) -> Reading:
        done = detect({"findings": [finding(n) for n in names]})
        return Reading("api", done, read_signals(done))

    assert reading("http_server_requests_seconds_count").symptoms == []
    assert reading("push_sent_total", "requests_per_second").symptoms == []
    # beside a real symptom it is listed; a count of failures is a symptom of its own
    assert len(reading("http_server_requests_seconds_count", "latency_p99_ms").symptoms) == 2
    assert [s.signal for s in reading("http_requests_errors_total").symptoms] == [
        "http_requests_errors_total"
    ]
    assert [s.signal for s in reading("kube_pod_container_status_restarts_total").symptoms]


def test_a_gauge_of_what_a_service_holds_is_a_symptom_even_when_named_a_count() -> None:
    from webapp.llm.offline.findings import Reading

    def reading(*names: str) -> Reading:
        done = detect({"findings": [finding(n) for n in names]})
        return Reading("api", done, read_signals(done))

    for held in ("go_goroutines_count", "jvm_threads_count", "db_open_connections_count"):
        assert [s.signal for s in reading(held).symptoms] == [held]
        assert reading(held).traffic == []
    # work done stays traffic
    assert reading("messages_sent_count").symptoms == []


def test_a_host_or_pod_built_on_a_service_s_name_names_it() -> None:
    lines = [
        {"message": "Unable to connect to redis-geo-3/10.0.0.7:6379"},
        {"message": "GET http://checkout-7d9f8-x2kq4:8080/cart -> 503"},
        {"message": "redis-geo-replica is catching up"},  # another thing built on the name
    ]
    done = Done("query_logs", {"service": "api"}, "inv-11", "SUCCESS", {"records": lines})
    found = read_mentions(done, ["api", "redis-geo", "checkout"], {})
    assert [(m.other, m.path) for m in found] == [
        ("redis-geo", "$.records[0].message"),
        ("checkout", "$.records[1].message"),
    ]


def test_a_new_error_message_is_an_onset_however_few_its_lines() -> None:
    from webapp.llm.offline.findings import Reading, read_templates

    quiet = detect({"findings": []})
    pattern = {"template": "connect ECONNREFUSED <IP>", "new": True, "count_after": 3}
    patterns = Done(
        "log_patterns",
        {"service": "api"},
        "inv-12",
        "SUCCESS",
        {"patterns": [{**pattern, "first_seen": "2026-11-30T10:07:38Z"}]},
    )
    reading = Reading("api", quiet, [], read_templates(patterns))
    assert [o.isoformat() for o in reading.onsets] == ["2026-11-30T10:07:38+00:00"]
    assert Reading("api", quiet, []).onsets == []
