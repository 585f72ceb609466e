"""What the pages draw for a run's cited evidence, read from the recorded tool outputs only:
the data of ``GET /api/diagnosis/<sessionId>/evidence``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..analysis.series import parse_stamp

METRICS, ANOMALIES, LOG_PATTERNS = "query_metrics", "detect_anomalies", "log_patterns"
_SERIES = re.compile(r"^\$\.series\[(\d+)\](?:\.points\[(\d+)\])?")
_SUMMARY = re.compile(r"^\$\.summary\.(min|max|last)$")
_FINDING = re.compile(r"^\$\.findings\[(\d+)\](?:\.points\[(\d+)\]$)?")
_PATTERN = re.compile(r"^\$\.patterns\[(\d+)\]")
_RECORD = re.compile(r"^\$\.records\[(\d+)\]")
PATTERN_FIELDS = ("template", "example", "count_before", "count_after")


def evidence_view(
    run: Mapping[str, Any], invocations: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``RunEvidence`` data of ``run`` from its invocation rows (parsed JSON columns)."""
    successful = [i for i in invocations if i.get("status") == "SUCCESS"]
    cited = [(inv, ref) for inv in successful for ref in _refs(inv)]
    analyses = [i for i in successful if i.get("tool_name") == ANOMALIES]
    charts = _metric_charts(cited, analyses)
    charts += _finding_charts(cited, {(c["service"], c["metric"]): c for c in charts})
    evaluation = run.get("self_evaluation") or {}
    window = evaluation.get("question_window") if isinstance(evaluation, Mapping) else None
    return {
        "window": window if isinstance(window, Mapping) else None,
        "evidence": [_item(inv, ref) for inv, ref in cited],
        "charts": charts,
        "log_tables": _log_tables(cited),
    }


