"""What every alerts-only backend (Alertmanager, the webhook's received alerts) answers alike."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from .common import Clock
from .port import TelemetryError


class AlertSource:
    """The port's catalog, log, metric and runbook parts for a backend that holds only alerts.

    A subclass sets ``system`` (its name in messages) and ``_clock`` (its "now").
    """

    system = "this alert source"
    _clock: Clock

    def reference_time(self) -> datetime:
        """The clock."""
        return self._clock()

    def services(self) -> list[str]:
        """An alert source is no service catalog."""
        return []

    def metric_names(self) -> list[str]:
        """No metrics."""
        return []

    def metrics_by_service(self) -> dict[str, list[str]]:
        """No metrics."""
        return {}

    def service_aliases(self) -> dict[str, list[str]]:
        """No aliases of its own."""
        return {}

    def runbook_dir(self) -> Path | None:
        """No runbooks."""
        return None

    def query_logs(self, **_: Any) -> dict[str, Any]:
        """Not a log source."""
        raise TelemetryError(f"{self.system} holds no logs")

    def query_metrics(self, **_: Any) -> dict[str, Any]:
        """Not a metric source."""
        raise TelemetryError(f"{self.system} holds no metrics")
