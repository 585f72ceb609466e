"""The dataset folder format ``DemoTelemetryBackend`` reads, written byte for byte the same way:
``dataset.json``, ``logs.jsonl.gz`` (time order, gzip ``mtime=0``), ``metrics.json``,
``alerts.json`` and ``runbooks/*.md``."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.telemetry.common import iso

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MILLISECOND = timedelta(milliseconds=1)

# (epoch milliseconds, service name, level, message, trace id or None)
LogRecord = tuple[int, str, str, str, str | None]


@dataclass(frozen=True)
class MetricRow:
    """One series of ``metrics.json``: values one step apart from the dataset's start."""

    service: str
    metric: str
    unit: str
    labels: Mapping[str, str]
    values: Sequence[float]


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


def write_metrics(
    path: Path, start: datetime, step_seconds: int, rows: Iterable[MetricRow]
) -> None:
    """``metrics.json``: one compact line per series."""
    lines = []
    stamps: list[str] = []
    for row in rows:
        while len(stamps) < len(row.values):
            stamps.append(iso_seconds(start + timedelta(seconds=step_seconds * len(stamps))))
        document = {
            "service": row.service,
            "metric": row.metric,
            "unit": row.unit,
            "labels": dict(row.labels),
            "points": [[stamp, value] for stamp, value in zip(stamps, row.values, strict=False)],
        }
        lines.append(json.dumps(document, separators=(",", ":")))
    body = ",\n".join(lines)
    path.write_text(f'{{"step_seconds":{step_seconds},"series":[\n{body}\n]}}\n', encoding="utf-8")


def write_alerts(path: Path, alerts: Sequence[Mapping[str, Any]]) -> None:
    """``alerts.json``: ``{"alerts": [{"alert_name", "severity", "service", ...}]}``."""
    dump_json(path, {"alerts": [dict(alert) for alert in alerts]})


def write_runbooks(folder: Path, runbooks: Mapping[str, str]) -> None:
    """``runbooks/*.md``; Markdown files not in ``runbooks`` are removed."""
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.md"):
        if stale.name not in runbooks:
            stale.unlink()
    for filename, text in runbooks.items():
        (folder / filename).write_text(text, encoding="utf-8")


def folder_size(out: Path) -> int:
    """Bytes of every file under ``out``."""
    return sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
