"""A tiny telemetry backend built in memory: a fake implementing our own port, for tests.

It answers like any backend (the shapes of ``webapp.telemetry``): records newest first
with ``total`` and ``truncated``, series oldest first with a summary, alerts by state. A
``max_records`` below the window's size makes it truncate, as a real log store would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.telemetry import TelemetryError

NOW = datetime(2031, 3, 14, 15, 0, tzinfo=timezone.utc)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class SyntheticBackend:
    """Logs and metrics given as data; ``now`` is its reference time."""

    metrics: dict[str, dict[str, list[tuple[datetime, float]]]]
    logs: list[dict[str, Any]] = field(default_factory=list)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    now: datetime = NOW
    max_records: int | None = None
    name: str = "synthetic"
    calls: list[str] = field(default_factory=list)

    def reference_time(self) -> datetime:
        return self.now

    def services(self) -> list[str]:
        return sorted(self.metrics)

    def metrics_by_service(self) -> dict[str, list[str]]:
        return {s: sorted(m) for s, m in self.metrics.items()}

    def service_aliases(self) -> dict[str, list[str]]:
        return dict(self.aliases)

    def _known(self, service: str) -> None:
        if service not in self.metrics:
            raise TelemetryError(f"unknown service {service!r}; valid: {self.services()}")

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
        self._known(service)
        self.calls.append("query_logs")
        found = [
            r
            for r in self.logs
            if r["service"] == service
            and start <= datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")) < end
            and (level is None or r["level"] == level)
            and (not keyword or keyword.lower() in r["message"].lower())
        ]
        found.sort(key=lambda r: r["timestamp"], reverse=True)
        cap = min(limit, self.max_records) if self.max_records else limit
        return {"records": found[:cap], "total": len(found), "truncated": len(found) > cap}

    def query_metrics(
        self,
        *,
        service: str,
        metric: str,
        start: datetime,
        end: datetime,
        step_seconds: int | None = None,
    ) -> dict[str, Any]:
        self._known(service)
        self.calls.append("query_metrics")
        if metric not in self.metrics[service]:
            raise TelemetryError(f"{service} has no metric {metric!r}")
        chosen = [(t, v) for t, v in self.metrics[service][metric] if start <= t <= end]
        points: list[list[Any]] = [[stamp(t)[:19] + "Z", v] for t, v in chosen]
        values = [v for _, v in chosen]
        summary = {
            "min": min(values, default=None),
            "max": max(values, default=None),
            "avg": sum(values) / len(values) if values else None,
            "last": values[-1] if values else None,
            "unit": "ratio",
        }
        return {"series": [{"metric": metric, "labels": {}, "points": points}], "summary": summary}

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        return {"alerts": []}

    def runbook_dir(self) -> Path | None:
        return None


def minutes(start: datetime, count: int) -> list[datetime]:
    return [start + timedelta(minutes=i) for i in range(count)]


def world() -> SyntheticBackend:
    """Two services over three hours: ``ledger-writer`` breaks 47 minutes before now-1h."""
    start = NOW - timedelta(hours=3)
    onset = NOW - timedelta(minutes=107)
    times = minutes(start, 181)
    disk = [(t, 0.41 + 0.001 * (i % 3) if t < onset else 0.97) for i, t in enumerate(times)]
    lat = [(t, 80.0 + (i % 5) if t < onset else 950.0 + (i % 7)) for i, t in enumerate(times)]
    calm = [(t, 0.2 + 0.002 * (i % 4)) for i, t in enumerate(times)]
    logs: list[dict[str, Any]] = []
    for i, t in enumerate(times):
        logs.append(
            {
                "timestamp": stamp(t),
                "service": "ledger-writer",
                "level": "INFO",
                "message": f"flushed batch {i}",
                "trace_id": None,
            }
        )
        logs.append(
            {
                "timestamp": stamp(t + timedelta(seconds=30)),
                "service": "quote-api",
                "level": "INFO",
                "message": f"GET /quotes/{i} 200",
                "trace_id": None,
            }
        )
        if i % 40 == 0:
            logs.append(
                {
                    "timestamp": stamp(t + timedelta(seconds=5)),
                    "service": "ledger-writer",
                    "level": "WARN",
                    "message": f"slow fsync {i} ms",
                    "trace_id": None,
                }
            )
        if t >= onset:
            for k in range(3):
                logs.append(
                    {
                        "timestamp": stamp(t + timedelta(seconds=10 + k)),
                        "service": "ledger-writer",
                        "level": "ERROR",
                        "message": f"write failed: No space left on device (segment {i}-{k})",
                        "trace_id": None,
                    }
                )
            logs.append(
                {
                    "timestamp": stamp(t + timedelta(seconds=40)),
                    "service": "quote-api",
                    "level": "ERROR",
                    "message": f"upstream ledger-writer returned 507 for quote {i}",
                    "trace_id": None,
                }
            )
    return SyntheticBackend(
        {
            "ledger-writer": {"disk_used_ratio": disk, "write_latency_ms": lat},
            "quote-api": {"cpu_ratio": calm},
        },
        logs,
        {"ledger-writer": ["账本服务"]},
    )
