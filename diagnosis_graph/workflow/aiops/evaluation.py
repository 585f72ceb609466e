"""``self_evaluation`` of an AIOps run: ``{"aiops_rule_evaluation": {...}}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..evaluation import tool_statistics
from ..gatekeeper import GATEKEEPER_VERSION
from ..ports import InvocationRecord
from .graph import MAX_ALERTS, MAX_ROUNDS
from .report import cited_ids, diagnosed, verified_ids


def _alert(investigation: Mapping[str, Any]) -> dict[str, Any]:
    alert = investigation["alert"]
    return {
        "alert_id": investigation["alert_id"],
        "alert_name": alert.get("alert_name"),
        "service": alert.get("service"),
        "severity": alert.get("severity"),
        "rounds": investigation["rounds"],
        "status": investigation["status"],
        "termination_reason": investigation["termination_reason"],
        "diagnosed": diagnosed(investigation),
        "verified_evidence_count": len(investigation.get("evidence") or []),
        "cited_evidence_ids": cited_ids(investigation),
        "rule_evaluation": investigation.get("rule_evaluation"),
        "verifier_evaluation": investigation.get("verifier_evaluation"),
    }


def aiops_rule_evaluation(
    state: Mapping[str, Any], invocations: Sequence[InvocationRecord], prompt_version: str | None
) -> dict[str, Any]:
    """Alerts covered, citations verified and tool calls of one AIOps run; the gatekeeper's
    figures are each alert's own, in its ``rule_evaluation``."""
    investigations = list(state.get("investigations") or [])
    skipped = list(state.get("skipped") or [])
    read = state.get("alerts_read") or {}
    verified = {i for inv in investigations for i in verified_ids(inv)}
    cited = [i for inv in investigations for i in cited_ids(inv)]
    covered = [inv["alert"].get("alert_name") for inv in investigations if diagnosed(inv)]
    return {
        "alerts_read": bool(read.get("ok")),
        "alerts_error": None if read.get("ok") else read.get("detail"),
        "alerts_firing": len(investigations) + len(skipped),
        "alerts_investigated": len(investigations),
        "alerts_covered": len(covered),
        "alerts_not_covered": [
            inv["alert"].get("alert_name") for inv in investigations if not diagnosed(inv)
        ],
        "alerts_skipped": [a.get("alert_name") for a in skipped],
        "alerts": [_alert(inv) for inv in investigations],
        **tool_statistics(invocations),
        "citations_total": len(cited),
        "citations_verified": sum(1 for i in cited if i in verified),
        "cited_evidence_ids": cited,
        "all_citations_verified": all(i in verified for i in cited),
        "max_alerts": MAX_ALERTS,
        "max_rounds_per_alert": MAX_ROUNDS,
        "prompt_version": prompt_version,
        "gatekeeper_version": GATEKEEPER_VERSION,
    }
