"""Node contract tests: what each real node reads from state, gives its agent, and writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_graph.workflow.factory import build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentReply, DiagnosisPorts

from .fakes import (
    ANSWER,
    LOGS,
    METRICS,
    PLAN,
    ROLES,
    SERVICES,
    VERIFIED_PASS,
    MemoryInvocations,
    ScriptedInvoker,
    claim,
    evidence,
)

GOOD = claim("C1", ("inv-logs", "$.records[0].message", "connection pool exhausted"))
METRIC_CLAIM = claim("C2", ("inv-metrics", "$.summary.max", "3812.5"))


def keys_in(value: Any) -> set[str]:
    """Every dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


def diagnose(invoker: ScriptedInvoker, store: MemoryInvocations, **kw: Any) -> Any:
    ports = DiagnosisPorts(
        invoker,
        store,
        tool_catalog=lambda: [{"name": "query_logs"}],
        service_catalog=lambda: SERVICES,
        tool_roles=lambda: ROLES,
    )
    graph = build_diagnosis_graph(ports)
    return run_diagnosis(
        graph,
        "Why is payment-service slow since 10:00?",
        session_id="s1",
        run_id="run-1",
        reference_time="2026-11-30T12:00:00Z",
        **kw,
    )


@pytest.fixture
def store() -> MemoryInvocations:
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    store.add("inv-metrics", METRICS, tool="query_metrics")
    return store


def happy(**overrides: list[Any]) -> ScriptedInvoker:
    script: dict[str, list[Any]] = {
        "planner": [PLAN],
        "executor": [evidence(GOOD, METRIC_CLAIM)],
        "verifier": [
            {
                **VERIFIED_PASS,
                "claim_assessments": [
                    {"claim_id": "C1", "supported": True, "reason": "r"},
                    {"claim_id": "C2", "supported": True, "reason": "r"},
                ],
            }
        ],
        "composer": [ANSWER],
    }
    script.update(overrides)
    return ScriptedInvoker(script)


def test_happy_path_answers_with_verified_evidence(store: MemoryInvocations) -> None:
    invoker = happy()
    run = diagnose(invoker, store)
    assert (run.status, run.degraded) == ("SUCCESS", False)
    assert run.answer.startswith("**The connection pool is exhausted.**\n")
    assert "1. The connection pool is exhausted [E1]" in run.answer
    assert run.state["composer_output"]["summary"] == "The connection pool is exhausted."
    assert run.orchestration_trace["termination_reason"] == "composer_completed"
    assert [c.agent for c in invoker.calls] == ["planner", "executor", "verifier", "composer"]
    assert [e["evidence_id"] for e in run.state["verified_evidence"]] == ["E1", "E2"]


def test_agents_get_child_configs_with_identity_only(store: MemoryInvocations) -> None:
    invoker = happy()
    diagnose(invoker, store)
    assert {tuple(sorted(c.metadata.items())) for c in invoker.configs} == {
        (("run_id", "run-1"), ("session_id", "s1"))
    }


def test_planner_gets_question_time_and_tool_catalog(store: MemoryInvocations) -> None:
    invoker = happy()
    diagnose(invoker, store)
    payload = invoker.payloads("planner")[0]
    assert payload["question"].startswith("Why is payment-service")
    assert payload["reference_time"] == "2026-11-30T12:00:00Z"
    assert payload["tools"] == [{"name": "query_logs"}] and payload["mode"] == "FULL"
    call = invoker.calls[0]
    assert call.schema_name == "planner_plan" and call.output_schema["title"] == "PlannerPlan"
    assert not call.tools


def test_only_the_executor_may_use_tools(store: MemoryInvocations) -> None:
    invoker = happy()
    diagnose(invoker, store)
    assert [c.agent for c in invoker.calls if c.tools] == ["executor"]


def test_the_verifier_never_receives_raw_tool_output(store: MemoryInvocations) -> None:
    invoker = happy()
    diagnose(invoker, store)
    payload = invoker.payloads("verifier")[0]
    text = json.dumps(payload)
    assert set(payload) == {"question", "claims", "evidence", "verdict_ceiling"}
    assert not keys_in(payload) & {"records", "series", "result", "raw_output", "trace_id"}
    assert "slow request" not in text and "4210" not in text  # raw lines no claim cited
    assert payload["evidence"][0]["evidence_excerpt"] == "connection pool exhausted"
    assert payload["claims"][0] == {
        "claim_id": "C1",
        "statement": "statement C1",
        "critical": True,
        "evidence_ids": ["E1"],
    }


