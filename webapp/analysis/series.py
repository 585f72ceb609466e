"""Series read through the telemetry port: metric points and log counts per time bucket.

Log counts come from one query per level when the backend returns every record of the window
(up to ``FETCH_LIMIT``), else from one count-only query per bucket. ``bucket_step`` divides a
window into about ``TARGET_BUCKETS`` buckets of whole minutes; leading buckets before a
service's first log line are dropped (``logs_begin``, ``trim_to_data``), so "no data yet" never
reads as a quiet baseline.
"""

from __future__ import annotations

import itertools
import math
import weakref
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any

from ..telemetry import TelemetryBackend
from ..telemetry.common import utc
from .onsets import Point

#: How far back "recent" reaches when a question gives no time: long enough to hold an
#: incident that began hours ago and the calm before it, short enough to stay one screen.
RECENT_RANGE = timedelta(hours=6)
#: Records fetched in one query before falling back to per-bucket counts.
FETCH_LIMIT = 5000
#: About this many buckets per window (and metric points per series, by downsampling).
TARGET_BUCKETS = 120
MIN_STEP = timedelta(seconds=60)
#: Metric series longer than this many native points are downsampled by the backend.
MAX_METRIC_POINTS = 720
#: Parsed timestamps remembered: the same lines are read by several tool calls of one run.
STAMP_CACHE = 65536
#: Log reads kept per immutable backend (the oldest goes first): ``detect_anomalies`` and
#: ``log_patterns`` of one service and window read the same lines.
READ_MEMO = 32

_READS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], LogRead]] = weakref.WeakKeyDictionary()


def recent_range(backend: TelemetryBackend) -> tuple[datetime, datetime]:
    """``[now - RECENT_RANGE, now]`` where now is the backend's reference time."""
    end = backend.reference_time().astimezone(timezone.utc)
    return end - RECENT_RANGE, end


def bucket_step(start: datetime, end: datetime) -> timedelta:
    """Whole minutes, about ``TARGET_BUCKETS`` buckets over ``[start, end)``, at least 60 s."""
    minutes = math.ceil((end - start).total_seconds() / 60 / TARGET_BUCKETS)
    return max(timedelta(minutes=max(minutes, 1)), MIN_STEP)


def metric_points(
    backend: TelemetryBackend, service: str, metric: str, start: datetime, end: datetime
) -> tuple[list[Point], str | None]:
    """The series' points (oldest first) and its unit."""
    step = None
    if (end - start) / MIN_STEP > MAX_METRIC_POINTS:
        step = int(bucket_step(start, end).total_seconds())
    answer = backend.query_metrics(
        service=service, metric=metric, start=start, end=end, step_seconds=step
    )
    points: list[Point] = []
    for series in answer.get("series", [])[:1]:
        pairs = series.get("points", [])
        points = [(parse_stamp(stamp), float(value)) for stamp, value in pairs if value is not None]
    return points, (answer.get("summary") or {}).get("unit")


def log_records(
    backend: TelemetryBackend,
    service: str,
    start: datetime,
    end: datetime,
    level: str | None,
    limit: int = FETCH_LIMIT,
) -> tuple[list[dict[str, Any]], bool]:
    """Up to ``limit`` records, oldest first, and whether that is all of them."""
    answer = backend.query_logs(service=service, start=start, end=end, level=level, limit=limit)
    records = list(reversed(answer.get("records", [])))
    return records, not answer.get("truncated", False)


Row = tuple[datetime, str, str]


def log_rows(records: Sequence[Mapping[str, Any]], times: Sequence[datetime]) -> tuple[Row, ...]:
    """The ``(time, message, level)`` rows of ``records`` (``times``: their parsed timestamps,
    same order); a missing field reads as ""."""
    return tuple(
        (moment, str(record.get("message", "")), str(record.get("level", "")))
        for moment, record in zip(times, records, strict=True)
    )


