"""Declared shapes of the values in the diagnosis graph's state.

Every value stays a plain, JSON-serialisable dict at run time (the engine checkpoints and the
web app stores them as JSON); these TypedDicts give them one declared shape that
``mypy --strict`` checks in the nodes, routers, projection and evaluation. The gatekeeper
result's shape is declared here once.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

#: Where evidence comes from (source roles).
Role = Literal["telemetry", "reference"]


class DiagnosisContext(TypedDict, total=False):
    """``diagnosis_context``: the question and what the planner needs around it."""

    question: str
    reference_time: str | None
    history: list[dict[str, Any]]
    mode: str
    evidence_gaps: list[dict[str, Any]]
    language: str  # the answer's language, "en" or "zh": the question's


class PlannedQueryState(TypedDict):
    """One query of a plan."""

    tool: str
    arguments: dict[str, Any]
    purpose: str


class PlanWindowState(TypedDict, total=False):
    """The window the planner read from the question (ISO-8601 UTC strings or None)."""

    start: str | None
    end: str | None
    onset: str | None
    text: str | None
    zone: str | None
    kind: str | None
    utc_offset_minutes: int | None


class UnknownServiceState(TypedDict):
    """A named service without telemetry, and the closest known names."""

    name: str
    suggestions: list[str]


class _PlanUnderstanding(TypedDict, total=False):
    window: PlanWindowState | None
    unknown_services: list[UnknownServiceState]


class PlannerPlanState(_PlanUnderstanding):
    """``planner_plan`` as stored in state (the validated contract plus the mode), with what
    the planner understood of the question (optional: ``window``, ``unknown_services``)."""

    mode: str
    summary: str
    hypotheses: list[str]
    queries: list[PlannedQueryState]


class BindingState(TypedDict):
    """A binding as the executor wrote it."""

    source_invocation_id: str
    raw_path: str
    evidence_excerpt: str


class ClaimState(TypedDict):
    """A claim as the executor wrote it."""

    claim_id: str
    statement: str
    critical: bool
    bindings: list[BindingState]


class ExecutorOutputState(TypedDict):
    """``executor_output``: a complete ``executor_evidence_v2`` snapshot."""

    version: str
    claims: list[ClaimState]
    summary: str


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
    """The gatekeeper's verdict on one claim: bindings, grounding, and whether it is verified.

    ``verified`` holds when at least one binding verified AND the statement is grounded in the
    context of its verified bindings; ``ungrounded_tokens`` are the offending tokens.
    """

    claim_id: str
    critical: bool
    verified: bool
    grounded: bool
    ungrounded_tokens: list[str]
    grounding_reason: str | None
    bindings: list[BindingResult]


class UngroundedClaim(TypedDict):
    """One claim that failed grounding and why, for the trace and self evaluation."""

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
    """A verified claim of the projection, pointing at its evidence ids."""

    claim_id: str
    statement: str
    critical: bool
    bindings: list[BindingState]
    evidence_ids: list[str]


class VerifiedExecutorOutput(TypedDict):
    """``verified_executor_output``: only verified, grounded claims and bindings."""

    version: str
    claims: list[VerifiedClaim]
    summary: str


class ClaimAssessmentState(TypedDict):
    """The verifier's judgement of one claim."""

    claim_id: str
    supported: bool
    reason: str


class VerifierOutputState(TypedDict):
    """``verifier_output`` plus the ceiling and the effective verdict."""

    verdict: str
    claim_assessments: list[ClaimAssessmentState]
    critical_gaps: list[dict[str, Any]]
    verdict_ceiling: str
    effective_verdict: str


class ConclusionState(TypedDict):
    """One validated conclusion."""

    statement: str
    claim_ids: list[str]
    evidence_ids: list[str]


class RecommendationState(TypedDict):
    """One validated recommendation and the evidence it rests on."""

    text: str
    evidence_ids: list[str]


class ComposerOutputState(TypedDict):
    """``composer_output`` v2 as validated; the answer Markdown is rendered from it."""

    summary: str
    conclusions: list[ConclusionState]
    limitations: list[str]
    recommendations: list[RecommendationState]
