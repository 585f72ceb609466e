"""detect_anomalies / log_patterns computations over the demo backend and a synthetic one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from webapp.analysis.anomalies import literal, service_anomalies, service_log_patterns
from webapp.analysis.series import bucket_edges, count_by_bucket, logs_begin, recent_range
from webapp.demo.backend import DemoTelemetryBackend

from .synthetic import NOW, SyntheticBackend, minutes, stamp, world


@pytest.fixture(scope="module")
def demo() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _by_signal(result: dict) -> dict[str, dict]:
    return {f["signal"]: f for f in result["findings"]}


def test_the_redis_memory_step_is_significant_though_small_in_ratio(
    demo: DemoTelemetryBackend,
) -> None:
    start, end = recent_range(demo)
    found = _by_signal(service_anomalies(demo, "redis-cache", start, end))
    memory = found["redis_memory_used_ratio"]
    assert memory["direction"] == "up" and memory["significance"] >= 4
    assert memory["baseline"]["median"] == pytest.approx(0.72, abs=0.01)
    assert memory["incident"]["peak"] > 0.99


def test_the_order_error_rate_baseline_ends_before_the_incident(
    demo: DemoTelemetryBackend,
) -> None:
    start, end = recent_range(demo)
    found = _by_signal(service_anomalies(demo, "order-service", start, end))
    errors = found["error_rate"]
    assert errors["onset"] == "2026-11-30T10:45:00Z"
    assert errors["baseline"]["end"] < errors["onset"]
    assert errors["baseline"]["median"] < 0.005 and errors["incident"]["median"] > 0.1
    assert found["ERROR"]["kind"] == "log_rate" and found["ERROR"]["direction"] == "up"
    # A metric finding carries the unit its backend declares; a log rate has none.
    latency = _by_signal(service_anomalies(demo, "payment-service", start, end))["latency_p99_ms"]
    assert latency["unit"] == "ms" and "unit" not in found["ERROR"]


def test_an_incident_older_than_an_hour_is_found_over_the_recent_range(
    demo: DemoTelemetryBackend,
) -> None:
    start, end = recent_range(demo)
    result = service_anomalies(demo, "payment-service", start, end)
    assert result["window"]["start"] == "2026-11-30T06:00:00Z"
    found = _by_signal(result)
    assert found["latency_p95_ms"]["onset"] <= "2026-11-30T10:00:00Z"
    assert found["latency_p95_ms"]["change"].startswith("x")
    assert result["findings"] == sorted(result["findings"], key=lambda f: f["onset"])


def test_a_healthy_service_has_no_findings_and_counts_its_healthy_signals(
    demo: DemoTelemetryBackend,
) -> None:
    start, end = recent_range(demo)
    result = service_anomalies(demo, "user-service", start, end)
    assert result["findings"] == []
    # every metric, both log rates, and the frequent WARN templates were examined
    assert result["healthy_signals"] > len(demo.metrics_by_service()["user-service"]) + 2


def test_log_patterns_flag_the_new_error_templates_of_the_demo(
    demo: DemoTelemetryBackend,
) -> None:
    start, end = recent_range(demo)
    result = service_log_patterns(demo, "shipping-service", start, end, "ERROR")
    assert result["window"]["onset"] is not None
    top = result["patterns"][0]
    assert top["new"] and top["count_before"] == 0 and top["count_after"] > 100
    assert "NullPointerException" in top["template"]


def test_the_synthetic_world_is_analysed_through_the_port_alone() -> None:
    backend = world()
    start, end = recent_range(backend)
    result = service_anomalies(backend, "ledger-writer", start, end)
    found = _by_signal(result)
    assert {"disk_used_ratio", "write_latency_ms", "ERROR"} <= set(found)
    onset = NOW - timedelta(minutes=107)
    assert datetime.fromisoformat(found["disk_used_ratio"]["onset"].replace("Z", "+00:00")) == onset
    # A log signal is dated by its first line, not by the start of its bucket.
    error_onset = datetime.fromisoformat(found["ERROR"]["onset"].replace("Z", "+00:00"))
    assert error_onset == onset + timedelta(seconds=10)
    # The hours before the service's first log line are not a quiet baseline.
    assert found["ERROR"]["baseline"]["start"] == "2031-03-14T12:00:00Z"
    assert service_anomalies(backend, "quote-api", start, end)["healthy_signals"] >= 1


def test_truncating_backends_still_give_exact_rates_and_template_counts() -> None:
    complete, truncated = world(), world()
    truncated.max_records = 50
    start, end = recent_range(complete)
    full = service_log_patterns(complete, "ledger-writer", start, end)
    sampled = service_log_patterns(truncated, "ledger-writer", start, end)
    assert full["window"]["onset"] == sampled["window"]["onset"]
    counts = {
        p["template"]: (p["count_before"], p["count_after"], p["new"]) for p in full["patterns"]
    }
    assert counts == {
        p["template"]: (p["count_before"], p["count_after"], p["new"]) for p in sampled["patterns"]
    }
    step = timedelta(
        seconds=service_anomalies(complete, "ledger-writer", start, end)["window"]["step_seconds"]
    )
    exact = _by_signal(service_anomalies(complete, "ledger-writer", start, end))["ERROR"]["onset"]
    bucket = _by_signal(service_anomalies(truncated, "ledger-writer", start, end))["ERROR"]["onset"]
    # Without every line, a log onset is the start of its bucket.
    assert parse(bucket) <= parse(exact) < parse(bucket) + step


def test_without_an_onset_no_template_is_new() -> None:
    backend = world()
    start, end = recent_range(backend)
    result = service_log_patterns(backend, "ledger-writer", start, end, "WARN")
    assert result["window"]["onset"] is None
    assert result["patterns"] and not any(p["new"] for p in result["patterns"])


def _line(moment: datetime, level: str, message: str) -> dict[str, object]:
    return {
        "timestamp": stamp(moment),
        "service": "api",
        "level": level,
        "message": message,
        "trace_id": None,
    }


def test_a_sparse_template_that_began_before_the_window_and_still_occurs_is_new() -> None:
    start = NOW - timedelta(hours=3)
    logs = [_line(t, "WARN", f"cache miss {i}") for i, t in enumerate(minutes(start, 180)[::20])]
    began = NOW - timedelta(minutes=50)
    logs += [_line(began + timedelta(minutes=m), "ERROR", "refused by peer") for m in (0, 22, 41)]
    # One line long before a surge in the window: the line before it is its baseline.
    logs += [_line(NOW - timedelta(minutes=m), "WARN", "queue full") for m in (45, *range(1, 29))]
    backend = SyntheticBackend({"api": {}}, sorted(logs, key=lambda r: str(r["timestamp"])))
    window = service_log_patterns(backend, "api", NOW - timedelta(minutes=30), NOW)
    found = {p["template"]: p for p in window["patterns"]}
    assert found["refused by peer"]["new"] and found["refused by peer"]["count_after"] == 3
    assert not found["cache miss <NUM>"]["new"]
    assert not found["queue full"]["new"] and found["queue full"]["count_before"] == 1


def test_series_helpers_bucket_and_find_the_first_log_line() -> None:
    backend = world()
    start, end = recent_range(backend)
    step = timedelta(minutes=3)
    assert logs_begin(backend, "ledger-writer", start, end, step) == datetime(
        2031, 3, 14, 12, 0, tzinfo=timezone.utc
    )
    assert logs_begin(backend, "ledger-writer", start, end, step, "ERROR", "no such text") is None
    edges = bucket_edges(start, start + timedelta(minutes=7), step)
    assert [e.minute for e in edges] == [0, 3, 6, 7]
    times = [start + timedelta(minutes=m) for m in (0, 1, 3, 6.5, 7)]
    assert [v for _, v in count_by_bucket(times, edges)] == [2.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        (
            "write failed: No space left on device (segment <NUM>-<NUM>)",
            "write failed: No space left on device (segment",
        ),
        ("GET <*> <NUM> <NUM>", "GET"),
        ("<NUM>", ""),
    ],
)
def test_the_longest_literal_of_a_template_is_its_keyword(template: str, needle: str) -> None:
    assert literal(template) == needle
