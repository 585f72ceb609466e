"""A real Prometheus fires the demo's alerts, a real Alertmanager posts its webhook to the app
(served on a free port), and an AIOps run follows; the alert backends read the same alerts.

The demo metrics and logs are shifted so the dataset's reference time is a little ahead of the
current minute: rules are evaluated on the real clock over windows of the last minutes, so the
data must go on past "now" for the alerts to stay firing however long a slow machine takes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.webapp.browser.harness import LiveApp, start_app
from tests.webapp.demo_export import shift_to_now, write_log_dir, write_openmetrics, write_rules
from tests.webapp.telemetry.servers import (
    Server,
    free_port,
    start_alertmanager,
    start_prometheus,
)
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.persistence.models import AlertRecord, AlertRun, DiagnosisRun
from webapp.telemetry.alertmanager import AlertmanagerBackend
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.logfiles import LogFileBackend
from webapp.telemetry.prometheus import PrometheusBackend

TOKEN = "am-webhook-token"
LEAD = timedelta(minutes=30)  # how far the shifted data runs past the current minute
DEMO = DemoTelemetryBackend()
FIRING = sorted(a["alert_name"] for a in DEMO.query_alerts(state="firing")["alerts"])
PENDING = sorted(a["alert_name"] for a in DEMO.query_alerts(state="pending")["alerts"])


@dataclass
class Stack:
    prometheus: PrometheusBackend
    alertmanager: AlertmanagerBackend
    alertmanager_url: str
    app: LiveApp
    servers: list[Server]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    out = tmp_path_factory.mktemp("live-export")
    shift = shift_to_now(DEFAULT_DATA_DIR, datetime.now(timezone.utc) + LEAD)
    write_openmetrics(DEFAULT_DATA_DIR, out, shift)
    write_log_dir(DEFAULT_DATA_DIR, out, shift)
    rules = write_rules(DEFAULT_DATA_DIR, out)
    am_port = free_port()
    am_url = f"http://127.0.0.1:{am_port}"
    servers: list[Server] = []
    try:
        alertmanager = AlertmanagerBackend(HttpSource("Alertmanager", HttpOptions(am_url)))
        prom_port = free_port()
        prometheus = PrometheusBackend(
            HttpSource("Prometheus", HttpOptions(f"http://127.0.0.1:{prom_port}"))
        )
        backend = CompositeBackend(
            Signals(metrics=prometheus, logs=LogFileBackend(out / "logs"), alerts=alertmanager)
        )
        app = start_app(
            tmp_path_factory.mktemp("live-app"), backend=backend, alert_webhook_token=TOKEN
        )
        servers.append(
            start_alertmanager(
                tmp_path_factory.mktemp("am"),
                f"{app.url}/api/alerts/alertmanager",
                TOKEN,
                port=am_port,
            )
        )
        servers.append(
            start_prometheus(
                tmp_path_factory.mktemp("prom"), out / "metrics.om", rules, am_url, port=prom_port
            )
        )
        yield Stack(prometheus, alertmanager, am_url, app, servers)
        app.stop()
    finally:
        for server in servers:
            server.stop()


def _eventually(check: Any, seconds: float = 90) -> Any:
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"not reached within {seconds}s: {last!r}")


def test_prometheus_rules_fire_the_demo_alerts(stack: Stack) -> None:
    def names(state: str) -> list[str]:
        return sorted(a["alert_name"] for a in stack.prometheus.query_alerts(state=state)["alerts"])

    _eventually(lambda: names("firing") == FIRING and names("pending") == PENDING)
    alert = next(
        a for a in stack.prometheus.query_alerts()["alerts"] if a["alert_name"] == FIRING[0]
    )
    demo = next(a for a in DEMO.query_alerts()["alerts"] if a["alert_name"] == FIRING[0])
    assert (alert["service"], alert["severity"], alert["description"]) == (
        demo["service"],
        demo["severity"],
        demo["description"],
    )


def test_the_webhook_starts_an_aiops_run_linked_to_its_alerts(stack: Stack) -> None:
    database = stack.app.services.database

    def stored() -> list[str]:
        with database.connection_context():
            return sorted(r.alert_name for r in AlertRecord.select())

    def linked_names() -> list[str]:
        with database.connection_context():
            return sorted({r.alert_name for r in AlertRecord.select().join(AlertRun)})

    try:
        _eventually(lambda: set(FIRING) <= set(stored()))
        _eventually(lambda: set(FIRING) <= set(linked_names()))
    except AssertionError:
        logs = [Path(s.log).read_text()[-3000:] for s in stack.servers]
        raise AssertionError(f"stored {stored()}; server logs: {logs}") from None
    # Alertmanager may post a first group before every rule fires, so each run is checked
    # against the alerts linked to it, and all runs together cover every firing alert.
    with database.connection_context():
        linked: dict[str, set[str]] = {}
        for link in AlertRun.select(AlertRun, AlertRecord).join(AlertRecord):
            linked.setdefault(link.run_id, set()).add(link.alert.alert_name)
    assert linked and set(FIRING) <= set().union(*linked.values()), linked

    def finished(run_id: str) -> Any:
        with database.connection_context():
            run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
        return run if run.status in ("SUCCESS", "FAILED") else None

    for run_id, names in linked.items():
        run = _eventually(lambda run_id=run_id: finished(run_id), 120)
        assert run.agent_flow == "AI_OPS" and run.status == "SUCCESS", run.error_message
        assert all(name in run.answer for name in names), run.answer
    listing = httpx.get(stack.app.url + "/api/alerts?state=firing").json()["data"]
    assert {a["alertName"] for a in listing["alerts"]} >= set(FIRING)
    assert all(a["runs"] for a in listing["alerts"])
    ready = httpx.get(stack.app.url + "/readyz").json()["data"]["telemetry"]
    by_backend = {entry["backend"]: entry for entry in ready}
    assert by_backend["alertmanager"]["reachable"] and by_backend["log_dir"]["reachable"]
    assert by_backend["prometheus"]["version"] == "2.42.0+ds"
    assert json.dumps(ready)  # JSON-serialisable as served


def test_alertmanager_alerts_leave_out_silenced_ones(stack: Stack) -> None:
    # Last in the module: the silence would keep one alert out of the webhook test.
    def names() -> list[str]:
        return sorted(a["alert_name"] for a in stack.alertmanager.query_alerts()["alerts"])

    _eventually(lambda: names() == FIRING)
    assert stack.alertmanager.query_alerts(state="pending") == {"alerts": []}
    now = datetime.now(timezone.utc)
    silence = {
        "matchers": [{"name": "alertname", "value": FIRING[0], "isRegex": False}],
        "startsAt": now.isoformat(),
        "endsAt": (now + timedelta(hours=1)).isoformat(),
        "createdBy": "test",
        "comment": "known",
    }
    httpx.post(stack.alertmanager_url + "/api/v2/silences", json=silence).raise_for_status()
    _eventually(lambda: names() == FIRING[1:])
    assert stack.alertmanager.probe()["version"] == "0.25.0"
