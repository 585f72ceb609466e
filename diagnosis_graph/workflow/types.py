"""Declared shapes of the values the deterministic nodes put in state (plain JSON dicts)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

#: Where evidence comes from (source roles).
Role = Literal["telemetry", "reference"]


class BindingResult(TypedDict):
    """The gatekeeper's verdict on one binding."""

    source_invocation_id: str | None
    tool: str | None
    role: Role | None
    raw_path: str | None
    evidence_excerpt: str | None
    status: str  # VERIFIED | REJECTED
    reason: str | None
    origin: dict[str, Any] | None  # an uploaded document's origin, when the holder has one
    instruction_like: bool  # the leaf reads like an instruction to the model (data, not orders)


class ClaimResult(TypedDict):
    """The gatekeeper's verdict on one claim; ``verified`` = a binding verified AND grounded."""

    claim_id: str
    critical: bool
    verified: bool
    grounded: bool
    ungrounded_tokens: list[str]
    grounding_reason: str | None
    bindings: list[BindingResult]


class UngroundedClaim(TypedDict):
    """One claim that failed grounding and why."""

    claim_id: str
    tokens: list[str]
    reason: str


class GatekeeperResult(TypedDict):
    """``gatekeeper_result`` (stored as ``self_evaluation.rule_evaluation.gatekeeper``)."""

    gatekeeper_version: str
    verdict: str
    verifier_verdict_ceiling: str
    claim_count: int
    verified_claim_count: int
    grounded_claim_count: int
    binding_count: int
    verified_binding_count: int
    reason_counts: dict[str, int]
    ungrounded_claims: list[UngroundedClaim]
    claims: list[ClaimResult]
    error: str | None


class EvidenceItem(TypedDict):
    """One entry of ``verified_evidence``: a verified excerpt with its id and role."""

    evidence_id: str
    claim_id: str
    source_invocation_id: str
    tool: str | None
    role: Role
    raw_path: str
    evidence_excerpt: str
    origin: dict[str, Any] | None
    instruction_like: bool


class VerifiedClaim(TypedDict):
    """A claim of ``verified_executor_output``: its verified bindings and their evidence ids."""

    claim_id: str
    statement: str
    critical: bool
    bindings: list[dict[str, str]]
    evidence_ids: list[str]


class VerifiedExecutorOutput(TypedDict):
    """``verified_executor_output``: only verified, grounded claims and bindings."""

    version: str
    claims: list[VerifiedClaim]
    summary: str
