"""Build the AIOps supervisor graph from its ports and run it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...config import RunConfig
from ...runtime import CompiledGraph
from ..factory import DiagnosisRun, execute
from .nodes import AiOpsNodes
from .ports import AiOpsPorts
from .state import MAX_ALERTS, RECURSION_LIMIT
from .topology import build_aiops_topology
from .trace import build_aiops_trace

DEFAULT_REQUEST = "Investigate the firing alerts"

#: The result of one AIOps run: the chat run's result type.
AiOpsRun = DiagnosisRun


def build_aiops_graph(ports: AiOpsPorts) -> CompiledGraph:
    """The compiled supervisor StateGraph with its nodes bound to ``ports``."""
    return build_aiops_topology(AiOpsNodes(ports).nodes()).compile()


def _trace_of(state: Mapping[str, Any], stopped_by: str | None) -> dict[str, Any]:
    events = state.get("orchestration_events", [])
    return build_aiops_trace(events, state.get("investigations", []), stopped_by=stopped_by)


def run_aiops(
    ports: AiOpsPorts,
    request: str | None,
    *,
    session_id: str,
    run_id: str,
    max_alerts: int = MAX_ALERTS,
    scope: Sequence[Mapping[str, str]] = (),
) -> AiOpsRun:
    """Run the supervisor graph once; never raises for a node failure or the recursion limit.

    ``scope``: the alerts this run was started for (``alert_name`` and ``service`` each); only
    the firing alerts matching one are investigated (empty: every firing alert).
    ``ports.listener`` receives every event of the supervisor and of the child graphs.
    """
    start = {
        "aiops_context": {
            "request": request or DEFAULT_REQUEST,
            "reference_time": ports.reference_time(),
            "max_alerts": max_alerts,
            "scope": [
                {"alert_name": str(a.get("alert_name", "")), "service": str(a.get("service", ""))}
                for a in scope
            ],
        }
    }
    config = RunConfig(
        thread_id=run_id,
        metadata={"session_id": session_id, "run_id": run_id},
        recursion_limit=RECURSION_LIMIT,
    )
    return execute(build_aiops_graph(ports), start, config, ports.listener, _trace_of)
