"""What every logs-only backend (Loki, Elasticsearch, log files) answers the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .port import TelemetryError


class LogSource:
    """The port's metric, alert and runbook parts for a backend that holds only logs.

    A subclass sets ``system`` (its name in messages) and ``_aliases`` (``SERVICE_ALIASES``).
    """

    system = "this log source"
    _aliases: Mapping[str, Sequence[str]]
    #: Why the last service listing failed (None after one succeeded): while the source cannot
    #: be read it lists no services, and an answer names the failure.
    catalog_error: str | None = None

    def metric_names(self) -> list[str]:
        """No metrics."""
        return []

    def metrics_by_service(self) -> dict[str, list[str]]:
        """No metrics."""
        return {}

    def service_aliases(self) -> dict[str, list[str]]:
        """Configured aliases (``SERVICE_ALIASES``)."""
        return {s: list(names) for s, names in self._aliases.items()}

    def runbook_dir(self) -> Path | None:
        """No runbooks."""
        return None

    def query_metrics(self, **_: Any) -> dict[str, Any]:
        """Not a metric source."""
        raise TelemetryError(f"{self.system} holds no metrics")

    def query_alerts(self, **_: Any) -> dict[str, Any]:
        """Not an alert source."""
        raise TelemetryError(f"{self.system} holds no alerts")
