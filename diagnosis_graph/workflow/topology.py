"""The diagnosis graph's topology: its state, eight nodes, their routing and edges."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ..config import RunConfig
from ..graph import END, START, StateGraph
from ..state import Append, Reducer, Replace
from .outcomes import (
    TECHNICAL_RETRY,
    Outcome,
    StepResult,
    Verdict,
    lower_verdict,
    orchestration_event,
)

RECURSION_LIMIT = 32
#: Bound of ``orchestration_events``; larger than the recursion limit so no event is dropped.
EVENT_LIMIT = 64

PLANNER = "planner"
EXECUTOR = "executor"
GATEKEEPER = "gatekeeper"
VERIFIED_INPUT = "verified_input"
VERIFIER = "verifier"
EVIDENCE_RETRY = "evidence_retry"
COMPOSER = "composer"
FALLBACK = "fallback"

NODE_NAMES = (
    PLANNER,
    EXECUTOR,
    GATEKEEPER,
    VERIFIED_INPUT,
    VERIFIER,
    EVIDENCE_RETRY,
    COMPOSER,
    FALLBACK,
)

MODE_FULL = "FULL"
MODE_EVIDENCE_GAP_ONLY = "EVIDENCE_GAP_ONLY"


def diagnosis_schema() -> dict[str, Reducer]:
    """The diagnosis state schema (replace everywhere but the event logs)."""
    return {
        "diagnosis_context": Replace(default_factory=dict),
        "planner_plan": Replace(),
        "executor_output": Replace(),
        "gatekeeper_result": Replace(),
        "verified_executor_output": Replace(),
        "verified_evidence": Replace(default_factory=list),
        "verifier_output": Replace(),
        "composer_output": Replace(),
        "final_answer": Replace(),
        "planner_retry_count": Replace(default=0),
        "verifier_retry_count": Replace(default=0),
        "composer_retry_count": Replace(default=0),
        "evidence_retry_count": Replace(default=0),
        "orchestration_events": Append(max_len=EVENT_LIMIT),
        "route_reason": Replace(),
        "resumed_after": Append(max_len=EVENT_LIMIT),
    }


State = Mapping[str, Any]

#: The reason code named after an outcome: ``completed``, ``invalid_output``, ...
REASON_OF = {outcome: outcome.value.lower() for outcome in Outcome}
#: Technical retries allowed per counter (planner: per evidence round; others: per run).
MAX_TECHNICAL_RETRIES = 1
#: Evidence retries allowed per run.
MAX_EVIDENCE_RETRIES = 1
_RETRY_COUNTERS = {
    PLANNER: "planner_retry_count",
    VERIFIER: "verifier_retry_count",
    COMPOSER: "composer_retry_count",
}


class Decision(NamedTuple):
    """The edge a node takes (by reason code) and the state updates that go with it."""

    reason_code: str
    update: Mapping[str, Any] = MappingProxyType({})


def decide(node: str, state: State, outcome: Outcome) -> Decision:
    """The edge out of ``node`` after it ended with ``outcome``."""
    completed = outcome is Outcome.COMPLETED
    if node == EXECUTOR:  # no graph retry: only COMPLETED reaches the gatekeeper
        return Decision(REASON_OF[outcome])
    if node == GATEKEEPER:
        return _after_gatekeeper(state, completed)
    if node == EVIDENCE_RETRY:  # one evidence retry used, the planner's retry budget renewed
        used = int(state.get("evidence_retry_count") or 0)
        return Decision(
            "evidence_gap_only", {"evidence_retry_count": used + 1, "planner_retry_count": 0}
        )
    if node == VERIFIER and completed and evidence_retry_allowed(state):
        return Decision("evidence_gap")
    if completed or node not in _RETRY_COUNTERS:  # verified_input and fallback always go on
        return Decision("completed")
    if outcome in TECHNICAL_RETRY:
        counter = _RETRY_COUNTERS[node]
        used = int(state.get(counter) or 0)
        if used < MAX_TECHNICAL_RETRIES:
            return Decision(REASON_OF[outcome], {counter: used + 1})
        return Decision("retry_exhausted")
    return Decision("non_retryable_failed")


def _after_gatekeeper(state: State, completed: bool) -> Decision:
    """PASS, or LOW_CONFID with a verified binding of a verified claim, goes on; else fallback."""
    result = state.get("gatekeeper_result")
    passing = (Verdict.PASS.value, Verdict.LOW_CONFID.value)
    if (
        completed
        and result
        and min(result["verified_binding_count"], result["verified_claim_count"]) > 0
        and result["verdict"] in passing
    ):
        return Decision(f"gatekeeper_{result['verdict'].lower()}")
    return Decision("gatekeeper_reject")


def evidence_retry_allowed(state: State) -> bool:
    """No evidence retry yet, a PASS ceiling, an effective LOW_CONFID and a critical gap."""
    gatekeeper = state.get("gatekeeper_result")
    verifier = state.get("verifier_output")
    if not gatekeeper or not verifier:
        return False
    ceiling = gatekeeper["verifier_verdict_ceiling"]
    return (
        int(state.get("evidence_retry_count") or 0) < MAX_EVIDENCE_RETRIES
        and ceiling == Verdict.PASS.value
        and lower_verdict(verifier["verdict"], ceiling) is Verdict.LOW_CONFID
        and bool(verifier["critical_gaps"])
    )


def route_by_reason(state: State) -> str:
    """The engine router: the reason code recorded by the node that just ran."""
    return str(state["route_reason"])


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


def wire(
    start: str,
    nodes: Mapping[str, Any],
    schema: dict[str, Reducer],
    routes: Mapping[str, Mapping[str, str]],
    fixed: Mapping[str, str] = MappingProxyType({}),
) -> StateGraph:
    """The uncompiled StateGraph: START -> ``start``, ``routes`` by reason, ``fixed`` edges
    (``compile`` reports a node the edges name but ``nodes`` lacks, or one never reached)."""
    graph = StateGraph(schema)
    for name, node in nodes.items():
        graph.add_node(name, node)
    graph.add_edge(START, start)
    for name, table in routes.items():
        graph.add_conditional_edges(name, route_by_reason, table)
    for name, target in fixed.items():
        graph.add_edge(name, target)
    return graph


def build_topology(nodes: Mapping[str, WorkflowNode]) -> StateGraph:
    """Return the uncompiled diagnosis StateGraph over the given eight workflow nodes."""
    wrapped = {name: recorded(name, node) for name, node in nodes.items()}
    return wire(PLANNER, wrapped, diagnosis_schema(), _CONDITIONAL, _FIXED)
