"""The dataset folder format ``DemoTelemetryBackend`` reads: ``dataset.json``, ``logs.jsonl.gz``
(time order, gzip ``mtime=0``), ``metrics.json``, ``alerts.json`` and ``runbooks/*.md``; the
writers of the files an export and the generators both write (``demo.writer`` has the generators'
own)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.telemetry.common import iso

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MILLISECOND = timedelta(milliseconds=1)

# (epoch milliseconds, service name, level, message, trace id or None)
LogRecord = tuple[int, str, str, str, str | None]


#: ``2026-11-30T10:05:00Z``.
iso_seconds = iso


def iso_millis(epoch_ms: int) -> str:
    """``2026-11-30T10:05:00.123Z`` for epoch milliseconds."""
    return iso(_EPOCH + epoch_ms * _MILLISECOND, millis=True)


def epoch_ms(moment: datetime, *, ceil: bool = False) -> int:
    """Epoch milliseconds of an aware datetime, in exact integer arithmetic (rounded down, or
    with ``ceil`` up)."""
    if ceil:
        return -((_EPOCH - moment) // _MILLISECOND)
    return (moment - _EPOCH) // _MILLISECOND


def dump_json(path: Path, document: Any) -> None:
    """Indented UTF-8 JSON with a trailing newline (Chinese aliases stay readable)."""
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_dataset_json(
    out: Path,
    *,
    name: str,
    start: datetime,
    end: datetime,
    step_seconds: int,
    services: Sequence[str],
    aliases: Mapping[str, Sequence[str]],
    generator: Mapping[str, Any],
) -> None:
    """``dataset.json``; the reference time ("now") is the window's end."""
    dump_json(
        out / "dataset.json",
        {
            "name": name,
            "reference_time": iso_seconds(end),
            "start": iso_seconds(start),
            "end": iso_seconds(end),
            "step_seconds": step_seconds,
            "services": list(services),
            "aliases": {service: list(names) for service, names in aliases.items()},
            "generator": dict(generator),
        },
    )


def write_logs(path: Path, records: Iterable[LogRecord]) -> None:
    """``logs.jsonl.gz``; ``records`` must already be in time order."""
    with path.open("wb") as raw, gzip.GzipFile("logs.jsonl", "wb", fileobj=raw, mtime=0) as gz:
        for t_ms, service, level, message, trace in records:
            record = {
                "timestamp": iso_millis(t_ms),
                "service": service,
                "level": level,
                "message": message,
                "trace_id": trace,
            }
            gz.write(json.dumps(record, separators=(",", ":")).encode("utf-8") + b"\n")


def write_alerts(path: Path, alerts: Sequence[Mapping[str, Any]]) -> None:
    """``alerts.json``: ``{"alerts": [{"alert_name", "severity", "service", ...}]}``."""
    dump_json(path, {"alerts": [dict(alert) for alert in alerts]})
