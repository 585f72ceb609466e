"""The ``orchestration_trace`` of an AIOps run (version ``aiops-stategraph-v1``).

The chat trace's shape over the supervisor's events, plus ``alerts``: per investigated alert its
id, name, rounds and its child graph's own trace. A finished run ends ``report_<reason of the
edge into report>``; ``degraded`` when the alerts could not be read or an alert ended without a
composed answer; ``evidence_retry_count`` sums the alerts'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..trace import TERMINATION_ERROR, transitions
from .state import REPORT

AIOPS_TRACE_VERSION = "aiops-stategraph-v1"


def build_aiops_trace(
    events: Sequence[Mapping[str, Any]],
    investigations: Sequence[Mapping[str, Any]],
    *,
    stopped_by: str | None = None,
) -> dict[str, Any]:
    """The AIOps orchestration trace from the supervisor's events and the investigations."""
    finished = len(events) >= 2 and events[-1]["node"] == REPORT
    reason = stopped_by or (
        f"report_{events[-2]['reason_code']}" if finished else TERMINATION_ERROR
    )
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
        "alerts": [
            {
                "alert_id": i["alert_id"],
                "alert_name": i["alert"].get("alert_name"),
                "rounds": i["rounds"],
                "degraded": bool(i["degraded"]),
                "trace": i["trace"],
            }
            for i in investigations
        ],
    }
