"""The evidence gatekeeper: every binding checked against this run's recorded tool outputs.

Reads only invocations of the current run, so an invocation id from another run or session is
``invocation_not_found``. Reason codes, in the order they are checked: ``invocation_not_found``,
``invocation_failed``, ``raw_path_invalid``, ``raw_path_not_found``, ``excerpt_empty``,
``excerpt_mismatch`` (SPEC section 3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .outcomes import Verdict
from .ports import SUCCESS, InvocationRecord

GATEKEEPER_VERSION = "gatekeeper-v1"

INVOCATION_NOT_FOUND = "invocation_not_found"
INVOCATION_FAILED = "invocation_failed"
RAW_PATH_INVALID = "raw_path_invalid"
RAW_PATH_NOT_FOUND = "raw_path_not_found"
EXCERPT_EMPTY = "excerpt_empty"
EXCERPT_MISMATCH = "excerpt_mismatch"

VERIFIED, REJECTED = "VERIFIED", "REJECTED"

_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)")
_INDEX = re.compile(r"\[(0|[1-9][0-9]*)\]")
_KEY = re.compile(r'\[("(?:[^"\\]|\\.)*")\]')


class RawPathError(ValueError):
    """``raw_path`` does not follow the grammar."""


class _NotFound(LookupError):
    """``raw_path`` is valid but names nothing in the output."""


def parse_raw_path(path: str) -> list[str | int]:
    """Split ``$.a["b"][0]`` into ``["a", "b", 0]``; raise RawPathError on any other syntax."""
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
    return steps


def resolve_raw_path(document: Any, path: str) -> Any:
    """Return the value at ``path`` in ``document`` (RawPathError / LookupError when absent)."""
    value = document
    for step in parse_raw_path(path):
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                raise _NotFound(path)
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                raise _NotFound(path)
            value = value[step]
    return value


def normalise(text: str) -> str:
    """Collapse every run of whitespace into one space and strip the ends."""
    return " ".join(text.split())


def render(value: Any) -> str:
    """The text an excerpt is matched against: strings as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def check_binding(
    binding: Mapping[str, Any], invocations: Mapping[str, InvocationRecord]
) -> str | None:
    """Return None when the binding verifies, else the reason code of the first failed check."""
    record = invocations.get(str(binding.get("source_invocation_id", "")))
    if record is None:
        return INVOCATION_NOT_FOUND
    if record.status != SUCCESS:
        return INVOCATION_FAILED
    try:
        value = resolve_raw_path(record.raw_output, str(binding.get("raw_path", "")))
    except RawPathError:
        return RAW_PATH_INVALID
    except LookupError:
        return RAW_PATH_NOT_FOUND
    excerpt = normalise(str(binding.get("evidence_excerpt", "")))
    if not excerpt:
        return EXCERPT_EMPTY
    if excerpt not in normalise(render(value)):
        return EXCERPT_MISMATCH
    return None


def run_gatekeeper(
    executor_output: Mapping[str, Any] | None,
    records: Sequence[InvocationRecord],
    run_id: str,
) -> dict[str, Any]:
    """Check every binding of ``executor_output`` against ``records`` of ``run_id``.

    Returns the ``gatekeeper_result``: verdict, verifier verdict ceiling, counts, and the
    status and reason of every binding. A claim with no binding counts as unverified, so it
    lowers a PASS to LOW_CONFID.
    """
    invocations = {r.invocation_id: r for r in records if r.run_id == run_id}
    claims_out: list[dict[str, Any]] = []
    reasons: dict[str, int] = {}
    claims = (executor_output or {}).get("claims")
    for claim in claims if isinstance(claims, list) else []:
        bindings_out = []
        for binding in claim.get("bindings") or []:
            reason = check_binding(binding, invocations)
            record = invocations.get(str(binding.get("source_invocation_id", "")))
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
            bindings_out.append(
                {
                    "source_invocation_id": binding.get("source_invocation_id"),
                    "tool": record.tool_name if record else None,
                    "raw_path": binding.get("raw_path"),
                    "evidence_excerpt": binding.get("evidence_excerpt"),
                    "status": REJECTED if reason else VERIFIED,
                    "reason": reason,
                }
            )
        claims_out.append(
            {
                "claim_id": claim.get("claim_id"),
                "critical": bool(claim.get("critical")),
                "verified": any(b["status"] == VERIFIED for b in bindings_out),
                "bindings": bindings_out,
            }
        )
    return _summarise(claims_out, reasons, isinstance(claims, list))


def _summarise(
    claims: list[dict[str, Any]], reasons: dict[str, int], valid: bool
) -> dict[str, Any]:
    bindings = [b for claim in claims for b in claim["bindings"]]
    verified = sum(b["status"] == VERIFIED for b in bindings)
    if not valid or verified == 0:
        verdict = Verdict.REJECT
    elif verified == len(bindings) and all(claim["bindings"] for claim in claims):
        verdict = Verdict.PASS
    else:
        verdict = Verdict.LOW_CONFID
    ceiling = Verdict.PASS if verdict is Verdict.PASS else Verdict.LOW_CONFID
    return {
        "gatekeeper_version": GATEKEEPER_VERSION,
        "verdict": verdict.value,
        "verifier_verdict_ceiling": ceiling.value,
        "claim_count": len(claims),
        "verified_claim_count": sum(c["verified"] for c in claims),
        "binding_count": len(bindings),
        "verified_binding_count": verified,
        "reason_counts": reasons,
        "claims": claims,
        "error": None if valid else "executor output is missing or invalid",
    }
