"""Reading tool outputs like an SRE: new log patterns, metric shifts, change events.

Pure functions over the raw outputs the tools returned; they find *where* in each output the
evidence is (record index, point index) so claims can bind to exact paths.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .conversation import Done, words

_VARIABLE = re.compile(
    r"(?:/[\w.{}=?&%-]+)+|\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)\b|\b[0-9a-f]{8,}\b"
    r"|\b\d+(?:\.\d+)?[a-z%]*\b|'[^']*'|\"[^\"]*\"|\b[a-z]+:\d+\b",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")
_CHANGE_WORDS = {
    "deploy",
    "deployed",
    "deployment",
    "release",
    "released",
    "rollout",
    "rolled",
    "upgrade",
    "upgraded",
    "migration",
    "config",
    "configuration",
    "restart",
    "restarted",
    "rollback",
    "version",
    "build",
}


@lru_cache(maxsize=16384)  # the same lines come back in every round of a conversation
def template(message: str) -> str:
    """``message`` with paths, methods, numbers, ids, quoted values, host:port as ``*``."""
    return _VARIABLE.sub("*", message)


@dataclass(frozen=True)
class Pattern:
    """A log message shape that is new (or much more frequent) after the split."""

    service: str
    level: str
    template: str
    example: str
    invocation_id: str
    record_index: int
    sample_count: int
    total_after: int
    total_before: int
    before_invocation_id: str | None


def _records(done: Done) -> list[dict[str, Any]]:
    result = done.result if isinstance(done.result, dict) else {}
    return [r for r in result.get("records", []) if isinstance(r, dict)]


def new_patterns(after: Done, before: Done | None) -> list[Pattern]:
    """Templates of ``after`` absent from ``before``, most frequent first.

    A template counts as new when the baseline sample never shows it, and the level's volume
    grew (``total`` after vs before); baseline noise that merely continues is ignored.
    """
    records = _records(after)
    total_after = int((after.result or {}).get("total", len(records)))
    baseline = {template(str(r.get("message", ""))) for r in _records(before)} if before else set()
    total_before = int((before.result or {}).get("total", 0)) if before else 0
    if total_after <= max(2, total_before):
        return []
    counts: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        shape = template(str(record.get("message", "")))
        if shape not in baseline:
            counts.setdefault(shape, []).append(index)
    patterns = [
        Pattern(
            after.arguments.get("service", ""),
            str(records[idx[0]].get("level", "")),
            shape,
            str(records[idx[0]]["message"]),
            after.invocation_id,
            idx[0],
            len(idx),
            total_after,
            total_before,
            before.invocation_id if before else None,
        )
        for shape, idx in counts.items()
        if len(idx) >= max(3, len(records) // 20)
    ]
    return sorted(patterns, key=lambda p: -p.sample_count)


@dataclass(frozen=True)
class Shift:
    """A metric that moved after the split: baseline point, extreme value, direction."""

    service: str
    metric: str
    unit: str
    direction: str  # "rose" or "fell"
    baseline: float
    baseline_index: int
    baseline_point: list[Any]
    extreme: float
    extreme_path: str
    onset_time: str | None
    invocation_id: str
    onset_index: int | None = None
    onset_point: list[Any] | None = None


def _points(done: Done) -> tuple[list[list[Any]], dict[str, Any]]:
    result = done.result if isinstance(done.result, dict) else {}
    series = result.get("series") or [{}]
    return list(series[0].get("points", [])), result.get("summary") or {}


def metric_shift(done: Done, split: str, *, factor: float = 1.8) -> Shift | None:
    """The shift of one metric across ``split`` (ISO time), or None when it stayed put."""
    points, summary = _points(done)
    before = [(i, p) for i, p in enumerate(points) if str(p[0]) < split]
    after = [(i, p) for i, p in enumerate(points) if str(p[0]) >= split]
    if len(before) < 3 or len(after) < 3:
        return None
    base = statistics.median(float(p[1]) for _, p in before)
    late = statistics.median(float(p[1]) for _, p in after)
    spread = max(float(p[1]) for _, p in before) - min(float(p[1]) for _, p in before)
    if abs(late - base) <= max(spread, 1e-9):
        return None
    rose = late > base
    if rose and not (late >= base * factor or (base <= 0.05 and late - base > 0.05)):
        return None
    if not rose and not late <= base / factor:
        return None
    index, point = min(before, key=lambda ip: abs(float(ip[1][1]) - base))
    midpoint = (base + late) / 2
    onset_at = next(
        ((i, p) for i, p in after if (float(p[1]) > midpoint if rose else float(p[1]) < midpoint)),
        None,
    )
    onset = str(onset_at[1][0]) if onset_at else None
    extreme = summary.get("max") if rose else summary.get("min")
    if extreme is None:
        return None
    return Shift(
        done.arguments.get("service", ""),
        done.arguments.get("metric", ""),
        str(summary.get("unit", "")),
        "rose" if rose else "fell",
        float(point[1]),
        index,
        list(point),
        extreme,
        "$.summary.max" if rose else "$.summary.min",
        onset,
        done.invocation_id,
        onset_at[0] if onset_at else None,
        list(onset_at[1]) if onset_at else None,
    )


def change_events(done: Done) -> list[tuple[int, str]]:
    """Records that read like a change (version numbers and change vocabulary).

    Best first: a record naming two versions (from -> to) before one naming a single version,
    then the oldest.
    """
    found = []
    for index, record in enumerate(_records(done)):
        message = str(record.get("message", ""))
        versions = set(_VERSION.findall(message))
        if versions and _CHANGE_WORDS & set(words(message)):
            found.append((-len(versions), -index, index, message))
    return [(index, message) for *_, index, message in sorted(found)]


def linked_metrics(texts: Sequence[str], metrics: Sequence[str]) -> list[str]:
    """Metrics whose name shares a distinctive word stem with the log ``texts``."""
    stems = {_stem(w) for text in texts for w in words(template(text)) if len(w) > 2}
    generic = {
        "ms",
        "per",
        "sec",
        "rate",
        "total",
        "count",
        "ratio",
        "utilization",
        "p95",
        "p99",
        "bytes",
        "used",
        "request",
        "requests",
        "latency",
        "error",
    }
    linked = []
    for metric in metrics:
        parts = {_stem(p) for p in metric.split("_") if p not in generic and len(p) > 1}
        if parts & stems:
            linked.append(metric)
    return linked


def _stem(word: str) -> str:
    for suffix in ("ions", "ion", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
