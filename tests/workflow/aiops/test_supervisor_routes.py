"""The AIOps supervisor graph with fakes behind its ports: every route, the trace, the bounds.

Routing table (``diagnosis_graph.workflow.aiops.graph``):
load_alerts -completed-> select_alerts | -alerts_unavailable-> report;
select_alerts -alerts_selected-> investigate | -no_firing_alerts-> report;
investigate -next_alert-> investigate | -all_investigated-> report; report -completed-> END.
"""

from __future__ import annotations

import json
from typing import Any

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.aiops.graph import (
    AIOPS_TRACE_VERSION,
    MAX_ALERTS,
    MAX_ROUNDS,
    ROUTES,
    aiops_mermaid,
)
from diagnosis_graph.workflow.aiops.supervisor import build_aiops_graph
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentReply

from .harness import RUN, alert, harness, healthy_script


def edges(trace: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(t["from"], t["to"], t["reason_code"]) for t in trace["transitions"]]


def test_the_routing_table_names_every_route() -> None:
    assert {node: dict(routes) for node, routes in ROUTES.items()} == {
        "load_alerts": {"completed": "select_alerts", "alerts_unavailable": "report"},
        "select_alerts": {"alerts_selected": "investigate", "no_firing_alerts": "report"},
        "investigate": {"next_alert": "investigate", "all_investigated": "report"},
        "report": {"completed": "__end__"},
    }


def test_firing_alerts_are_each_investigated_then_reported() -> None:
    h = harness([alert("PoolA"), alert("PoolB", severity="warning")])
    run = h.run()
    trace = run.orchestration_trace
    assert run.status == "SUCCESS" and not run.degraded
    assert trace["version"] == AIOPS_TRACE_VERSION == "aiops-stategraph-v1"
    assert edges(trace) == [
        ("load_alerts", "select_alerts", "completed"),
        ("select_alerts", "investigate", "alerts_selected"),
        ("investigate", "investigate", "next_alert"),
        ("investigate", "report", "all_investigated"),
    ]
    assert all(t["attempt"] == 1 for t in trace["transitions"])
    assert trace["final_node"] == "report"
    assert trace["termination_reason"] == "report_all_investigated"
    assert trace["degraded"] is False and trace["evidence_retry_count"] == 0
    [a, b] = trace["alerts"]
    assert (a["alert_id"], a["alert_name"], b["alert_name"]) == ("A1", "PoolA", "PoolB")
    assert a["trace"]["version"] == "stategraph-v1"
    assert a["trace"]["termination_reason"] == "composer_completed" and a["rounds"] == 1
    assert h.alerts.asked == [("s1", RUN)]
    json.dumps(run.state)  # the supervisor's state, child summaries included, is plain JSON


def test_alerts_that_cannot_be_read_go_straight_to_a_degraded_report() -> None:
    h = harness(ok=False)
    run = h.run()
    trace = run.orchestration_trace
    assert edges(trace) == [("load_alerts", "report", "alerts_unavailable")]
    assert trace["termination_reason"] == "report_alerts_unavailable"
    assert trace["degraded"] is True and run.degraded and run.status == "SUCCESS"
    assert h.invoker.calls == []
    assert "could not be read (alertmanager unreachable)" in (run.answer or "")
    assert h.events[0] == {
        "node": "load_alerts",
        "outcome": "FAILED",
        "reason_code": "alerts_unavailable",
        "attempt": 1,
    }


def test_no_firing_alert_reports_without_investigating() -> None:
    h = harness([alert("Soon", state="pending")])
    run = h.run()
    trace = run.orchestration_trace
    assert edges(trace) == [
        ("load_alerts", "select_alerts", "completed"),
        ("select_alerts", "report", "no_firing_alerts"),
    ]
    assert trace["termination_reason"] == "report_no_firing_alerts" and not trace["degraded"]
    assert h.invoker.calls == [] and trace["alerts"] == []
    assert "No firing alerts to investigate." in (run.answer or "")
    assert "Soon" not in (run.answer or "")


def test_at_most_eight_alerts_are_investigated_most_severe_first() -> None:
    alerts = [alert(f"Warn{n}", severity="warning") for n in range(7)]
    alerts += [alert("Info", severity="info"), alert("Crit", severity="critical")]
    h = harness(alerts)
    run = h.run()
    investigated = [i["alert"]["alert_name"] for i in run.state["investigations"]]
    assert len(alerts) == 9 and len(investigated) == MAX_ALERTS == 8
    assert investigated[0] == "Crit" and "Info" not in investigated
    assert [a["alert_name"] for a in run.state["skipped"]] == ["Info"]
    assert "| - | Info | info |" in (run.answer or "")
    assert "not investigated (over the alert limit)" in (run.answer or "")
    steps = [t for t in run.orchestration_trace["transitions"] if t["from"] == "investigate"]
    assert len(steps) == 8


def test_a_scoped_run_investigates_only_the_alerts_it_was_started_for() -> None:
    alerts = [
        alert("PoolExhausted", service="payment-service"),
        alert("PoolExhausted", service="order-service"),
        alert("DiskFull", service="payment-service", severity="warning"),
        alert("CertExpiring", service="gateway"),
    ]
    scope = [
        {"alert_name": "PoolExhausted", "service": "order-service"},
        {"alert_name": "DiskFull", "service": ""},  # no service: any service's DiskFull
        {"alert_name": "Gone", "service": "gateway"},  # linked, no longer firing: nothing
    ]
    run = harness(alerts).run(scope=scope)
    investigated = [
        (i["alert"]["alert_name"], i["alert"]["service"]) for i in run.state["investigations"]
    ]
    assert investigated == [("PoolExhausted", "order-service"), ("DiskFull", "payment-service")]
    assert run.state["skipped"] == []  # out of scope is not "over the bound"
    assert run.state["aiops_context"]["scope"] == scope
    everything = harness(alerts).run()  # no scope: every firing alert
    assert len(everything.state["investigations"]) == 4


