"""The verified projection: only what the gatekeeper verified reaches the verifier and composer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .gatekeeper import (
    REFERENCE,
    VERIFIED,
    ClaimResult,
    EvidenceItem,
    GatekeeperResult,
    VerifiedClaim,
    VerifiedExecutorOutput,
)

_BINDING_KEYS = ("source_invocation_id", "raw_path", "evidence_excerpt")


def project_verified(
    executor_output: Mapping[str, Any], gatekeeper_result: GatekeeperResult | Mapping[str, Any]
) -> tuple[VerifiedExecutorOutput, list[EvidenceItem]]:
    """``(verified_executor_output, verified_evidence)``: only verified bindings."""
    checked_claims: Sequence[ClaimResult] = gatekeeper_result.get("claims") or []
    statuses = {c["claim_id"]: c for c in checked_claims}
    evidence: list[EvidenceItem] = []
    ids: dict[tuple[str, ...], str] = {}
    claims: list[VerifiedClaim] = []
    for claim in executor_output.get("claims") or []:
        checked = statuses.get(claim.get("claim_id"))
        if not checked or not checked["verified"]:
            continue
        kept: list[dict[str, str]] = []
        evidence_ids: list[str] = []
        for binding, result in zip(claim["bindings"], checked["bindings"], strict=False):
            if result["status"] != VERIFIED:
                continue
            key = tuple(str(binding[k]) for k in _BINDING_KEYS)
            if key not in ids:
                ids[key] = f"E{len(ids) + 1}"
                evidence.append(
                    {
                        "evidence_id": ids[key],
                        "claim_id": claim["claim_id"],
                        "source_invocation_id": key[0],
                        "tool": result.get("tool"),
                        "role": result.get("role") or REFERENCE,
                        "raw_path": key[1],
                        "evidence_excerpt": key[2],
                        "origin": result.get("origin"),
                        "instruction_like": bool(result.get("instruction_like")),
                    }
                )
            kept.append(dict(zip(_BINDING_KEYS, key, strict=True)))
            evidence_ids.append(ids[key])
        claims.append(
            {
                "claim_id": claim["claim_id"],
                "statement": claim["statement"],
                "critical": bool(claim.get("critical")),
                "bindings": kept,
                "evidence_ids": evidence_ids,
            }
        )
    projected: VerifiedExecutorOutput = {
        "version": "executor_evidence_v2",
        "claims": claims,
        "summary": str(executor_output.get("summary", "")),
    }
    return projected, evidence


def evidence_refs(state: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Verified evidence per invocation id: what each tool output was cited for."""
    statements = {
        c["claim_id"]: c["statement"]
        for c in (state.get("verified_executor_output") or {}).get("claims", [])
    }
    composer = state.get("composer_output") or {}
    cited = {e for c in composer.get("conclusions", []) for e in c.get("evidence_ids", [])}
    cited |= {e for r in composer.get("recommendations", []) for e in r.get("evidence_ids", [])}
    refs: dict[str, list[dict[str, Any]]] = {}
    for item in state.get("verified_evidence") or []:
        refs.setdefault(item["source_invocation_id"], []).append(
            {
                "evidence_id": item["evidence_id"],
                "claim_id": item.get("claim_id"),
                "statement": statements.get(item.get("claim_id")),
                "raw_path": item["raw_path"],
                "evidence_excerpt": item["evidence_excerpt"],
                "role": item.get("role"),
                "cited": item["evidence_id"] in cited,
            }
        )
    return refs
