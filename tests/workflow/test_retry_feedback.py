"""A retried agent is told why its previous output was rejected, so it can correct it."""

from __future__ import annotations

from typing import Any

from diagnosis_graph.workflow.factory import build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentReply, DiagnosisPorts

from .fakes import LOGS, PLAN, ROLES, SERVICES, MemoryInvocations, ScriptedInvoker
from .test_composition import CLAIMS, GOOD, SUPPORTED, evidence


def run_with(planner: list[Any]) -> ScriptedInvoker:
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    invoker = ScriptedInvoker(
        {
            "planner": planner,
            "executor": [evidence(*CLAIMS)],
            "verifier": [SUPPORTED],
            "composer": [GOOD],
        }
    )
    ports = DiagnosisPorts(
        invoker, store, service_catalog=lambda: SERVICES, tool_roles=lambda: ROLES
    )
    result = run_diagnosis(
        build_diagnosis_graph(ports), "Why is payment-service slow?", session_id="s", run_id="r"
    )
    assert result.status == "SUCCESS"
    return invoker


def test_the_retry_of_an_invalid_output_carries_its_contract_error() -> None:
    invoker = run_with([{"queries": "not a list"}, PLAN])
    first, second = invoker.payloads("planner")
    assert "previous_output_error" not in first
    error = second["previous_output_error"]
    assert "queries" in error  # the first schema error, as the trace records it
    assert all("previous_output_error" not in p for p in invoker.payloads("composer"))


def test_a_technical_failure_retries_with_the_same_input() -> None:
    failed = AgentReply(Outcome.RETRYABLE_FAILED, "", detail="timeout")
    invoker = run_with([failed, PLAN])
    first, second = invoker.payloads("planner")
    assert first == second and "previous_output_error" not in second
