"""Metrics and rule alerts from Prometheus or VictoriaMetrics (their shared HTTP API).

Services are the values of the service label (else the fallback label); each service's metric
catalog is cached for ``catalog_ttl_seconds``. Counters are read as ``rate()``, a step coarser
than the default as ``avg_over_time``; the start is aligned to the step; points and series are
capped (``truncated`` says so). Units come from ``/api/v1/metadata``, else naming conventions.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .common import (
    Clock,
    alert,
    alert_state,
    iso_epoch,
    number,
    parse_timestamp,
    summary,
    unknown_service,
    utc_now,
)
from .common import window as checked_window
from .http import HttpSource
from .partial import PartialSource
from .port import TelemetryError
from .units import is_counter, unit_for

_HIDDEN_METRICS = ("ALERTS", "ALERTS_FOR_STATE")
#: Series of a histogram or summary family, which count up like counters.
_FAMILY_SUFFIXES = ("_count", "_sum", "_bucket")
_FAMILIES = ("histogram", "summary", "gaugehistogram")


@dataclass(frozen=True)
class PrometheusOptions:
    """How the catalog is found and how much one answer may hold."""

    service_label: str = "service"
    fallback_label: str = "job"
    default_step_seconds: int = 60
    max_points: int = 500
    max_series: int = 10
    catalog_ttl_seconds: float = 60.0
    catalog_lookback_seconds: int = 6 * 3600


def selector_value(text: str) -> str:
    """A PromQL string literal (double-quoted, escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class PrometheusBackend(PartialSource):
    """Metrics and alerts over the Prometheus HTTP API; while the server is unreachable the
    last catalog is kept (and ``catalog_error`` says why)."""

    name = "prometheus"

    def __init__(
        self, http: HttpSource, options: PrometheusOptions | None = None, clock: Clock = utc_now
    ) -> None:
        self.http = http
        self.options = options or PrometheusOptions()
        self._clock = clock
        self._lock = threading.Lock()
        self._catalog: dict[str, list[str]] = {}
        self._label = self.options.service_label
        self._loaded_at = -math.inf
        self._metadata: dict[str, dict[str, Any]] | None = None
        self._metadata_at = -math.inf

    # -- catalog ---------------------------------------------------------------------------
    def _values(self, label: str, match: str | None = None) -> list[str]:
        now = self._clock().timestamp()
        params: dict[str, Any] = {"start": now - self.options.catalog_lookback_seconds, "end": now}
        if match:
            params["match[]"] = match
        values = self.http.get_data(f"/api/v1/label/{label}/values", params)
        if not isinstance(values, list):
            raise TelemetryError(f"{self.http.system} label values are not a list")
        return sorted(str(v) for v in values)

    def refresh(self) -> dict[str, list[str]]:
        """Reload the service -> metrics catalog from the server."""
        label = self.options.service_label
        services = self._values(label)
        if not services and self.options.fallback_label:
            label = self.options.fallback_label
            services = self._values(label)
        catalog = {
            service: [
                m
                for m in self._values("__name__", "{" + f"{label}={selector_value(service)}" + "}")
                if not m.startswith(_HIDDEN_METRICS)
            ]
            for service in services
        }
        with self._lock:
            self._catalog, self._label, self._loaded_at = catalog, label, time.monotonic()
            self.catalog_error = None
        return catalog

    def _catalog_now(self, *, strict: bool = False) -> dict[str, list[str]]:
        fresh = time.monotonic() - self._loaded_at < self.options.catalog_ttl_seconds
        if fresh and (self._catalog or not strict):
            return self._catalog
        try:
            return self.refresh()
        except TelemetryError as exc:
            self.catalog_error = str(exc)
            if strict and not self._catalog:
                raise
            # Keep serving the last catalog; try the server again in 5 seconds.
            self._loaded_at = time.monotonic() - self.options.catalog_ttl_seconds + 5
            return self._catalog

    def services(self) -> list[str]:
        """Every value of the service label (empty while the server is unreachable)."""
        return sorted(self._catalog_now())

    def metrics_by_service(self) -> dict[str, list[str]]:
        """The metrics each service has."""
        return {service: list(metrics) for service, metrics in self._catalog_now().items()}

    def _metadata_for(self, metric: str) -> dict[str, Any]:
        """The metric's type and unit from ``/api/v1/metadata`` (reloaded like the catalog).

        A histogram's or summary's ``_count``, ``_sum`` and ``_bucket`` series are counters
        (``_sum`` in the family's unit); servers without metadata answer ``{}``.
        """
        stale = time.monotonic() - self._metadata_at >= self.options.catalog_ttl_seconds
        if self._metadata is None or stale:
            try:
                found = self.http.get_data("/api/v1/metadata")
            except TelemetryError:
                found = None  # try again after the catalog's TTL; keep what was known
            if found is not None or self._metadata is None:
                self._metadata = {
                    name: entries[0]
                    for name, entries in (found if isinstance(found, dict) else {}).items()
                    if isinstance(entries, list) and entries and isinstance(entries[0], dict)
                }
            self._metadata_at = time.monotonic()
        own = self._metadata.get(metric) or self._metadata.get(metric.removesuffix("_total"))
        if own:
            return own
        for suffix in _FAMILY_SUFFIXES:
            family = self._metadata.get(metric.removesuffix(suffix))
            if metric.endswith(suffix) and family and family.get("type") in _FAMILIES:
                unit = family.get("unit", "") if suffix == "_sum" else ""
                return {"type": "counter", "unit": unit}
        return {}

    # -- queries ---------------------------------------------------------------------------
    def _step(self, start: datetime, end: datetime, step_seconds: int | None) -> tuple[int, bool]:
        if step_seconds is not None and step_seconds < 1:
            raise TelemetryError(f"step_seconds must be a positive number, got {step_seconds}")
        step = step_seconds or self.options.default_step_seconds
        span = (end - start).total_seconds()
        needed = math.ceil(span / self.options.max_points) if span > 0 else step
        return max(step, needed), needed > step

    def query_metrics(
        self,
        *,
        service: str,
        metric: str,
        start: datetime,
        end: datetime,
        step_seconds: int | None = None,
    ) -> dict[str, Any]:
        """One metric of one service as range series, with a summary."""
        catalog = self._catalog_now(strict=True)
        name = str(service).strip()
        if name not in catalog:
            raise unknown_service(service, sorted(catalog))
        metric_name = str(metric).strip()
        if metric_name not in catalog[name]:
            raise TelemetryError(
                f"service {name!r} has no metric {metric!r}; its metrics: "
                f"{', '.join(catalog[name][:80])}"
            )
        start, end = checked_window(start, end)
        step, coarsened = self._step(start, end, step_seconds)
        meta = self._metadata_for(metric_name)
        counter = is_counter(metric_name, meta.get("type"))
        selector = (
            f"{{__name__={selector_value(metric_name)},{self._label}={selector_value(name)}}}"
        )
        if counter:
            query = f"rate({selector}[{max(step, 300)}s])"
        elif step > self.options.default_step_seconds:
            query = f"avg_over_time({selector}[{step}s])"
        else:
            query = selector
        unit = unit_for(metric_name, meta.get("unit"), counter, meta.get("help"))
        return self._range(query, start, end, step, coarsened, unit)

    def _range(
        self, query: str, start: datetime, end: datetime, step: int, coarsened: bool, unit: str
    ) -> dict[str, Any]:
        """The answer to a range query: capped series, their summary, the query and step."""
        first = math.ceil(start.timestamp() / step) * step
        data = self.http.get_data(
            "/api/v1/query_range",
            {"query": query, "start": first, "end": end.timestamp(), "step": step},
        )
        if not isinstance(data, dict) or not isinstance(data.get("result"), list):
            raise TelemetryError(f"{self.http.system} range answer has no result list")
        if data.get("resultType") != "matrix":
            raise TelemetryError(f"expected a range vector, got {data.get('resultType')}")
        result = data["result"]
        truncated = len(result) > self.options.max_series
        series = []
        for row in result[: self.options.max_series]:
            labels = dict(row.get("metric") or {})
            values = row.get("values") or []
            truncated = truncated or len(values) > self.options.max_points
            series.append(
                {
                    "metric": labels.pop("__name__", query if len(query) < 120 else "expression"),
                    "labels": labels,
                    "points": [
                        [iso_epoch(float(ts)), number(v)]
                        for ts, v in values[-self.options.max_points :]
                    ],
                }
            )
        return {
            "series": series,
            "truncated": truncated or coarsened,
            "summary": summary((p[1] for s in series for p in s["points"]), unit),
            "query": query,
            "step_seconds": step,
        }

    def query_promql(
        self, *, query: str, start: datetime, end: datetime, step_seconds: int | None = None
    ) -> dict[str, Any]:
        """A PromQL range query (the server checks it), capped like ``query_metrics``."""
        start, end = checked_window(start, end)
        return self._range(query.strip(), start, end, *self._step(start, end, step_seconds), "")

    def rule_alerts(self) -> list[dict[str, Any]]:
        """The rule alerts of ``/api/v1/alerts`` as the server wrote them (labels, activeAt)."""
        data = self.http.get_data("/api/v1/alerts")
        rows = data.get("alerts") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise TelemetryError(f"{self.http.system} alerts answer has no alert list")
        return [row for row in rows if isinstance(row, dict)]

    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        """Rule alerts from ``/api/v1/alerts`` in ``state``."""
        wanted = alert_state(state)
        alerts = [self._alert(row) for row in self.rule_alerts()]
        return {"alerts": [a for a in alerts if wanted in ("all", a["state"])]}

    def _alert(self, row: dict[str, Any]) -> dict[str, Any]:
        labels = row.get("labels") or {}
        service = (
            labels.get(self._label)
            or labels.get(self.options.service_label)
            or labels.get(self.options.fallback_label, "")
        )
        return alert(
            labels.get("alertname", ""),
            labels.get("severity", ""),
            service,
            row.get("annotations"),
            str(row.get("state", "")).lower(),
            parse_timestamp(row.get("activeAt")),
        )

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (``/api/v1/status/buildinfo``)."""
        return self.http.probe("/api/v1/status/buildinfo", "data", "version")
