"""The port's answers for a backend that holds some of the signals, not all of them."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from .common import Clock, check_limit, level_filter, window
from .port import TelemetryError


class PartialSource:
    """Every port method, answering that this backend holds nothing of its signal: no
    services, metrics, aliases or runbooks, and an error naming ``system`` for a query. A
    backend overrides the methods of the signals it holds (a log source: ``_logs``)."""

    system = "this source"
    _clock: Clock
    #: Why the last service listing failed (None after one succeeded): while the source cannot
    #: be read it lists no services, and an answer names the failure.
    catalog_error: str | None = None

    def _listed(self, listing: Callable[[], list[str]]) -> list[str]:
        """``listing()``, or [] with ``catalog_error`` set while the source cannot be read."""
        try:
            found = listing()
        except TelemetryError as exc:
            self.catalog_error = str(exc)
            return []
        self.catalog_error = None
        return found

    def reference_time(self) -> datetime:
        """The clock."""
        return self._clock()

    def services(self) -> list[str]:
        """No services."""
        return []

    def metrics_by_service(self) -> dict[str, list[str]]:
        """No metrics."""
        return {}

    def service_aliases(self) -> dict[str, list[str]]:
        """None of its own (``SERVICE_ALIASES`` is the composite backend's)."""
        return {}

    def runbook_dir(self) -> Path | None:
        """No runbooks."""
        return None

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
        """Records of ``service`` in ``[start, end)``, newest first (``_logs`` of the checked
        arguments: the service name stripped, the window in UTC, the level canonical)."""
        start, end = window(start, end)
        check_limit(limit)
        return self._logs(str(service).strip(), start, end, level_filter(level), keyword, limit)

    def _logs(
        self,
        service: str,
        start: datetime,
        end: datetime,
        level: str | None,
        keyword: str | None,
        limit: int,
    ) -> dict[str, Any]:
        """Not a log source."""
        raise TelemetryError(f"{self.system} holds no logs")

    def query_metrics(self, *_: Any, **__: Any) -> dict[str, Any]:
        """Not a metric source."""
        raise TelemetryError(f"{self.system} holds no metrics")

    def query_alerts(self, *_: Any, **__: Any) -> dict[str, Any]:
        """Not an alert source."""
        raise TelemetryError(f"{self.system} holds no alerts")


def timed_probe(
    system: str, url: str | None, check: Callable[[], Any], *version: str
) -> dict[str, Any]:
    """Readiness of a backend, never raising: whether ``check()`` ran without a TelemetryError,
    the version (its answer's field at the keys ``version``; none given: no version) and how
    long it took."""
    started = time.perf_counter()
    try:
        found, error = check(), None
    except TelemetryError as exc:
        found, error = None, str(exc)
    for key in version:
        found = found.get(key) if isinstance(found, dict) else None
    return {
        "system": system,
        "url": url,
        "reachable": error is None,
        "version": found if version else None,
        "latencyMs": round((time.perf_counter() - started) * 1000, 1),
        "error": error,
    }