def test_unverified_claims_never_reach_verifier_or_composer(store: MemoryInvocations) -> None:
    forged = claim("C3", ("inv-logs", "$.records[0].message", "disk full"))
    invoker = happy(executor=[evidence(GOOD, forged)], verifier=[VERIFIED_PASS])
    run = diagnose(invoker, store)
    assert run.state["gatekeeper_result"]["verdict"] == "LOW_CONFID"
    for agent in ("verifier", "composer"):
        ids = [c["claim_id"] for c in invoker.payloads(agent)[0]["claims"]]
        assert ids == ["C1"]
    assert run.orchestration_trace["transitions"][2]["reason_code"] == "gatekeeper_low_confid"


def test_evidence_from_another_run_is_rejected_and_falls_back(store: MemoryInvocations) -> None:
    store.add("inv-elsewhere", LOGS, run_id="run-9")
    stolen = claim("C1", ("inv-elsewhere", "$.records[0].message", "connection pool exhausted"))
    invoker = happy(executor=[evidence(stolen)])
    run = diagnose(invoker, store)
    assert (run.status, run.degraded) == ("SUCCESS", True)
    assert run.orchestration_trace["termination_reason"] == "fallback_gatekeeper_reject"
    assert "could be traced" in run.answer and "Why is payment-service slow" in run.answer
    assert "No evidence was verified" in run.answer
    assert [c.agent for c in invoker.calls] == ["planner", "executor"]


@pytest.mark.parametrize("bad", ["not json", '{"claims": "x"}', "[1, 2]", ""])
def test_invalid_executor_output_falls_back(store: MemoryInvocations, bad: str) -> None:
    run = diagnose(happy(executor=[bad]), store)
    assert run.orchestration_trace["termination_reason"] == "fallback_executor_invalid_output"


def test_duplicate_claim_ids_are_invalid_output(store: MemoryInvocations) -> None:
    run = diagnose(happy(executor=[evidence(GOOD, GOOD)]), store)
    assert run.orchestration_trace["termination_reason"] == "fallback_executor_invalid_output"


def test_fenced_json_is_accepted(store: MemoryInvocations) -> None:
    fenced = "```json\n" + json.dumps(PLAN) + "\n```"
    run = diagnose(happy(planner=[fenced]), store)
    assert run.status == "SUCCESS" and not run.degraded


def test_agent_failures_map_to_outcomes(store: MemoryInvocations) -> None:
    reply = AgentReply(Outcome.NON_RETRYABLE_FAILED, detail="401 invalid key")
    run = diagnose(happy(planner=[reply]), store)
    assert run.orchestration_trace["termination_reason"] == "fallback_planner_non_retryable_failed"
    assert "refused or rejected" in run.answer


def test_verifier_gap_reruns_planner_and_executor_with_a_full_snapshot(
    store: MemoryInvocations,
) -> None:
    gap = {
        "verdict": "LOW_CONFID",
        "claim_assessments": [{"claim_id": "C1", "supported": True, "reason": "r"}],
        "critical_gaps": [
            {
                "description": "no metrics",
                "suggested_tool": "query_metrics",
                "suggested_arguments": {"service": "payment-service"},
            }
        ],
    }
    second = {
        **VERIFIED_PASS,
        "claim_assessments": [
            {"claim_id": "C1", "supported": True, "reason": "r"},
            {"claim_id": "C2", "supported": True, "reason": "r"},
        ],
    }
    invoker = happy(executor=[evidence(GOOD), evidence(METRIC_CLAIM)], verifier=[gap, second])
    run = diagnose(invoker, store)
    planner_gap = invoker.payloads("planner")[1]
    assert planner_gap["mode"] == "EVIDENCE_GAP_ONLY"
    assert planner_gap["evidence_gaps"][0]["suggested_tool"] == "query_metrics"
    assert planner_gap["previous_plan"]["queries"][0]["arguments"] == {"service": "payment-service"}
    executor_gap = invoker.payloads("executor")[1]
    assert [c["claim_id"] for c in executor_gap["verified_claims"]] == ["C1"]
    # the model forgot C1 in its snapshot: the node puts the verified claim back
    assert [c["claim_id"] for c in run.state["executor_output"]["claims"]] == ["C2", "C1"]
    assert run.state["evidence_retry_count"] == 1 and run.status == "SUCCESS"
    assert run.state["planner_plan"]["mode"] == "EVIDENCE_GAP_ONLY"


