"""``TelemetryBackend`` over a demo dataset folder (:mod:`.files`), read lazily once.

Logs are indexed by time per service and per service and level. Naive datetimes are UTC.
Windows: logs ``[start, end)``, metrics ``[start, end]``.
"""

from __future__ import annotations

import gzip
import json
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from webapp.demo.files import epoch_ms
from webapp.telemetry import TelemetryError
from webapp.telemetry.common import (
    alert_state,
    canonical_level,
    check_limit,
    iso_epoch,
    level_filter,
    summary,
    unknown_service,
    window,
)

DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data"
# Decimals for averaged values, by unit; anything else gets 2.
_DECIMALS = {"ms": 1, "ratio": 4, "version": 2, "queries/s": 3}


@dataclass
class _LogIndex:
    """Records of one service (of one level, or any), sorted by time, each the dict a query
    returns (copied out)."""

    times: list[int] = field(default_factory=list)  # epoch milliseconds
    records: list[dict[str, str | None]] = field(default_factory=list)


@dataclass
class _Series:
    unit: str
    labels: dict[str, str]
    times: list[int]  # epoch seconds
    stamps: list[str]
    values: list[float]


@dataclass
class _Meta:
    reference_time: datetime
    services: list[str]
    metrics: dict[str, dict[str, _Series]]
    alerts: list[dict[str, Any]]
    aliases: dict[str, list[str]] = field(default_factory=dict)


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _missing(path: Path) -> TelemetryError:
    return TelemetryError(f"demo dataset file {path} is missing; run `make demo-data`")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise _missing(path) from exc


