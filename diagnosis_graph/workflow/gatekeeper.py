"""The evidence gatekeeper: every binding checked against this run's outputs (docs/evidence.md)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from . import grounding
from .outcomes import Verdict
from .ports import SUCCESS, InvocationRecord

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
    ungrounded_tokens: list[str]
    grounding_reason: str | None
    bindings: list[BindingResult]


class GatekeeperResult(TypedDict):
    """``gatekeeper_result`` (stored as ``self_evaluation.rule_evaluation.gatekeeper``)."""

    gatekeeper_version: str
    verdict: str
    verifier_verdict_ceiling: str
    claim_count: int
    verified_claim_count: int
    binding_count: int
    verified_binding_count: int
    reason_counts: dict[str, int]
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


GATEKEEPER_VERSION = "gatekeeper-v2"

INVOCATION_NOT_FOUND = "invocation_not_found"
INVOCATION_FAILED = "invocation_failed"
RAW_PATH_INVALID = "raw_path_invalid"
RAW_PATH_NOT_FOUND = "raw_path_not_found"
RAW_PATH_NOT_LEAF = "raw_path_not_leaf"
EXCERPT_EMPTY = "excerpt_empty"
EXCERPT_TOO_SHORT = "excerpt_too_short"
EXCERPT_MISMATCH = "excerpt_mismatch"
#: Minimum length of an excerpt that is not the whole string value.
MIN_EXCERPT_CHARS = 8

VERIFIED, REJECTED = "VERIFIED", "REJECTED"
NO_VERIFIED_BINDING = "no verified binding"
#: A claim resting only on instruction-like tool output (prompt injection) that does not quote it.
FOLLOWS_INSTRUCTION = (
    "ungrounded: its only evidence reads like an instruction to the model; such text is data "
    "and may only be quoted, never acted on"
)
TELEMETRY: Role = "telemetry"
REFERENCE: Role = "reference"


#: The ``raw_path`` grammar: ``$``, ``.name``, ``["key"]``, ``[N]``.
_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)")
_INDEX = re.compile(r"\[(0|[1-9][0-9]*)\]")
_KEY = re.compile(r'\[("(?:[^"\\]|\\.)*")\]')


class RawPathError(ValueError):
    """``raw_path`` does not follow the grammar."""


class PathNotFound(LookupError):
    """``raw_path`` is valid but names nothing in the output."""


def parse_raw_path(path: Any) -> tuple[str | int, ...]:
    """Split ``$.a["b"][0]`` into ``("a", "b", 0)``; raise RawPathError on any other syntax."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise RawPathError("a raw_path starts with $")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        if match := _NAME.match(path, pos):
            steps.append(match.group(1))
        elif match := _INDEX.match(path, pos):
            steps.append(int(match.group(1)))
        elif match := _KEY.match(path, pos):
            try:
                steps.append(json.loads(match.group(1)))
            except json.JSONDecodeError:
                raise RawPathError(f"bad string key at {pos}") from None
        else:
            raise RawPathError(f"unexpected {path[pos]!r} at {pos}")
        pos = match.end()
    return tuple(steps)


def locate(document: Any, path: str) -> tuple[Any, dict[str, Any] | None]:
    """The value at ``path`` and the nearest object that holds it (directly or via arrays)."""
    value = document
    holder: dict[str, Any] | None = None
    for step in parse_raw_path(path):
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                raise PathNotFound(path)
        elif not isinstance(value, dict) or step not in value:
            raise PathNotFound(path)
        if isinstance(value, dict):
            holder = value
        value = value[step]
    return value, holder


def is_leaf(value: Any) -> bool:
    """A string, number, boolean or null, or an array of those (a metric point)."""
    if isinstance(value, list):
        return not any(isinstance(item, (dict, list)) for item in value)
    return not isinstance(value, dict)


def normalise(text: str) -> str:
    """Unicode NFC, every run of whitespace one space, the ends stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def render(value: Any) -> str:
    """The text an excerpt is matched against: strings as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def match_excerpt(value: Any, excerpt: str) -> str | None:
    """None when ``excerpt`` verifies against the leaf ``value``, else the reason code."""
    wanted = normalise(excerpt)
    if not wanted:
        return EXCERPT_EMPTY
    if not isinstance(value, str):
        return None if wanted == normalise(render(value)) else EXCERPT_MISMATCH
    text = normalise(value)
    if wanted == text:
        return None
    if len(wanted) < MIN_EXCERPT_CHARS:
        return EXCERPT_TOO_SHORT
    # on word boundaries: no letter or digit (``str.isalnum``) right before or after it
    bounded = re.search(rf"(?<![^\W_]){re.escape(wanted)}(?![^\W_])", text)
    return None if bounded else EXCERPT_MISMATCH


@dataclass(frozen=True)
class Checked:
    """One binding's reason code (None = verified) and, when verified, its context."""

    reason: str | None
    context: grounding.Context | None = None
    origin: dict[str, Any] | None = None
    instruction_like: bool = False


