"""``aiops_rule_evaluation``: alerts covered, citations verified, summed gatekeeper figures."""

from __future__ import annotations

from diagnosis_graph.workflow.aiops.evaluation import aiops_rule_evaluation
from diagnosis_graph.workflow.ports import InvocationRecord

from .harness import alert, harness


def test_alerts_covered_and_citations_verified_are_recorded() -> None:
    run = harness([alert("PoolA"), alert("Soon", state="pending")]).run()
    records = [InvocationRecord("inv-logs", "run-1", "query_logs", "SUCCESS", {})]
    rules = aiops_rule_evaluation(run.state, records, "prompts-x")
    assert rules["alerts_firing"] == rules["alerts_investigated"] == rules["alerts_covered"] == 1
    assert rules["alerts_not_covered"] == [] and rules["alerts_skipped"] == []
    assert rules["cited_evidence_ids"] == ["A1-E1"]
    assert rules["citations_total"] == rules["citations_verified"] == 1
    assert rules["all_citations_verified"] and rules["tool_invocation_count"] == 1
    assert (rules["claim_count"], rules["verified_binding_count"]) == (1, 1)
    [only] = rules["alerts"]
    assert only["alert_id"] == "A1" and only["diagnosed"] and only["rounds"] == 1
    assert only["rule_evaluation"]["gatekeeper_verdict"] == "PASS"
    assert rules["prompt_version"] == "prompts-x" and rules["max_alerts"] == 8


def test_every_gatekeeper_count_is_summed_and_ungrounded_claims_are_kept() -> None:
    run = harness([alert("PoolA"), alert("PoolB")]).run()
    state = dict(run.state)
    state["investigations"] = [
        {
            **inv,
            "gatekeeper": {
                **inv["gatekeeper"],
                "grounded_claim_count": 1,
                "ungrounded_claims": [{"claim_id": "C2", "tokens": ["97%"], "reason": "r"}],
            },
        }
        for inv in run.state["investigations"]
    ]
    rules = aiops_rule_evaluation(state, [], None)
    assert rules["grounded_claim_count"] == 2 and rules["claim_count"] == 2
    assert [(u["alert_id"], u["tokens"]) for u in rules["ungrounded_claims"]] == [
        ("A1", ["97%"]),
        ("A2", ["97%"]),
    ]
