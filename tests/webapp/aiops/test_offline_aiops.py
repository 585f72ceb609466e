"""The AIOps graph end to end with the offline model and in-memory audit rows, on both dataset
variants: every firing alert explained, only verified evidence cited, everything recorded.

The renamed variant has other service and alert names, other times and reworded log lines for
the same failure mechanisms, so the same conclusions there show the nested chat agents reason
from the alert list and the tool outputs, not from knowledge of the dataset.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from demo.scenarios import ALERTS, NEW_VERSION, OLD_VERSION, scenario_records
from demo.system import service_name, variant_index
from diagnosis_graph.workflow.aiops.report import cited_ids, diagnosed
from eval.scoring import categories
from webapp.aiops import AiOpsRunner
from webapp.persistence.memory_audit import MemoryAudit
from webapp.wiring import offline_aiops

from .scripted import Ran, Scripted, run_listening

VARIANTS = ("default", "renamed")
CHILD_NODES = {"planner", "executor", "gatekeeper", "verified_input", "verifier", "composer"}


def expected_alerts(variant: str) -> dict[str, dict[str, Any]]:
    """Ground truth per firing alert name: its service, runbook title and cause service."""
    records = scenario_records(variant)
    expected = {}
    for alert in ALERTS:
        if alert.state != "firing":
            continue
        service = service_name(variant, alert.service)
        record = next(
            r
            for r in records
            if service in (r["service"], r["cause_service"]) and r["runbook_title"]
        )
        expected[alert.names[variant_index(variant)]] = {
            "service": service,
            "runbook_title": record["runbook_title"],
            "cause_service": record["cause_service"],
            "failure_type": record["failure_type"],
        }
    return expected


@pytest.fixture(scope="module")
def runs(renamed_dir: Path) -> dict[str, tuple[AiOpsRunner, Scripted, Ran]]:
    found = {}
    for variant in VARIANTS:
        model = Scripted()  # nothing scripted: the offline model answers, requests are recorded
        runner = offline_aiops(renamed_dir if variant == "renamed" else None, model)
        result = run_listening(runner, f"s-{variant}", f"run-aiops-{variant}")
        found[variant] = (runner, model, result)
    return found


CASES = [(variant, name) for variant in VARIANTS for name in expected_alerts(variant)]


def _audit(runner: AiOpsRunner) -> MemoryAudit:
    audit = runner.audit
    assert isinstance(audit, MemoryAudit)
    return audit


def investigation(result: Ran, name: str) -> dict[str, Any]:
    return next(i for i in result.investigations if i["alert"]["alert_name"] == name)


def root_cause(inv: dict[str, Any]) -> str:
    return " ".join(c["statement"] for c in inv["composer"]["conclusions"])


def _evidence(result: Ran) -> dict[str, dict[str, Any]]:
    return {e["evidence_id"]: e for inv in result.investigations for e in inv["evidence"]}


def _arguments(runner: AiOpsRunner, run_id: str) -> dict[str, Any]:
    rows = _audit(runner).invocations
    return {r["invocation_id"]: r["arguments"] for r in rows if r["run_id"] == run_id}


def rules(result: Ran) -> dict[str, Any]:
    evaluation: dict[str, Any] = result.self_evaluation["aiops_rule_evaluation"]
    return evaluation


@pytest.mark.parametrize("case", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_every_firing_alert_is_explained_with_its_cause_and_cause_service(
    case: tuple[str, str], runs: dict[str, Any]
) -> None:
    variant, name = case
    runner, _, result = runs[variant]
    truth = expected_alerts(variant)[name]
    inv = investigation(result, name)
    assert diagnosed(inv) and inv["alert"]["service"] == truth["service"]
    # The cause kind comes from the evidence, in words any write-up of it uses.
    assert truth["failure_type"] in categories(root_cause(inv)), root_cause(inv)
    assert truth["cause_service"] in root_cause(inv)
    evidence = _evidence(result)
    cited = [evidence[e] for e in cited_ids(inv)]
    arguments = _arguments(runner, result.run_id)
    cited_services = {arguments[e["source_invocation_id"]].get("service") for e in cited}
    assert truth["cause_service"] in cited_services  # the trail: evidence from where the cause is
    assert {e.get("service") for e in cited} - {None} <= cited_services
    excerpts = " ".join(e["evidence_excerpt"] for e in cited)
    if truth["failure_type"] == "bad_deploy":  # the deploy line itself
        assert OLD_VERSION in excerpts and NEW_VERSION in excerpts
    if truth["service"] == truth["cause_service"] == service_name(variant, "redis-cache"):
        assert "evict" in excerpts  # the evictions metric moved
        assert "allkeys-lru" in excerpts  # maxmemory reached


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_firing_alerts_are_investigated_and_all_are_covered(
    variant: str, runs: dict[str, Any]
) -> None:
    _, model, result = runs[variant]
    pending = next(a.names[variant_index(variant)] for a in ALERTS if a.state == "pending")
    names = {i["alert"]["alert_name"] for i in result.investigations}
    assert names == set(expected_alerts(variant))
    assert pending not in (result.answer or "")
    assert all(pending not in json.dumps(r["messages"]) for r in model.requests)
    found = rules(result)
    assert found["alerts_firing"] == found["alerts_investigated"] == found["alerts_covered"] == 5
    assert found["alerts_not_covered"] == [] and found["alerts_skipped"] == []
    assert result.run.status == "SUCCESS" and not result.degraded


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_citation_is_verified_evidence(variant: str, runs: dict[str, Any]) -> None:
    _, _, result = runs[variant]
    found = rules(result)
    assert found["all_citations_verified"]
    assert found["citations_total"] == found["citations_verified"] > 0
    verified = set(_evidence(result))
    in_answer = set(re.findall(r"\[([A-Z]\d+-E\d+)\]", result.answer or ""))
    assert in_answer and in_answer <= verified
    assert len(verified) == sum(len(i["evidence"]) for i in result.investigations)  # unique ids
    assert found["tool_status_counts"] == {"SUCCESS": found["tool_invocation_count"]}
    for alert in found["alerts"]:
        gate = alert["rule_evaluation"]["gatekeeper"]
        assert gate["verdict"] == "PASS", alert["alert_name"]
        assert gate["verified_binding_count"] == gate["binding_count"] > 0
    own = [a["rule_evaluation"]["tool_invocation_count"] for a in found["alerts"]]
    assert all(own) and sum(own) == found["tool_invocation_count"] - 1  # all but query_alerts


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_dependency_named_by_the_evidence_is_followed_in_the_same_round(
    variant: str, runs: dict[str, Any]
) -> None:
    runner, _, result = runs[variant]
    truth = expected_alerts(variant)
    arguments = _arguments(runner, result.run_id)
    for inv in result.investigations:
        expected = truth[inv["alert"]["alert_name"]]
        assert inv["rounds"] == 1, inv["alert"]
        assert inv["trace"]["evidence_retry_count"] == 0
        read = {arguments[e["source_invocation_id"]].get("service") for e in inv["evidence"]}
        assert expected["cause_service"] in read


@pytest.mark.parametrize("variant", VARIANTS)
def test_steps_and_invocations_are_recorded_and_linked(variant: str, runs: dict[str, Any]) -> None:
    runner, _, result = runs[variant]
    audit = _audit(runner)
    steps = [s for s in audit.steps if s["run_id"] == result.run_id]
    invocations = [r for r in audit.invocations if r["run_id"] == result.run_id]
    assert [s["step_index"] for s in steps] == list(range(len(steps)))
    assert all(s["status"] == "SUCCESS" for s in steps)
    assert {s["agent_name"] for s in steps} == {"planner", "executor", "verifier", "composer"}
    first = invocations[0]
    assert (first["tool_name"], first["agent_name"], first["step_id"]) == (
        "query_alerts",
        "aiops_supervisor",
        None,
    )
    assert result.run.state["alerts_read"]["invocation_id"] == first["invocation_id"]
    by_id = {s["id"]: s for s in steps}
    for row in invocations[1:]:
        step = by_id[row["step_id"]]
        assert step["agent_name"] == row["agent_name"] == "executor" and step["has_tool_call"]
    cited = {
        r["evidence_id"]
        for row in invocations
        for r in row.get("evidence_refs") or []
        if r["cited"]
    }
    assert cited == set(rules(result)["cited_evidence_ids"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_progress_events_come_from_the_supervisor_and_each_nested_graph(
    variant: str, runs: dict[str, Any]
) -> None:
    _, _, result = runs[variant]
    events = result.events
    assert [e["node"] for e in events[:2]] == ["load_alerts", "select_alerts"]
    assert events[-1]["node"] == "report" and events[-1]["outcome"] == "COMPLETED"
    names = [i["alert"]["alert_name"] for i in result.investigations]
    investigated = [e["alert"] for e in events if e["node"] == "investigate"]
    assert investigated == names
    for event in events:
        assert {"node", "outcome", "reason_code", "attempt"} <= set(event)
        assert (event["node"] in CHILD_NODES | {"evidence_retry", "fallback"}) == (
            "alert_id" in event
        )
    gaps = [e for e in events if e["reason_code"] == "evidence_gap"]
    assert len(gaps) == sum(i["rounds"] == 2 for i in result.investigations)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_orchestration_trace_has_the_supervisor_route_and_each_alerts_route(
    variant: str, runs: dict[str, Any]
) -> None:
    _, _, result = runs[variant]
    trace = result.orchestration_trace
    assert trace["version"] == "aiops-stategraph-v1" and trace["final_node"] == "report"
    assert trace["termination_reason"] == "report_all_investigated" and not trace["degraded"]
    assert [t["reason_code"] for t in trace["transitions"]] == [
        "completed",
        "alerts_selected",
        *["next_alert"] * 4,
        "all_investigated",
    ]
    assert {a["trace"]["termination_reason"] for a in trace["alerts"]} == {"composer_completed"}
    assert trace["evidence_retry_count"] == sum(a["rounds"] - 1 for a in trace["alerts"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_report_lists_alerts_evidence_causes_and_an_overall_assessment(
    variant: str, runs: dict[str, Any]
) -> None:
    _, _, result = runs[variant]
    answer = result.answer or ""
    assert answer.startswith("**5 firing alert(s), 5 diagnosed with verified evidence; start")
    table = answer.index("| # | alert | severity | service | active since | state | diagnosis |")
    invs = result.investigations
    sections = [answer.index(f"### {i['alert_id']} · {i['alert']['alert_name']}") for i in invs]
    overall = answer.index("### Overall assessment")
    assert table < min(sections) and max(sections) < overall
    for inv in invs:
        alert = inv["alert"]
        row = (
            f"| {inv['alert_id']} | {alert['alert_name']} | {alert['severity']} | "
            f"{alert['service']} | {alert['active_at']} | firing | diagnosed |"
        )
        assert row in answer
    assert answer.count("**Root cause:**") == 5
    evidence = answer.index("### Verified evidence")
    assert overall < evidence
    assert all(f"#### {i['alert_id']} · " in answer[evidence:] for i in invs)
    names = expected_alerts(variant)
    cache = service_name(variant, "redis-cache")
    linked = [n for n, t in names.items() if t["cause_service"] == cache and t["service"] != cache]
    assert f"{linked[0]} traces to {cache}" in answer[overall:]
