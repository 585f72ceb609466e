"""Build the AIOps supervisor graph from its ports and run it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...config import RunConfig
from ...errors import GraphRecursionError, GraphRuntimeError
from ...runtime import CompiledGraph
from ..factory import DiagnosisRun
from ..trace import TERMINATION_ERROR, TERMINATION_RECURSION_LIMIT
from .nodes import AiOpsNodes
from .ports import AiOpsPorts
from .state import MAX_ALERTS, RECURSION_LIMIT
from .topology import build_aiops_topology
from .trace import build_aiops_trace

DEFAULT_REQUEST = "Investigate the firing alerts"


def build_aiops_graph(ports: AiOpsPorts) -> CompiledGraph:
    """The compiled supervisor StateGraph with its nodes bound to ``ports``."""
    return build_aiops_topology(AiOpsNodes(ports).nodes()).compile()


def aiops_config(session_id: str, run_id: str) -> RunConfig:
    """``thread_id = run_id``, metadata ``{session_id, run_id}``, the supervisor's limit."""
    return RunConfig(
        thread_id=run_id,
        metadata={"session_id": session_id, "run_id": run_id},
        recursion_limit=RECURSION_LIMIT,
    )


#: The result of one AIOps run: the chat run's result type (SUCCESS with the report, maybe
#: degraded, or FAILED with the partial state and trace).
AiOpsRun = DiagnosisRun


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

    ``scope``, when given, is the alerts this run was started for (``alert_name`` and
    ``service`` each, e.g. one webhook group's or the one a person asked about): only the firing
    alerts matching one of them are investigated. Empty means every firing alert.

    ``ports.listener`` receives every supervisor event as its node finishes (the child graphs'
    events arrive through the same listener, tagged with their ``alert``).
    """
    graph = build_aiops_graph(ports)

    def forward(event: dict[str, Any]) -> None:
        for item in event["update"].get("orchestration_events", []):
            ports.listener(dict(item))

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
    try:
        result = graph.run(start, aiops_config(session_id, run_id), on_step=forward)
    except GraphRuntimeError as exc:
        limited = isinstance(exc, GraphRecursionError)
        reason = TERMINATION_RECURSION_LIMIT if limited else TERMINATION_ERROR
        events = exc.state.get("orchestration_events", [])
        trace = build_aiops_trace(events, exc.state.get("investigations", []), stopped_by=reason)
        return AiOpsRun("FAILED", None, False, exc.state, trace, error=str(exc))
    state = result.state
    trace = build_aiops_trace(state["orchestration_events"], state["investigations"])
    return AiOpsRun("SUCCESS", state["final_answer"], bool(trace["degraded"]), state, trace)
