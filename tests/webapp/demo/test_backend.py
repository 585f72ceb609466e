"""DemoTelemetryBackend query semantics over the committed dataset."""

from __future__ import annotations

import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import webapp.demo.backend as backend_module
from demo.generate import generate
from tests.demo.helpers import parse_time, read_logs
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.telemetry import TelemetryBackend, TelemetryError

UTC = timezone.utc
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


@pytest.fixture(scope="module")
def records() -> list[dict[str, object]]:
    return read_logs(DEFAULT_DATA_DIR)


def test_backend_satisfies_the_port(backend: DemoTelemetryBackend) -> None:
    port: TelemetryBackend = backend
    assert port.name == "demo"
    assert port.reference_time() == NOW
    assert port.runbook_dir() == DEFAULT_DATA_DIR / "runbooks"


def test_services_and_metric_names_are_sorted_and_complete(backend: DemoTelemetryBackend) -> None:
    services = backend.services()
    assert services == sorted(services)
    assert len(services) == 9 and "mysql-primary" in services and "redis-cache" in services
    names = set().union(*backend.metrics_by_service().values())
    assert {"latency_p95_ms", "db_pool_active_connections", "redis_evicted_keys_per_sec"} <= names


def test_logs_are_newest_first_with_total_and_truncation(backend: DemoTelemetryBackend) -> None:
    result = backend.query_logs(service="payment-service", start=START, end=NOW, limit=20)
    stamps = [r["timestamp"] for r in result["records"]]
    assert len(stamps) == 20 and stamps == sorted(stamps, reverse=True)
    assert result["total"] > 3000 and result["truncated"] is True
    assert {r["service"] for r in result["records"]} == {"payment-service"}
    assert stamps[0] < "2026-11-30T12:00:00"


def test_log_window_includes_start_and_excludes_end(
    backend: DemoTelemetryBackend, records: list[dict[str, object]]
) -> None:
    mine = [r for r in records if r["service"] == "user-service"]
    first, second = parse_time(str(mine[100]["timestamp"])), parse_time(str(mine[101]["timestamp"]))
    assert first < second
    result = backend.query_logs(service="user-service", start=first, end=second)
    assert [r["timestamp"] for r in result["records"]] == [mine[100]["timestamp"]]
    assert result == {"records": [mine[100]], "total": 1, "truncated": False}
    empty = backend.query_logs(service="user-service", start=first, end=first)
    assert empty == {"records": [], "total": 0, "truncated": False}
    just_after = first + timedelta(microseconds=1)
    later = backend.query_logs(service="user-service", start=just_after, end=second)
    assert later["total"] == 0
    through = backend.query_logs(service="user-service", start=first, end=just_after)
    assert through["total"] == 1


def test_total_counts_every_match_of_the_window(
    backend: DemoTelemetryBackend, records: list[dict[str, object]]
) -> None:
    start, end = datetime(2026, 11, 30, 10, 30, tzinfo=UTC), datetime(2026, 11, 30, 11, tzinfo=UTC)
    expected = [
        r
        for r in records
        if r["service"] == "order-service"
        and "2026-11-30T10:30" <= str(r["timestamp"]) < "2026-11-30T11:00"
        and r["level"] == "ERROR"
        and "inventory" in str(r["message"]).lower()
    ]
    result = backend.query_logs(
        service="order-service", start=start, end=end, level="error", keyword="INVENTORY", limit=5
    )
    assert result["total"] == len(expected) > 5
    assert result["truncated"] is True
    assert result["records"] == list(reversed(expected))[:5]
    everything = backend.query_logs(
        service="order-service", start=start, end=end, level="ERROR", keyword="inventory", limit=200
    )
    assert everything["records"] == list(reversed(expected)) and not everything["truncated"]


@pytest.mark.parametrize(
    ("given", "level"), [("warn", "WARN"), ("WARNING", "WARN"), ("Info", "INFO")]
)
def test_level_is_an_exact_case_insensitive_match(
    backend: DemoTelemetryBackend, given: str, level: str
) -> None:
    result = backend.query_logs(service="catalog-service", start=START, end=NOW, level=given)
    assert result["records"] and {r["level"] for r in result["records"]} == {level}


def test_bad_arguments_are_telemetry_errors_that_say_what_is_valid(
    backend: DemoTelemetryBackend,
) -> None:
    with pytest.raises(TelemetryError, match="valid services: api-gateway, catalog-service"):
        backend.query_logs(service="payments", start=START, end=NOW)
    with pytest.raises(TelemetryError, match="valid levels: ERROR, WARN, INFO"):
        backend.query_logs(service="user-service", start=START, end=NOW, level="VERBOSE")
    with pytest.raises(TelemetryError, match="after end"):
        backend.query_logs(service="user-service", start=NOW, end=START)
    with pytest.raises(TelemetryError, match="limit"):
        backend.query_logs(service="user-service", start=START, end=NOW, limit=0)
    with pytest.raises(TelemetryError, match="valid states: firing, pending, all"):
        backend.query_alerts(state="resolved")


def test_naive_datetimes_are_taken_as_utc(backend: DemoTelemetryBackend) -> None:
    aware = backend.query_logs(
        service="user-service", start=START, end=START + timedelta(minutes=5)
    )
    naive = backend.query_logs(
        service="user-service",
        start=START.replace(tzinfo=None),
        end=(START + timedelta(minutes=5)).replace(tzinfo=None),
    )
    other_zone = timezone(timedelta(hours=2))
    shifted = backend.query_logs(
        service="user-service",
        start=START.astimezone(other_zone),
        end=(START + timedelta(minutes=5)).astimezone(other_zone),
    )
    assert aware == naive == shifted and aware["total"] > 50


