"""What changed in one service: the raw outputs of the ``detect_anomalies`` and
``log_patterns`` tools.

Every metric, the ERROR and WARN line counts per bucket and the counts of the most frequent
templates (``log_pattern`` findings) go through the onset detector, over a range reaching back
before the window (``reach_back``) for baselines. Findings are ordered by onset, then
significance; a log finding's onset is its first line in the onset bucket. Log templates are
counted before and after the onset of the levels' line rate, else the window's start; with
nothing before the window, no template is new (``window.onset`` is null).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from ..telemetry import TelemetryBackend
from ..telemetry.common import iso
from .curves import Analysed
from .logpatterns import LogPattern, mine_patterns, mine_rows
from .onsets import Finding
from .series import (
    RECENT_RANGE,
    Row,
    bucket_edges,
    bucket_step,
    count_by_bucket,
    count_logs,
    log_counts,
    log_records,
    logs_begin,
    metric_points,
    trim_to_data,
)

LOG_LEVELS = ("ERROR", "WARN")
#: Templates with fewer records than this in the window are not assessed as findings.
MIN_PATTERN_RECORDS = 3
#: At most this many templates (the most frequent) are assessed as findings.
MAX_PATTERN_FINDINGS = 5
#: At most this many templates are returned by ``log_patterns``; examples are cut to this size.
MAX_PATTERNS = 20
MAX_EXAMPLE = 500
#: A template whose silence before its first line its own rate explains with a chance under
#: one in this many began there (``log_patterns`` counts it from there: new).
ONGOING_ODDS = 100
#: ... unless its rate after the split is more than this many times its rate before it.
SURGE = 2


def service_anomalies(
    backend: TelemetryBackend, service: str, start: datetime, end: datetime
) -> dict[str, Any]:
    """The ``detect_anomalies`` raw output for ``service`` over ``[start, end]``."""
    step = bucket_step(start, end)
    reach = reach_back(start, end, step)
    findings: list[Finding] = []
    analysed = Analysed()  # each signal's series, recorded with its finding
    examined = empty = 0
    units: dict[str, str] = {}
    for metric in backend.metrics_by_service().get(service, []):
        points, unit = metric_points(backend, service, metric, reach, end)
        if not any(t >= start for t, _ in points):  # no points: no evidence either way
            empty += 1
            continue
        examined += 1
        units[metric] = unit or ""
        if (found := analysed.detect_since(points, start, signal=metric)) is not None:
            findings.append(found)
    begin = logs_begin(backend, service, reach, end, step)
    rows: tuple[Row, ...] = ()
    for level in LOG_LEVELS:
        if begin is None:
            empty += 1
            continue
        read = log_counts(backend, service, level, reach, end, step)
        examined += 1
        found = analysed.detect_since(
            trim_to_data(read.counts, begin), start, signal=level, kind="log_rate", counts=True
        )
        if found is not None:
            findings.append(to_first_line(found, read.times if read.complete else [], step))
        if read.complete:  # every record, no sample
            rows += read.rows
    pattern_findings, assessed = _pattern_findings(
        rows, bucket_edges(reach, end, step), begin, analysed, start
    )
    findings += pattern_findings
    findings.sort(key=lambda f: (f.onset, -f.significance, f.signal))
    window: dict[str, Any] = {
        "start": iso(start),
        "end": iso(end),
        "step_seconds": int(step.total_seconds()),
    }
    if reach < start:
        window["baseline_from"] = iso(reach)
    outputs = analysed.as_dicts(findings)
    for item in outputs:  # the backend's unit (its metadata where it has one)
        if item.get("kind") == "metric" and units.get(item["signal"]):
            item["unit"] = units[item["signal"]]
    return {
        "window": window,
        "findings": outputs,
        "healthy_signals": examined + assessed - len(findings),
        "signals_without_data": empty,
    }


def reach_back(start: datetime, end: datetime, step: timedelta) -> datetime:
    """Where the analysis of ``[start, end]`` begins: at least ``RECENT_RANGE`` before ``end``,
    in whole steps before ``start``."""
    if end - start >= RECENT_RANGE:
        return start
    return start - step * math.ceil((RECENT_RANGE - (end - start)) / step)


def service_log_patterns(
    backend: TelemetryBackend,
    service: str,
    start: datetime,
    end: datetime,
    level: str | None = None,
) -> dict[str, Any]:
    """The ``log_patterns`` raw output: templates of ``level`` (default ERROR and WARN) lines."""
    levels = (level.upper(),) if level else LOG_LEVELS
    step = bucket_step(start, end)
    reach = reach_back(start, end, step) if level is None else start
    begin = logs_begin(backend, service, reach, end, step)
    rows: tuple[Row, ...] = ()
    rate: list[tuple[datetime, float]] = []
    complete = True
    for name in levels:
        read = log_counts(backend, service, name, reach, end, step)
        complete = complete and read.complete
        rows += read.rows
        rate = [(t, v + (rate[i][1] if rate else 0.0)) for i, (t, v) in enumerate(read.counts)]
    onset = Analysed().detect_since(
        trim_to_data(rate, begin), start, signal="+".join(levels), kind="log_rate", counts=True
    )
    # No onset in the line rate: a template is new when the lines before the window lack it.
    split = onset.onset if onset is not None else start if reach < start else None
    if split is None:  # nothing to split on: none of the lines is new
        patterns = mine_rows(rows, None)[:MAX_PATTERNS]
    elif complete:
        patterns = [_ongoing(p, begin, split, end) for p in mine_rows(rows, split)][:MAX_PATTERNS]
    else:
        patterns = _sampled_patterns(backend, service, levels, (reach, split, end), step)
    return {
        "window": {"start": iso(start), "end": iso(end), "onset": iso(split) if split else None},
        "patterns": [_cut(p).as_dict() for p in patterns],
    }


def _ongoing(
    pattern: LogPattern, begin: datetime | None, split: datetime, end: datetime
) -> LogPattern:
    """``pattern`` counted from its first line (new) when it began after the service's first
    line, occurs after the split at no more than ``SURGE`` times its rate before it, and its own
    rate would leave the silence before it with a chance under ``1 / ONGOING_ODDS``."""
    if pattern.new or not pattern.count_after or begin is None:
        return pattern
    since = split - pattern.first_seen
    if pattern.count_after * since > SURGE * pattern.count_before * (end - split):
        return pattern
    lines = pattern.count_before + pattern.count_after
    silence = (pattern.first_seen - begin) / (end - pattern.first_seen)
    if silence * lines < math.log(ONGOING_ODDS):
        return pattern
    return replace(pattern, count_before=0, count_after=lines, new=True)


def _sampled_patterns(
    backend: TelemetryBackend,
    service: str,
    levels: Sequence[str],
    bounds: tuple[datetime, datetime, datetime],
    step: timedelta,
) -> list[LogPattern]:
    """Too many lines to read them all: mine the ``FETCH_LIMIT`` nearest each side of the
    onset, then count every template exactly with keyword queries on its longest literal
    part (a substring every line of the template contains), and date it by binary search."""
    start, split, end = bounds
    records = [
        r
        for name in levels
        for lo, hi in ((start, split), (split, end))
        for r in log_records(backend, service, lo, hi, name)[0]
    ]
    exact: list[LogPattern] = []
    for pattern in mine_patterns(records, split)[:MAX_PATTERNS]:
        needle = literal(pattern.template)
        if not needle:
            exact.append(pattern)
            continue
        before = sum(count_logs(backend, service, start, split, n, needle) for n in levels)
        after = sum(count_logs(backend, service, split, end, n, needle) for n in levels)
        firsts = [logs_begin(backend, service, start, end, step, n, needle) for n in levels]
        first = min((f for f in firsts if f is not None), default=pattern.first_seen)
        exact.append(
            replace(
                pattern,
                count_before=before,
                count_after=after,
                first_seen=first,
                new=before == 0 and after > 0,
            )
        )
    exact.sort(key=lambda p: (not p.new, -p.count_after, -p.count_before, p.template))
    return exact


def literal(template: str) -> str:
    """The longest run of a template between its masks (``<*>``, ``<NUM>``...), stripped."""
    return max((p.strip() for p in re.split(r"<[A-Z*]+>", template)), key=len)


def _pattern_findings(
    rows: tuple[Row, ...],
    edges: Sequence[datetime],
    begin: datetime | None,
    analysed: Analysed,
    since: datetime,
) -> tuple[list[Finding], int]:
    """Findings for the frequent templates of the window (from ``since``) whose line counts
    changed; and how many were assessed."""
    patterns = mine_rows(rows, since)
    frequent = [p for p in patterns if p.count_after >= MIN_PATTERN_RECORDS][:MAX_PATTERN_FINDINGS]
    findings: list[Finding] = []
    for pattern in frequent:
        counts = trim_to_data(count_by_bucket(pattern.times, edges), begin)
        found = analysed.detect_since(
            counts, since, signal=pattern.template, kind="log_pattern", counts=True
        )
        if found is not None:
            findings.append(to_first_line(found, pattern.times, edges[1] - edges[0]))
    return findings, len(frequent)


def to_first_line(finding: Finding, times: Sequence[datetime], step: timedelta) -> Finding:
    """A log finding dated by its first line in the onset bucket, not the bucket's start."""
    start, end = finding.onset, finding.onset + step
    first = min((t for t in times if start <= t < end), default=None)
    return replace(finding, onset=first) if first is not None else finding


def _cut(pattern: LogPattern) -> LogPattern:
    if len(pattern.example) <= MAX_EXAMPLE:
        return pattern
    return replace(pattern, example=pattern.example[:MAX_EXAMPLE] + "…")
