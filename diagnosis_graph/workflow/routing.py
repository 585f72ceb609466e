"""Routing of the diagnosis workflow: the routing table as pure functions.

Each ``decide_after_<node>(state, outcome)`` is a pure function of the state *after* the node's
update and the node's outcome; it returns a :class:`Decision`: the reason code of the edge to
take and the retry-counter updates that taking it implies. The node wrapper records that reason
code in the node's orchestration event and in ``route_reason``, and :func:`route_by_reason` -
the router given to the engine - reads it back. The decision is therefore made exactly once,
and the recorded trace and the route actually taken can never disagree. Each ``*_ROUTES``
mapping sends reason codes to next nodes; a reason code is unique per node, so the mapping is
the routing table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ..graph import END
from .outcomes import TECHNICAL_RETRY, Outcome, Verdict, lower_verdict
from .state import (
    COMPOSER,
    EVIDENCE_RETRY,
    EXECUTOR,
    FALLBACK,
    GATEKEEPER,
    PLANNER,
    VERIFIED_INPUT,
    VERIFIER,
)
from .types import GatekeeperResult, VerifierOutputState

State = Mapping[str, Any]

#: The reason code named after an outcome: ``completed``, ``invalid_output``, ...
REASON_OF = {outcome: outcome.value.lower() for outcome in Outcome}

#: Technical retries allowed per counter (planner: per evidence round; others: per run).
MAX_TECHNICAL_RETRIES = 1
#: Evidence retries allowed per run.
MAX_EVIDENCE_RETRIES = 1


class Decision(NamedTuple):
    """The edge a node takes (by reason code) and the state updates that go with it."""

    reason_code: str
    update: Mapping[str, Any] = MappingProxyType({})


def _technical(state: State, outcome: Outcome, counter: str) -> Decision:
    """Shared rows of planner, verifier and composer: one retry, then fallback."""
    if outcome in TECHNICAL_RETRY:
        used = int(state.get(counter) or 0)
        if used < MAX_TECHNICAL_RETRIES:
            return Decision(REASON_OF[outcome], {counter: used + 1})
        return Decision("retry_exhausted")
    return Decision("non_retryable_failed")


def decide_after_planner(state: State, outcome: Outcome) -> Decision:
    """COMPLETED goes on; INVALID_OUTPUT/RETRYABLE_FAILED retry once; the rest falls back."""
    if outcome is Outcome.COMPLETED:
        return Decision("completed")
    return _technical(state, outcome, "planner_retry_count")


def decide_after_executor(state: State, outcome: Outcome) -> Decision:
    """Only COMPLETED reaches the gatekeeper; any other outcome falls back (no graph retry)."""
    return Decision(REASON_OF[outcome])


def decide_after_gatekeeper(state: State, outcome: Outcome) -> Decision:
    """PASS, or LOW_CONFID with at least one verified binding, continues; else fall back.

    A verified binding counts only on a verified (grounded) claim: bindings of ungrounded
    claims never reach the projection.
    """
    result: GatekeeperResult | None = state.get("gatekeeper_result")
    verdict = result["verdict"] if result else None
    verified = 0
    if result:
        verified = min(result["verified_binding_count"], result["verified_claim_count"])
    if outcome is Outcome.COMPLETED and verdict == Verdict.PASS.value and verified > 0:
        return Decision("gatekeeper_pass")
    if outcome is Outcome.COMPLETED and verdict == Verdict.LOW_CONFID.value and verified > 0:
        return Decision("gatekeeper_low_confid")
    return Decision("gatekeeper_reject")


def effective_verdict(state: State) -> Verdict:
    """Return the lower of the verifier's verdict and the gatekeeper's ceiling for it."""
    verifier: VerifierOutputState | None = state.get("verifier_output")
    gatekeeper: GatekeeperResult | None = state.get("gatekeeper_result")
    ceiling = gatekeeper["verifier_verdict_ceiling"] if gatekeeper else Verdict.LOW_CONFID.value
    return lower_verdict(verifier["verdict"] if verifier else Verdict.FAIL.value, ceiling)


def evidence_retry_allowed(state: State) -> bool:
    """True when all four conditions of an evidence retry hold."""
    gatekeeper: GatekeeperResult | None = state.get("gatekeeper_result")
    verifier: VerifierOutputState | None = state.get("verifier_output")
    return (
        int(state.get("evidence_retry_count") or 0) < MAX_EVIDENCE_RETRIES
        and gatekeeper is not None
        and gatekeeper["verifier_verdict_ceiling"] == Verdict.PASS.value
        and effective_verdict(state) is Verdict.LOW_CONFID
        and verifier is not None
        and bool(verifier["critical_gaps"])
    )


def decide_after_verifier(state: State, outcome: Outcome) -> Decision:
    """Completed: evidence retry when allowed, else composer; failures retry once."""
    if outcome is Outcome.COMPLETED:
        return Decision("evidence_gap" if evidence_retry_allowed(state) else "completed")
    return _technical(state, outcome, "verifier_retry_count")


def decide_after_composer(state: State, outcome: Outcome) -> Decision:
    """COMPLETED ends the run; failures retry once, then fall back."""
    if outcome is Outcome.COMPLETED:
        return Decision("completed")
    return _technical(state, outcome, "composer_retry_count")


def decide_completed(state: State, outcome: Outcome) -> Decision:
    """verified_input and fallback always continue with ``completed``."""
    return Decision("completed")


def decide_after_evidence_retry(state: State, outcome: Outcome) -> Decision:
    """Back to the planner: one evidence retry used, the planner's retry budget renewed."""
    used = int(state.get("evidence_retry_count") or 0)
    return Decision(
        "evidence_gap_only", {"evidence_retry_count": used + 1, "planner_retry_count": 0}
    )


def route_by_reason(state: State) -> str:
    """The engine router: the reason code recorded by the node that just ran."""
    return str(state["route_reason"])


_FALLBACK_ON_FAILURE = {"retry_exhausted": FALLBACK, "non_retryable_failed": FALLBACK}

PLANNER_ROUTES = {
    "completed": EXECUTOR,
    "invalid_output": PLANNER,
    "retryable_failed": PLANNER,
    **_FALLBACK_ON_FAILURE,
}
EXECUTOR_ROUTES = {
    "completed": GATEKEEPER,
    **{REASON_OF[o]: FALLBACK for o in Outcome if o is not Outcome.COMPLETED},
}
GATEKEEPER_ROUTES = {
    "gatekeeper_pass": VERIFIED_INPUT,
    "gatekeeper_low_confid": VERIFIED_INPUT,
    "gatekeeper_reject": FALLBACK,
}
VERIFIER_ROUTES = {
    "evidence_gap": EVIDENCE_RETRY,
    "completed": COMPOSER,
    "invalid_output": VERIFIER,
    "retryable_failed": VERIFIER,
    **_FALLBACK_ON_FAILURE,
}
COMPOSER_ROUTES = {
    "completed": END,
    "invalid_output": COMPOSER,
    "retryable_failed": COMPOSER,
    **_FALLBACK_ON_FAILURE,
}
