"""Per-alert evidence: the gatekeeper over this run's invocations, the verified projection,
gaps that justify a second round, and run-wide evidence ids.

Only what the gatekeeper verified leaves this module: the reporter never sees raw tool output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis_graph.workflow.contracts import ExecutorEvidence
from diagnosis_graph.workflow.gatekeeper import GroundingRules, run_gatekeeper
from diagnosis_graph.workflow.ports import SUCCESS, InvocationRecord
from diagnosis_graph.workflow.projection import project_verified

#: At most this many gaps (dependencies) are chased in an alert's second round.
MAX_GAPS = 2

_CLAIM_KEYS = ("claim_id", "statement", "critical", "bindings")


def duplicate_claims(evidence: ExecutorEvidence) -> str | None:
    """Why the executor's snapshot is invalid (duplicate claim ids), or None."""
    ids = [claim.claim_id for claim in evidence.claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    return f"duplicate claim_id in executor output: {duplicates}" if duplicates else None


def snapshot(evidence: ExecutorEvidence, earlier: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The full ``executor_evidence_v2`` snapshot: earlier verified claims the model left out
    come back, as in the diagnosis's evidence retry."""
    claims = [claim.model_dump() for claim in evidence.claims]
    ids = {claim["claim_id"] for claim in claims}
    claims += [{k: c[k] for k in _CLAIM_KEYS} for c in earlier if c["claim_id"] not in ids]
    return {"version": "executor_evidence_v2", "claims": claims, "summary": evidence.summary}


def verify_round(
    output: Mapping[str, Any],
    records: Sequence[InvocationRecord],
    run_id: str,
    *,
    roles: Mapping[str, str] | None = None,
    services: Sequence[str] = (),
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """``(gatekeeper_result, verified_output, verified_evidence)`` of one executor snapshot."""
    gate = run_gatekeeper(
        output, records, run_id, roles=roles, rules=GroundingRules(tuple(services))
    )
    projected, evidence = project_verified(output, gate)
    return dict(gate), dict(projected), [dict(e) for e in evidence]


def _names(service: str, text: str) -> bool:
    pattern = rf"(?<![\w-]){re.escape(service.lower())}(?![\w-])"
    return re.search(pattern, text.lower()) is not None


def evidence_gaps(
    service: str,
    evidence: Sequence[Mapping[str, Any]],
    records: Sequence[InvocationRecord],
    services: Sequence[str],
) -> list[dict[str, Any]]:
    """Known services the verified excerpts name but no verified evidence comes from yet.

    Generic on purpose: a dependency named in the alerting service's own evidence (a host in
    a connection error, a callee in a timeout) is where the cause may live, and its telemetry
    has not been read. Each gap suggests reading that service's logs.
    """
    by_id = {r.invocation_id: r for r in records if r.status == SUCCESS}
    covered = {service} | {
        str(by_id[e["source_invocation_id"]].arguments.get("service"))
        for e in evidence
        if e["source_invocation_id"] in by_id
    }
    gaps: list[dict[str, Any]] = []
    for other in services:
        if other in covered or len(gaps) >= MAX_GAPS:
            continue
        if any(_names(other, str(e["evidence_excerpt"])) for e in evidence):
            gaps.append(
                {
                    "description": f"The evidence of {service} names {other}, but nothing from "
                    f"{other}'s own logs or metrics has been verified yet.",
                    "suggested_tool": "query_logs",
                    "suggested_arguments": {"service": other},
                }
            )
    return gaps


def globalise(
    prefix: str, claims: Sequence[Mapping[str, Any]], evidence: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Claims and evidence with run-wide ids: ``C3`` -> ``A2-C3``, ``E5`` -> ``A2-E5``."""
    out_claims = [
        {
            "claim_id": f"{prefix}-{c['claim_id']}",
            "statement": c["statement"],
            "critical": bool(c.get("critical")),
            "evidence_ids": [f"{prefix}-{e}" for e in c.get("evidence_ids", [])],
        }
        for c in claims
    ]
    out_evidence = [
        {
            **e,
            "evidence_id": f"{prefix}-{e['evidence_id']}",
            "claim_id": f"{prefix}-{e['claim_id']}",
        }
        for e in evidence
    ]
    return out_claims, out_evidence
