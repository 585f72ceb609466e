"""The alerts the Alertmanager webhook stored, as the alert source of last resort.

An alert is firing until a notification resolves it; there is no ``pending`` state. The most
recently updated ``MAX_ALERTS`` are answered.
"""

from __future__ import annotations

from datetime import timezone
from typing import Any

from peewee import Database, PeeweeException

from ..persistence.models import AlertRecord
from .common import Clock, alert, alert_state, utc_now
from .partial import PartialSource, timed_probe
from .port import TelemetryError

MAX_ALERTS = 500


class WebhookAlertsBackend(PartialSource):
    """The alerts signal of ``TelemetryBackend`` over the alerts the webhook stored."""

    system = "the alert webhook"
    name = "alert_webhook"

    def __init__(
        self, database: Database, *, service_label: str = "service", clock: Clock = utc_now
    ) -> None:
        self.database = database
        self.service_label = service_label
        self._clock = clock

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Received alerts no notification has resolved yet, most recently updated first."""
        if alert_state(state) == "pending":
            return {"alerts": []}
        try:
            with self.database.connection_context():
                rows = list(
                    AlertRecord.select()
                    .where(AlertRecord.status == "firing")
                    .order_by(AlertRecord.updated_at.desc(), AlertRecord.id.desc())
                    .limit(MAX_ALERTS)
                )
        except PeeweeException as exc:
            raise TelemetryError(f"the received alerts cannot be read: {exc}") from None
        return {"alerts": [self._alert(row) for row in rows]}

    def _alert(self, row: AlertRecord) -> dict[str, Any]:
        labels = row.labels if isinstance(row.labels, dict) else {}
        started = row.starts_at.replace(tzinfo=timezone.utc) if row.starts_at else None
        service = labels.get(self.service_label) or row.service
        return alert(row.alert_name, row.severity, service, row.annotations, "firing", started)

    def probe(self) -> dict[str, Any]:
        """Whether the stored alerts can be read (the database), and how quickly."""
        return timed_probe("alert webhook", None, self.query_alerts)