def test_verifier_assessing_unknown_claims_is_invalid(store: MemoryInvocations) -> None:
    ghost = {
        **VERIFIED_PASS,
        "claim_assessments": [{"claim_id": "C9", "supported": True, "reason": "r"}],
    }
    run = diagnose(happy(verifier=[ghost, ghost]), store)
    assert run.orchestration_trace["termination_reason"] == "fallback_verifier_retry_exhausted"


def test_effective_verdict_is_capped_by_the_gatekeeper_ceiling(store: MemoryInvocations) -> None:
    forged = claim("C3", ("inv-logs", "$.records[0].message", "disk full"))
    run = diagnose(happy(executor=[evidence(GOOD, forged)], verifier=[VERIFIED_PASS]), store)
    verifier = run.state["verifier_output"]
    assert (verifier["verdict"], verifier["verdict_ceiling"], verifier["effective_verdict"]) == (
        "PASS",
        "LOW_CONFID",
        "LOW_CONFID",
    )


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (
            {
                **ANSWER,
                "conclusions": [{"statement": "x", "claim_ids": ["C1"], "evidence_ids": ["E7"]}],
            },
            "not verified",
        ),
        (
            {
                **ANSWER,
                "conclusions": [{"statement": "x", "claim_ids": ["C2"], "evidence_ids": ["E1"]}],
            },
            "did not support",
        ),
    ],
)
def test_composer_citing_unverified_evidence_or_unsupported_claims_is_invalid(
    store: MemoryInvocations, answer: dict[str, Any], why: str
) -> None:
    verifier = {
        "verdict": "PASS",
        "claim_assessments": [
            {"claim_id": "C1", "supported": True, "reason": "r"},
            {"claim_id": "C2", "supported": False, "reason": "r"},
        ],
        "critical_gaps": [],
    }
    invoker = happy(verifier=[verifier], composer=[answer, ANSWER])
    run = diagnose(invoker, store)
    assert [
        e["reason_code"] for e in run.state["orchestration_events"] if e["node"] == "composer"
    ] == ["invalid_output", "completed"]
    assert "1. The connection pool is exhausted [E1]" in run.answer


def test_composer_may_not_conclude_when_the_verdict_is_fail(store: MemoryInvocations) -> None:
    fail = {
        "verdict": "FAIL",
        "claim_assessments": [{"claim_id": "C1", "supported": False, "reason": "r"}],
        "critical_gaps": [],
    }
    honest = {
        "summary": "No conclusion.",
        "conclusions": [],
        "limitations": ["C1 unsupported"],
        "recommendations": ["check the DB"],
    }
    run = diagnose(happy(verifier=[fail], composer=[ANSWER, honest]), store)
    assert not run.degraded
    assert run.answer.startswith(
        "**Not enough evidence: the verified evidence does not support a conclusion.**"
    )
    assert "- C1 unsupported" in run.answer and "check the DB" in run.answer


def test_a_crashing_node_gives_a_failed_run_with_partial_trace(store: MemoryInvocations) -> None:
    def explode(call: Any) -> Any:
        raise RuntimeError("invoker bug")

    run = diagnose(happy(verifier=[explode]), store)
    assert run.status == "FAILED" and "invoker bug" in (run.error or "")
    trace = run.orchestration_trace
    assert (trace["termination_reason"], trace["final_node"]) == ("error", "verified_input")
    assert [t["to"] for t in trace["transitions"]] == ["executor", "gatekeeper", "verified_input"]


def test_progress_events_arrive_per_node(store: MemoryInvocations) -> None:
    events: list[dict[str, Any]] = []
    diagnose(happy(), store, on_event=events.append)
    assert [(e["node"], e["reason_code"]) for e in events] == [
        ("planner", "completed"),
        ("executor", "completed"),
        ("gatekeeper", "gatekeeper_pass"),
        ("verified_input", "completed"),
        ("verifier", "completed"),
        ("composer", "completed"),
    ]
