"""An alert's start is Prometheus' ``activeAt``, not Alertmanager's ``startsAt``: a real
Prometheus evaluates a rule with a ``for:`` period and notifies a real Alertmanager, which
records the alert only once it fires - seconds after it became active."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from tests.webapp.telemetry.servers import (
    Server,
    free_port,
    start_alertmanager,
    start_prometheus,
)
from webapp.telemetry.alertmanager import AlertmanagerBackend
from webapp.telemetry.common import parse_timestamp
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.prometheus import PrometheusBackend

PENDING_SECONDS = 5
RULE = {
    "alert": "CheckoutErrorsHigh",
    "expr": "vector(1)",
    "for": f"{PENDING_SECONDS}s",
    "labels": {"severity": "critical", "service": "checkout"},
    "annotations": {"description": "5xx ratio of checkout above 5%"},
}


@dataclass
class Pair:
    prometheus: PrometheusBackend
    alertmanager_url: str


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Prometheus (one rule with a ``for:`` period) notifying Alertmanager."""
    work = tmp_path_factory.mktemp("alert-start")
    an_hour_ago = int((datetime.now(timezone.utc) - timedelta(hours=1)).timestamp())
    metrics = work / "seed.om"
    metrics.write_text(f'# TYPE seed gauge\nseed{{job="seed"}} 1 {an_hour_ago}\n# EOF\n')
    rules = work / "rules.yml"
    rules.write_text(json.dumps({"groups": [{"name": "start", "rules": [RULE]}]}))
    servers: list[Server] = []
    try:
        # Alertmanager's receiver is a closed port: its notifications fail, which this test ignores.
        servers.append(start_alertmanager(work, f"http://127.0.0.1:{free_port()}/", "unused"))
        servers.append(start_prometheus(work, metrics, rules, servers[0].url))
        prometheus = PrometheusBackend(HttpSource("Prometheus", HttpOptions(servers[1].url)))
        yield Pair(prometheus, servers[0].url)
    finally:
        for server in servers:
            server.stop()


def _eventually(check: Any, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"not reached within {seconds}s")


def _alertmanager(pair: Pair, **kwargs: Any) -> AlertmanagerBackend:
    return AlertmanagerBackend(
        HttpSource("Alertmanager", HttpOptions(pair.alertmanager_url)), **kwargs
    )


def test_an_alertmanager_alert_starts_when_prometheus_made_it_active(pair: Pair) -> None:
    alone = _alertmanager(pair)
    [notified] = _eventually(lambda: alone.query_alerts()["alerts"])
    [rule] = pair.prometheus.query_alerts()["alerts"]
    active, fired = parse_timestamp(rule["active_at"]), parse_timestamp(notified["active_at"])
    assert active is not None and fired is not None
    # Alertmanager only hears of the alert once its for: period is over.
    assert fired - active >= timedelta(seconds=PENDING_SECONDS - 1)

    joined = _alertmanager(pair, rule_alerts=pair.prometheus.rule_alerts)
    answer = joined.query_alerts()
    [alert] = answer["alerts"]
    assert alert["active_at"] == rule["active_at"] and "note" not in answer
    assert (alert["alert_name"], alert["service"]) == ("CheckoutErrorsHigh", "checkout")


def test_an_unreadable_prometheus_leaves_startsat_and_says_so(pair: Pair) -> None:
    dead = PrometheusBackend(
        HttpSource(
            "Prometheus",
            HttpOptions(f"http://127.0.0.1:{free_port()}", timeout_seconds=2, attempts=1),
        )
    )
    alone = _alertmanager(pair)
    [notified] = _eventually(lambda: alone.query_alerts()["alerts"])
    answer = _alertmanager(pair, rule_alerts=dead.rule_alerts).query_alerts()
    assert answer["alerts"][0]["active_at"] == notified["active_at"]
    assert "startsAt" in answer["note"] and "Prometheus at http://127.0.0.1:" in answer["note"]


def test_a_silenced_alert_is_left_out(pair: Pair) -> None:
    """Alertmanager leaves out silenced alerts when asked for unmuted ones."""
    alertmanager = _alertmanager(pair)
    _eventually(lambda: alertmanager.query_alerts()["alerts"])
    now = datetime.now(timezone.utc)
    silence = {
        "matchers": [{"name": "alertname", "value": RULE["alert"], "isRegex": False}],
        "startsAt": now.isoformat(),
        "endsAt": (now + timedelta(hours=1)).isoformat(),
        "createdBy": "test",
        "comment": "maintenance",
    }
    created = alertmanager.http.request("POST", "/api/v2/silences", json=silence)
    try:
        _eventually(lambda: alertmanager.query_alerts()["alerts"] == [])
    finally:
        httpx.delete(f"{pair.alertmanager_url}/api/v2/silence/{created['silenceID']}")
