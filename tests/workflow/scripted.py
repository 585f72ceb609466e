"""Scripted workflow nodes for routing tests: no LLM, outcomes played from a queue."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from diagnosis_graph.workflow.outcomes import Outcome, StepResult
from diagnosis_graph.workflow.topology import NODE_NAMES

C = Outcome.COMPLETED


def gatekeeper_result(verdict: str = "PASS", verified: int = 2) -> dict[str, Any]:
    """A gatekeeper_result with a verdict, verified-binding count and the verifier ceiling."""
    ceiling = "PASS" if verdict == "PASS" else "LOW_CONFID"
    return {
        "gatekeeper_version": "gatekeeper-v2",
        "verdict": verdict,
        "verifier_verdict_ceiling": ceiling,
        "claim_count": max(verified, 1),
        "verified_claim_count": verified,
        "binding_count": max(verified, 1),
        "verified_binding_count": verified,
        "reason_counts": {},
        "claims": [],
        "error": None,
    }


def verifier_output(verdict: str = "PASS", gaps: int = 0) -> dict[str, Any]:
    """A verifier_output with a verdict and ``gaps`` critical gaps."""
    return {
        "verdict": verdict,
        "claim_assessments": [],
        "critical_gaps": [{"description": f"gap {i}"} for i in range(gaps)],
    }


DEFAULT_UPDATES: dict[str, dict[str, Any]] = {
    "planner": {"planner_plan": {"queries": ["q"]}},
    "executor": {"executor_output": {"claims": []}},
    "gatekeeper": {"gatekeeper_result": gatekeeper_result()},
    "verified_input": {"verified_evidence": [{"evidence_id": "E1"}]},
    "verifier": {"verifier_output": verifier_output()},
    "evidence_retry": {},
    "composer": {"final_answer": "composed"},
    "fallback": {"final_answer": "fallback"},
}


class Script:
    """Each node returns its queued results in order, then completes with its default update."""

    def __init__(self, **queues: Iterable[Outcome | StepResult]) -> None:
        unknown = set(queues) - set(NODE_NAMES)
        assert not unknown, f"unknown nodes in script: {unknown}"
        self.queues = {name: list(queues.get(name, ())) for name in NODE_NAMES}
        self.calls: list[str] = []
        self.seen: dict[str, list[dict[str, Any]]] = {name: [] for name in NODE_NAMES}

    def nodes(self) -> dict[str, Any]:
        """The eight workflow nodes, ready for build_topology."""
        return {name: self._node(name) for name in NODE_NAMES}

    def _node(self, name: str) -> Any:
        def run(state: Mapping[str, Any], config: Any = None) -> StepResult:
            self.calls.append(name)
            self.seen[name].append(dict(state))
            queue = self.queues[name]
            item = queue.pop(0) if queue else C
            if isinstance(item, StepResult):
                return item
            update = DEFAULT_UPDATES[name] if item is C else {}
            return StepResult(item, dict(update))

        return run
