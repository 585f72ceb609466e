"""The diagnosis graph's topology: eight nodes, their edges, and event recording."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..config import RunConfig
from ..errors import GraphValidationError
from ..graph import END, START, StateGraph, takes_config
from . import routing
from .outcomes import Outcome, StepResult, orchestration_event
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

WorkflowNode = Callable[..., StepResult]
Decide = Callable[[Mapping[str, Any], Outcome], routing.Decision]

_DECISIONS: dict[str, Decide] = {
    PLANNER: routing.decide_after_planner,
    EXECUTOR: routing.decide_after_executor,
    GATEKEEPER: routing.decide_after_gatekeeper,
    VERIFIED_INPUT: routing.decide_completed,
    VERIFIER: routing.decide_after_verifier,
    EVIDENCE_RETRY: routing.decide_after_evidence_retry,
    COMPOSER: routing.decide_after_composer,
    FALLBACK: routing.decide_completed,
}

_CONDITIONAL: dict[str, Mapping[str, str]] = {
    PLANNER: routing.PLANNER_ROUTES,
    EXECUTOR: routing.EXECUTOR_ROUTES,
    GATEKEEPER: routing.GATEKEEPER_ROUTES,
    VERIFIER: routing.VERIFIER_ROUTES,
    COMPOSER: routing.COMPOSER_ROUTES,
}

_FIXED = {VERIFIED_INPUT: VERIFIER, EVIDENCE_RETRY: PLANNER, FALLBACK: END}


def next_attempt(state: Mapping[str, Any], node: str) -> int:
    """1 when ``node`` is entered from another node, previous attempt + 1 on a self-loop."""
    events = state.get("orchestration_events") or ()
    if events and events[-1]["node"] == node:
        return int(events[-1]["attempt"]) + 1
    return 1


def recorded(
    name: str, node: WorkflowNode
) -> Callable[[Mapping[str, Any], RunConfig], dict[str, Any]]:
    """Wrap a workflow node: run it, decide the route, and append its orchestration event.

    A node may take ``(state)`` or ``(state, config)``.
    """
    decide = _DECISIONS[name]
    with_config = takes_config(node)

    def run(state: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
        result = node(state, config) if with_config else node(state)
        outcome = Outcome(result.outcome)
        produced = result.update
        reason, counters = decide({**state, **produced} if produced else state, outcome)
        update = {**produced, **counters} if counters else dict(produced)
        detail = result.detail if outcome is not Outcome.COMPLETED else None
        event = orchestration_event(name, outcome, reason, next_attempt(state, name), detail)
        update["orchestration_events"] = [event]
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
        graph.add_conditional_edges(name, routing.route_by_reason, routes)
    for name, target in _FIXED.items():
        graph.add_edge(name, target)
    return graph
