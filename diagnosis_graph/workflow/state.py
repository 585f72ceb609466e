"""The diagnosis workflow's state schema, node names and limits."""

from __future__ import annotations

from ..state import Append, Reducer, Replace

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
