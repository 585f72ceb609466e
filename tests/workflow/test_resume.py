"""A diagnosis resumed from its checkpoint: completed nodes are not executed again, and the trace
shows the resume as an edge with reason ``resumed``."""

from __future__ import annotations

import json
from typing import Any

from diagnosis_graph.checkpoint import InMemoryCheckpointer
from diagnosis_graph.workflow.factory import build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.ports import AgentCall, DiagnosisPorts

from .fakes import LOGS, METRICS, ROLES, SERVICES, MemoryInvocations, ScriptedInvoker
from .test_nodes import happy

QUESTION = "Why is payment-service slow since 10:00?"


def crash(call: AgentCall) -> Any:
    raise RuntimeError("the worker died")


def diagnose(invoker: ScriptedInvoker, checkpoints: Any, resume: bool) -> Any:
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    store.add("inv-metrics", METRICS, tool="query_metrics")
    ports = DiagnosisPorts(
        invoker,
        store,
        tool_catalog=lambda: [{"name": "query_logs"}],
        service_catalog=lambda: SERVICES,
        tool_roles=lambda: ROLES,
    )
    graph = build_diagnosis_graph(ports, checkpoints)
    return run_diagnosis(graph, QUESTION, session_id="s1", run_id="run-1", resume=resume)


def test_a_run_resumed_after_the_planner_does_not_plan_again() -> None:
    checkpoints = InMemoryCheckpointer()
    invoker = happy()
    invoker.script["executor"] = [crash, *invoker.script["executor"]]
    stopped = diagnose(invoker, checkpoints, resume=False)
    saved = checkpoints.latest("run-1")
    assert stopped.status == "FAILED" and saved is not None and saved.node == "planner"
    resumed = diagnose(invoker, checkpoints, resume=True)
    assert resumed.status == "SUCCESS"
    agents = [c.agent for c in invoker.calls]
    assert agents == ["planner", "executor", "executor", "verifier", "composer"]
    transitions = resumed.orchestration_trace["transitions"]
    assert transitions[0] == {
        "from": "planner",
        "to": "executor",
        "reason_code": "resumed",
        "attempt": 1,
    }
    assert [t["reason_code"] for t in transitions].count("resumed") == 1
    assert resumed.state["resumed_after"] == [1]
    json.dumps(resumed.state)  # the checkpointed state stays plain JSON


def test_resuming_a_run_without_a_checkpoint_starts_it() -> None:
    invoker = happy()
    run = diagnose(invoker, InMemoryCheckpointer(), resume=True)
    assert run.status == "SUCCESS" and run.state["resumed_after"] == []
    assert "resumed" not in [t["reason_code"] for t in run.orchestration_trace["transitions"]]
