"""The AIOps supervisor graph's topology: four nodes, the routing table, and event recording.

| from | condition | to | reason_code |
| --- | --- | --- | --- |
| load_alerts | the alerts were read | select_alerts | ``completed`` |
| load_alerts | the alert query failed | report | ``alerts_unavailable`` |
| select_alerts | at least one firing alert | investigate | ``alerts_selected`` |
| select_alerts | no firing alert | report | ``no_firing_alerts`` |
| investigate | alerts left in the queue | investigate | ``next_alert`` |
| investigate | the queue is empty | report | ``all_investigated`` |
| report | always | END | ``completed`` |

As in the chat graph, the wrapper decides the route once and records it in the event and in
``route_reason``. Each ``investigate`` execution is an alert of its own, not a retry: its
``attempt`` is always 1 and its event names the ``alert``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...config import RunConfig
from ...graph import END, START, StateGraph
from ..outcomes import Outcome, StepResult, orchestration_event
from ..routing import route_by_reason
from ..topology import require_nodes
from .state import INVESTIGATE, LOAD_ALERTS, NODE_NAMES, REPORT, SELECT_ALERTS, aiops_schema

State = Mapping[str, Any]
SupervisorNode = Callable[[State, RunConfig], StepResult]

ROUTES: dict[str, Mapping[str, str]] = {
    LOAD_ALERTS: {"completed": SELECT_ALERTS, "alerts_unavailable": REPORT},
    SELECT_ALERTS: {"alerts_selected": INVESTIGATE, "no_firing_alerts": REPORT},
    INVESTIGATE: {"next_alert": INVESTIGATE, "all_investigated": REPORT},
    REPORT: {"completed": END},
}


def decide(node: str, state: State, outcome: Outcome) -> str:
    """The reason code of the edge out of ``node`` (the table above)."""
    if node == LOAD_ALERTS:
        read = state.get("alerts_read") or {}
        ok = outcome is Outcome.COMPLETED and read.get("ok")
        return "completed" if ok else "alerts_unavailable"
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
    require_nodes("AIOps", NODE_NAMES, nodes)
    graph = StateGraph(aiops_schema())
    for name in NODE_NAMES:
        graph.add_node(name, recorded(name, nodes[name]))
    graph.add_edge(START, LOAD_ALERTS)
    for name, routes in ROUTES.items():
        graph.add_conditional_edges(name, route_by_reason, routes)
    return graph


def aiops_mermaid(taken: Any = ()) -> str:
    """The supervisor topology as Mermaid, ``taken`` edges highlighted (no ports needed)."""
    nodes = dict.fromkeys(NODE_NAMES, lambda state, config: StepResult(Outcome.COMPLETED))
    return build_aiops_topology(nodes).compile().to_mermaid(taken)
