"""``self_evaluation`` of an AIOps run: ``{"aiops_rule_evaluation": {...}}`` (SPEC section 6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis_graph.workflow.gatekeeper import GATEKEEPER_VERSION
from diagnosis_graph.workflow.ports import InvocationRecord

from .cases import AlertCase
from .contracts import AiOpsReport
from .report import cited_ids

_COUNTS = ("claim_count", "verified_claim_count", "binding_count", "verified_binding_count")


@dataclass(frozen=True)
class ReportState:
    """How the report came about: the reporter's output (None for the fallback) and outcomes."""

    report: AiOpsReport | None
    source: str  # "reporter", "fallback" or "none" (no firing alert)
    planner_outcome: str | None
    reporter_outcome: str | None
    fallback_reason: str | None = None


def covered(cases: Sequence[AlertCase], report: AiOpsReport | None) -> list[str]:
    """Alerts diagnosed with verified evidence: a diagnosed entry citing the alert's evidence."""
    if report is None:
        return []
    entries = {e.alert_name: e for e in report.alerts}
    names = []
    for case in cases:
        entry = entries.get(case.name)
        if entry and entry.diagnosed and entry.evidence_ids and case.evidence:
            names.append(case.name)
    return names


def _case(case: AlertCase, diagnosed: bool) -> dict[str, Any]:
    return {
        "alert_id": case.alert_id,
        "alert_name": case.name,
        "service": case.service,
        "severity": case.alert.get("severity"),
        "rounds": case.rounds,
        "executor_outcome": case.executor_outcome,
        "gatekeeper_verdicts": list(case.verdicts),
        "verified_evidence_count": len(case.local_evidence),
        "gap_services": [g["suggested_arguments"].get("service") for g in case.gaps],
        "diagnosed": diagnosed,
        "note": case.note,
    }


def aiops_rule_evaluation(
    cases: Sequence[AlertCase],
    skipped: Sequence[dict[str, Any]],
    invocations: Sequence[InvocationRecord],
    state: ReportState,
    prompt_version: str,
    bounds: dict[str, int],
) -> dict[str, Any]:
    """Alerts firing and covered, tool calls, claims, and whether every citation verified."""
    statuses: dict[str, int] = {}
    for record in invocations:
        statuses[record.status] = statuses.get(record.status, 0) + 1
    diagnosed = covered(cases, state.report)
    verified = {e["evidence_id"] for c in cases for e in c.evidence}
    if state.report is not None:
        cited = cited_ids(state.report)
    else:  # the fallback report lists every verified item and cites nothing else
        cited = [e["evidence_id"] for c in cases for e in c.evidence]
    counts = {k: sum(int((c.gate or {}).get(k, 0)) for c in cases) for k in _COUNTS}
    rejected: dict[str, int] = {}
    for case in cases:
        for reason, n in ((case.gate or {}).get("reason_counts") or {}).items():
            rejected[reason] = rejected.get(reason, 0) + int(n)
    return {
        "alerts_firing": len(cases) + len(skipped),
        "alerts_investigated": sum(1 for c in cases if c.rounds),
        "alerts_covered": len(diagnosed),
        "alerts_not_covered": [c.name for c in cases if c.name not in diagnosed],
        "alerts_skipped": [a.get("alert_name") for a in skipped],
        "alerts": [_case(c, c.name in diagnosed) for c in cases],
        "tool_invocation_count": len(invocations),
        "tool_status_counts": statuses,
        "tools_used": sorted({r.tool_name for r in invocations}),
        **counts,
        "rejection_reasons": rejected,
        "citations_total": len(cited),
        "citations_verified": sum(1 for e in cited if e in verified),
        "cited_evidence_ids": cited,
        "all_citations_verified": all(e in verified for e in cited),
        "report_source": state.source,
        "planner_outcome": state.planner_outcome,
        "reporter_outcome": state.reporter_outcome,
        "fallback_reason": state.fallback_reason,
        **bounds,
        "prompt_version": prompt_version,
        "gatekeeper_version": GATEKEEPER_VERSION,
    }
