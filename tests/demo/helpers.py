"""Small helpers shared by the demo dataset tests."""

from __future__ import annotations

import gzip
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from webapp.demo.backend import DemoTelemetryBackend


def parse_time(text: str) -> datetime:
    """An ISO-8601 ``...Z`` timestamp as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def minutes(n: float) -> timedelta:
    """A timedelta of ``n`` minutes."""
    return timedelta(minutes=n)


def read_logs(folder: Path) -> list[dict[str, Any]]:
    """Every log record of a generated folder, in file order."""
    with gzip.open(folder / "logs.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def values(
    backend: DemoTelemetryBackend, service: str, metric: str, start: datetime, end: datetime
) -> list[float]:
    """Values of one series in ``[start, end]``."""
    result = backend.query_metrics(service=service, metric=metric, start=start, end=end)
    return [value for _, value in result["series"][0]["points"]]


def median(
    backend: DemoTelemetryBackend, service: str, metric: str, start: datetime, end: datetime
) -> float:
    """Median of one series in ``[start, end]``."""
    return statistics.median(values(backend, service, metric, start, end))


def count(
    backend: DemoTelemetryBackend, service: str, start: datetime, end: datetime, **filters: Any
) -> int:
    """How many log records match in ``[start, end)``."""
    return int(
        backend.query_logs(service=service, start=start, end=end, limit=1, **filters)["total"]
    )
