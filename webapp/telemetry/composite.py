"""One ``TelemetryBackend`` made of a backend per signal: metrics, logs, alerts, runbooks.

A signal without a backend answers an empty result with ``"not_configured": true`` and a message
naming the variables that configure it. Services are the union of the metric and log backends';
aliases are those the backends declare, then the configured ones (``SERVICE_ALIASES``) of
services they have.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .common import alert_state, utc_now
from .port import TelemetryBackend, TelemetryError

#: The variables that configure each signal, named in "not configured" answers.
SIGNAL_SOURCES = {
    "metrics": "PROMETHEUS_URL or TELEMETRY_DIR",
    "logs": "LOKI_URL, ELASTICSEARCH_URL, LOG_DIR or TELEMETRY_DIR",
    "alerts": "ALERTMANAGER_URL, PROMETHEUS_URL, TELEMETRY_DIR or ALERT_WEBHOOK_TOKEN",
}


def not_configured(signal: str) -> dict[str, Any]:
    """The data a signal without a backend answers."""
    return {
        "not_configured": True,
        "message": f"no {signal} backend is configured (set {SIGNAL_SOURCES[signal]})",
    }


@dataclass(frozen=True)
class Signals:
    """The backend chosen for each signal (None: not configured)."""

    metrics: TelemetryBackend | None = None
    logs: TelemetryBackend | None = None
    alerts: TelemetryBackend | None = None
    runbooks: TelemetryBackend | None = None


class CompositeBackend:
    """Routes each port method to the backend configured for its signal."""

    name = "composite"

    def __init__(
        self,
        signals: Signals,
        clock: Callable[[], datetime] = utc_now,
        aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.signals = signals
        self._clock = clock
        self.aliases = aliases or {}

    def reference_time(self) -> datetime:
        """The metric backend's "now", else the log backend's, else the clock."""
        source = self.signals.metrics or self.signals.logs
        return source.reference_time() if source is not None else self._clock()

    def services(self) -> list[str]:
        """Services with metrics or logs."""
        found: set[str] = set()
        for source in distinct(self.signals.metrics, self.signals.logs):
            found.update(source.services())
        return sorted(found)

    def metrics_by_service(self) -> dict[str, list[str]]:
        """The metric backend's catalog."""
        return self.signals.metrics.metrics_by_service() if self.signals.metrics else {}

    def service_aliases(self) -> dict[str, list[str]]:
        """Aliases every backend declares, then the configured ones of known services, merged."""
        sources = distinct(self.signals.metrics, self.signals.logs, self.signals.alerts)
        known = set(self.services()) if self.aliases else set()
        configured = {s: list(names) for s, names in self.aliases.items() if s in known}
        declared = [source.service_aliases() for source in sources]
        merged: dict[str, list[str]] = {}
        for aliases in (*declared, configured):
            for service, names in aliases.items():
                merged.setdefault(service, [])
                merged[service] += [n for n in names if n not in merged[service]]
        return merged

    def data_range(self) -> dict[str, Any]:
        """The range of each configured signal: its backend's, None when it cannot say."""
        found: dict[str, Any] = {}
        for signal, source in (("metrics", self.signals.metrics), ("logs", self.signals.logs)):
            if source is not None:
                found[signal] = data_ranges(source).get(signal)
        return found

    def query_logs(self, **kwargs: Any) -> dict[str, Any]:
        """The log backend's answer, or "not configured"; no lines for a service only the
        metric backend knows (a database exporter writes no logs: that is not an error)."""
        logs = self.signals.logs
        if logs is None:
            return {"records": [], "total": 0, "truncated": False, **not_configured("logs")}
        try:
            return logs.query_logs(**kwargs)
        except TelemetryError:
            service = str(kwargs.get("service") or "").strip()
            metrics = self.signals.metrics
            if metrics is None or metrics is logs or service not in metrics.services():
                raise
            if service in logs.services():
                raise
            return {"records": [], "total": 0, "truncated": False}

    def query_metrics(self, **kwargs: Any) -> dict[str, Any]:
        """The metric backend's answer, or "not configured"."""
        if self.signals.metrics is None:
            empty = {"min": None, "max": None, "avg": None, "last": None, "unit": ""}
            return {"series": [], "summary": empty, **not_configured("metrics")}
        return self.signals.metrics.query_metrics(**kwargs)

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """The alert backend's answer, or "not configured"."""
        if self.signals.alerts is None:
            alert_state(state)
            return {"alerts": [], **not_configured("alerts")}
        return self.signals.alerts.query_alerts(state=state)

    def query_promql(self, **kwargs: Any) -> dict[str, Any]:
        """PromQL on the metric backend (the tool is offered only when it speaks PromQL)."""
        metrics: Any = self.signals.metrics
        result: dict[str, Any] = metrics.query_promql(**kwargs)
        return result

    @property
    def speaks_promql(self) -> bool:
        """True when the metric backend answers PromQL."""
        return hasattr(self.signals.metrics, "query_promql")

    def runbook_dir(self) -> Path | None:
        """The runbook backend's folder."""
        return self.signals.runbooks.runbook_dir() if self.signals.runbooks else None


def distinct(*sources: TelemetryBackend | None) -> list[TelemetryBackend]:
    seen: list[TelemetryBackend] = []
    for source in sources:
        if source is not None and all(source is not s for s in seen):
            seen.append(source)
    return seen


def unreadable(backend: Any) -> list[str]:
    """Why each of ``backend``'s metric and log sources could not be read when last asked for
    its catalog (their ``catalog_error``), each once."""
    signals = getattr(backend, "signals", None)
    sources = distinct(signals.metrics, signals.logs) if signals else [backend]
    return list(dict.fromkeys(e for s in sources if (e := getattr(s, "catalog_error", None))))


def data_ranges(backend: Any) -> dict[str, Any]:
    """``{signal: (first, last)}`` of what ``backend`` holds (ISO-8601 UTC; None per signal it
    cannot say), or nothing when it has no ``data_range`` or cannot be read right now."""
    method = getattr(backend, "data_range", None)
    if method is None:
        return {}
    try:
        return dict(method())
    except (TelemetryError, OSError):
        return {}
