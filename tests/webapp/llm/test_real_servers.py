"""The client, the ReAct loop and whole diagnoses against replays of real servers' behaviours.

Real HTTP on 127.0.0.1 (the scripted server), the real SDK, the real client; each case ends in
the right mode or in an honest fallback, and the number of requests it took is asserted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.llm import formats
from webapp.llm.formats import response_format_for
from webapp.llm.openai_client import OpenAIChatClient
from webapp.llm.react import FINAL_ACTION_NOW, Budget, run_react
from webapp.llm.types import LLMError
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.registry import ToolBox
from webapp.wiring import offline_diagnoser

from .scripted_server import ScriptedOpenAIServer, ScriptedResponse, completion, serve
from .servers import LLAMACPP_JSON_SCHEMA_REJECTED, llamacpp, ollama, vllm
from .test_react import TOOLS

PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}}, "required": ["steps"]}
PLAN = response_format_for("planner_plan", PLAN_SCHEMA)
EVIDENCE = response_format_for("executor_evidence_v2", PLAN_SCHEMA)
MESSAGES = [
    {"role": "system", "content": "You are a planner."},
    {"role": "user", "content": '{"question": "why is checkout slow?"}'},
]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    yield from serve()


def client(server: ScriptedOpenAIServer, **options: Any) -> OpenAIChatClient:
    settings: dict[str, Any] = {
        "api_key": "local-placeholder",
        "model": "local-model",
        "base_url": server.base_url,
        "timeout_seconds": 5.0,
        "sleep": lambda _: None,
    }
    settings.update(options)
    return OpenAIChatClient(**settings)


def ignoring_tools(model: OpenAIChatClient) -> OpenAIChatClient:
    """``model`` once it has seen its endpoint ignore a tool request."""
    model.capabilities.saw_tools(False)
    return model


def steps_json(kept: list[dict[str, Any]], body: dict[str, Any]) -> str:
    return '{"steps": []}'


def user_text(request_body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content")) for m in request_body["messages"] if m.get("role") == "user"
    )


# --- llama.cpp (llama-cpp-python 0.3.36, gemma chat format) ------------------------------------


def test_llamacpp_json_schema_rejection_is_not_retried_but_downgraded_once(
    server: ScriptedOpenAIServer,
) -> None:
    server.responder = llamacpp(steps_json)
    model = client(server)

    result = model.complete(MESSAGES, response_format=PLAN)
    again = model.complete(MESSAGES, response_format=PLAN)

    # One rejected request, then the downgraded one; the next call starts downgraded.
    assert [r.body["response_format"]["type"] for r in server.chat_requests] == [
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert result.downgrades == ("json_schema -> json_object_schema",) and result.attempts == 2
    assert again.downgrades == () and again.attempts == 1
    assert model.capabilities.downgrades == ["json_schema -> json_object_schema: HTTP 500"]
    assert model.capabilities.mode == formats.JSON_OBJECT_SCHEMA
    sent = server.chat_requests[-1].body
    assert sent["response_format"] == {"type": "json_object", "schema": PLAN_SCHEMA}
    assert "JSON schema `planner_plan`" in sent["messages"][-1]["content"]
    assert '"required": ["steps"]' in sent["messages"][-1]["content"]
    assert result.content == '{"steps": []}' and result.response_mode == "json_object_schema"


def test_explicit_json_schema_is_honoured_and_fails_with_the_real_cause(
    server: ScriptedOpenAIServer,
) -> None:
    server.responder = llamacpp(steps_json)
    model = client(server, response_format="json_schema")

    with pytest.raises(LLMError) as info:
        model.complete(MESSAGES, response_format=PLAN)

    error = info.value
    assert error.kind == "format_unsupported" and error.outcome is Outcome.NON_RETRYABLE_FAILED
    assert "LLM_RESPONSE_FORMAT=json_schema" in str(error) and "literal_error" in str(error)
    # One request: no transient retries of a request that cannot succeed.
    assert len(server.chat_requests) == 1
    assert model.capabilities.last_call is not None
    assert model.capabilities.last_call["kind"] == "format_unsupported"


def test_llamacpp_template_dropping_system_and_tool_messages_gets_tools_as_json_actions(
    server: ScriptedOpenAIServer,
) -> None:
    seen: list[list[dict[str, Any]]] = []

    def brain(kept: list[dict[str, Any]], body: dict[str, Any]) -> str:
        seen.append(kept)
        if "Result of the tool call echo" in str(kept[-1]["content"]):
            return json.dumps({"action": "final", "output": {"steps": ["echoed"]}})
        return json.dumps({"action": "call", "tool": "echo", "arguments": {"text": "hi"}})

    server.responder = llamacpp(brain)
    audit = MemoryAudit()
    with run_scope("s1", "run-1"):
        run = run_react(
            ignoring_tools(client(server)),
            audit,
            "executor",
            MESSAGES,
            ToolBox(TOOLS, audit, "executor"),
            response_format=PLAN,
        )

    assert run.outcome is Outcome.COMPLETED and json.loads(run.content or "") == {
        "steps": ["echoed"]
    }
    assert run.tool_calls == 1
    calls = server.chat_requests[1:]  # after the json_schema request llama.cpp rejected
    assert len(calls) == 2 and all("tools" not in r.body for r in calls)
    # What the model saw without system messages: the protocol and the schema, in user turns.
    assert "Tool calling works through JSON replies" in str(seen[0][0]["content"])
    assert "JSON schema `planner_plan`" in str(seen[0][-1]["content"])
    assert calls[0].body["response_format"]["type"] == "json_object"
    assert "anyOf" in calls[0].body["response_format"]["schema"]
    [invocation] = audit.invocations
    first, second = audit.steps
    assert invocation["step_id"] == first["id"] and first["has_tool_call"]
    assert not second["has_tool_call"] and second["status"] == "SUCCESS"


NOPE = {"action": "call", "tool": "nope", "arguments": {}}
ECHO = {"action": "call", "tool": "echo", "arguments": {"text": "a"}}
FINAL = {"action": "final", "output": {"steps": ["done"]}}


@pytest.mark.parametrize(
    ("script", "outcome", "statuses"),
    [
        ([NOPE, ECHO, FINAL], Outcome.COMPLETED, ["BLOCKED", "SUCCESS"]),
        ([NOPE, ECHO, ECHO], Outcome.TOOL_BLOCKED, ["BLOCKED", "SUCCESS", "BLOCKED"]),
    ],
    ids=["final-after-the-budget", "calling-after-the-budget"],
)
def test_json_actions_keep_the_budgets_and_blocked_calls_of_native_tool_calling(
    server: ScriptedOpenAIServer,
    script: list[dict[str, Any]],
    outcome: Outcome,
    statuses: list[str],
) -> None:
    def brain(kept: list[dict[str, Any]], body: dict[str, Any]) -> str:
        rounds = sum(m["role"] == "assistant" for m in kept)
        return json.dumps(script[min(rounds, len(script) - 1)])

    server.responder = llamacpp(brain)
    audit = MemoryAudit()
    with run_scope("s1", "run-1"):
        run = run_react(
            ignoring_tools(client(server)),
            audit,
            "executor",
            MESSAGES,
            ToolBox(TOOLS, audit, "executor"),
            response_format=PLAN,
            budget=Budget(max_rounds=5, max_tool_calls=2, max_blocked=3),
        )

    assert run.outcome is outcome
    rows = audit.invocations
    assert [r["status"] for r in rows] == statuses
    assert "unknown tool" in rows[0]["error_message"]
    assert all("budget spent" in r["error_message"] for r in rows[2:])
    assert FINAL_ACTION_NOW in str(server.chat_requests[-1].body["messages"][-1]["content"])
    steps = {s["id"] for s in audit.steps}
    assert len(steps) == 3 and all(r["step_id"] in steps for r in rows)


# --- vLLM and Ollama -----------------------------------------------------------------------------


def test_vllm_without_a_tool_parser_keeps_json_schema_and_uses_json_actions(
    server: ScriptedOpenAIServer,
) -> None:
    def brain(kept: list[dict[str, Any]], body: dict[str, Any]) -> str:
        if "Result of the tool call" in str(kept[-1]["content"]):
            return json.dumps({"action": "final", "output": {"steps": []}})
        return json.dumps({"action": "call", "tool": "echo", "arguments": {"text": "x"}})

    server.responder = vllm(brain)
    audit = MemoryAudit()
    model = client(server)
    with run_scope("s1", "run-1"):
        run = run_react(
            model,
            audit,
            "executor",
            MESSAGES,
            ToolBox(TOOLS, audit, "executor"),
            response_format=PLAN,
        )

    assert model.capabilities.mode == formats.JSON_SCHEMA and model.capabilities.tool_calls is False
    assert run.outcome is Outcome.COMPLETED and run.tool_calls == 1
    assert len(server.chat_requests) == 1 + 2  # the refused tool request, then two rounds
    sent = server.chat_requests[-1].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "planner_plan"
    refused, *rounds = audit.steps
    assert refused["status"] == "FAILED" and "tool calling" in (refused["error"] or "")
    assert [s["prompt_tokens"] for s in rounds] == [50, 50]


def test_ollama_native_tools_with_usage(server: ScriptedOpenAIServer) -> None:
    server.responder = ollama(steps_json, [("echo", {"text": "hello"})])
    audit = MemoryAudit()
    model = client(server)
    with run_scope("s1", "run-1"):
        run = run_react(
            model,
            audit,
            "executor",
            MESSAGES,
            ToolBox(TOOLS, audit, "executor"),
            response_format=PLAN,
        )

    assert model.capabilities.native_tools and model.capabilities.mode == formats.JSON_SCHEMA
    assert model.capabilities.tool_calls is True  # a reply with tool calls settles it
    assert run.outcome is Outcome.COMPLETED and run.content == '{"steps": []}'
    rounds = server.chat_requests
    assert len(rounds) == 2
    assert rounds[1].body["messages"][-1]["role"] == "tool"
    assert [s["completion_tokens"] for s in audit.steps] == [7, 7]
    assert audit.invocations[0]["tool_name"] == "echo"


# --- limits ----------------------------------------------------------------------------------------


def test_max_tokens_per_schema_and_temperature_are_sent(server: ScriptedOpenAIServer) -> None:
    server.default = ScriptedResponse(json=completion('{"steps": []}'))
    for model in (client(server), client(server, max_tokens=300)):
        model.complete(MESSAGES, response_format=PLAN)
        model.complete(MESSAGES, response_format=EVIDENCE)
    assert [r.body["max_tokens"] for r in server.chat_requests] == [1024, 2048, 300, 300]
    assert {r.body["temperature"] for r in server.chat_requests} == {0}


# --- whole diagnoses: honest fallbacks -------------------------------------------------------------


def test_invalid_plans_fall_back_naming_the_first_schema_error(
    server: ScriptedOpenAIServer,
) -> None:
    server.responder = llamacpp(lambda kept, body: '{"summary": "looks fine"}')
    diagnoser = offline_diagnoser(model=client(server))

    result = diagnoser.diagnose("why is checkout slow?")

    answer = result.answer or ""
    assert result.run.degraded
    assert "invalid output" in answer and "queries" in answer and "Field required" in answer
    # The planner's rejected json_schema request, the planner and its one technical retry.
    assert len(server.chat_requests) == 3
    steps = diagnoser.audit.steps  # type: ignore[attr-defined]
    assert [s["status"] for s in steps] == ["FAILED", "FAILED"]
    assert all("queries" in (s["error"] or "") for s in steps)


def test_a_model_that_times_out_falls_back_saying_so(server: ScriptedOpenAIServer) -> None:
    server.default = ScriptedResponse(json=completion("{}"), delay=1.0)
    model = client(server, timeout_seconds=0.2, max_attempts=1)
    diagnoser = offline_diagnoser(model=model)

    result = diagnoser.diagnose("why is checkout slow?")

    assert "did not answer in time (timeout)" in (result.answer or "")
    assert len(server.chat_requests) == 2  # the planner and its one technical retry


@pytest.mark.parametrize(
    ("status", "headers", "cause", "requests"),
    [
        (401, {}, "rejected the credentials (authentication error)", 1),
        (429, {"Retry-After": "0"}, "is rate limiting requests (HTTP 429)", 4),
    ],
    ids=["auth", "rate-limit"],
)
def test_auth_and_rate_limit_failures_fall_back_naming_the_cause(
    server: ScriptedOpenAIServer,
    status: int,
    headers: dict[str, str],
    cause: str,
    requests: int,
) -> None:
    error = {"error": {"message": f"HTTP {status} from the endpoint", "type": "error"}}
    server.default = ScriptedResponse(status=status, json=error, headers=headers)
    model = client(server, max_attempts=2)
    diagnoser = offline_diagnoser(model=model)

    result = diagnoser.diagnose("why is checkout slow?")

    assert result.run.degraded and cause in (result.answer or "")
    # 401 is non-retryable: one request, no graph retry. 429 is transient: two transport
    # attempts for the planner and two for its one graph retry.
    assert len(server.chat_requests) == requests
    steps = diagnoser.audit.steps  # type: ignore[attr-defined]
    assert [s["status"] for s in steps] == ["FAILED"] * (1 if status == 401 else 2)
    assert all(cause in (s["error"] or "") for s in steps)


def test_the_run_deadline_falls_back_with_a_clear_reason() -> None:
    diagnoser = offline_diagnoser()
    diagnoser.invoker.run_deadline_seconds = 0.0

    result = diagnoser.diagnose("why is checkout slow?")

    assert result.run.degraded
    assert "RUN_DEADLINE_SECONDS=0" in (result.answer or "")
    assert diagnoser.audit.steps == []  # type: ignore[attr-defined]


def test_the_recorded_llamacpp_body_is_a_format_rejection() -> None:
    # Guard the fixture text the emulation uses: it must name the field the client looks for.
    assert "'response_format'" in LLAMACPP_JSON_SCHEMA_REJECTED


def test_a_server_ignoring_tools_is_detected_and_gets_json_actions(
    server: ScriptedOpenAIServer,
) -> None:
    def brain(kept: list[dict[str, Any]], body: dict[str, Any]) -> str:
        text = "\n".join(str(m["content"]) for m in kept)
        if "Tool calling works through JSON replies" not in text:
            return "Sure, I will look at the logs."  # tools ignored, no protocol known yet
        if "Result of the tool call echo" in str(kept[-1]["content"]):
            return json.dumps({"action": "final", "output": {"steps": []}})
        return json.dumps({"action": "call", "tool": "echo", "arguments": {"text": "a"}})

    server.responder = llamacpp(brain)
    audit = MemoryAudit()
    model = client(server, response_format="json_object_schema")

    def validate(content: str | None) -> str | None:
        return None if content and content.startswith("{") else "not JSON"

    with run_scope("s1", "run-1"):
        run = run_react(
            model,
            audit,
            "executor",
            MESSAGES,
            ToolBox(TOOLS, audit, "executor"),
            response_format=PLAN,
            validate=validate,
        )

    assert run.outcome is Outcome.COMPLETED and run.content == '{"steps": []}'
    assert model.capabilities.tool_calls is False and not model.capabilities.native_tools
    assert len(server.chat_requests) == 3  # the ignored tool request, a call, the final
    assert "tools" in server.chat_requests[0].body and "tools" not in server.chat_requests[1].body
    assert [s["status"] for s in audit.steps] == ["FAILED", "SUCCESS", "SUCCESS"]
