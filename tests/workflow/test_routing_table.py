"""Workflow tests of the diagnosis topology with scripted nodes: every row of the routing table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_graph import GraphRecursionError, NodeError, RunConfig
from diagnosis_graph.workflow.outcomes import Outcome, StepResult
from diagnosis_graph.workflow.topology import RECURSION_LIMIT, build_topology
from diagnosis_graph.workflow.trace import build_orchestration_trace

from .scripted import C, Script, gatekeeper_result, verifier_output

INV, R, N = Outcome.INVALID_OUTPUT, Outcome.RETRYABLE_FAILED, Outcome.NON_RETRYABLE_FAILED
HAPPY = ["planner", "executor", "gatekeeper", "verified_input", "verifier", "composer"]


def run(script: Script, limit: int = RECURSION_LIMIT) -> dict[str, Any]:
    app = build_topology(script.nodes()).compile()
    config = RunConfig(
        thread_id="run-1", metadata={"session_id": "s", "run_id": "run-1"}, recursion_limit=limit
    )
    return app.invoke({"diagnosis_context": {"question": "why?"}}, config)


def trace(final: dict[str, Any]) -> dict[str, Any]:
    return build_orchestration_trace(final["orchestration_events"], final["evidence_retry_count"])


def edges(final: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [
        (t["from"], t["to"], t["reason_code"], t["attempt"]) for t in trace(final)["transitions"]
    ]


def gk(verdict: str, verified: int) -> StepResult:
    return StepResult(C, {"gatekeeper_result": gatekeeper_result(verdict, verified)})


def vf(verdict: str, gaps: int = 0) -> StepResult:
    return StepResult(C, {"verifier_output": verifier_output(verdict, gaps)})


def test_happy_path_ends_with_the_composer() -> None:
    script = Script()
    final = run(script)
    assert script.calls == HAPPY
    assert final["final_answer"] == "composed"
    assert trace(final) == {
        "version": "stategraph-v1",
        "transitions": [
            {"from": a, "to": b, "reason_code": r, "attempt": 1}
            for a, b, r in [
                ("planner", "executor", "completed"),
                ("executor", "gatekeeper", "completed"),
                ("gatekeeper", "verified_input", "gatekeeper_pass"),
                ("verified_input", "verifier", "completed"),
                ("verifier", "composer", "completed"),
            ]
        ],
        "final_node": "composer",
        "termination_reason": "composer_completed",
        "degraded": False,
        "evidence_retry_count": 0,
    }
    json.dumps(final)
    assert all(type(event) is dict for event in final["orchestration_events"])


@pytest.mark.parametrize(("outcome", "reason"), [(INV, "invalid_output"), (R, "retryable_failed")])
def test_planner_retries_once_on_a_technical_failure(outcome: Outcome, reason: str) -> None:
    script = Script(planner=[outcome])
    final = run(script)
    assert script.calls == ["planner", *HAPPY]
    assert edges(final)[:2] == [
        ("planner", "planner", reason, 1),
        ("planner", "executor", "completed", 2),
    ]
    assert final["planner_retry_count"] == 1


def test_planner_falls_back_when_its_retry_is_used_up() -> None:
    script = Script(planner=[INV, R])
    final = run(script)
    assert script.calls == ["planner", "planner", "fallback"]
    assert edges(final) == [
        ("planner", "planner", "invalid_output", 1),
        ("planner", "fallback", "retry_exhausted", 2),
    ]
    assert trace(final)["termination_reason"] == "fallback_planner_retry_exhausted"
    assert trace(final)["degraded"] is True
    assert final["final_answer"] == "fallback"


@pytest.mark.parametrize("outcome", [N, Outcome.FAILED, Outcome.TOOL_BLOCKED])
def test_planner_non_retryable_failure_falls_back_at_once(outcome: Outcome) -> None:
    script = Script(planner=[outcome])
    final = run(script)
    assert script.calls == ["planner", "fallback"]
    assert trace(final)["termination_reason"] == "fallback_planner_non_retryable_failed"


@pytest.mark.parametrize("outcome", [INV, Outcome.TOOL_BLOCKED, Outcome.FAILED, R, N])
def test_executor_never_retries_and_falls_back_with_its_outcome(outcome: Outcome) -> None:
    script = Script(executor=[outcome])
    final = run(script)
    assert script.calls == ["planner", "executor", "fallback"]
    reason = outcome.value.lower()
    assert edges(final)[-1] == ("executor", "fallback", reason, 1)
    assert trace(final)["termination_reason"] == f"fallback_executor_{reason}"


def test_gatekeeper_low_confidence_with_a_verified_binding_continues() -> None:
    script = Script(gatekeeper=[gk("LOW_CONFID", 1)])
    final = run(script)
    assert script.calls == HAPPY
    assert ("gatekeeper", "verified_input", "gatekeeper_low_confid", 1) in edges(final)


@pytest.mark.parametrize(("verdict", "verified"), [("REJECT", 0), ("LOW_CONFID", 0), ("PASS", 0)])
def test_gatekeeper_reject_or_no_verified_binding_falls_back(verdict: str, verified: int) -> None:
    script = Script(gatekeeper=[gk(verdict, verified)])
    final = run(script)
    assert script.calls == ["planner", "executor", "gatekeeper", "fallback"]
    assert edges(final)[-1] == ("gatekeeper", "fallback", "gatekeeper_reject", 1)
    assert trace(final)["termination_reason"] == "fallback_gatekeeper_reject"


def test_verified_bindings_of_only_ungrounded_claims_fall_back() -> None:
    # gatekeeper-v2: bindings verified, but no claim grounded -> nothing reaches the verifier
    result = {**gatekeeper_result("LOW_CONFID", 3), "verified_claim_count": 0}
    script = Script(gatekeeper=[StepResult(C, {"gatekeeper_result": result})])
    final = run(script)
    assert script.calls == ["planner", "executor", "gatekeeper", "fallback"]
    assert edges(final)[-1] == ("gatekeeper", "fallback", "gatekeeper_reject", 1)


def test_verifier_gap_triggers_one_evidence_retry_through_the_planner() -> None:
    script = Script(verifier=[vf("LOW_CONFID", gaps=1), vf("LOW_CONFID", gaps=1)])
    final = run(script)
    assert script.calls == [
        "planner",
        "executor",
        "gatekeeper",
        "verified_input",
        "verifier",
        "evidence_retry",
        "planner",
        "executor",
        "gatekeeper",
        "verified_input",
        "verifier",
        "composer",
    ]
    assert ("verifier", "evidence_retry", "evidence_gap", 1) in edges(final)
    assert ("evidence_retry", "planner", "evidence_gap_only", 1) in edges(final)
    assert final["evidence_retry_count"] == 1
    assert trace(final)["evidence_retry_count"] == 1
    assert trace(final)["termination_reason"] == "composer_completed"


def test_evidence_retry_renews_the_planner_retry_budget() -> None:
    script = Script(planner=[INV, C, INV], verifier=[vf("LOW_CONFID", gaps=2)])
    final = run(script)
    assert script.calls.count("planner") == 4
    assert script.calls[-1] == "composer"
    planner_retries = [e for e in edges(final) if e[:2] == ("planner", "planner")]
    assert planner_retries == [
        ("planner", "planner", "invalid_output", 1),
        ("planner", "planner", "invalid_output", 1),
    ]
    assert script.seen["planner"][2]["planner_retry_count"] == 0


def test_planner_budget_after_evidence_retry_is_still_one() -> None:
    script = Script(verifier=[vf("LOW_CONFID", gaps=1)], planner=[C, INV, INV])
    final = run(script)
    assert trace(final)["termination_reason"] == "fallback_planner_retry_exhausted"
    assert final["evidence_retry_count"] == 1


@pytest.mark.parametrize(
    ("label", "gate", "verdict", "gaps"),
    [
        ("ceiling below PASS", ("LOW_CONFID", 1), "LOW_CONFID", 1),
        ("effective verdict PASS", ("PASS", 2), "PASS", 1),
        ("effective verdict FAIL", ("PASS", 2), "FAIL", 1),
        ("no critical gap", ("PASS", 2), "LOW_CONFID", 0),
    ],
)
def test_no_evidence_retry_unless_every_condition_holds(
    label: str, gate: tuple[str, int], verdict: str, gaps: int
) -> None:
    script = Script(gatekeeper=[gk(*gate)], verifier=[vf(verdict, gaps)])
    final = run(script)
    assert script.calls == HAPPY, label
    assert final["evidence_retry_count"] == 0


def test_evidence_retry_happens_at_most_once_per_run() -> None:
    script = Script(verifier=[vf("LOW_CONFID", 1), vf("LOW_CONFID", 1)])
    run(script)
    assert script.calls.count("evidence_retry") == 1
    assert script.calls[-1] == "composer"


def test_verifier_fail_still_goes_to_the_composer() -> None:
    script = Script(verifier=[vf("FAIL")])
    final = run(script)
    assert script.calls == HAPPY
    assert trace(final)["termination_reason"] == "composer_completed"


@pytest.mark.parametrize(("outcome", "reason"), [(INV, "invalid_output"), (R, "retryable_failed")])
def test_verifier_retries_once(outcome: Outcome, reason: str) -> None:
    script = Script(verifier=[outcome])
    final = run(script)
    assert ("verifier", "verifier", reason, 1) in edges(final)
    assert ("verifier", "composer", "completed", 2) in edges(final)


def test_verifier_falls_back_when_retries_are_used_up() -> None:
    script = Script(verifier=[R, INV])
    final = run(script)
    assert script.calls[-2:] == ["verifier", "fallback"]
    assert trace(final)["termination_reason"] == "fallback_verifier_retry_exhausted"


def test_verifier_retry_budget_is_per_run_not_per_evidence_round() -> None:
    script = Script(verifier=[INV, vf("LOW_CONFID", 1), INV])
    final = run(script)
    assert script.calls.count("evidence_retry") == 1
    assert trace(final)["termination_reason"] == "fallback_verifier_retry_exhausted"
    assert edges(final)[-1] == ("verifier", "fallback", "retry_exhausted", 1)


def test_verifier_non_retryable_failure_falls_back() -> None:
    script = Script(verifier=[N])
    final = run(script)
    assert trace(final)["termination_reason"] == "fallback_verifier_non_retryable_failed"


@pytest.mark.parametrize(("outcome", "reason"), [(INV, "invalid_output"), (R, "retryable_failed")])
def test_composer_retries_once(outcome: Outcome, reason: str) -> None:
    script = Script(composer=[outcome])
    final = run(script)
    assert script.calls == [*HAPPY, "composer"]
    assert edges(final)[-1] == ("composer", "composer", reason, 1)
    assert final["orchestration_events"][-1]["attempt"] == 2
    assert trace(final)["termination_reason"] == "composer_completed"


def test_composer_falls_back_when_retries_are_used_up() -> None:
    script = Script(composer=[INV, INV])
    final = run(script)
    assert script.calls[-3:] == ["composer", "composer", "fallback"]
    assert trace(final)["termination_reason"] == "fallback_composer_retry_exhausted"


def test_composer_non_retryable_failure_falls_back() -> None:
    script = Script(composer=[N])
    final = run(script)
    assert trace(final)["termination_reason"] == "fallback_composer_non_retryable_failed"
    assert trace(final)["final_node"] == "fallback"


def test_longest_possible_path_stays_within_the_recursion_limit() -> None:
    script = Script(planner=[INV], verifier=[INV, vf("LOW_CONFID", 1)], composer=[INV])
    script.queues["planner"] += [C, INV]
    final = run(script)
    assert len(script.calls) <= RECURSION_LIMIT
    assert trace(final)["termination_reason"] == "composer_completed"
    assert len(final["orchestration_events"]) == len(script.calls)


def test_recursion_limit_stops_the_run_with_a_partial_trace() -> None:
    script = Script(planner=[INV])
    with pytest.raises(GraphRecursionError) as info:
        run(script, limit=4)
    partial = info.value.state
    assert [e["node"] for e in partial["orchestration_events"]] == [
        "planner",
        "planner",
        "executor",
        "gatekeeper",
    ]
    result = build_orchestration_trace(
        partial["orchestration_events"],
        partial["evidence_retry_count"],
        stopped_by="recursion_limit",
    )
    assert result["termination_reason"] == "recursion_limit"
    assert result["final_node"] == "gatekeeper" and result["degraded"] is False
    assert len(result["transitions"]) == 3


def test_a_node_that_raises_keeps_the_events_before_it() -> None:
    def explode(state: Any, config: Any) -> StepResult:
        raise RuntimeError("verifier crashed")

    script = Script()
    nodes = script.nodes()
    nodes["verifier"] = explode
    with pytest.raises(NodeError) as info:
        build_topology(nodes).compile().invoke({})
    events = info.value.state["orchestration_events"]
    assert [e["node"] for e in events] == HAPPY[:4]
    result = build_orchestration_trace(events, 0, stopped_by="error")
    assert (result["final_node"], result["termination_reason"]) == ("verified_input", "error")


def test_every_reason_code_the_decisions_can_return_is_routed() -> None:
    text = build_topology(Script().nodes()).compile().to_mermaid()
    for label in [
        "completed",
        "gatekeeper_pass / gatekeeper_low_confid",
        "evidence_gap",
        "invalid_output / retryable_failed",
        "retry_exhausted / non_retryable_failed",
    ]:
        assert f"|{label}|" in text


def test_the_topology_compiles_only_over_all_eight_nodes() -> None:
    from diagnosis_graph import GraphValidationError

    missing = Script().nodes()
    del missing["verifier"]
    with pytest.raises(GraphValidationError) as info:
        build_topology(missing).compile()
    assert "edge from 'verified_input' to unknown node 'verifier'" in info.value.problems
    extra = {**Script().nodes(), "critic": Script().nodes()["planner"]}
    with pytest.raises(GraphValidationError) as info:
        build_topology(extra).compile()
    assert info.value.problems == ["node 'critic' is unreachable from START"]


def test_route_edges_include_start_and_end_unless_the_run_stopped() -> None:
    from diagnosis_graph import END, START
    from diagnosis_graph.workflow.trace import route_edges

    final = run(Script(planner=[INV]))
    edges = route_edges(trace(final))
    assert edges[:3] == [(START, "planner"), ("planner", "planner"), ("planner", "executor")]
    assert edges[-1] == ("composer", END)
    stopped = build_orchestration_trace(final["orchestration_events"][:3], 0, stopped_by="error")
    assert route_edges(stopped)[-1] == ("planner", "executor")
