"""Rule alerts and Alertmanager alerts map onto the ``query_alerts`` shape (recorded answers)."""

from __future__ import annotations

from pytest_httpserver import HTTPServer

from tests.webapp.telemetry.recorded import recorded
from webapp.telemetry.alertmanager import AlertmanagerBackend, active_since
from webapp.telemetry.common import iso
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.prometheus import PrometheusBackend


def test_prometheus_rule_alerts_use_the_service_label_then_job(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api/v1/alerts").respond_with_json(
        recorded("prometheus-alerts.json")
    )
    backend = PrometheusBackend(HttpSource("Prometheus", HttpOptions(httpserver.url_for("/"))))
    assert backend.query_alerts(state="all")["alerts"] == [
        {
            "alert_name": "CheckoutErrorsHigh",
            "severity": "critical",
            "service": "checkout",
            "description": "5xx ratio of checkout above 5%",
            "state": "firing",
            "active_at": "2026-12-01T10:18:30Z",
        },
        {
            "alert_name": "CartSlow",
            "severity": "warning",
            "service": "cart",
            "description": "cart p95 above 1s",
            "state": "pending",
            "active_at": "2026-12-01T10:25:00Z",
        },
    ]
    assert [a["alert_name"] for a in backend.query_alerts()["alerts"]] == ["CheckoutErrorsHigh"]


def test_alertmanager_asks_for_unmuted_alerts(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api/v2/alerts").respond_with_json(
        recorded("alertmanager-v2-alerts.json")
    )
    backend = AlertmanagerBackend(HttpSource("Alertmanager", HttpOptions(httpserver.url_for("/"))))
    assert backend.query_alerts(state="all")["alerts"] == [
        {
            "alert_name": "CheckoutErrorsHigh",
            "severity": "critical",
            "service": "checkout",
            "description": "5xx ratio of checkout above 5%",
            "state": "firing",
            "active_at": "2026-12-01T10:18:30Z",
        }
    ]
    sent = httpserver.log[0][0].args
    assert (sent["silenced"], sent["inhibited"], sent["active"]) == ("false", "false", "true")


def test_an_alert_takes_the_activeat_of_the_most_specific_rule_alert_it_carries() -> None:
    rules = [
        {"labels": {"alertname": "Slow", "service": "cart"}, "activeAt": "2026-12-01T10:00:00Z"},
        {
            "labels": {"alertname": "Slow", "service": "cart", "instance": "b"},
            "activeAt": "2026-12-01T10:05:00.5Z",
        },
        {"labels": {"alertname": "Slow", "service": "shop"}, "activeAt": "2026-12-01T09:00:00Z"},
    ]
    # Alertmanager's labels add the external label ``cluster`` to the rule alert's.
    labels = {"alertname": "Slow", "service": "cart", "instance": "b", "cluster": "eu"}
    found = active_since(labels, rules)
    assert found is not None and iso(found) == "2026-12-01T10:05:00Z"
    assert active_since({"alertname": "Slow", "service": "db"}, rules) is None
