"""A question that asks for a value ("what was p99 at 10:30?", "...的 p99 在10点10分是多少?").

The planner reads the metric the question names around the time it states (else the latest),
and the executor's ``value`` claim binds the point nearest that time.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..compact import shown_items
from . import claims as kinds
from .conversation import Catalog, Done
from .question import clock, iso, parse_time, request_window

#: The metric is read this long either side of the time asked.
AROUND = timedelta(minutes=5)
_ASK = re.compile(
    r"\bwhat(?:'s|\s+was|\s+is|\s+were)\s+(?:the\s+)?(?P<phrase>.+?)"
    r"(?=\s+(?:of|for|on|in|at|around|from|between)\b|[?,;]|$)",
    re.I,
)
_HOW = re.compile(r"\bhow\s+(?:much|many|high|low|big|long)\b|\bvalues?\b|多少", re.I)
_PARTS = re.compile(r"[a-z]+\d*|\d+")
#: Name parts too common to pick a metric by.
_COMMON = frozenset({"seconds", "total", "count", "bucket", "sum", "rate", "by", "of", "the"})
#: The purpose of a planned query that reads a value the question asks for.
PURPOSE = "the value the question asks for"


def asked(question: str, catalog: Catalog, services: Sequence[str]) -> list[tuple[str, str]]:
    """``(service, metric)`` pairs whose value ``question`` asks for (at most one a service)."""
    ask = _ASK.search(question)
    how = _HOW.search(question) is not None
    if not how and not ask:
        return []
    phrase = question if how or not ask else ask.group("phrase")
    metrics = {s: _metric(phrase, catalog.metrics_of(s), leading=not how) for s in services}
    return [(service, metric) for service, metric in metrics.items() if metric is not None]


def _metric(phrase: str, metrics: Sequence[str], *, leading: bool) -> str | None:
    """The metric ``phrase`` names: exactly, else by the most shared name parts (with
    ``leading``, the phrase's first word must be one)."""
    exact = _exact(phrase, metrics)
    if exact is not None:
        return exact
    words = set(_PARTS.findall(phrase.lower()))
    first = next(iter(_PARTS.findall(phrase.lower())), "")
    scored = []
    for metric in metrics:
        parts = {p for p in _PARTS.findall(metric.lower()) if p not in _COMMON and len(p) > 1}
        shared = len(parts & words)
        if shared and (first in parts or not leading):
            scored.append((shared, shared / len(parts), metric))
    return max(scored, key=lambda s: s[:2])[2] if scored else None


def _exact(text: str, metrics: Sequence[str]) -> str | None:
    """The longest of ``metrics`` that ``text`` spells out whole."""
    for metric in sorted(metrics, key=len, reverse=True):
        if re.search(rf"(?<![A-Za-z0-9_.:]){re.escape(metric)}(?![A-Za-z0-9_.:])", text, re.I):
            return metric
    return None


def _moment(request: Mapping[str, Any]) -> tuple[datetime, datetime]:
    """The time asked about (the stated one, else the window's end) and the window's end."""
    window = request_window(request)
    return (window.onset or window.end) if window.stated else window.end, window.end


def _services(request: Mapping[str, Any], catalog: Catalog) -> list[str]:
    """The services the plan reads; with none, the one service whose metric the question
    names exactly."""
    queries = (request.get("plan") or {}).get("queries") or []
    named = [str((q.get("arguments") or {}).get("service", "")) for q in queries]
    found = [s for s in dict.fromkeys(named) if s in catalog.services]
    if found:
        return found
    question = str(request.get("question", ""))
    owners = [s for s in catalog.services if _exact(question, catalog.metrics_of(s))]
    return owners if len(owners) == 1 else []


def queries(request: Mapping[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
    """``query_metrics`` around the time asked, for each value the question asks for."""
    if not catalog.has("query_metrics"):
        return []
    moment, end = _moment(request)
    question = str(request.get("question", ""))
    return [
        {
            "tool": "query_metrics",
            "arguments": {
                "service": service,
                "metric": metric,
                "start": iso(moment - AROUND),
                "end": iso(min(moment + AROUND, max(end, moment))),
            },
            "purpose": PURPOSE,
        }
        for service, metric in asked(question, catalog, _services(request, catalog))
    ]


Found = tuple[kinds.ClaimKind, list[tuple[str, str, Any]], dict[str, str]]


def claims(request: Mapping[str, Any], done: Sequence[Done]) -> list[Found]:
    """A ``value`` claim per value the plan reads: the point nearest the time asked."""
    wanted = {
        (q["arguments"].get("service"), q["arguments"].get("metric"))
        for q in (request.get("plan") or {}).get("queries") or []
        if q.get("purpose") == PURPOSE and isinstance(q.get("arguments"), Mapping)
    }
    moment, _ = _moment(request)
    found: list[Found] = []
    for d in done:
        key = (d.arguments.get("service"), d.arguments.get("metric"))
        if d.tool != "query_metrics" or d.status != "SUCCESS" or key not in wanted:
            continue
        result = d.output
        series = [s for s in result.get("series") or [] if isinstance(s, Mapping)]
        points = [
            (abs((at - moment).total_seconds()), index, at, point)
            for index, point in shown_items(series[0].get("points") if series else None)
            if isinstance(point, list)
            and len(point) == 2
            and isinstance(point[1], int | float)
            and math.isfinite(point[1])
            and (at := parse_time(str(point[0]))) is not None
        ]
        if not points:
            continue
        _, index, at, (time, value) = min(points)
        unit = str((result.get("summary") or {}).get("unit") or "")
        path, metric = f"$.series[0].points[{index}]", series[0].get("metric")
        leaves = [(f"{path}[1]", value), (f"{path}[0]", time), ("$.series[0].metric", metric)]
        fields = {"service": str(key[0]), "signal": str(key[1]), "time": clock(at)}
        fields["value"] = f"{json.dumps(value)} {unit}".strip()
        found.append((kinds.VALUE, [(d.invocation_id, *leaf) for leaf in leaves], fields))
    return found
