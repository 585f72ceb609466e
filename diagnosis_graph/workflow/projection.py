"""The verified projection: only what the gatekeeper verified reaches the verifier and composer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .gatekeeper import VERIFIED


def project_verified(
    executor_output: Mapping[str, Any], gatekeeper_result: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return ``(verified_executor_output, verified_evidence)``.

    Claims keep only their verified bindings, each pointing at an evidence id; a binding cited
    by several claims is one evidence item. Evidence ids are ``E1..En`` in claim order.
    """
    statuses = {c["claim_id"]: c for c in gatekeeper_result.get("claims") or []}
    evidence: list[dict[str, Any]] = []
    ids: dict[tuple[str, str, str], str] = {}
    claims: list[dict[str, Any]] = []
    for claim in executor_output.get("claims") or []:
        checked = statuses.get(claim.get("claim_id"))
        if not checked or not checked["verified"]:
            continue
        kept, evidence_ids = [], []
        for binding, result in zip(claim["bindings"], checked["bindings"], strict=False):
            if result["status"] != VERIFIED:
                continue
            key = (
                str(binding["source_invocation_id"]),
                str(binding["raw_path"]),
                str(binding["evidence_excerpt"]),
            )
            if key not in ids:
                ids[key] = f"E{len(ids) + 1}"
                evidence.append(
                    {
                        "evidence_id": ids[key],
                        "claim_id": claim["claim_id"],
                        "source_invocation_id": key[0],
                        "tool": result.get("tool"),
                        "raw_path": key[1],
                        "evidence_excerpt": key[2],
                    }
                )
            kept.append(dict(binding))
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
    projected = {
        "version": "executor_evidence_v2",
        "claims": claims,
        "summary": executor_output.get("summary", ""),
    }
    return projected, evidence


def evidence_refs(state: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Verified evidence per invocation id: what each tool output was cited for.

    Each ref: ``evidence_id``, ``claim_id``, the claim's ``statement``, ``raw_path``,
    ``evidence_excerpt`` and ``cited`` (whether a conclusion of the answer cites it).
    """
    statements = {
        c["claim_id"]: c["statement"]
        for c in (state.get("verified_executor_output") or {}).get("claims", [])
    }
    conclusions = (state.get("composer_output") or {}).get("conclusions", [])
    cited = {e for c in conclusions for e in c.get("evidence_ids", [])}
    refs: dict[str, list[dict[str, Any]]] = {}
    for item in state.get("verified_evidence") or []:
        refs.setdefault(item["source_invocation_id"], []).append(
            {
                "evidence_id": item["evidence_id"],
                "claim_id": item.get("claim_id"),
                "statement": statements.get(item.get("claim_id")),
                "raw_path": item["raw_path"],
                "evidence_excerpt": item["evidence_excerpt"],
                "cited": item["evidence_id"] in cited,
            }
        )
    return refs
