"""The AIOps supervisor graph: load_alerts -> select_alerts -> investigate (per alert) -> report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...config import RunConfig
from ...graph import END, StateGraph
from ...runtime import CompiledGraph
from ...state import Append, Reducer, Replace
from ..outcomes import Outcome, StepResult, orchestration_event
from ..ports import InvocationStore
from ..topology import wire
from ..trace import TERMINATION_ERROR, build_orchestration_trace

LOAD_ALERTS = "load_alerts"
SELECT_ALERTS = "select_alerts"
INVESTIGATE = "investigate"
REPORT = "report"

NODE_NAMES = (LOAD_ALERTS, SELECT_ALERTS, INVESTIGATE, REPORT)

#: At most this many firing alerts are investigated in one run (most severe first).
MAX_ALERTS = 8
#: At most this many evidence rounds per alert: the first, plus the chat graph's evidence retry.
MAX_ROUNDS = 2
#: Supervisor steps: load + select + one investigation per alert + report, with headroom.
RECURSION_LIMIT = 16
#: Bound of the supervisor's ``orchestration_events`` (more than the recursion limit).
EVENT_LIMIT = 32


def aiops_schema() -> dict[str, Reducer]:
    """The supervisor's state: context, the alerts read, the queue, skipped and investigated."""
    return {
        "aiops_context": Replace(default_factory=dict),
        "alerts_read": Replace(),
        "queue": Replace(default_factory=list),
        "skipped": Replace(default_factory=list),
        "investigations": Append(),
        "final_answer": Replace(),
        "orchestration_events": Append(max_len=EVENT_LIMIT),
        "route_reason": Replace(),
    }


@dataclass(frozen=True)
class AlertsRead:
    """The result of reading the firing alerts: ``ok``, the alerts, the invocation, a detail."""

    ok: bool
    alerts: Sequence[Mapping[str, Any]] = ()
    invocation_id: str | None = None
    detail: str | None = None


class AlertSource(Protocol):
    """Reads the alerts of the alerting backend for one run (recorded as a tool invocation)."""

    def firing_alerts(self, session_id: str, run_id: str) -> AlertsRead:
        """Every alert the backend reports as firing (pending ones are filtered by the graph)."""
        ...


@dataclass(frozen=True)
class AiOpsPorts:
    """Everything the supervisor graph needs from outside; ``diagnosis`` runs nested per alert."""

    alerts: AlertSource
    invocations: InvocationStore
    diagnosis: CompiledGraph
    reference_time: Callable[[], str | None] = lambda: None
    listener: Callable[[dict[str, Any]], None] = lambda event: None
    unreadable: Callable[[], Sequence[str]] = tuple


State = Mapping[str, Any]
SupervisorNode = Callable[[State, RunConfig], StepResult]

ROUTES: dict[str, Mapping[str, str]] = {
    LOAD_ALERTS: {"completed": SELECT_ALERTS, "alerts_unavailable": REPORT},
    SELECT_ALERTS: {"alerts_selected": INVESTIGATE, "no_firing_alerts": REPORT},
    INVESTIGATE: {"next_alert": INVESTIGATE, "all_investigated": REPORT},
    REPORT: {"completed": END},
}


def decide(node: str, state: State, outcome: Outcome) -> str:
    """The reason code of the edge out of ``node`` (see ``ROUTES``)."""
    if node == LOAD_ALERTS:  # COMPLETED exactly when the alerts were read
        return "completed" if outcome is Outcome.COMPLETED else "alerts_unavailable"
    if node == SELECT_ALERTS:
        return "alerts_selected" if state.get("queue") else "no_firing_alerts"
    if node == INVESTIGATE:
        return "next_alert" if state.get("queue") else "all_investigated"
    return "completed"


def recorded(name: str, node: SupervisorNode) -> Callable[[State, RunConfig], dict[str, Any]]:
    """Wrap a supervisor node: run it, decide the route, append its orchestration event."""

    def run(state: State, config: RunConfig) -> dict[str, Any]:
        queue = state.get("queue") if name == INVESTIGATE else None
        result = node(state, config)
        update = dict(result.update)
        reason = decide(name, {**state, **update}, result.outcome)
        event = orchestration_event(name, result.outcome, reason, 1)
        if queue:
            event["alert"] = str(queue[0]["alert"].get("alert_name"))
        update["orchestration_events"] = [event]
        update["route_reason"] = reason
        return update

    run.__name__ = run.__qualname__ = name
    return run


def build_aiops_topology(nodes: Mapping[str, SupervisorNode]) -> StateGraph:
    """The uncompiled supervisor StateGraph over the given four nodes."""
    wrapped = {name: recorded(name, node) for name, node in nodes.items()}
    return wire(LOAD_ALERTS, wrapped, aiops_schema(), ROUTES)


def aiops_mermaid(taken: Any = ()) -> str:
    """The supervisor topology as Mermaid, ``taken`` edges highlighted (no ports needed)."""
    nodes = dict.fromkeys(NODE_NAMES, lambda state, config: StepResult(Outcome.COMPLETED))
    return build_aiops_topology(nodes).compile().to_mermaid(taken)


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
    retries = sum(int(i["rounds"]) - 1 for i in investigations)
    return {
        **build_orchestration_trace(events, retries, stopped_by=reason),
        "version": AIOPS_TRACE_VERSION,
        "degraded": degraded,
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
