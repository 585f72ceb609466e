"""The window an investigation compares across, and the comparisons it still needs.

The planner records the window the question states (``question.window_record``). When the
question states none, the investigation does not compare "the last hour" with the hour before:
the plan first asks ``detect_anomalies`` over the backend's recent range, and the comparisons
(logs and golden metrics before and after the split) follow in the next round, split at the
onset the data shows - the earliest onset among the strongest findings (at least
``STRONG_SHARE`` of the most significant one, so a small blip before the incident does not set
it), ``ONSET_MARGIN`` earlier so the incident's first minutes fall after the split. A question
naming a firing alert ("why is <alert> firing?") is read from shortly before the alert became
active, and the alert's service is the one investigated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..compact import shown_items
from . import alerts
from .conversation import Catalog, Done
from .planner import ANALYSE, comparisons
from .question import Window, parse_time, request_window

#: Findings at least this share of the strongest one's significance can set the onset. A
#: quarter, not a half: a step in a counter (restarts) scores far above the slow ramp of the
#: same incident's latency or memory, and the ramp is what began first.
STRONG_SHARE = 0.25
#: The split lies this long before the onset found, so "after" holds the incident's start.
ONSET_MARGIN = timedelta(minutes=3)
#: Tool calls one executor run may make (the ReAct loop's default ``max_tool_calls``), and
#: how many of them to leave for the follow-ups the comparisons call for (the change log
#: lines around the onset, a runbook lookup, a linked metric): calls past the budget are
#: blocked, and three blocked calls end the executor.
CALL_BUDGET = 12
FOLLOW_UP_RESERVE = 3


def data_onset(done: Sequence[Done], services: Sequence[str] | None = None) -> datetime | None:
    """The earliest onset among the strongest ``detect_anomalies`` findings (of ``services``)."""
    onsets: list[datetime] = []
    for d in done:
        if d.tool != ANALYSE or d.status != "SUCCESS" or not isinstance(d.result, Mapping):
            continue
        if services is not None and d.arguments.get("service") not in services:
            continue
        findings = [f for _, f in shown_items(d.result.get("findings")) if isinstance(f, Mapping)]
        strongest = max((_significance(f) for f in findings), default=0.0)
        if strongest <= 0:
            continue
        onsets += [
            moment
            for f in findings
            if _significance(f) >= STRONG_SHARE * strongest
            and (moment := parse_time(str(f.get("onset") or ""))) is not None
        ]
    return min(onsets, default=None)


def _significance(finding: Mapping[str, Any]) -> float:
    try:
        return float(finding.get("significance") or 0)
    except (TypeError, ValueError):
        return 0.0


def investigation_window(request: Mapping[str, Any], done: Sequence[Done]) -> Window:
    """The request's window; with no stated time, split at the onset the outputs show."""
    base = request_window(request)
    if base.stated:
        return base
    onset = alerts.onset(request, done) or data_onset(done)
    if onset is None:
        return base
    split = onset - ONSET_MARGIN
    if split >= base.end:
        return base
    return Window(split, base.end, base.resolved)


def follow_ups(
    request: Mapping[str, Any], catalog: Catalog, done: Sequence[Done]
) -> list[dict[str, Any]]:
    """The comparisons still missing, at the investigation's window: for each service named
    by an alert the question asks about, and - when the question stated no time - each
    service analysed, that has no log or metric query yet (within the call budget)."""
    room = CALL_BUDGET - len(done) - FOLLOW_UP_RESERVE
    if room <= 0:
        return []
    compared = {
        d.arguments.get("service") for d in done if d.tool in ("query_logs", "query_metrics")
    }
    analysed = [
        str(d.arguments.get("service"))
        for d in done
        if d.tool == ANALYSE and d.arguments.get("service") in catalog.services
    ]
    if request_window(request).stated:  # the plan compared across the stated time already
        analysed = []
    wanted = [
        s
        for s in dict.fromkeys(alerts.services(request, catalog, done) + analysed)
        if s not in compared
    ]
    if not wanted:
        return []
    return comparisons(catalog, wanted, investigation_window(request, done), room)
