"""A backend per signal from settings; a signal without one answers "not configured" as data."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from webapp.config import Settings, SettingsError
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry import TelemetryError
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.logfiles import LogFileBackend
from webapp.telemetry.prometheus import PrometheusBackend
from webapp.telemetry.readiness import telemetry_readiness
from webapp.tools.catalog import telemetry_tools
from webapp.tools.registry import ToolBox
from webapp.wiring import telemetry_backend

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


def test_a_signal_without_a_backend_answers_that_it_is_not_configured(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text("2026-11-30T10:00:00Z ERROR boom\n")
    backend = CompositeBackend(Signals(logs=LogFileBackend(tmp_path)))
    audit = MemoryAudit()
    box = ToolBox(telemetry_tools(backend), audit, "executor")
    with run_scope("s", "r"):
        metrics = box.call("query_metrics", json.dumps({"service": "api", "metric": "x"}), None)
        alerts = box.call("query_alerts", "{}", None)
        logs = box.call(
            "query_logs",
            json.dumps(
                {"service": "api", "start": "2026-11-30T09:30:00Z", "end": "2026-11-30T10:30:00Z"}
            ),
            None,
        )
    assert metrics.status == alerts.status == logs.status == "SUCCESS"
    answer = json.loads(metrics.content)["result"]
    assert answer["not_configured"] is True and "PROMETHEUS_URL" in answer["message"]
    assert answer["series"] == []
    assert json.loads(alerts.content)["result"]["alerts"] == []
    assert "ALERTMANAGER_URL" in json.loads(alerts.content)["result"]["message"]
    assert json.loads(logs.content)["result"]["total"] == 1


def test_services_are_the_union_and_aliases_merge(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text("2026-11-30T10:00:00Z INFO up\n")
    demo = DemoTelemetryBackend()
    logs = LogFileBackend(tmp_path)
    backend = CompositeBackend(
        Signals(metrics=demo, logs=logs, alerts=demo, runbooks=demo),
        aliases={"api": ["edge"], "gone": ["x"]},
    )
    assert backend.services() == sorted({*demo.services(), "api"})
    assert backend.service_aliases() == {**demo.service_aliases(), "api": ["edge"]}
    assert backend.reference_time() == demo.reference_time()
    assert backend.runbook_dir() == demo.runbook_dir()
    assert [p["signals"] for p in telemetry_readiness(backend)] == [
        ["metrics", "alerts", "runbooks"],
        ["logs"],
    ]


def test_a_service_only_the_metric_backend_knows_has_no_lines_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text("2026-11-30T10:00:00Z INFO up\n")
    demo = DemoTelemetryBackend()
    backend = CompositeBackend(Signals(metrics=demo, logs=LogFileBackend(tmp_path)))
    window = {"start": T0, "end": T0.replace(hour=11)}
    metrics_only = demo.services()[0]
    assert backend.query_logs(service=metrics_only, **window) == {
        "records": [],
        "total": 0,
        "truncated": False,
    }
    assert backend.query_logs(service="api", **window)["total"] == 1
    with pytest.raises(TelemetryError, match="unknown service"):
        backend.query_logs(service="nowhere", **window)


def test_demo_stays_the_default_and_live_builds_a_backend_per_signal(tmp_path: Path) -> None:
    assert isinstance(telemetry_backend(Settings.from_env({})), DemoTelemetryBackend)
    (tmp_path / "api.log").write_text("2026-11-30T10:00:00Z INFO up\n")
    settings = Settings.from_env(
        {
            "TELEMETRY_BACKEND": "live",
            "PROMETHEUS_URL": "http://127.0.0.1:9",
            "LOG_DIR": str(tmp_path),
            "TELEMETRY_DIR": str(DEFAULT_DATA_DIR),
            "SERVICE_ALIASES": '{"api": ["edge"]}',
        }
    )
    backend = telemetry_backend(settings)
    assert isinstance(backend, CompositeBackend)
    assert isinstance(backend.signals.metrics, PrometheusBackend)
    assert backend.signals.alerts is backend.signals.metrics
    assert isinstance(backend.signals.logs, LogFileBackend)
    assert (
        backend.signals.runbooks is not None
        and backend.runbook_dir() == DEFAULT_DATA_DIR / "runbooks"
    )
    assert backend.speaks_promql


def test_a_telemetry_folder_alone_serves_every_signal() -> None:
    settings = Settings.from_env(
        {"TELEMETRY_BACKEND": "live", "TELEMETRY_DIR": str(DEFAULT_DATA_DIR)}
    )
    backend = telemetry_backend(settings)
    demo = DemoTelemetryBackend()
    assert backend.services() == demo.services()
    assert backend.query_alerts(state="all") == demo.query_alerts(state="all")
    assert isinstance(backend, CompositeBackend) and not backend.speaks_promql


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"PROMETHEUS_URL": "http://p:9090"}, "TELEMETRY_BACKEND=live"),
        ({"TELEMETRY_BACKEND": "live"}, "TELEMETRY_BACKEND=live needs"),
        (
            {"TELEMETRY_BACKEND": "prometheus"},
            "TELEMETRY_BACKEND='prometheus': Input should be 'demo' or 'live'",
        ),
        (
            {"TELEMETRY_BACKEND": "live", "PROMETHEUS_URL": "p:9090"},
            "PROMETHEUS_URL must be an http",
        ),
        (
            {"TELEMETRY_BACKEND": "live", "LOKI_URL": "http://l", "LOG_DIR": "/tmp"},
            "LOKI_URL and LOG_DIR",
        ),
        ({"TELEMETRY_BACKEND": "live", "LOG_DIR": "/nonexistent-dir"}, "LOG_DIR"),
        ({"TELEMETRY_BACKEND": "live", "TELEMETRY_DIR": "/tmp"}, "has no dataset.json"),
        (
            {"TELEMETRY_BACKEND": "live", "LOKI_URL": "http://l", "LOKI_TIMEOUT_SECONDS": "0"},
            "LOKI_TIMEOUT_SECONDS",
        ),
        (
            {"TELEMETRY_BACKEND": "live", "LOKI_URL": "http://l", "LOKI_PASSWORD": "p"},
            "LOKI_PASSWORD is set without LOKI_USERNAME",
        ),
        (
            {"TELEMETRY_BACKEND": "live", "LOKI_URL": "http://l", "LOKI_CA_BUNDLE": "/no/ca.pem"},
            "LOKI_CA_BUNDLE",
        ),
        ({"PROMETHEUS_TLS_VERIFY": "maybe"}, "PROMETHEUS_TLS_VERIFY"),
        ({"SERVICE_ALIASES": "[1]"}, "SERVICE_ALIASES"),
        ({"SERVICE_ALIASES": "/no/such/aliases.json"}, "SERVICE_ALIASES"),
        ({"SERVICE_LABEL": "a-b"}, "SERVICE_LABEL"),
        ({"ELASTICSEARCH_FIELD_MAP": '{"colour": "x"}'}, "ELASTICSEARCH_FIELD_MAP"),
        ({"ELASTICSEARCH_FIELD_MAP": "service=x"}, "ELASTICSEARCH_FIELD_MAP"),
        ({"TELEMETRY_ATTEMPTS": "0"}, "TELEMETRY_ATTEMPTS"),
    ],
)
def test_invalid_telemetry_settings_name_the_variable(environ: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named.replace("(", r"\(")):
        Settings.from_env(environ)


def test_field_maps_and_aliases_parse() -> None:
    settings = Settings.from_env(
        {
            "ELASTICSEARCH_FIELD_MAP": '{"service": "kubernetes.labels.app", "level": "severity"}',
            "SERVICE_ALIASES": '{"checkout": ["cart", "basket"]}',
        }
    )
    assert settings.elasticsearch_field_map == {
        "service": "kubernetes.labels.app",
        "level": "severity",
    }
    assert settings.service_aliases == {"checkout": ["cart", "basket"]}


def test_service_aliases_may_live_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "aliases.json"
    path.write_text('{"rider-auth": ["骑手登录", "courier sign-in"]}', encoding="utf-8")
    settings = Settings.from_env({"SERVICE_ALIASES": str(path)})
    assert settings.service_aliases == {"rider-auth": ["骑手登录", "courier sign-in"]}
    path.write_text('["not", "an", "object"]', encoding="utf-8")
    with pytest.raises(SettingsError, match="SERVICE_ALIASES"):
        Settings.from_env({"SERVICE_ALIASES": str(path)})


def test_a_service_with_metrics_only_has_no_log_lines_instead_of_an_error(tmp_path: Path) -> None:
    """A database whose metrics are scraped but whose logs are not collected: its log query
    answers no lines (so its metrics are still analysed); an unknown service still fails."""
    logs = tmp_path / "logs"
    (logs / "api").mkdir(parents=True)
    (logs / "api" / "app.log").write_text(
        '{"time":"2026-11-30T10:00:00Z","level":"error","msg":"boom"}\n', encoding="utf-8"
    )
    settings = Settings.from_env(
        {"TELEMETRY_BACKEND": "live", "TELEMETRY_DIR": str(DEFAULT_DATA_DIR), "LOG_DIR": str(logs)}
    )
    backend = telemetry_backend(settings)
    start = backend.reference_time() - timedelta(hours=1)
    metrics_only = next(s for s in backend.metrics_by_service() if s != "api")
    found = backend.query_logs(service=metrics_only, start=start, end=backend.reference_time())
    assert found["records"] == []
    with pytest.raises(TelemetryError, match="unknown service"):
        backend.query_logs(service="nope", start=start, end=backend.reference_time())