def _refs(invocation: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The verified evidence refs cited from ``invocation`` (all of them if none says cited)."""
    refs = [r for r in invocation.get("evidence_refs") or [] if isinstance(r, Mapping)]
    return [r for r in refs if r.get("cited", True) is not False]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _output(invocation: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(invocation.get("raw_output"))


def _arguments(invocation: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(invocation.get("arguments"))


def _cite(chart: dict[str, Any], ref: Mapping[str, Any], path: str, index: int | None) -> None:
    """Mark point ``index`` of ``chart`` (None: no one point) as cited by ``ref``."""
    point = _at(chart["points"], index) if index is not None else None
    chart["cited"].append(
        {"evidence_id": ref.get("evidence_id"), "index": index, "raw_path": path, "point": point}
    )


def _at(items: Any, index: int) -> Any:
    return items[index] if isinstance(items, list) and 0 <= index < len(items) else None


def _item(invocation: Mapping[str, Any], ref: Mapping[str, Any]) -> dict[str, Any]:
    """One evidence item with where it comes from (service, signal, time of the leaf)."""
    output, args, path = _output(invocation), _arguments(invocation), str(ref.get("raw_path"))
    signal = args.get("metric") or args.get("level")
    moment = None
    if match := _SERIES.match(path):
        series = _at(output.get("series"), int(match.group(1))) or {}
        signal = series.get("metric") or signal
        point = _at(series.get("points"), int(match.group(2))) if match.group(2) else None
        moment = point[0] if isinstance(point, list) and point else None
    elif match := _RECORD.match(path):
        record = _at(output.get("records"), int(match.group(1))) or {}
        moment, signal = record.get("timestamp"), record.get("level") or signal
    elif match := _FINDING.match(path):
        finding = _at(output.get("findings"), int(match.group(1))) or {}
        moment, signal = finding.get("onset"), finding.get("signal") or signal
        point = _at(finding.get("points"), int(match.group(2))) if match.group(2) else None
        moment = point[0] if isinstance(point, list) and point else moment
    elif match := _PATTERN.match(path):
        pattern = _at(output.get("patterns"), int(match.group(1))) or {}
        moment = pattern.get("first_seen")
    return {
        "evidence_id": ref.get("evidence_id"),
        "claim_id": ref.get("claim_id"),
        "invocation_id": invocation["invocation_id"],
        "tool": invocation.get("tool_name"),
        "role": ref.get("role") or "telemetry",
        "raw_path": path,
        "excerpt": ref.get("evidence_excerpt") or "",
        "statement": ref.get("statement"),
        "service": args.get("service"),
        "signal": signal if isinstance(signal, str) else None,
        "timestamp": moment if isinstance(moment, str) else None,
    }


def _metric_charts(
    cited: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    analyses: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One chart per cited series of a ``query_metrics`` output, in citation order."""
    charts: dict[tuple[str, int], dict[str, Any]] = {}
    for invocation, ref in cited:
        if invocation.get("tool_name") != METRICS:
            continue
        output, path = _output(invocation), str(ref.get("raw_path"))
        point_index: int | None = None
        if match := _SERIES.match(path):
            index = int(match.group(1))
            point_index = int(match.group(2)) if match.group(2) else None
        elif path.startswith("$.summary"):
            index = 0
        else:
            continue
        series = _at(output.get("series"), index)
        if not isinstance(series, Mapping):
            continue
        key = (invocation["invocation_id"], index)
        if key not in charts:
            charts[key] = _series_chart(invocation, index, series, output, analyses)
        chart = charts[key]
        summary = _SUMMARY.match(path)
        if point_index is None and summary:
            point_index = _summary_point(chart["points"], summary.group(1), ref)
        _cite(chart, ref, path, point_index)
    return list(charts.values())


def _series_chart(
    invocation: Mapping[str, Any],
    index: int,
    series: Mapping[str, Any],
    output: Mapping[str, Any],
    analyses: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    args = _arguments(invocation)
    points = [p for p in series.get("points") or [] if isinstance(p, list) and len(p) == 2]
    metric = str(series.get("metric") or args.get("metric") or "")
    service = str(args.get("service") or (series.get("labels") or {}).get("service") or "")
    summary = _mapping(output.get("summary"))
    return {
        "kind": "series",
        "invocation_id": invocation["invocation_id"],
        "series_index": index,
        "service": service,
        "metric": metric,
        "unit": summary.get("unit"),
        "points": points,
        "cited": [],
        "windows": _analysed_windows(service, metric, analyses),
        "finding": None,
    }


def _summary_point(points: Sequence[list[Any]], which: str, ref: Mapping[str, Any]) -> int | None:
    """The point a cited ``summary.min``/``max``/``last`` is (the first one with that value)."""
    if not points:
        return None
    if which == "last":
        return len(points) - 1
    try:
        wanted = float(str(ref.get("evidence_excerpt")))
    except ValueError:
        return None
    for n, (_, value) in enumerate(points):
        if isinstance(value, (int, float)) and float(value) == wanted:
            return n
    return None


def _windows(finding: Mapping[str, Any], end: Any) -> dict[str, Any]:
    """The baseline, onset and incident a ``detect_anomalies`` finding states."""
    baseline = finding.get("baseline") or {}
    incident = finding.get("incident") or {}
    return {
        "baseline_start": baseline.get("start"),
        "baseline_end": baseline.get("end"),
        "onset": finding.get("onset"),
        "incident_end": end,
        "baseline_median": baseline.get("median"),
        "incident_median": incident.get("median"),
        "peak": incident.get("peak"),
        "peak_at": incident.get("peak_at"),
        "change": finding.get("change"),
    }


def _analysed_windows(
    service: str, metric: str, analyses: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The windows a ``detect_anomalies`` call of this run found for ``service``'s ``metric``;
    None when the run did not analyse it (the chart then shows no windows)."""
    for invocation in reversed(analyses):  # the latest analysis first
        if _arguments(invocation).get("service") != service:
            continue
        output = _output(invocation)
        for finding in output.get("findings") or []:
            if isinstance(finding, Mapping) and finding.get("signal") == metric:
                end = (output.get("window") or {}).get("end")
                return _windows(finding, end)
    return None


def _finding_charts(
    cited: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    drawn: Mapping[tuple[str, str], dict[str, Any]],
) -> list[dict[str, Any]]:
    """Cited ``detect_anomalies`` findings whose series the run did not record; a finding of
    a drawn series is cited on that series' chart instead."""
    charts: dict[tuple[str, int], dict[str, Any]] = {}
    for invocation, ref in cited:
        if invocation.get("tool_name") != ANOMALIES:
            continue
        path = str(ref.get("raw_path"))
        match = _FINDING.match(path)
        if not match:
            continue
        output, index = _output(invocation), int(match.group(1))
        finding = _at(output.get("findings"), index)
        service = str(_arguments(invocation).get("service") or "")
        if not isinstance(finding, Mapping):
            continue
        series = drawn.get((service, str(finding.get("signal"))))
        key = (invocation["invocation_id"], index)
        if series is None and key not in charts:
            end = (output.get("window") or {}).get("end")
            charts[key] = {
                "kind": "finding",
                "invocation_id": invocation["invocation_id"],
                "series_index": index,
                "service": service,
                "metric": str(finding.get("signal") or ""),
                "unit": None,
                "points": _points(finding.get("points")),
                "cited": [],
                "windows": _windows(finding, end),
                "finding": {k: v for k, v in finding.items() if k != "points"},
            }
        chart = series if series is not None else charts[key]
        _cite(chart, ref, path, _finding_point(finding, path, chart["points"], series is None))
    return list(charts.values())


def _points(value: Any) -> list[list[Any]]:
    """A finding's recorded ``[timestamp, value]`` points; none for an output recorded before
    findings carried them, or one holding anything else (``points[k]`` must stay point k)."""
    if isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in value
    ):
        return value
    return []


def _finding_point(
    finding: Mapping[str, Any], path: str, points: Sequence[list[Any]], own: bool
) -> int | None:
    """The point of ``points`` (the finding's own, or a recorded series of the same signal)
    that a cited leaf at ``path`` of ``finding`` marks."""
    recorded = _points(finding.get("points"))
    if match := re.search(r"\.points\[(\d+)\]$", path):
        index = int(match.group(1))
        if index >= len(recorded):
            return None
        if own:
            return index
        stamp = recorded[index][0]
    elif re.search(r"\.incident\.(peak|peak_at)$", path):
        stamp = _mapping(finding.get("incident")).get("peak_at")
    elif path.endswith(".baseline.end"):
        stamp = _mapping(finding.get("baseline")).get("end")
    else:
        stamp = finding.get("onset")
        if own:  # a log finding's onset is its first line, inside its bucket
            return _at_or_before(points, stamp)
    return next((n for n, p in enumerate(points) if p[0] == stamp), None)


def _at_or_before(points: Sequence[list[Any]], stamp: Any) -> int | None:
    """The last point at or before ``stamp``."""
    try:
        moment = parse_stamp(stamp)
    except (TypeError, ValueError):
        return None
    found = None
    for n, (when, _) in enumerate(points):
        try:
            if parse_stamp(when) > moment:
                break
        except ValueError:
            continue
        found = n
    return found


def _log_tables(
    cited: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
) -> list[dict[str, Any]]:
    """The templates of every cited ``log_patterns`` output, cited rows marked."""
    tables: dict[str, dict[str, Any]] = {}
    for invocation, ref in cited:
        if invocation.get("tool_name") != LOG_PATTERNS:
            continue
        inv_id = invocation["invocation_id"]
        if inv_id not in tables:
            output = _output(invocation)
            tables[inv_id] = {
                "invocation_id": inv_id,
                "service": _arguments(invocation).get("service"),
                "level": _arguments(invocation).get("level"),
                "onset": _mapping(output.get("window")).get("onset"),
                "patterns": [
                    {k: p.get(k) for k in PATTERN_FIELDS}
                    | {"index": n, "new": bool(p.get("new")), "evidence_ids": []}
                    for n, p in enumerate(output.get("patterns") or [])
                    if isinstance(p, Mapping)
                ],
            }
        if match := _PATTERN.match(str(ref.get("raw_path"))):
            row = _at(tables[inv_id]["patterns"], int(match.group(1)))
            if row is not None:
                row["evidence_ids"].append(ref.get("evidence_id"))
    return list(tables.values())
