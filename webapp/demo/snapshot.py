"""An incident exported from any configured backend, through the port, into a ``TELEMETRY_DIR``
folder of the demo dataset's format (:mod:`.files`) whose reference time is the window's end.

Logs are paged newest first, at most ``MAX_LINES`` per service; what could not be read or was
cut is listed in ``dataset.json`` under ``generator`` (``skipped``, ``truncated``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..telemetry.common import parse_timestamp, utc
from ..telemetry.port import TelemetryBackend, TelemetryError
from .files import LogRecord, dump_json, epoch_ms, write_alerts, write_dataset_json, write_logs

PAGE = 5000  # Loki's default max_entries_limit_per_query
MAX_LINES = 200_000


def _log_pages(
    backend: TelemetryBackend, service: str, start: datetime, end: datetime
) -> Iterator[list[dict[str, Any]]]:
    """Pages of records, newest first, each ending where the previous one began."""
    seen: set[tuple[str, str, str | None]] = set()
    taken = 0
    while taken < MAX_LINES:
        page = backend.query_logs(
            service=service, start=start, end=end, limit=min(PAGE, MAX_LINES - taken)
        )
        fresh = [
            r for r in page["records"] if (r["timestamp"], r["message"], r["trace_id"]) not in seen
        ]
        if not fresh:
            return
        seen.update((r["timestamp"], r["message"], r["trace_id"]) for r in fresh)
        taken += len(fresh)
        yield fresh
        if not page.get("truncated"):
            return
        oldest = parse_timestamp(page["records"][-1]["timestamp"])
        if oldest is None:
            return
        # The next page ends just after the oldest record's millisecond: records sharing it
        # come again and are skipped as seen, none is lost between pages.
        end = oldest.replace(microsecond=oldest.microsecond // 1000 * 1000) + timedelta(
            milliseconds=1
        )


def write_snapshot(
    backend: TelemetryBackend,
    out: Path,
    *,
    start: datetime,
    end: datetime,
    step_seconds: int = 60,
) -> dict[str, Any]:
    """Write ``[start, end]`` of ``backend`` to ``out``; returns what was written and skipped."""
    start, end = utc(start, "start"), utc(end, "end")
    if start >= end:
        raise TelemetryError("the export window must end after it starts")
    out.mkdir(parents=True, exist_ok=True)
    skipped: list[str] = []
    truncated: list[str] = []
    services = backend.services()
    series = []
    for service, metrics in sorted(backend.metrics_by_service().items()):
        for metric in metrics:
            try:
                answer = backend.query_metrics(
                    service=service, metric=metric, start=start, end=end, step_seconds=step_seconds
                )
            except TelemetryError as exc:
                skipped.append(f"metrics {service}/{metric}: {exc}")
                continue
            found = answer.get("series") or []
            if not found:
                continue
            if len(found) > 1 or answer.get("truncated"):
                truncated.append(f"metrics {service}/{metric}")
            points = [[ts, value] for ts, value in found[0]["points"] if value is not None]
            series.append(
                {
                    "service": service,
                    "metric": metric,
                    "unit": answer.get("summary", {}).get("unit", ""),
                    "labels": {"service": service, **(found[0].get("labels") or {})},
                    "points": points,
                }
            )
    dump_json(out / "metrics.json", {"step_seconds": step_seconds, "series": series})
    records: list[LogRecord] = []
    for service in services:
        try:
            pages = list(_log_pages(backend, service, start, end))
        except TelemetryError as exc:
            skipped.append(f"logs {service}: {exc}")
            continue
        rows = [row for page in pages for row in page]
        if len(rows) >= MAX_LINES:
            truncated.append(f"logs {service}: the newest {MAX_LINES} records")
        for row in reversed(rows):  # oldest first; records of one millisecond keep their order
            moment = parse_timestamp(row["timestamp"])
            if moment is not None:
                level, message, trace = row["level"], row["message"], row["trace_id"]
                records.append((epoch_ms(moment), service, level, message, trace))
    records.sort(key=lambda r: (r[0], r[1]))
    write_logs(out / "logs.jsonl.gz", records)
    try:
        alerts = backend.query_alerts(state="all").get("alerts") or []
    except TelemetryError as exc:
        alerts = []
        skipped.append(f"alerts: {exc}")
    write_alerts(out / "alerts.json", alerts)
    runbooks = backend.runbook_dir()
    if runbooks is not None and runbooks.is_dir():
        (out / "runbooks").mkdir(exist_ok=True)
        for path in sorted(runbooks.glob("*.md")):
            shutil.copyfile(path, out / "runbooks" / path.name)
    summary = {
        "exported_from": getattr(backend, "name", "backend"),
        "services": len(services),
        "series": len(series),
        "log_records": len(records),
        "alerts": len(alerts),
        "skipped": skipped,
        "truncated": truncated,
    }
    write_dataset_json(
        out,
        name="exported incident",
        start=start,
        end=end,
        step_seconds=step_seconds,
        services=services,
        aliases=backend.service_aliases(),
        generator=summary,
    )
    return summary