@dataclass(frozen=True)
class LogRead:
    """One level's lines over a window: the records fetched (oldest first, at most
    ``FETCH_LIMIT``), when each was logged (parsed once, in the same order), and the exact
    count per bucket (one point per bucket start)."""

    records: list[dict[str, Any]]
    times: list[datetime]
    counts: list[Point]

    @cached_property
    def rows(self) -> tuple[Row, ...]:
        """The records' ``(time, message, level)`` rows, built once per read."""
        return log_rows(self.records, self.times)

    @property
    def complete(self) -> bool:
        """Whether ``records`` are every line counted (not a sample)."""
        return len(self.records) == sum(v for _, v in self.counts)


def log_counts(
    backend: TelemetryBackend,
    service: str,
    level: str | None,
    start: datetime,
    end: datetime,
    step: timedelta,
) -> LogRead:
    """The ``level`` (None: any) lines of ``service`` per bucket of ``step``, exactly; kept
    (``READ_MEMO`` per backend) when the backend declares its data immutable."""
    immutable = getattr(backend, "immutable", False) is True
    memo = _READS.setdefault(backend, {}) if immutable else {}
    key = (service, level, start, end, step)
    if (kept := memo.get(key)) is not None:
        return kept
    if len(memo) >= READ_MEMO:
        memo.pop(next(iter(memo)))
    edges = bucket_edges(start, end, step)
    records, complete = log_records(backend, service, start, end, level)
    times = [parse_stamp(r["timestamp"]) for r in records]
    if complete:
        counts = count_by_bucket(times, edges)
    else:
        counts = [
            (lo, float(count_logs(backend, service, lo, hi, level)))
            for lo, hi in itertools.pairwise(edges)
        ]
    kept = memo[key] = LogRead(records, times, counts)
    return kept


def forget_reads() -> None:
    """Drop every kept log read."""
    _READS.clear()


def count_logs(
    backend: TelemetryBackend,
    service: str,
    start: datetime,
    end: datetime,
    level: str | None = None,
    keyword: str | None = None,
) -> int:
    """The exact number of matching lines in ``[start, end)`` (a count-only query)."""
    answer = backend.query_logs(
        service=service, start=start, end=end, level=level, keyword=keyword, limit=1
    )
    return int(answer.get("total", 0))


def bucket_edges(start: datetime, end: datetime, step: timedelta) -> list[datetime]:
    """``start, start + step, ...`` up to and including ``end`` (the last bucket may be short)."""
    edges = [start]
    while edges[-1] + step < end:
        edges.append(edges[-1] + step)
    return [*edges, end]


def count_by_bucket(times: Sequence[datetime], edges: Sequence[datetime]) -> list[Point]:
    """How many of ``times`` fall in each ``[edges[i], edges[i+1])``."""
    ordered = sorted(times)
    below = [bisect_left(ordered, edge) for edge in edges]
    return [(edges[i], float(below[i + 1] - below[i])) for i in range(len(edges) - 1)]


def logs_begin(
    backend: TelemetryBackend,
    service: str,
    start: datetime,
    end: datetime,
    step: timedelta,
    level: str | None = None,
    keyword: str | None = None,
) -> datetime | None:
    """The start of the first bucket with a matching line of ``service`` (None: no such line),
    found by a binary search with count-only queries."""
    edges = bucket_edges(start, end, step)

    def any_before(index: int) -> bool:
        return count_logs(backend, service, start, edges[index], level, keyword) > 0

    if not any_before(len(edges) - 1):
        return None
    # the first index from 1 whose prefix has lines (the last one has: it is not probed again)
    return edges[bisect_left(range(1, len(edges)), True, hi=len(edges) - 2, key=any_before)]


def trim_to_data(series: Sequence[Point], begin: datetime | None) -> list[Point]:
    """``series`` (oldest first) from ``begin`` (None: nothing)."""
    if begin is None:
        return []
    return list(series[bisect_left(series, begin, key=itemgetter(0)) :])


def parse_stamp(value: Any) -> datetime:
    """An ISO-8601 string (``Z`` or offset; naive is UTC) or datetime, as aware UTC."""
    if isinstance(value, datetime):
        return utc(value, "timestamp")
    return _parse_text(value if isinstance(value, str) else str(value))


@lru_cache(maxsize=STAMP_CACHE)
def _parse_text(value: str) -> datetime:
    text = value.strip()
    if text.endswith(("Z", "z")):  # the common case: a UTC stamp, no conversion needed
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)
    return utc(datetime.fromisoformat(text), "timestamp")
