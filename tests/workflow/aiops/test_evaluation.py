"""``aiops_rule_evaluation``: alerts covered, citations verified, each alert's own figures."""

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
    [only] = rules["alerts"]
    assert only["alert_id"] == "A1" and only["diagnosed"] and only["rounds"] == 1
    assert only["rule_evaluation"]["gatekeeper"]["verdict"] == "PASS"
    assert (
        only["rule_evaluation"]["gatekeeper"]["claim_count"],
        only["rule_evaluation"]["gatekeeper"]["verified_binding_count"],
    ) == (1, 1)
    assert rules["prompt_version"] == "prompts-x" and rules["max_alerts"] == 8
    assert rules["max_rounds_per_alert"] == 2
