"""The diagnosis graph's topology: eight nodes, their edges, and event recording."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..config import RunConfig
from ..errors import GraphValidationError
from ..graph import END, START, StateGraph
from .outcomes import Outcome, StepResult, orchestration_event
from .routing import REASON_OF, decide, route_by_reason
from .state import (
    COMPOSER,
    EVIDENCE_RETRY,
    EXECUTOR,
    FALLBACK,
    GATEKEEPER,
    NODE_NAMES,
    PLANNER,
    VERIFIED_INPUT,
    VERIFIER,
    diagnosis_schema,
)

WorkflowNode = Callable[[Mapping[str, Any], RunConfig], StepResult]


def _retrying(node: str, then: str) -> dict[str, str]:
    """Routes of an agent node: on, one technical retry of itself, or the fallback."""
    return {
        "completed": then,
        "invalid_output": node,
        "retryable_failed": node,
        "retry_exhausted": FALLBACK,
        "non_retryable_failed": FALLBACK,
    }


#: Reason code -> next node, per node with conditional edges (the routing table).
_CONDITIONAL: dict[str, Mapping[str, str]] = {
    PLANNER: _retrying(PLANNER, EXECUTOR),
    EXECUTOR: {
        "completed": GATEKEEPER,
        **{REASON_OF[o]: FALLBACK for o in Outcome if o is not Outcome.COMPLETED},
    },
    GATEKEEPER: {
        "gatekeeper_pass": VERIFIED_INPUT,
        "gatekeeper_low_confid": VERIFIED_INPUT,
        "gatekeeper_reject": FALLBACK,
    },
    VERIFIER: {"evidence_gap": EVIDENCE_RETRY, **_retrying(VERIFIER, COMPOSER)},
    COMPOSER: _retrying(COMPOSER, END),
}
_FIXED = {VERIFIED_INPUT: VERIFIER, EVIDENCE_RETRY: PLANNER, FALLBACK: END}


def recorded(
    name: str, node: WorkflowNode
) -> Callable[[Mapping[str, Any], RunConfig], dict[str, Any]]:
    """Wrap a workflow node: run it, decide the route, append its orchestration event."""

    def run(state: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
        result = node(state, config)
        outcome = Outcome(result.outcome)
        produced = result.update
        reason, counters = decide(name, {**state, **produced} if produced else state, outcome)
        update = {**produced, **counters}
        detail = result.detail if outcome is not Outcome.COMPLETED else None
        events = state.get("orchestration_events") or ()
        # attempt: 1 when entered from another node, +1 on each self-loop
        attempt = int(events[-1]["attempt"]) + 1 if events and events[-1]["node"] == name else 1
        update["orchestration_events"] = [
            orchestration_event(name, outcome, reason, attempt, detail)
        ]
        update["route_reason"] = reason
        return update

    run.__name__ = run.__qualname__ = name
    return run


def require_nodes(kind: str, expected: Sequence[str], nodes: Mapping[str, Any]) -> None:
    """Raise GraphValidationError naming every missing and unknown node of a topology."""
    missing = [name for name in expected if name not in nodes]
    unknown = [name for name in nodes if name not in expected]
    if missing or unknown:
        raise GraphValidationError(
            [f"missing {kind} node {name!r}" for name in missing]
            + [f"unknown {kind} node {name!r}" for name in unknown]
        )


def build_topology(nodes: Mapping[str, WorkflowNode]) -> StateGraph:
    """Return the uncompiled diagnosis StateGraph over the given eight workflow nodes."""
    require_nodes("workflow", NODE_NAMES, nodes)
    graph = StateGraph(diagnosis_schema())
    for name in NODE_NAMES:
        graph.add_node(name, recorded(name, nodes[name]))
    graph.add_edge(START, PLANNER)
    for name, routes in _CONDITIONAL.items():
        graph.add_conditional_edges(name, route_by_reason, routes)
    for name, target in _FIXED.items():
        graph.add_edge(name, target)
    return graph
