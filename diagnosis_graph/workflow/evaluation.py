"""``self_evaluation`` of a complex chat run: rule evaluation plus verifier evaluation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .gatekeeper import NO_VERIFIED_BINDING, GatekeeperResult
from .ports import InvocationRecord
from .render import language_of


def tool_statistics(invocations: Sequence[InvocationRecord]) -> dict[str, Any]:
    """How many tool calls a run made, by status, and which tools it used."""
    return {
        "tool_invocation_count": len(invocations),
        "tool_status_counts": dict(Counter(r.status for r in invocations)),
        "tools_used": sorted({r.tool_name for r in invocations}),
    }


def grounding_evaluation(gate: GatekeeperResult | None) -> dict[str, Any]:
    """Per run: the ungrounded claims with their tokens, and the groundedness share (verified
    claims among those with a verified binding; the claim counts are the gatekeeper's)."""
    claims = gate["claims"] if gate else []
    checked = [c for c in claims if c["grounding_reason"] != NO_VERIFIED_BINDING]
    return {
        "ungrounded": [
            {"claim_id": c["claim_id"], "tokens": c["ungrounded_tokens"], "reason": reason}
            for c in checked
            if (reason := c["grounding_reason"])
        ],
        "groundedness": (
            round(sum(c["verified"] for c in checked) / len(checked), 4) if checked else None
        ),
    }


def rule_evaluation(
    state: Mapping[str, Any], invocations: Sequence[InvocationRecord], prompt_version: str | None
) -> dict[str, Any]:
    """Tool calls, whether every citation was verified, grounding, what the question was
    understood as, and the gatekeeper's result (its verdict, counts and reasons)."""
    result: GatekeeperResult | None = state.get("gatekeeper_result")
    verified_ids = {e["evidence_id"] for e in state.get("verified_evidence") or []}
    composer = state.get("composer_output") or {}
    plan = state.get("planner_plan") or {}
    cited = sorted({e for c in composer.get("conclusions", []) for e in c.get("evidence_ids", [])})
    return {
        **tool_statistics(invocations),
        "cited_evidence_ids": cited,
        "all_cited_evidence_verified": all(e in verified_ids for e in cited),
        "prompt_version": prompt_version,
        "grounding": grounding_evaluation(result),
        "understanding": {  # what the run read from the question
            "window": plan.get("window"),
            "unknown_services": list(plan.get("unknown_services") or []),
            "language": language_of((state.get("diagnosis_context") or {}).get("question") or ""),
        },
        "gatekeeper": dict(result) if result else None,
    }


def verifier_evaluation(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verifier's verdicts and assessments, or None when the verifier never completed."""
    verifier = state.get("verifier_output")
    if not verifier:
        return None
    assessments = verifier.get("claim_assessments", [])
    return {
        "verdict": verifier.get("verdict"),
        "verdict_ceiling": verifier.get("verdict_ceiling"),
        "effective_verdict": verifier.get("effective_verdict"),
        "supported_claim_ids": [a["claim_id"] for a in assessments if a["supported"]],
        "unsupported_claim_ids": [a["claim_id"] for a in assessments if not a["supported"]],
        "critical_gap_count": len(verifier.get("critical_gaps", [])),
        "evidence_retry_count": int(state.get("evidence_retry_count") or 0),
    }


def build_self_evaluation(
    state: Mapping[str, Any], invocations: Sequence[InvocationRecord], prompt_version: str | None
) -> dict[str, Any]:
    """``{"rule_evaluation": ..., "verifier_evaluation": ...}`` for ``diagnosis_run``."""
    return {
        "rule_evaluation": rule_evaluation(state, invocations, prompt_version),
        "verifier_evaluation": verifier_evaluation(state),
    }
