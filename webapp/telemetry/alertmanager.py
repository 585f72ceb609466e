"""Alerts from Alertmanager's API v2: active ones, neither silenced nor inhibited.

Alertmanager has no ``pending`` state. ``active_at`` is the matching Prometheus rule alert's
``activeAt`` when the rules' Prometheus is configured, else ``startsAt`` (when the alert last
fired; the answer's ``note`` says so when Prometheus could not be read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .common import Clock, alert, alert_state, parse_timestamp, utc_now
from .http import HttpSource
from .partial import PartialSource
from .port import TelemetryError

#: Alertmanager's own filters: active alerts, neither silenced, inhibited nor unprocessed.
_UNMUTED = {"active": "true", "silenced": "false", "inhibited": "false", "unprocessed": "false"}
#: The rule alerts of the Prometheus that feeds this Alertmanager (``PrometheusBackend``'s).
RuleAlerts = Callable[[], list[dict[str, Any]]]


class AlertmanagerBackend(PartialSource):
    """The alerts signal of ``TelemetryBackend`` over Alertmanager."""

    system = "Alertmanager"
    name = "alertmanager"

    def __init__(
        self,
        http: HttpSource,
        *,
        service_label: str = "service",
        fallback_label: str = "job",
        clock: Clock = utc_now,
        rule_alerts: RuleAlerts | None = None,
    ) -> None:
        self.http = http
        self.service_label = service_label
        self.fallback_label = fallback_label
        self._clock = clock
        self.rule_alerts = rule_alerts

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Active alerts that are neither silenced nor inhibited."""
        wanted = alert_state(state)
        if wanted == "pending":
            return {"alerts": []}
        rows = self.http.request("GET", "/api/v2/alerts", params=_UNMUTED)
        if not isinstance(rows, list):
            raise TelemetryError(
                f"{self.http.system} answered /api/v2/alerts with an unexpected body: "
                f"{str(rows)[:200]}"
            )
        rules, note = self._rules()
        answer: dict[str, Any] = {
            "alerts": [self._alert(row, rules) for row in rows if isinstance(row, dict)]
        }
        if note:
            answer["note"] = note
        return answer

    def _rules(self) -> tuple[list[dict[str, Any]], str | None]:
        """Prometheus' rule alerts, or none and why (then ``startsAt`` stands in)."""
        if self.rule_alerts is None:
            return [], None
        try:
            return self.rule_alerts(), None
        except TelemetryError as exc:
            return [], (
                f"active_at is Alertmanager's startsAt (when each alert last fired): the rule "
                f"alerts' activeAt could not be read ({exc})"
            )

    def _alert(self, row: dict[str, Any], rules: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        labels = row.get("labels") or {}
        return alert(
            labels.get("alertname", ""),
            labels.get("severity", ""),
            labels.get(self.service_label) or labels.get(self.fallback_label, ""),
            row.get("annotations"),
            "firing",
            active_since(labels, rules) or parse_timestamp(row.get("startsAt")),
        )

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (``/api/v2/status``)."""
        return self.http.probe("/api/v2/status", "versionInfo", "version")


def active_since(labels: Mapping[str, Any], rules: Sequence[Mapping[str, Any]]) -> datetime | None:
    """``activeAt`` of the rule alert whose labels are the most specific subset of ``labels``."""
    matching = [
        rule
        for rule in rules
        if isinstance(rule.get("labels"), Mapping)
        and rule["labels"]
        and all(labels.get(k) == v for k, v in rule["labels"].items())
    ]
    best = max(matching, key=lambda rule: len(rule["labels"]), default=None)
    return parse_timestamp(best.get("activeAt")) if best else None
