"""Routing of the diagnosis workflow: the routing table as a pure function of state."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from .outcomes import TECHNICAL_RETRY, Outcome, Verdict, lower_verdict
from .state import COMPOSER, EVIDENCE_RETRY, EXECUTOR, GATEKEEPER, PLANNER, VERIFIER

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
