"""The ReAct loop and the agent invoker: budgets, blocking, step rows and invocation links."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.contracts import json_schema
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentCall
from webapp.llm.agents import LLMAgentInvoker
from webapp.llm.react import FINAL_ANSWER_NOW, Budget, run_react
from webapp.llm.types import LLMError
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.registry import ToolBox, ToolError, ToolOutput, ToolSpec

from .fake_model import ScriptedModel, answer, calls

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": 20}},
    "required": ["text"],
    "additionalProperties": False,
}


def echo(args: dict[str, Any]) -> ToolOutput:
    if args["text"] == "boom":
        raise ToolError("backend unavailable")
    return ToolOutput({"echo": args["text"]})


TOOLS = [ToolSpec("echo", "Echo text.", ECHO_SCHEMA, echo, "telemetry")]
CONFIG = RunConfig(thread_id="run-1", metadata={"session_id": "s1", "run_id": "run-1"})


@pytest.fixture
def audit() -> MemoryAudit:
    return MemoryAudit()


def react(model: ScriptedModel, audit: MemoryAudit, budget: Budget | None = None) -> Any:
    with run_scope("s1", "run-1"):
        return run_react(
            model,
            audit,
            "executor",
            [{"role": "user", "content": "go"}],
            ToolBox(TOOLS, audit, "executor"),
            budget=budget,
        )


def test_tool_results_reach_the_model_with_their_invocation_ids(audit: MemoryAudit) -> None:
    model = ScriptedModel([calls(("echo", {"text": "hi"})), answer({"done": True})])
    run = react(model, audit)
    assert (run.outcome, run.content, run.tool_calls) == (Outcome.COMPLETED, '{"done": true}', 1)
    tool_message = model.requests[1]["messages"][-1]
    body = json.loads(tool_message["content"])
    [row] = audit.invocations
    assert body == {"invocation_id": row["invocation_id"], "tool": "echo", "result": {"echo": "hi"}}
    assert row["raw_output"] == {"echo": "hi"} and row["status"] == "SUCCESS"


def test_a_failing_tool_is_returned_as_data_not_raised(audit: MemoryAudit) -> None:
    model = ScriptedModel([calls(("echo", {"text": "boom"})), answer("{}")])
    run = react(model, audit)
    assert run.outcome is Outcome.COMPLETED
    body = json.loads(model.requests[1]["messages"][-1]["content"])
    assert body["status"] == "ERROR" and body["error"] == "backend unavailable"
    assert audit.invocations[0]["status"] == "ERROR"


@pytest.mark.parametrize(
    ("name", "arguments", "why"),
    [
        ("nope", {}, "unknown tool"),
        ("echo", {"text": 5}, "is not of type 'string'"),
        ("echo", {"text": "x", "extra": 1}, "'extra' was unexpected"),
        ("echo", "{not json", "not valid JSON"),
        ("echo", {}, "is a required property"),
    ],
)
def test_invalid_calls_are_blocked_recorded_and_explained(
    audit: MemoryAudit, name: str, arguments: Any, why: str
) -> None:
    model = ScriptedModel([calls((name, arguments)), answer("{}")])
    run = react(model, audit)
    assert run.outcome is Outcome.COMPLETED and run.blocked == 1
    [row] = audit.invocations
    assert row["status"] == "BLOCKED" and why in row["error_message"]
    assert why in json.loads(model.requests[1]["messages"][-1]["content"])["error"]


def test_three_blocked_calls_end_the_execution_with_tool_blocked(audit: MemoryAudit) -> None:
    model = ScriptedModel([calls(("nope", {}), ("nope", {})), calls(("nope", {}))])
    run = react(model, audit)
    assert (run.outcome, run.blocked) == (Outcome.TOOL_BLOCKED, 3)
    assert [r["status"] for r in audit.invocations] == ["BLOCKED"] * 3


def test_calls_beyond_the_budget_are_blocked_and_a_final_answer_is_requested(
    audit: MemoryAudit,
) -> None:
    model = ScriptedModel(
        [
            calls(("echo", {"text": "a"}), ("echo", {"text": "b"}), ("echo", {"text": "c"})),
            answer({"final": 1}),
        ]
    )
    run = react(model, audit, Budget(max_rounds=5, max_tool_calls=2, max_blocked=3))
    assert run.outcome is Outcome.COMPLETED and run.content == '{"final": 1}'
    assert [r["status"] for r in audit.invocations] == ["SUCCESS", "SUCCESS", "BLOCKED"]
    assert "budget spent" in audit.invocations[2]["error_message"]
    final_request = model.requests[-1]
    assert final_request["tool_choice"] == "none"
    assert final_request["messages"][-1] == {"role": "user", "content": FINAL_ANSWER_NOW}


def test_the_round_budget_forces_a_final_answer(audit: MemoryAudit) -> None:
    model = ScriptedModel(
        [calls(("echo", {"text": "a"})), calls(("echo", {"text": "b"})), answer({"final": 2})]
    )
    run = react(model, audit, Budget(max_rounds=2, max_tool_calls=10, max_blocked=3))
    assert run.outcome is Outcome.COMPLETED and len(model.requests) == 3
    assert [r["tool_choice"] for r in model.requests] == [None, None, "none"]


def test_a_model_that_keeps_calling_tools_after_the_budget_is_tool_blocked(
    audit: MemoryAudit,
) -> None:
    model = ScriptedModel([calls(("echo", {"text": "a"})), calls(("echo", {"text": "b"}))])
    run = react(model, audit, Budget(max_rounds=1, max_tool_calls=10, max_blocked=3))
    assert run.outcome is Outcome.TOOL_BLOCKED
    assert [r["status"] for r in audit.invocations] == ["SUCCESS", "BLOCKED"]


def test_model_errors_become_outcomes_and_failed_steps(audit: MemoryAudit) -> None:
    error = LLMError(
        "429 after 3 attempts",
        outcome=Outcome.RETRYABLE_FAILED,
        attempts=3,
        status_code=429,
        kind="rate_limited",
    )
    run = react(ScriptedModel([error]), audit)
    assert run.outcome is Outcome.RETRYABLE_FAILED and "429" in (run.detail or "")
    [step] = audit.steps
    assert (step["status"], step["attempts"], step["error"]) == (
        "FAILED",
        3,
        "the model endpoint is rate limiting requests (HTTP 429): 429 after 3 attempts",
    )


def test_every_model_call_is_one_step_and_invocations_link_to_their_step(
    audit: MemoryAudit,
) -> None:
    model = ScriptedModel(
        [calls(("echo", {"text": "a"})), calls(("echo", {"text": "b"})), answer("{}")]
    )
    react(model, audit)
    assert [s["step_index"] for s in audit.steps] == [0, 1, 2]
    assert [s["has_tool_call"] for s in audit.steps] == [True, True, False]
    assert [i["step_id"] for i in audit.invocations] == [audit.steps[0]["id"], audit.steps[1]["id"]]
    assert audit.steps[0]["model_input"]["tools"] == ["echo"]
    assert all(s["prompt_tokens"] == 10 and s["completion_tokens"] == 5 for s in audit.steps)


def test_the_invoker_sends_the_schema_by_name_and_the_payload_as_json(audit: MemoryAudit) -> None:
    model = ScriptedModel([answer({"verdict": "PASS"})])
    invoker = LLMAgentInvoker(model, audit, lambda: TOOLS)
    call = AgentCall(
        "verifier", "verifier_output", json_schema("verifier_output"), {"question": "q"}
    )
    reply = invoker.invoke(call, CONFIG)
    assert reply.outcome is Outcome.COMPLETED
    request = model.requests[0]
    assert request["response_format"]["json_schema"]["name"] == "verifier_output"
    assert request["tools"] is None
    assert json.loads(request["messages"][1]["content"]) == {"question": "q"}
    assert "VERIFIER" in request["messages"][0]["content"]
    assert audit.steps[0]["run_id"] == "run-1" and audit.steps[0]["agent_name"] == "verifier"


def test_an_adapter_bug_degrades_to_a_failed_outcome(audit: MemoryAudit) -> None:
    class Broken(ScriptedModel):
        def complete(self, *args: Any, **kwargs: Any) -> Any:
            raise KeyError("bug")

    invoker = LLMAgentInvoker(Broken([]), audit, lambda: TOOLS)
    call = AgentCall("planner", "planner_plan", json_schema("planner_plan"), {})
    reply = invoker.invoke(call, CONFIG)
    assert reply.outcome is Outcome.FAILED and "KeyError" in (reply.detail or "")
