"""Each scenario's signal is in the data, only after its onset, and only by joining sources."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from demo.scenarios import TEMPLATES, scenario_records
from demo.system import VARIANTS
from tests.demo.helpers import count, median, minutes, parse_time, values
from tests.environment import unavailable
from webapp.demo.backend import DemoTelemetryBackend

Window = tuple[datetime, datetime, datetime, datetime]


def _record(variant: str, failure_type: str) -> dict[str, str]:
    return next(r for r in scenario_records(variant) if r["failure_type"] == failure_type)


def _windows(backend: DemoTelemetryBackend, record: dict[str, str]) -> Window:
    """(start of data, onset, onset + 5 min, reference time)."""
    onset = parse_time(record["onset"])
    return onset - minutes(60), onset, onset + minutes(5), backend.reference_time()


@pytest.mark.parametrize("variant", VARIANTS)
def test_db_pool_exhaustion_shows_on_the_service_and_its_database(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend, record = backends[variant], _record(variant, "db_pool_exhaustion")
    svc, db = record["service"], record["cause_service"]
    start, onset, settled, end = _windows(backend, record)
    before = onset - minutes(1)
    assert median(backend, svc, "latency_p95_ms", start, before) < 300
    assert median(backend, svc, "latency_p95_ms", settled, end) > 2000
    assert max(values(backend, svc, "db_pool_active_connections", start, before)) < 20
    assert set(values(backend, svc, "db_pool_active_connections", settled, end)) == {50}
    pending = values(backend, svc, "db_pool_pending_requests", settled, end)
    assert pending[-1] > pending[0] + 10
    assert 0.03 < median(backend, svc, "error_rate", settled, end) < 0.15
    assert count(backend, svc, start, onset, level="ERROR") == 0
    errors = backend.query_logs(service=svc, start=onset, end=end, level="ERROR", limit=200)
    assert errors["total"] > 100
    assert all(db in r["message"] for r in errors["records"])
    assert count(backend, svc, settled, end, level="WARN") > 500
    # The cause is only visible on the database.
    assert median(backend, db, "mysql_slow_queries_per_sec", settled, end) > 1.0
    assert median(backend, db, "mysql_slow_queries_per_sec", start, before) < 0.1
    assert median(backend, db, "mysql_threads_connected", settled, end) > 100
    assert count(backend, db, start, onset, level="WARN") <= 3
    assert count(backend, db, onset, end, level="WARN") > 200
    assert count(backend, db, start, onset, level="ERROR") == 0
    assert count(backend, db, onset, end, level="ERROR") > 50


@pytest.mark.parametrize("variant", VARIANTS)
def test_downstream_timeout_shows_on_the_caller_the_callee_and_the_edge(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend, record = backends[variant], _record(variant, "downstream_timeout")
    svc, dep = record["service"], record["cause_service"]
    edge = "api-gateway" if variant == "default" else "edge-proxy"
    start, onset, settled, end = _windows(backend, record)
    before = onset - minutes(1)
    assert median(backend, svc, "error_rate", start, before) < 0.01
    assert 0.15 < median(backend, svc, "error_rate", settled, end) < 0.4
    errors = backend.query_logs(service=svc, start=onset, end=end, level="ERROR", limit=200)
    assert errors["total"] > 200
    assert all(dep in r["message"] for r in errors["records"])
    assert (
        sum(
            "timed out after 2000 ms" in r["message"]
            or "did not respond within 2000 ms" in r["message"]
            for r in errors["records"]
        )
        > 100
    )
    assert count(backend, svc, start, onset, level="ERROR", keyword=dep) == 0
    # The callee is slow because of its JVM.
    assert median(backend, dep, "latency_p95_ms", start, before) < 150
    assert median(backend, dep, "latency_p95_ms", settled, end) > 2500
    gc_before = median(backend, dep, "jvm_gc_pause_ms", start, before)
    assert median(backend, dep, "jvm_gc_pause_ms", settled, end) > 10 * gc_before
    assert median(backend, dep, "cpu_utilization", settled, end) > 0.9
    assert count(backend, dep, start, onset, level="ERROR") == 0
    assert count(backend, dep, onset, end, level="WARN") > 5 * count(
        backend, dep, start, onset, level="WARN"
    )
    # The edge echoes it, less strongly.
    edge_after = median(backend, edge, "error_rate", settled, end)
    assert median(backend, edge, "error_rate", start, before) < edge_after < 0.2
    assert count(backend, edge, onset, end, level="WARN", keyword="504") > 50
    assert count(backend, edge, start, onset, level="WARN", keyword=" 504 ") == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_cache_eviction_shows_on_the_reader_and_the_cache(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend, record = backends[variant], _record(variant, "cache_eviction")
    svc, cache = record["service"], record["cause_service"]
    start, onset, settled, end = _windows(backend, record)
    before = onset - minutes(1)
    assert median(backend, svc, "latency_p95_ms", start, before) < 150
    assert median(backend, svc, "latency_p95_ms", settled, end) > 700
    assert median(backend, svc, "cache_hit_ratio", start, before) > 0.9
    assert median(backend, svc, "cache_hit_ratio", settled, end) < 0.45
    assert count(backend, svc, start, onset, level="WARN", keyword=cache) == 0
    assert count(backend, svc, onset, end, level="WARN", keyword=cache) > 200
    assert count(backend, svc, onset, end, level="ERROR") == 0
    assert median(backend, cache, "redis_memory_used_ratio", start, before) < 0.9
    assert min(values(backend, cache, "redis_memory_used_ratio", onset, end)) > 0.99
    assert max(values(backend, cache, "redis_evicted_keys_per_sec", start, before)) == 0
    assert median(backend, cache, "redis_evicted_keys_per_sec", settled, end) > 1000
    assert count(backend, cache, onset, end, level="WARN", keyword="allkeys-lru") > 100
    assert count(backend, cache, start, onset, level="WARN", keyword="allkeys-lru") == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_bad_deploy_shows_a_version_change_and_exceptions(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend, record = backends[variant], _record(variant, "bad_deploy")
    svc = record["service"]
    start, onset, settled, end = _windows(backend, record)
    before = onset - minutes(1)
    assert set(values(backend, svc, "deploy_version", start, before)) == {2.73}
    assert set(values(backend, svc, "deploy_version", onset, end)) == {2.8}
    assert median(backend, svc, "error_rate", start, before) < 0.01
    assert median(backend, svc, "error_rate", settled, end) > 0.2
    latency_before = median(backend, svc, "latency_p95_ms", start, before)
    assert median(backend, svc, "latency_p95_ms", settled, end) < 1.3 * latency_before
    deploy = backend.query_logs(
        service=svc,
        start=onset - minutes(1),
        end=onset + minutes(1),
        level="INFO",
        keyword="2.8.0",
    )
    assert deploy["total"] >= 2
    assert any("2.7.3" in r["message"] for r in deploy["records"])
    assert count(backend, svc, start, onset, level="ERROR") == 0
    assert count(backend, svc, onset, end, level="ERROR", keyword="500") > 300


@pytest.mark.parametrize("variant", VARIANTS)
def test_healthy_service_is_flat_and_error_free(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend, record = backends[variant], _record(variant, "healthy")
    svc = record["service"]
    start, end = backend.reference_time() - minutes(180), backend.reference_time()
    assert count(backend, svc, start, end, level="ERROR") == 0
    assert count(backend, svc, start, end, level="WARN") < 60
    for metric in ("latency_p95_ms", "cpu_utilization", "memory_utilization"):
        series = values(backend, svc, metric, start, end)
        assert max(series) < 1.3 * median(backend, svc, metric, start, end), metric
    assert max(values(backend, svc, "error_rate", start, end)) < 0.005
    assert max(values(backend, svc, "db_pool_pending_requests", start, end)) == 0
    alerts = backend.query_alerts(state="all")["alerts"]
    assert svc not in {alert["service"] for alert in alerts}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_scenario_has_a_firing_alert_after_its_onset(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    backend = backends[variant]
    alerts = backend.query_alerts(state="firing")["alerts"]
    for record in scenario_records(variant)[:-1]:
        mine = [a for a in alerts if a["service"] == record["service"]]
        assert len(mine) == 1, record["id"]
        onset, active = parse_time(record["onset"]), parse_time(mine[0]["active_at"])
        assert onset < active <= onset + minutes(5)
        assert record["service"] in mine[0]["description"]
        assert mine[0]["severity"] in {"critical", "warning"}
    pending = backend.query_alerts(state="pending")["alerts"]
    assert [a["state"] for a in pending] == ["pending"]
    assert len(backend.query_alerts(state="all")["alerts"]) == len(alerts) + 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_questions_name_the_service_and_onset_as_in_the_data(
    backends: dict[str, DemoTelemetryBackend], variant: str
) -> None:
    records = scenario_records(variant)
    assert [r["failure_type"] for r in records][-1] == "healthy"
    for record in records:
        assert record["service"] in backends[variant].services()
        assert record["cause_service"] in backends[variant].services()
        assert record["service"] in record["question"]
        assert record["onset"][11:16] in record["question"]


def _runbook_titles(folder: Path) -> dict[str, str]:
    return {
        path.read_text().splitlines()[0].removeprefix("# "): path.read_text()
        for path in folder.glob("*.md")
    }


def test_runbooks_have_one_title_per_failure_type_plus_distractors(
    generated: dict[str, Path],
) -> None:
    titles = _runbook_titles(generated["default"] / "runbooks")
    expected = {r["runbook_title"] for r in scenario_records("default") if r["runbook_title"]}
    assert expected < set(titles)
    assert len(titles) >= len(expected) + 2
    for text in titles.values():
        assert "## Symptoms" in text
        assert not re.search(r"(payment|order|catalog|shipping)-service|redis-cache", text)


def _fts(folder: Path) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE chunks USING fts5(title, body)")
    except sqlite3.OperationalError:  # pragma: no cover - depends on the sqlite build
        unavailable("SQLite without FTS5")
    for title, text in _runbook_titles(folder).items():
        for section in re.split(r"\n(?=## )", text):
            db.execute("INSERT INTO chunks VALUES (?, ?)", (title, section))
    return db


@pytest.mark.parametrize(
    ("template", "failure_type"),
    [
        ("s1_pool_error", "db_pool_exhaustion"),
        ("s1_lock_wait", "db_pool_exhaustion"),
        ("s2_timeout", "downstream_timeout"),
        ("s2_breaker", "downstream_timeout"),
        ("s2_gc_pause", "downstream_timeout"),
        ("s3_miss", "cache_eviction"),
        ("s3_evicting", "cache_eviction"),
        ("s4_exception", "bad_deploy"),
        ("s4_deployed", "bad_deploy"),
    ],
)
def test_bm25_search_with_log_words_finds_the_scenario_runbook_in_both_phrasings(
    generated: dict[str, Path], template: str, failure_type: str
) -> None:
    db = _fts(generated["default"] / "runbooks")
    expected = _record("default", failure_type)["runbook_title"]
    for phrasing in TEMPLATES[template]:
        words = re.findall(r"[A-Za-z_]{4,}", re.sub(r"\{[^}]*\}", " ", phrasing))
        query = " OR ".join(f'"{word}"' for word in dict.fromkeys(words))
        best = db.execute(
            "SELECT title FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 1", (query,)
        ).fetchone()
        assert best == (expected,), phrasing
