"""The ``orchestration_trace`` of an AIOps run (version ``aiops-stategraph-v1``).

Same shape as the chat trace - ``transitions`` of the supervisor graph, ``final_node``,
``termination_reason``, ``degraded``, ``evidence_retry_count`` - plus ``alerts``: per
investigated alert its id, name, rounds and the chat graph's own trace (``stategraph-v1``).

``termination_reason`` of a finished run is ``report_<reason of the edge into report>``:
``report_all_investigated``, ``report_no_firing_alerts`` or ``report_alerts_unavailable``; a run
stopped by the recursion limit or an unhandled error is ``recursion_limit`` / ``error`` with the
partial transitions. ``degraded`` is true when part of the report is a fallback: the alerts
could not be read, or an investigated alert ended without a composed, verified answer.
``evidence_retry_count`` is the sum over the alerts (each alert has at most one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..trace import TERMINATION_ERROR, transitions
from .state import REPORT

AIOPS_TRACE_VERSION = "aiops-stategraph-v1"


def termination_reason(events: Sequence[Mapping[str, Any]]) -> str:
    """``report_<reason>`` from the edge that led into the report, else ``error``."""
    if len(events) < 2 or events[-1]["node"] != REPORT:
        return TERMINATION_ERROR
    return f"report_{events[-2]['reason_code']}"


def alert_traces(investigations: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per investigated alert: id, name, rounds and its child graph's trace."""
    return [
        {
            "alert_id": i["alert_id"],
            "alert_name": i["alert"].get("alert_name"),
            "rounds": i["rounds"],
            "degraded": bool(i["degraded"]),
            "trace": i["trace"],
        }
        for i in investigations
    ]


def build_aiops_trace(
    events: Sequence[Mapping[str, Any]],
    investigations: Sequence[Mapping[str, Any]],
    *,
    stopped_by: str | None = None,
) -> dict[str, Any]:
    """The AIOps orchestration trace from the supervisor's events and the investigations."""
    reason = stopped_by or termination_reason(events)
    degraded = stopped_by is None and (
        reason == "report_alerts_unavailable" or any(i["degraded"] for i in investigations)
    )
    return {
        "version": AIOPS_TRACE_VERSION,
        "transitions": transitions(events),
        "final_node": str(events[-1]["node"]) if events else None,
        "termination_reason": reason,
        "degraded": degraded,
        "evidence_retry_count": sum(int(i["rounds"]) - 1 for i in investigations),
        "alerts": alert_traces(investigations),
    }
