"""The AIOps supervisor end to end with the offline model and in-memory audit rows, on both
dataset variants: every firing alert explained, only verified evidence cited, everything recorded.

The renamed variant has other service and alert names, other times and reworded log lines for
the same failure mechanisms, so the same conclusions there show the offline AIOps agents reason
from the alert list and the tool outputs, not from knowledge of the dataset.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from webapp.aiops import AiOpsResult, AiOpsSupervisor
from webapp.demo.scenarios import ALERTS, NEW_VERSION, OLD_VERSION, scenario_records
from webapp.demo.system import service_name, variant_index
from webapp.stores.memory import MemoryAudit
from webapp.wiring import offline_supervisor

from .scripted import Scripted, payload_of

VARIANTS = ("default", "renamed")


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
def runs(renamed_dir: Path) -> dict[str, tuple[AiOpsSupervisor, Scripted, AiOpsResult]]:
    found = {}
    for variant in VARIANTS:
        model = Scripted()  # nothing scripted: the offline model answers, requests are recorded
        supervisor = offline_supervisor(renamed_dir if variant == "renamed" else None, model)
        result = supervisor.run(None, session_id=f"s-{variant}", run_id=f"run-aiops-{variant}")
        found[variant] = (supervisor, model, result)
    return found


CASES = [(variant, name) for variant in VARIANTS for name in expected_alerts(variant)]


def _audit(supervisor: AiOpsSupervisor) -> MemoryAudit:
    audit = supervisor.audit
    assert isinstance(audit, MemoryAudit)
    return audit


def _entry(result: AiOpsResult, name: str) -> dict[str, Any]:
    assert result.report is not None
    return next(e for e in result.report["alerts"] if e["alert_name"] == name)


def _evidence(result: AiOpsResult) -> dict[str, dict[str, Any]]:
    return {e["evidence_id"]: e for case in result.cases for e in case.evidence}


def _service_of(supervisor: AiOpsSupervisor, run_id: str) -> dict[str, Any]:
    rows = _audit(supervisor).invocations
    return {r["invocation_id"]: r["arguments"] for r in rows if r["run_id"] == run_id}


@pytest.mark.parametrize("case", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_every_firing_alert_is_explained_with_its_cause_and_cause_service(
    case: tuple[str, str], runs: dict[str, Any]
) -> None:
    variant, name = case
    supervisor, _, result = runs[variant]
    truth = expected_alerts(variant)[name]
    entry = _entry(result, name)
    assert entry["diagnosed"] and entry["service"] == truth["service"]
    assert truth["runbook_title"] in entry["root_cause"]
    assert truth["cause_service"] in entry["root_cause"]
    evidence = _evidence(result)
    cited = [evidence[e] for e in entry["evidence_ids"]]
    arguments = _service_of(supervisor, result.run_id)
    cited_services = {arguments[e["source_invocation_id"]].get("service") for e in cited}
    assert truth["cause_service"] in cited_services  # the trail: evidence from where the cause is
    excerpts = " ".join(e["evidence_excerpt"] for e in cited)
    if truth["failure_type"] == "bad_deploy":  # the deploy line itself
        assert OLD_VERSION in excerpts and NEW_VERSION in excerpts
    if truth["service"] == truth["cause_service"] == service_name(variant, "redis-cache"):
        metrics = {arguments[e["source_invocation_id"]].get("metric") for e in cited}
        assert any("evict" in str(m) for m in metrics)  # evictions
        assert "allkeys-lru" in excerpts and "4.00" in excerpts  # maxmemory reached


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_firing_alerts_are_investigated_and_all_are_covered(
    variant: str, runs: dict[str, Any]
) -> None:
    _, model, result = runs[variant]
    pending = next(a.names[variant_index(variant)] for a in ALERTS if a.state == "pending")
    assert {c.name for c in result.cases} == set(expected_alerts(variant))
    assert pending not in result.answer
    assert all(pending not in json.dumps(r["messages"]) for r in model.requests)
    rules = result.self_evaluation["aiops_rule_evaluation"]
    assert rules["alerts_firing"] == rules["alerts_investigated"] == rules["alerts_covered"] == 5
    assert rules["alerts_not_covered"] == [] and rules["report_source"] == "reporter"
    assert not result.degraded


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_citation_is_verified_evidence(variant: str, runs: dict[str, Any]) -> None:
    _, _, result = runs[variant]
    rules = result.self_evaluation["aiops_rule_evaluation"]
    assert rules["all_citations_verified"]
    assert rules["citations_total"] == rules["citations_verified"] > 0
    assert rules["verified_binding_count"] == rules["binding_count"] > 0
    verified = set(_evidence(result))
    in_answer = set(re.findall(r"\[([A-Z]\d+-E\d+)\]", result.answer))
    assert in_answer and in_answer <= verified
    assert len(verified) == sum(len(c.evidence) for c in result.cases)  # ids unique run-wide
    assert rules["tool_status_counts"] == {"SUCCESS": rules["tool_invocation_count"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_dependency_named_by_the_evidence_gets_a_second_round(
    variant: str, runs: dict[str, Any]
) -> None:
    _, _, result = runs[variant]
    truth = expected_alerts(variant)
    for case in result.cases:
        expected = truth[case.name]
        chased = expected["cause_service"] != expected["service"]
        assert case.rounds == (2 if chased else 1), case.name
        gaps = [g["suggested_arguments"]["service"] for g in case.gaps]
        assert gaps == ([expected["cause_service"]] if chased else []), case.name


@pytest.mark.parametrize("variant", VARIANTS)
def test_steps_and_invocations_are_recorded_and_linked(variant: str, runs: dict[str, Any]) -> None:
    supervisor, _, result = runs[variant]
    audit = _audit(supervisor)
    steps = audit.steps_for_run(result.run_id)
    invocations = [r for r in audit.invocations if r["run_id"] == result.run_id]
    assert [s["step_index"] for s in steps] == list(range(len(steps)))
    assert all(s["status"] == "SUCCESS" for s in steps)
    agents = [s["agent_name"] for s in steps]
    assert agents[0] == "aiops_planner" and agents[-1] == "aiops_reporter"
    assert set(agents) == {"aiops_planner", "aiops_executor", "aiops_reporter"}
    first = invocations[0]
    assert (first["tool_name"], first["agent_name"], first["step_id"]) == (
        "query_alerts",
        "aiops_supervisor",
        None,
    )
    by_id = {s["id"]: s for s in steps}
    for row in invocations[1:]:
        step = by_id[row["step_id"]]
        assert step["agent_name"] == row["agent_name"] == "aiops_executor" and step["has_tool_call"]
    cited = {
        r["evidence_id"]
        for row in invocations
        for r in row.get("evidence_refs") or []
        if r["cited"]
    }
    assert cited == set(result.self_evaluation["aiops_rule_evaluation"]["cited_evidence_ids"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_progress_events_follow_the_loop(variant: str, runs: dict[str, Any]) -> None:
    _, _, result = runs[variant]
    events = result.events
    assert [e["node"] for e in events[:2]] == ["aiops_alerts", "aiops_planner"]
    assert events[-1]["node"] == "aiops_reporter" and events[-1]["outcome"] == "COMPLETED"
    names = {c.name for c in result.cases}
    for n, event in enumerate(events):
        assert set(event) - {"alert"} == {"node", "outcome", "reason_code", "attempt"}
        gap_planner = event["node"] == "aiops_planner" and n > 1
        per_alert = event["node"] in ("aiops_executor", "aiops_gatekeeper") or gap_planner
        assert ("alert" in event) == per_alert and event.get("alert", next(iter(names))) in names
        if event["reason_code"] == "evidence_gap":  # the next round starts with the planner
            assert events[n + 1]["node"] == "aiops_planner"
            assert events[n + 1]["alert"] == event["alert"]
    gaps = [e for e in events if e["reason_code"] == "evidence_gap"]
    assert len(gaps) == sum(c.rounds == 2 for c in result.cases)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_reporter_sees_only_the_verified_projection(variant: str, runs: dict[str, Any]) -> None:
    _, model, result = runs[variant]
    [request] = model.sent("aiops_report")
    payload = payload_of(request)
    text = json.dumps(payload)
    for raw_key in ('"records"', '"series"', '"documents"', '"result"', '"raw_output"'):
        assert raw_key not in text
    sent = {e["evidence_id"] for a in payload["alerts"] for e in a["evidence"]}
    assert sent == set(_evidence(result))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_report_lists_alerts_evidence_causes_and_an_overall_assessment(
    variant: str, runs: dict[str, Any]
) -> None:
    _, _, result = runs[variant]
    answer = result.answer
    assert answer.startswith("## AIOps alert report")
    table = answer.index("| # | alert | severity | service | active since | state | diagnosis |")
    sections = [answer.index(f"### {c.alert_id} · {c.name}") for c in result.cases]
    overall = answer.index("### Overall assessment")
    assert table < min(sections) and max(sections) < overall
    for case in result.cases:
        row = (
            f"| {case.alert_id} | {case.name} | {case.alert['severity']} | {case.service} | "
            f"{case.alert['active_at']} | firing | diagnosed |"
        )
        assert row in answer
    assert answer.count("**Root cause:**") == 5 and answer.count("**Verified evidence:**") == 5
    names = expected_alerts(variant)
    cache = service_name(variant, "redis-cache")
    linked = [n for n, t in names.items() if t["cause_service"] == cache and t["service"] != cache]
    assert f"{linked[0]} traces to {cache}" in answer[overall:]
