"""Baselines are taken before any change still going on; no data is no evidence of health."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from webapp.analysis.anomalies import service_anomalies, service_log_patterns

from .synthetic import NOW, SyntheticBackend, minutes, stamp, world


def test_a_window_inside_an_incident_takes_its_baseline_before_the_onset() -> None:
    backend = world()  # ledger-writer broke 107 minutes before now
    onset = NOW - timedelta(minutes=107)
    result = service_anomalies(backend, "ledger-writer", NOW - timedelta(hours=1), NOW)
    found = {f["signal"]: f for f in result["findings"]}
    disk = found["disk_used_ratio"]
    assert disk["onset"] == stamp(onset)[:19] + "Z"
    assert disk["baseline"]["end"] < disk["onset"] and disk["baseline"]["median"] < 0.5
    assert disk["incident"]["peak"] == 0.97
    assert result["window"]["start"] == stamp(NOW - timedelta(hours=1))[:19] + "Z"
    assert result["window"]["baseline_from"] < disk["onset"]


def test_the_new_message_of_an_ongoing_incident_is_new_in_a_window_inside_it() -> None:
    result = service_log_patterns(world(), "ledger-writer", NOW - timedelta(minutes=30), NOW)
    failed = next(p for p in result["patterns"] if "No space left" in p["template"])
    assert failed["new"] and failed["count_before"] == 0


def test_a_signal_with_no_points_is_not_counted_healthy() -> None:
    window = (NOW - timedelta(hours=1), NOW)
    before = service_anomalies(world(), "quote-api", *window)
    backend = world()
    backend.metrics["quote-api"]["queue_depth"] = []
    result = service_anomalies(backend, "quote-api", *window)
    assert result["signals_without_data"] == before["signals_without_data"] + 1
    assert result["healthy_signals"] == before["healthy_signals"]


def test_a_service_with_no_data_at_all_has_no_healthy_signal() -> None:
    backend = world()
    backend.metrics["quiet-svc"] = {"cpu_ratio": [], "mem_ratio": []}
    result = service_anomalies(backend, "quiet-svc", NOW - timedelta(hours=1), NOW)
    assert result["healthy_signals"] == 0 and result["findings"] == []
    assert result["signals_without_data"] == 4  # two metrics, two log levels


def _steady_warnings() -> SyntheticBackend:
    """A service that has logged the same warning every five minutes for six hours."""
    start = NOW - timedelta(hours=6)
    logs: list[dict[str, Any]] = []
    for i, t in enumerate(minutes(start, 360)):
        logs.append(
            {
                "timestamp": stamp(t),
                "service": "feed-api",
                "level": "INFO",
                "message": f"served feed {i}",
                "trace_id": None,
            }
        )
        if i % 5 == 0:
            logs.append(
                {
                    "timestamp": stamp(t),
                    "service": "feed-api",
                    "level": "WARN",
                    "message": f"deprecated field 'thumb' requested by client {i % 7}",
                    "trace_id": None,
                }
            )
    calm = [(t, 0.3 + 0.01 * (i % 3)) for i, t in enumerate(minutes(start, 361))]
    return SyntheticBackend({"feed-api": {"cpu_ratio": calm}}, logs)


def test_a_warning_logged_at_the_same_rate_for_hours_is_neither_new_nor_a_finding() -> None:
    backend = _steady_warnings()
    window = (NOW - timedelta(minutes=30), NOW)
    assert service_anomalies(backend, "feed-api", *window)["findings"] == []
    patterns = service_log_patterns(backend, "feed-api", *window)["patterns"]
    assert patterns and not any(p["new"] for p in patterns)
    assert patterns[0]["count_before"] > 0
