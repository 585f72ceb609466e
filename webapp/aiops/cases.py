"""One alert under investigation: its plan, rounds, verified projection and why it may fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .contracts import AlertPlan
from .evidence import globalise

_SEVERITY_RANK = {"critical": 0, "error": 1, "major": 1, "warning": 2, "minor": 3, "info": 4}


def priority(alert: dict[str, Any]) -> tuple[int, str]:
    """Sort key: the most severe first, then the one that fired earliest."""
    return _SEVERITY_RANK.get(str(alert.get("severity", "")).lower(), 5), str(
        alert.get("active_at", "")
    )


@dataclass
class AlertCase:
    """An alert the supervisor investigates; ``alert_id`` (``A1``..) prefixes its evidence ids."""

    alert_id: str
    alert: dict[str, Any]
    plan: AlertPlan | None = None
    rounds: int = 0
    executor_outcome: str | None = None
    verdicts: list[str] = field(default_factory=list)
    gate: dict[str, Any] | None = None
    verified_output: dict[str, Any] | None = None
    local_evidence: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None

    @property
    def name(self) -> str:
        """The alert's name."""
        return str(self.alert.get("alert_name", self.alert_id))

    @property
    def service(self) -> str:
        """The service the alert is about."""
        return str(self.alert.get("service", ""))

    @property
    def verified_claims(self) -> list[dict[str, Any]]:
        """Verified claims with their local ids (what the executor's next round repeats)."""
        return list((self.verified_output or {}).get("claims", []))

    def projection(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Verified claims and evidence with run-wide ids (``A1-C1``, ``A1-E1``)."""
        return globalise(self.alert_id, self.verified_claims, self.local_evidence)

    @property
    def evidence(self) -> list[dict[str, Any]]:
        """Verified evidence with run-wide ids."""
        return self.projection()[1]

    def brief(self) -> dict[str, Any]:
        """The alert as the planner and reporter see it."""
        keys = ("alert_name", "severity", "service", "description", "state", "active_at")
        return {"alert_id": self.alert_id, **{k: self.alert.get(k) for k in keys}}

    def reporter_view(self) -> dict[str, Any]:
        """What the reporter sees of the alert: the verified projection, never raw output."""
        claims, evidence = self.projection()
        keys = (
            "evidence_id",
            "claim_id",
            "source_invocation_id",
            "tool",
            "raw_path",
            "evidence_excerpt",
        )
        return {
            **self.brief(),
            "investigated": bool(self.rounds),
            "note": self.note,
            "claims": claims,
            "evidence": [{k: e.get(k) for k in keys} for e in evidence],
        }
