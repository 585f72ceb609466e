"""Agent output contracts: pydantic models, their JSON schemas, and parsing (docs/evidence.md)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PLANNER_PLAN = "planner_plan"
EXECUTOR_EVIDENCE = "executor_evidence_v2"
VERIFIER_OUTPUT = "verifier_output"
COMPOSER_OUTPUT = "composer_output"


class ContractError(ValueError):
    """An agent's output is not valid for its contract (the node's outcome: INVALID_OUTPUT)."""


class _Contract(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class PlannedQuery(_Contract):
    """One tool query the executor should run."""

    tool: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    purpose: str = Field(default="", max_length=500)


class PlanWindow(_Contract):
    """The time window the planner read from the question (ISO-8601 UTC) and its zone."""

    start: str | None = Field(default=None, max_length=40)
    end: str | None = Field(default=None, max_length=40)
    onset: str | None = Field(default=None, max_length=40)
    text: str | None = Field(default=None, max_length=200)
    zone: str | None = Field(default=None, max_length=64)
    kind: str | None = Field(default=None, max_length=16)
    utc_offset_minutes: int | None = Field(default=None, ge=-14 * 60, le=14 * 60)


class UnknownService(_Contract):
    """A service the question names that the backend has no telemetry for, and the closest."""

    name: str = Field(min_length=1, max_length=200)
    suggestions: list[str] = Field(default_factory=list, max_length=5)


class PlannerPlan(_Contract):
    """``planner_plan``: hypotheses, the queries that test them, the window, unknown names."""

    mode: Literal["FULL", "EVIDENCE_GAP_ONLY"] = "FULL"
    summary: str = Field(default="", max_length=2000)
    hypotheses: list[str] = Field(default_factory=list, max_length=10)
    queries: list[PlannedQuery] = Field(min_length=1, max_length=12)
    window: PlanWindow | None = None
    unknown_services: list[UnknownService] = Field(default_factory=list, max_length=5)


class Binding(_Contract):
    """Where a claim's evidence is: an invocation of this run, a path into it, an excerpt."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    source_invocation_id: str = Field(min_length=1, max_length=64)
    raw_path: str = Field(max_length=512)
    evidence_excerpt: str = Field(max_length=2000)


class Claim(_Contract):
    """A statement about the incident and the bindings that support it."""

    claim_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,16}$")
    statement: str = Field(min_length=1, max_length=1000)
    critical: bool = False
    bindings: list[Binding] = Field(default_factory=list, max_length=10)


class ExecutorEvidence(_Contract):
    """``executor_evidence_v2``: the full snapshot of claims after running the queries."""

    version: Literal["executor_evidence_v2"] = "executor_evidence_v2"
    claims: list[Claim] = Field(max_length=30)
    summary: str = Field(default="", max_length=4000)


class ClaimAssessment(_Contract):
    """The verifier's judgement of one verified claim."""

    claim_id: str = Field(min_length=1, max_length=16)
    supported: bool
    reason: str = Field(default="", max_length=1000)


class CriticalGap(_Contract):
    """Evidence the verifier misses, with a suggested query to close the gap."""

    description: str = Field(min_length=1, max_length=1000)
    suggested_tool: str | None = None
    suggested_arguments: dict[str, Any] = Field(default_factory=dict)


class VerifierOutput(_Contract):
    """``verifier_output``: verdict over the verified projection and any critical gaps."""

    verdict: Literal["PASS", "LOW_CONFID", "FAIL"]
    claim_assessments: list[ClaimAssessment] = Field(default_factory=list, max_length=30)
    critical_gaps: list[CriticalGap] = Field(default_factory=list, max_length=10)


class Conclusion(_Contract):
    """One conclusion of the answer, citing supported claims and verified evidence."""

    statement: str = Field(min_length=1, max_length=1000)
    claim_ids: list[str] = Field(default_factory=list)
    evidence_ids: list[str] = Field(min_length=1)


class Recommendation(_Contract):
    """A next step and the verified evidence it rests on (reference evidence may back it)."""

    text: str = Field(min_length=1, max_length=1000)
    evidence_ids: list[str] = Field(default_factory=list, max_length=20)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        # A bare string is a recommendation without sources (it is rendered as such).
        return {"text": value, "evidence_ids": []} if isinstance(value, str) else value


class ComposerOutput(_Contract):
    """``composer_output`` v2: the structured answer; the product renders its Markdown."""

    summary: str = Field(min_length=1, max_length=2000)
    conclusions: list[Conclusion] = Field(default_factory=list, max_length=20)
    limitations: list[str] = Field(default_factory=list, max_length=20)
    recommendations: list[Recommendation] = Field(default_factory=list, max_length=20)


CONTRACTS: dict[str, type[BaseModel]] = {
    PLANNER_PLAN: PlannerPlan,
    EXECUTOR_EVIDENCE: ExecutorEvidence,
    VERIFIER_OUTPUT: VerifierOutput,
    COMPOSER_OUTPUT: ComposerOutput,
}


@cache
def json_schema(name: str) -> dict[str, Any]:
    """The JSON schema of contract ``name`` (cached; do not mutate)."""
    return CONTRACTS[name].model_json_schema()


_FENCE = re.compile(r"```(?P<tag>[^\s`]*)(?P<body>.*?)```", re.DOTALL)


def _fenced_body(text: str) -> str:
    """The body of the one fenced block in ``text`` (ContractError unless exactly one)."""
    blocks = list(_FENCE.finditer(text))
    if not blocks:
        raise ContractError("the output is neither JSON nor one fenced JSON block")
    if len(blocks) > 1:
        raise ContractError(f"the output holds {len(blocks)} fenced blocks; exactly one allowed")
    if text.count("```") != 2:
        raise ContractError("the output has an unclosed code fence")
    tag = blocks[0].group("tag").lower()
    if tag not in ("", "json"):
        raise ContractError(f"the fenced block is tagged {tag!r}, not json")
    return blocks[0].group("body")


def extract_json(content: str | None) -> Any:
    """The JSON of the whole content, or of its one fenced block (else ContractError)."""
    if content is None or not content.strip():
        raise ContractError("the model returned no content")
    text = content.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if "```" not in text:
            raise ContractError(
                f"the output is not valid JSON: {exc.msg} at char {exc.pos}"
            ) from None
    body = _fenced_body(text)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ContractError(
            f"the fenced block is not valid JSON: {exc.msg} at char {exc.pos}"
        ) from None


M = TypeVar("M", bound=BaseModel)


def parse_agent_output(model: type[M], content: str | None) -> M:
    """Validate ``content`` against ``model``; raise ContractError with a short reason."""
    data = extract_json(content)
    if not isinstance(data, dict):
        raise ContractError(f"the output must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise ContractError(
            f"{exc.error_count()} schema error(s); first at {where}: {first['msg']}"
        ) from None
