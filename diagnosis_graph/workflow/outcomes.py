"""Node outcomes, verdicts and the orchestration event shape of the diagnosis workflow."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Outcome(str, Enum):
    """How one node execution ended."""

    COMPLETED = "COMPLETED"
    INVALID_OUTPUT = "INVALID_OUTPUT"
    RETRYABLE_FAILED = "RETRYABLE_FAILED"
    NON_RETRYABLE_FAILED = "NON_RETRYABLE_FAILED"
    TOOL_BLOCKED = "TOOL_BLOCKED"
    FAILED = "FAILED"


#: Outcomes that allow one technical retry of the same node.
TECHNICAL_RETRY = frozenset({Outcome.INVALID_OUTPUT, Outcome.RETRYABLE_FAILED})


class Verdict(str, Enum):
    """Gatekeeper and verifier verdicts, ordered FAIL < LOW_CONFID < PASS (REJECT < all)."""

    PASS = "PASS"
    LOW_CONFID = "LOW_CONFID"
    FAIL = "FAIL"
    REJECT = "REJECT"


_RANK = {Verdict.REJECT: 0, Verdict.FAIL: 1, Verdict.LOW_CONFID: 2, Verdict.PASS: 3}


def lower_verdict(a: Verdict | str, b: Verdict | str) -> Verdict:
    """Return the lower of two verdicts (the effective verdict of verifier and ceiling)."""
    first, second = Verdict(a), Verdict(b)
    return first if _RANK[first] <= _RANK[second] else second


@dataclass(slots=True)
class StepResult:
    """What a workflow node returns: its outcome, its state update, why it failed."""

    outcome: Outcome
    update: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None


def orchestration_event(
    node: str, outcome: Outcome, reason_code: str, attempt: int, detail: str | None = None
) -> dict[str, Any]:
    """Return the plain-dict event stored in ``orchestration_events`` (``detail`` if given)."""
    event = {"node": node, "outcome": outcome.value, "reason_code": reason_code, "attempt": attempt}
    if detail:
        event["detail"] = detail
    return event
