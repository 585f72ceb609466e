"""The window an investigation compares across, and the comparisons it still needs.

Without a stated time, the comparisons (``detect_anomalies`` and ``log_patterns`` around the
split) follow ``detect_anomalies`` over the recent range, split just before the onset the data
shows (or a named alert's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from . import alerts
from .conversation import Catalog, Done
from .executor import TOOL_CALLS
from .findings import read_signals
from .planner import ANALYSE, comparisons
from .question import Window, request_window

#: Findings at least this share of the strongest one's significance can set the onset.
STRONG_SHARE = 0.25
#: The split lies this long before the onset found, so "after" holds the incident's start.
ONSET_MARGIN = timedelta(minutes=3)
#: Tool calls of the executor's budget left for later follow-ups.
FOLLOW_UP_RESERVE = 3


def data_onset(done: Sequence[Done]) -> datetime | None:
    """The earliest onset among the strongest ``detect_anomalies`` findings."""
    onsets: list[datetime] = []
    for d in done:
        if d.tool != ANALYSE or d.status != "SUCCESS":
            continue
        signals = read_signals(d)
        strongest = max((s.significance for s in signals), default=0.0)
        onsets += [
            s.onset for s in signals if strongest > 0 and s.significance >= STRONG_SHARE * strongest
        ]
    return min(onsets, default=None)


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
    """The comparisons still missing at the investigation's window, for each service of a
    named alert and (without a stated time) each service analysed."""
    room = TOOL_CALLS - len(done) - FOLLOW_UP_RESERVE
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
    return comparisons(catalog, wanted, investigation_window(request, done), room)
