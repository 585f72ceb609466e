"""Alerts from Alertmanager's API v2 (``GET /api/v2/alerts``).

Silenced and inhibited alerts are left out (someone decided they need no attention), and so
are unprocessed ones; Alertmanager has no ``pending`` state (pending alerts live in Prometheus),
so ``state=pending`` answers an empty list and ``all`` equals ``firing``. Each alert maps to
the ``query_alerts`` shape: ``alertname`` and ``severity`` labels, the service from
``SERVICE_LABEL`` (then the fallback label), ``description`` then ``summary`` annotations, and
``startsAt`` as ``active_at``.
"""

from __future__ import annotations

from typing import Any

from .alertsource import AlertSource
from .common import Clock, alert_state, iso, parse_timestamp, utc_now
from .http import HttpSource
from .port import TelemetryError


class AlertmanagerBackend(AlertSource):
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
    ) -> None:
        self.http = http
        self.service_label = service_label
        self.fallback_label = fallback_label
        self._clock = clock

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Active alerts that are neither silenced nor inhibited."""
        wanted = alert_state(state)
        if wanted == "pending":
            return {"alerts": []}
        rows = self.http.get_json(
            "/api/v2/alerts",
            {"active": "true", "silenced": "false", "inhibited": "false", "unprocessed": "false"},
        )
        if not isinstance(rows, list):
            raise TelemetryError(
                f"{self.http.system} answered /api/v2/alerts with an unexpected body: "
                f"{str(rows)[:200]}"
            )
        return {"alerts": [self._alert(row) for row in rows if _active(row)]}

    def _alert(self, row: dict[str, Any]) -> dict[str, Any]:
        labels = row.get("labels") or {}
        notes = row.get("annotations") or {}
        started = parse_timestamp(row.get("startsAt"))
        return {
            "alert_name": labels.get("alertname", ""),
            "severity": labels.get("severity", ""),
            "service": labels.get(self.service_label) or labels.get(self.fallback_label, ""),
            "description": notes.get("description") or notes.get("summary") or "",
            "state": "firing",
            "active_at": iso(started) if started else None,
        }

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (``/api/v2/status``)."""
        found = self.http.probe("/api/v2/status")
        body = found.pop("body", None)
        info = body.get("versionInfo") if isinstance(body, dict) else None
        found["version"] = info.get("version") if isinstance(info, dict) else None
        return {"system": self.http.system, **found}


def _active(row: Any) -> bool:
    """Active and not muted (the server filters too; this guards older servers)."""
    if not isinstance(row, dict):
        return False
    status = row.get("status") or {}
    return (
        status.get("state", "active") == "active"
        and not status.get("silencedBy")
        and not status.get("inhibitedBy")
    )