def test_metric_window_is_inclusive_and_summarised(backend: DemoTelemetryBackend) -> None:
    start, end = (
        datetime(2026, 11, 30, 9, 55, tzinfo=UTC),
        datetime(2026, 11, 30, 10, 5, tzinfo=UTC),
    )
    result = backend.query_metrics(
        service="payment-service", metric="latency_p95_ms", start=start, end=end
    )
    (series,) = result["series"]
    assert series["metric"] == "latency_p95_ms"
    assert series["labels"] == {"service": "payment-service", "instance": "payment-service:8080"}
    points = series["points"]
    assert [p[0] for p in points][::10] == ["2026-11-30T09:55:00Z", "2026-11-30T10:05:00Z"]
    assert len(points) == 11
    values = [p[1] for p in points]
    summary = result["summary"]
    assert summary["min"] == min(values) and summary["max"] == max(values)
    assert summary["last"] == values[-1] and summary["unit"] == "ms"
    assert summary["avg"] == pytest.approx(statistics.fmean(values), abs=0.05)


def test_downsampling_averages_each_bucket(backend: DemoTelemetryBackend) -> None:
    args: dict[str, Any] = {
        "service": "mysql-primary",
        "metric": "mysql_threads_connected",
        "start": START,
    }
    native = backend.query_metrics(**args, end=START + timedelta(minutes=29))["series"][0]
    coarse = backend.query_metrics(**args, end=START + timedelta(minutes=29), step_seconds=600)
    points = coarse["series"][0]["points"]
    assert [p[0] for p in points] == [
        "2026-11-30T09:00:00Z",
        "2026-11-30T09:10:00Z",
        "2026-11-30T09:20:00Z",
    ]
    first = [p[1] for p in native["points"][:10]]
    assert points[0][1] == pytest.approx(statistics.fmean(first), abs=0.01)
    same = backend.query_metrics(**args, end=START + timedelta(minutes=29), step_seconds=30)
    assert same["series"][0]["points"] == native["points"]
    with pytest.raises(TelemetryError, match="step_seconds"):
        backend.query_metrics(**args, end=NOW, step_seconds=0)


def test_empty_metric_window_has_an_empty_summary(backend: DemoTelemetryBackend) -> None:
    result = backend.query_metrics(
        service="user-service",
        metric="error_rate",
        start=NOW + timedelta(hours=1),
        end=NOW + timedelta(hours=2),
    )
    assert result["series"][0]["points"] == []
    assert result["summary"] == {
        "min": None,
        "max": None,
        "avg": None,
        "last": None,
        "unit": "ratio",
    }


def test_unknown_metric_lists_the_metrics_of_that_service(backend: DemoTelemetryBackend) -> None:
    with pytest.raises(TelemetryError) as error:
        backend.query_metrics(
            service="catalog-service", metric="jvm_gc_pause_ms", start=START, end=NOW
        )
    message = str(error.value)
    assert "cache_hit_ratio" in message and "latency_p95_ms" in message
    assert "redis_memory_used_ratio" not in message
    with pytest.raises(TelemetryError, match="valid services"):
        backend.query_metrics(service="nope", metric="error_rate", start=START, end=NOW)


def test_alerts_by_state(backend: DemoTelemetryBackend) -> None:
    firing = backend.query_alerts()["alerts"]
    pending = backend.query_alerts(state="pending")["alerts"]
    everything = backend.query_alerts(state="ALL")["alerts"]
    assert {a["state"] for a in firing} == {"firing"} and len(firing) >= 4
    assert {a["state"] for a in pending} == {"pending"}
    assert len(everything) == len(firing) + len(pending)
    for alert in everything:
        assert set(alert) == {
            "alert_name",
            "severity",
            "service",
            "description",
            "state",
            "active_at",
        }
    firing[0]["state"] = "mutated"
    assert backend.query_alerts()["alerts"][0]["state"] == "firing"


def test_files_load_once_under_concurrent_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = backend_module._load_logs

    def counting(path: Path) -> object:
        calls.append(threading.current_thread().name)
        time.sleep(0.05)
        return real(path)

    monkeypatch.setattr(backend_module, "_load_logs", counting)
    fresh = DemoTelemetryBackend(DEFAULT_DATA_DIR)
    with ThreadPoolExecutor(max_workers=8) as pool:
        totals = list(
            pool.map(
                lambda _: fresh.query_logs(service="user-service", start=START, end=NOW)["total"],
                range(8),
            )
        )
    assert len(calls) == 1
    assert len(set(totals)) == 1 and totals[0] > 3000


def test_missing_dataset_is_a_clear_error(tmp_path: Path) -> None:
    empty = DemoTelemetryBackend(tmp_path)
    with pytest.raises(TelemetryError, match=r"make demo-data"):
        empty.services()
    assert empty.runbook_dir() is None


def test_a_folder_without_aliases_declares_none(tmp_path: Path) -> None:
    generate(tmp_path, seed=3)
    dataset = json.loads((tmp_path / "dataset.json").read_text(encoding="utf-8"))
    del dataset["aliases"]
    (tmp_path / "dataset.json").write_text(json.dumps(dataset), encoding="utf-8")
    assert DemoTelemetryBackend(tmp_path).service_aliases() == {}


def test_a_folder_of_metrics_only_still_states_their_range(tmp_path: Path) -> None:
    # Metrics from a folder, logs from elsewhere (LOG_DIR): the folder has no log file, and
    # its metrics' range is still known, so an answer can say a window lies outside it.
    generate(tmp_path, seed=3)
    (tmp_path / "logs.jsonl.gz").unlink()
    ranges = DemoTelemetryBackend(tmp_path).data_range()
    assert ranges["logs"] is None
    assert ranges["metrics"] is not None and ranges["metrics"][0] < ranges["metrics"][1]