def _load_meta(folder: Path) -> _Meta:
    dataset = _read_json(folder / "dataset.json")
    metrics: dict[str, dict[str, _Series]] = {name: {} for name in dataset["services"]}
    for row in _read_json(folder / "metrics.json")["series"]:
        stamps = [stamp for stamp, _ in row["points"]]
        metrics.setdefault(row["service"], {})[row["metric"]] = _Series(
            unit=row["unit"],
            labels=dict(row.get("labels") or {"service": row["service"]}),
            times=[epoch_ms(_parse_iso(stamp)) // 1000 for stamp in stamps],
            stamps=stamps,
            values=[value for _, value in row["points"]],
        )
    return _Meta(
        reference_time=_parse_iso(dataset["reference_time"]),
        services=sorted(metrics),
        metrics=metrics,
        alerts=list(_read_json(folder / "alerts.json")["alerts"]),
        aliases={
            str(service): [str(alias) for alias in names]
            for service, names in (dataset.get("aliases") or {}).items()
            if service in metrics
        },
    )


def _load_logs(path: Path) -> dict[tuple[str, str | None], _LogIndex]:
    rows: list[tuple[int, dict[str, str | None]]] = []
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                item = json.loads(line)
                record = {
                    "timestamp": item["timestamp"],
                    "service": item["service"],
                    "level": item["level"].upper(),
                    "message": item["message"],
                    "trace_id": item.get("trace_id"),
                }
                rows.append((epoch_ms(_parse_iso(item["timestamp"])), record))
    except FileNotFoundError as exc:
        raise _missing(path) from exc
    rows.sort(key=lambda row: row[0])
    index: dict[tuple[str, str | None], _LogIndex] = {}
    for t_ms, record in rows:
        for level in (None, canonical_level(record["level"])):
            found = index.setdefault((str(record["service"]), level), _LogIndex())
            found.times.append(t_ms)
            found.records.append(record)
    return index


def _downsample(series: _Series, lo: int, hi: int, step: int) -> list[list[Any]]:
    decimals = _DECIMALS.get(series.unit, 2)
    buckets: dict[int, list[float]] = {}
    for i in range(lo, hi):
        buckets.setdefault(series.times[i] // step * step, []).append(series.values[i])
    return [
        [iso_epoch(bucket), round(sum(values) / len(values), decimals)]
        for bucket, values in buckets.items()
    ]


class DemoTelemetryBackend:
    """Logs, metrics, alerts and runbooks of the bundled demo system (or another folder)."""

    name = "demo"
    #: The dataset's files are read once and never change while the backend lives.
    immutable = True

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
        self._lock = threading.Lock()
        self._meta: _Meta | None = None
        self._logs: dict[tuple[str, str | None], _LogIndex] | None = None

    def _loaded_meta(self) -> _Meta:
        with self._lock:
            if self._meta is None:
                self._meta = _load_meta(self.data_dir)
            return self._meta

    def _loaded_logs(self) -> dict[tuple[str, str | None], _LogIndex]:
        with self._lock:
            if self._logs is None:
                self._logs = _load_logs(self.data_dir / "logs.jsonl.gz")
            return self._logs

    def reference_time(self) -> datetime:
        """The dataset's "now" (the end of its window)."""
        return self._loaded_meta().reference_time

    def services(self) -> list[str]:
        """Every service with telemetry, sorted."""
        return list(self._loaded_meta().services)

    def metrics_by_service(self) -> dict[str, list[str]]:
        """The metrics each service has, sorted."""
        return {
            service: sorted(metrics) for service, metrics in self._loaded_meta().metrics.items()
        }

    def service_aliases(self) -> dict[str, list[str]]:
        """The dataset's ``aliases`` (``{service: [alias, ...]}``); empty when it declares none."""
        return {service: list(names) for service, names in self._loaded_meta().aliases.items()}

    def data_range(self) -> dict[str, tuple[str, str] | None]:
        """The first and last timestamp of the metrics and of the logs (None: no data), each
        on its own: a folder of metrics only still states their range."""
        series = [s for per in self._loaded_meta().metrics.values() for s in per.values()]
        seconds = [t for s in series if s.times for t in (s.times[0], s.times[-1])]
        try:
            indexes = self._loaded_logs()
        except TelemetryError:
            indexes = {}
        logs = [i.times for (_, level), i in indexes.items() if level is None]
        millis = [t for times in logs if times for t in (times[0], times[-1])]
        return {
            "metrics": (iso_epoch(min(seconds)), iso_epoch(max(seconds))) if seconds else None,
            "logs": (iso_epoch(min(millis) // 1000), iso_epoch(-(-max(millis) // 1000)))
            if millis
            else None,
        }

    def _service(self, service: str) -> str:
        name = str(service).strip().lower()
        services = self._loaded_meta().services
        if name not in services:
            raise unknown_service(service, services)
        return name

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
        """Log records of ``service`` in ``[start, end)``, newest first."""
        name = self._service(service)
        start, end = window(start, end)
        check_limit(limit)
        wanted = level_filter(level)
        index = self._loaded_logs().get((name, wanted), _LogIndex())
        # Records are whole milliseconds: t >= start and t < end, for sub-millisecond bounds too.
        lo = bisect_left(index.times, epoch_ms(start, ceil=True))
        hi = bisect_left(index.times, epoch_ms(end, ceil=True))
        needle = (keyword or "").strip().lower()
        matches = index.records[lo:hi]
        if needle:
            matches = [r for r in matches if needle in str(r["message"]).lower()]
        records = list(map(dict, matches[: -limit - 1 : -1]))  # the caller's own copies
        return {"records": records, "total": len(matches), "truncated": len(matches) > limit}

    def query_metrics(
        self,
        *,
        service: str,
        metric: str,
        start: datetime,
        end: datetime,
        step_seconds: int | None = None,
    ) -> dict[str, Any]:
        """Points of ``metric`` in ``[start, end]``, averaged per ``step_seconds`` bucket.

        A step at or below the native resolution returns the native points.
        """
        name = self._service(service)
        per_service = self._loaded_meta().metrics[name]
        metric_name = str(metric).strip()
        series = per_service.get(metric_name)
        if series is None:
            raise TelemetryError(
                f"service {name!r} has no metric {metric!r}; its metrics: "
                f"{', '.join(sorted(per_service))}"
            )
        start, end = window(start, end)
        if step_seconds is not None and step_seconds < 1:
            raise TelemetryError(f"step_seconds must be a positive number, got {step_seconds}")
        lo = bisect_left(series.times, -(-epoch_ms(start, ceil=True) // 1000))
        hi = bisect_right(series.times, epoch_ms(end) // 1000)
        native = series.times[1] - series.times[0] if len(series.times) > 1 else 1
        points: list[list[Any]]
        if step_seconds is None or step_seconds <= native:
            stamps, values = series.stamps[lo:hi], series.values[lo:hi]
            points = list(map(list, zip(stamps, values, strict=True)))
        else:
            points = _downsample(series, lo, hi, step_seconds)
        return {
            "series": [{"metric": metric_name, "labels": dict(series.labels), "points": points}],
            "summary": summary(
                (point[1] for point in points), series.unit, _DECIMALS.get(series.unit, 2)
            ),
        }

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Alerts in ``state``: firing, pending, or all."""
        wanted = alert_state(state)
        alerts = self._loaded_meta().alerts
        return {"alerts": [dict(alert) for alert in alerts if wanted in ("all", alert["state"])]}

    def runbook_dir(self) -> Path | None:
        """The dataset's ``runbooks`` folder, if it has one."""
        folder = self.data_dir / "runbooks"
        return folder if folder.is_dir() else None
