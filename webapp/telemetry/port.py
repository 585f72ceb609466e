"""Backend ports the tools read telemetry through.

A backend answers in the tools' raw-output shapes, so a tool can hand its answer to the model
and to the invocation recorder verbatim:

* ``query_logs`` -> ``{"records": [{"timestamp", "service", "level", "message", "trace_id"}],
  "total": N, "truncated": bool}``; records newest first, ``total`` counts every match in the
  window before ``limit`` applies.
* ``query_metrics`` -> ``{"series": [{"metric", "labels", "points": [[ts, value], ...]}],
  "summary": {"min", "max", "avg", "last", "unit"}}``; ``ts`` is an ISO-8601 UTC string
  (``2026-11-30T10:05:00Z``), points oldest first.
* ``query_alerts`` -> ``{"alerts": [{"alert_name", "severity", "service", "description",
  "state", "active_at"}]}``.

Timestamps are timezone-aware UTC datetimes at this boundary and ISO-8601 strings with a ``Z``
suffix in outputs.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Protocol


class TelemetryError(Exception):
    """A query the backend cannot answer (unknown service or metric, bad window).

    The message is written for the model: it says what is wrong and what is valid.
    """


class TelemetryBackend(Protocol):
    """Logs, metrics, alerts and runbooks of one system."""

    name: str

    def reference_time(self) -> datetime:
        """ "Now" for default windows (the demo dataset declares its own)."""
        ...

    def services(self) -> list[str]:
        """Every service the backend has telemetry for, sorted."""
        ...

    def metrics_by_service(self) -> dict[str, list[str]]:
        """The metrics each service has, sorted (told to the model in the tool description)."""
        ...

    def service_aliases(self) -> dict[str, list[str]]:
        """Other names of services (``{service: [alias, ...]}``, Chinese ones included)."""
        ...

    def query_logs(
        self,
        *,
        service: str,
        start: datetime,
        end: datetime,
        level: str | None = None,
        keyword: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Log records of ``service`` in ``[start, end)``, filtered by exact level and keyword."""
        ...

    def query_metrics(
        self,
        *,
        service: str,
        metric: str,
        start: datetime,
        end: datetime,
        step_seconds: int | None = None,
    ) -> dict[str, Any]:
        """One series of ``metric`` for ``service`` in ``[start, end]``, downsampled to a step."""
        ...

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Alerts in ``state`` (firing, pending, or all)."""
        ...

    def runbook_dir(self) -> Path | None:
        """Folder of Markdown runbooks to index into the knowledge base, if any."""
        ...