def test_a_scope_no_firing_alert_matches_reports_without_investigating() -> None:
    run = harness([alert("PoolA")]).run(scope=[{"alert_name": "PoolB", "service": ""}])
    assert run.state["investigations"] == []
    assert edges(run.orchestration_trace)[-1] == ("select_alerts", "report", "no_firing_alerts")


def test_the_second_round_is_the_chat_graphs_evidence_retry_and_rounds_stay_at_two() -> None:
    h = harness([alert("Gappy")], script=healthy_script(gaps=1))  # the verifier always has a gap
    run = h.run()
    [investigation] = run.state["investigations"]
    child = investigation["trace"]
    assert child["evidence_retry_count"] == 1 and investigation["rounds"] == 2 <= MAX_ROUNDS
    reasons = [t["reason_code"] for t in child["transitions"]]
    assert reasons.count("evidence_gap") == 1 and reasons.count("evidence_gap_only") == 1
    assert [c.agent for c in h.invoker.calls].count("planner") == 2
    assert run.orchestration_trace["evidence_retry_count"] == 1


def test_an_alert_whose_investigation_falls_back_is_not_diagnosed_and_degrades_the_run() -> None:
    script = healthy_script()
    script["executor"] = [AgentReply(Outcome.TOOL_BLOCKED, detail="budget"), *script["executor"]]
    h = harness([alert("Broken"), alert("Fine", severity="warning")], script=script)
    run = h.run()
    broken, fine = run.state["investigations"]
    assert broken["termination_reason"] == "fallback_executor_tool_blocked" and broken["degraded"]
    assert broken["composer"] is None and fine["composer"] is not None
    assert run.orchestration_trace["termination_reason"] == "report_all_investigated"
    assert run.orchestration_trace["degraded"] is True and run.degraded
    answer = run.answer or ""
    assert "**Not diagnosed:** the evidence-gathering agent kept making tool calls" in answer
    assert answer.count("**Root cause:**") == 1


def test_a_chinese_request_says_why_an_alert_is_not_diagnosed_in_chinese() -> None:
    script = healthy_script()
    script["executor"] = [AgentReply(Outcome.TOOL_BLOCKED, detail="budget"), *script["executor"]]
    answer = harness([alert("Broken")], script=script).run("排查所有告警").answer or ""
    assert "**未诊断:** 取证代理的工具调用一再被拦截" in answer


def test_the_nested_graph_gets_a_child_config_with_only_the_run_identity() -> None:
    h = harness([alert("PoolA")])
    graph = build_aiops_graph(h.ports())
    config = RunConfig(
        thread_id=RUN,
        metadata={"session_id": "s1", "run_id": RUN, "resume": "x", "checkpoint_id": "c"},
    )
    graph.invoke({"aiops_context": {"request": "r", "reference_time": None}}, config)
    assert h.invoker.configs
    assert all(dict(c.metadata) == {"session_id": "s1", "run_id": RUN} for c in h.invoker.configs)


def test_progress_comes_from_the_supervisor_and_child_nodes_in_order() -> None:
    h = harness([alert("PoolA"), alert("PoolB")])
    h.run()
    nodes = [(e["node"], e.get("alert")) for e in h.events]
    child = ["planner", "executor", "gatekeeper", "verified_input", "verifier", "composer"]
    assert nodes == [
        ("load_alerts", None),
        ("select_alerts", None),
        *((n, "PoolA") for n in child),
        ("investigate", "PoolA"),
        *((n, "PoolB") for n in child),
        ("investigate", "PoolB"),
        ("report", None),
    ]
    for event in h.events:
        assert {"node", "outcome", "reason_code", "attempt"} <= set(event)
    assert {e["alert_id"] for e in h.events if e["node"] == "planner"} == {"A1", "A2"}


def test_an_unhandled_error_keeps_the_partial_trace() -> None:
    h = harness([alert("PoolA"), alert("PoolB")])
    calls = {"n": 0}
    original = h.invocations.invocations_for_run

    def flaky(run_id: str) -> Any:
        calls["n"] += 1
        if calls["n"] > 4:  # the second alert's investigation
            raise ConnectionError("database gone")
        return original(run_id)

    h.invocations.invocations_for_run = flaky  # type: ignore[method-assign]
    run = h.run()
    trace = run.orchestration_trace
    assert run.status == "FAILED" and "database gone" in (run.error or "")
    assert trace["termination_reason"] == "error" and not trace["degraded"]
    assert trace["final_node"] == "investigate"
    assert [a["alert_name"] for a in trace["alerts"]] == ["PoolA"]


def test_the_mermaid_of_the_supervisor_highlights_a_route() -> None:
    plain = aiops_mermaid()
    for node in ("load_alerts", "select_alerts", "investigate", "report"):
        assert node in plain
    assert "next_alert" in plain and "alerts_unavailable" in plain
    highlighted = aiops_mermaid([("__start__", "load_alerts"), ("load_alerts", "report")])
    assert highlighted != plain