def check_binding(
    binding: Mapping[str, Any], invocations: Mapping[str, InvocationRecord]
) -> Checked:
    """Run every check on one binding, in the order of the reason codes."""
    record = invocations.get(str(binding.get("source_invocation_id", "")))
    if record is None:
        return Checked(INVOCATION_NOT_FOUND)
    if record.status != SUCCESS:
        return Checked(INVOCATION_FAILED)
    try:
        value, holder = locate(record.raw_output, str(binding.get("raw_path", "")))
    except RawPathError:
        return Checked(RAW_PATH_INVALID)
    except PathNotFound:
        return Checked(RAW_PATH_NOT_FOUND)
    if not is_leaf(value):
        return Checked(RAW_PATH_NOT_LEAF)
    excerpt = binding.get("evidence_excerpt")
    reason = match_excerpt(value, str(excerpt or "")) if excerpt is not None else None
    if reason:
        return Checked(reason)
    origin = (holder or {}).get("origin")
    return Checked(
        None,
        grounding.context_of(value, holder, record.arguments),
        dict(origin) if isinstance(origin, dict) else None,
        grounding.instruction_like(value),
    )


def run_gatekeeper(
    executor_output: Mapping[str, Any] | None,
    records: Sequence[InvocationRecord],
    run_id: str,
    *,
    roles: Mapping[str, str] | None = None,
    catalog: Sequence[str] = (),
    offset_minutes: int = 0,
) -> GatekeeperResult:
    """Check every binding and ground every claim of ``executor_output``."""
    invocations = {r.invocation_id: r for r in records if r.run_id == run_id}
    claims_out: list[ClaimResult] = []
    reasons: dict[str, int] = {}
    claims = (executor_output or {}).get("claims")
    for claim in claims if isinstance(claims, list) else []:
        bindings_out: list[BindingResult] = []
        contexts: list[grounding.Context] = []
        for binding in claim.get("bindings") or []:
            checked = check_binding(binding, invocations)
            record = invocations.get(str(binding.get("source_invocation_id", "")))
            if checked.reason:
                reasons[checked.reason] = reasons.get(checked.reason, 0) + 1
            elif checked.context is not None:
                contexts.append(checked.context)
            bindings_out.append(_binding_result(binding, record, checked, roles or {}))
        claims_out.append(_claim_result(claim, bindings_out, contexts, catalog, offset_minutes))
    return _summarise(claims_out, reasons, isinstance(claims, list))


def _binding_result(
    binding: Mapping[str, Any],
    record: InvocationRecord | None,
    checked: Checked,
    roles: Mapping[str, str],
) -> BindingResult:
    tool = record.tool_name if record else None
    role: Role = TELEMETRY if tool and roles.get(tool) == TELEMETRY else REFERENCE
    return {
        "source_invocation_id": binding.get("source_invocation_id"),
        "tool": tool,
        "role": role if record else None,
        "raw_path": binding.get("raw_path"),
        "evidence_excerpt": binding.get("evidence_excerpt"),
        "status": REJECTED if checked.reason else VERIFIED,
        "reason": checked.reason,
        "origin": checked.origin,
        "instruction_like": checked.instruction_like,
    }


def _claim_result(
    claim: Mapping[str, Any],
    bindings: list[BindingResult],
    contexts: list[grounding.Context],
    catalog: Sequence[str],
    offset_minutes: int,
) -> ClaimResult:
    tokens: list[str] = []
    reason: str | None = NO_VERIFIED_BINDING
    statement = str(claim.get("statement") or "")
    if contexts:
        tokens = grounding.ungrounded_tokens(
            statement, grounding.Context.merge(contexts), catalog, offset_minutes
        )
        reason = grounding.describe(tokens) if tokens else None
    verified = [b for b in bindings if b["status"] == VERIFIED]
    injected = bool(verified) and all(b["instruction_like"] for b in verified)
    quoted = any(grounding.quotes(statement, str(b["evidence_excerpt"])) for b in verified)
    if injected and not tokens and not quoted:
        reason = FOLLOWS_INSTRUCTION
    return {
        "claim_id": str(claim.get("claim_id")),
        "critical": bool(claim.get("critical")),
        "verified": bool(contexts) and reason is None,
        "ungrounded_tokens": tokens,
        "grounding_reason": reason,
        "bindings": bindings,
    }


def _summarise(claims: list[ClaimResult], reasons: dict[str, int], valid: bool) -> GatekeeperResult:
    bindings = [b for claim in claims for b in claim["bindings"]]
    verified = sum(b["status"] == VERIFIED for b in bindings)
    verified_claims = sum(c["verified"] for c in claims)
    if not valid or verified_claims == 0:
        verdict = Verdict.REJECT
    elif verified == len(bindings) and all(c["bindings"] and c["verified"] for c in claims):
        verdict = Verdict.PASS
    else:
        verdict = Verdict.LOW_CONFID
    ceiling = Verdict.PASS if verdict is Verdict.PASS else Verdict.LOW_CONFID
    return {
        "gatekeeper_version": GATEKEEPER_VERSION,
        "verdict": verdict.value,
        "verifier_verdict_ceiling": ceiling.value,
        "claim_count": len(claims),
        "verified_claim_count": verified_claims,
        "binding_count": len(bindings),
        "verified_binding_count": verified,
        "reason_counts": reasons,
        "claims": claims,
        "error": None if valid else "executor output is missing or invalid",
    }
