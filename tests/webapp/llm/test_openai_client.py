"""Contract tests: the real OpenAIChatClient over real HTTP against a scripted local server.

Only the sleep/clock boundary is faked (so backoff and Retry-After cost no wall time); the SDK,
httpx and the wire format are real.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from tests.webapp.llm.scripted_server import (
    ScriptedOpenAIServer,
    ScriptedResponse,
    completion,
    error_body,
    serve,
    tool_call,
)
from webapp.llm.formats import response_format_for
from webapp.llm.openai_client import OpenAIChatClient
from webapp.llm.types import LLMError

API_KEY = "sk-test-0123456789abcdef"
MESSAGES = [
    {"role": "system", "content": "You are a planner."},
    {"role": "user", "content": "why is payment-service slow since 10:00?"},
]
PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}}, "required": ["steps"]}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "query_logs",
            "description": "Search logs.",
            "parameters": {"type": "object", "properties": {"service": {"type": "string"}}},
        },
    }
]


class FakeClock:
    """A monotonic clock that only moves when the client sleeps, recording every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    yield from serve()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_client(base_url: str, clock: FakeClock, **overrides: Any) -> OpenAIChatClient:
    options: dict[str, Any] = {
        "api_key": API_KEY,
        "model": "gpt-test",
        "base_url": base_url,
        "timeout_seconds": 2.0,
        "max_attempts": 3,
        "sleep": clock.sleep,
        "clock": clock,
    }
    options.update(overrides)
    return OpenAIChatClient(**options)


def ok(content: str = '{"steps": []}') -> ScriptedResponse:
    return ScriptedResponse(json=completion(content))


def failure(status: int, headers: dict[str, str] | None = None) -> ScriptedResponse:
    return ScriptedResponse(
        status=status, json=error_body(f"scripted {status}"), headers=headers or {}
    )


def call_failing(client: OpenAIChatClient) -> LLMError:
    with pytest.raises(LLMError) as info:
        client.complete(MESSAGES)
    return info.value


# --- successful answers -------------------------------------------------------------------


def test_plain_json_answer_maps_content_usage_and_model(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    body = completion(
        '{"steps": ["query_logs"]}',
        model="gpt-test-2024-08-06",
        usage={"prompt_tokens": 120, "completion_tokens": 17, "total_tokens": 137},
    )
    server.script(ScriptedResponse(json=body))

    result = make_client(server.base_url, clock).complete(MESSAGES)

    assert result.content == '{"steps": ["query_logs"]}'
    assert result.tool_calls == []
    assert result.finish_reason == "stop"
    assert result.model == "gpt-test-2024-08-06"
    assert (result.prompt_tokens, result.completion_tokens) == (120, 17)
    assert result.attempts == 1
    assert clock.sleeps == []


def test_missing_usage_and_model_fall_back_to_zero_and_configured_model(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    body = completion("hello", model="")
    server.script(ScriptedResponse(json=body))

    result = make_client(server.base_url, clock).complete(MESSAGES)

    assert (result.prompt_tokens, result.completion_tokens) == (0, 0)
    assert result.model == "gpt-test"


def test_tool_call_answer_preserves_ids_names_and_raw_arguments(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    first_args = '{"service": "payment-service", "level": "ERROR"}'
    second_args = '{ "query":"db pool",  "top_k": 3 }'
    calls = [
        tool_call("call_a", "query_logs", first_args),
        tool_call("call_b", "lookup_knowledge", second_args),
    ]
    server.script(
        ScriptedResponse(json=completion(None, tool_calls=calls, finish_reason="tool_calls"))
    )

    result = make_client(server.base_url, clock).complete(MESSAGES, tools=TOOLS)

    assert result.content is None
    assert result.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_a", "query_logs", first_args),
        ("call_b", "lookup_knowledge", second_args),
    ]
    assert result.as_message()["tool_calls"][1]["function"]["arguments"] == second_args


def test_model_answering_malformed_json_content_is_returned_as_is(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(ok('{"steps": [oops'))

    result = make_client(server.base_url, clock).complete(MESSAGES)

    assert result.content == '{"steps": [oops'


# --- what goes over the wire --------------------------------------------------------------


def test_request_carries_model_messages_tools_schema_format_and_bearer_key(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(ok())
    response_format = response_format_for("planner_plan", PLAN_SCHEMA)

    make_client(server.base_url, clock).complete(
        MESSAGES, tools=TOOLS, response_format=response_format
    )

    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.header("Authorization") == f"Bearer {API_KEY}"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"] == MESSAGES
    assert request.body["tools"] == TOOLS
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "planner_plan", "schema": PLAN_SCHEMA, "strict": False},
    }
    # One whole answer (not streamed), with limits.
    assert "stream" not in request.body
    assert request.body["max_tokens"] == 1024  # the planner_plan default
    assert request.body["temperature"] == 0
    assert "tool_choice" not in request.body


def test_tool_choice_none_is_sent_with_the_tools_for_a_final_answer(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(ok())

    make_client(server.base_url, clock).complete(MESSAGES, tools=TOOLS, tool_choice="none")

    [request] = server.requests
    assert request.body["tools"] == TOOLS and request.body["tool_choice"] == "none"


def test_json_object_mode_sends_plain_json_object_format_and_no_tools_key(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(ok())

    make_client(server.base_url, clock).complete(
        MESSAGES, tools=[], response_format={"type": "json_object"}
    )

    [request] = server.requests
    assert request.body["response_format"] == {"type": "json_object"}
    assert "tools" not in request.body


def test_plain_request_omits_tools_and_response_format(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(ok())

    make_client(server.base_url, clock).complete(MESSAGES)

    assert "tools" not in server.requests[0].body
    assert "response_format" not in server.requests[0].body


# --- transport retries --------------------------------------------------------------------


def test_rate_limit_with_retry_after_waits_what_the_server_asked_then_succeeds(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(failure(429, {"Retry-After": "2"}), ok())

    result = make_client(server.base_url, clock).complete(MESSAGES)

    assert result.attempts == 2
    assert clock.sleeps == [pytest.approx(2.0)]
    assert len(server.requests) == 2


def test_retry_after_ms_takes_precedence(server: ScriptedOpenAIServer, clock: FakeClock) -> None:
    server.script(failure(429, {"retry-after-ms": "250", "Retry-After": "9"}), ok())

    make_client(server.base_url, clock).complete(MESSAGES)

    assert clock.sleeps == [pytest.approx(0.25)]


def test_two_server_errors_then_success_uses_three_attempts_with_bounded_backoff(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(failure(500), failure(502), ok())

    result = make_client(server.base_url, clock).complete(MESSAGES)

    assert result.attempts == 3
    assert len(clock.sleeps) == 2
    # Full jitter: at most 0.5 s after the first attempt, at most 1 s after the second.
    assert 0 <= clock.sleeps[0] <= 0.5
    assert 0 <= clock.sleeps[1] <= 1.0


def test_server_error_forever_is_retryable_failed_after_max_attempts(
    server: ScriptedOpenAIServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # The body echoes the key, as some gateways do; neither logs nor the error may repeat it.
    server.default = ScriptedResponse(status=500, json=error_body(f"upstream failed for {API_KEY}"))

    with caplog.at_level(logging.WARNING, logger="webapp.llm.openai_client"):
        error = call_failing(make_client(server.base_url, clock, max_attempts=4))

    assert error.outcome is Outcome.RETRYABLE_FAILED
    assert error.kind == "server_error"
    assert error.status_code == 500
    assert error.attempts == 4
    assert len(server.requests) == 4
    assert len(clock.sleeps) == 3
    assert caplog.text.count("retrying in") == 3
    assert API_KEY not in caplog.text
    assert API_KEY not in str(error)


def test_timeout_is_retryable_failed(server: ScriptedOpenAIServer, clock: FakeClock) -> None:
    server.default = ScriptedResponse(json=completion("late"), delay=2.0)

    error = call_failing(make_client(server.base_url, clock, timeout_seconds=0.3, max_attempts=2))

    assert error.outcome is Outcome.RETRYABLE_FAILED
    assert error.kind == "timeout"
    assert error.attempts == 2
    assert error.status_code is None


def test_connection_refused_is_retryable_failed(clock: FakeClock) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The socket is closed: nothing listens on that port any more.

    error = call_failing(make_client(f"http://127.0.0.1:{port}/v1", clock, max_attempts=2))

    assert error.outcome is Outcome.RETRYABLE_FAILED
    assert error.kind == "connection"
    assert error.attempts == 2


def test_retry_after_longer_than_the_budget_stops_without_sleeping(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.script(failure(429, {"Retry-After": "3600"}), ok())

    error = call_failing(make_client(server.base_url, clock, max_total_seconds=30))

    assert error.outcome is Outcome.RETRYABLE_FAILED
    assert error.kind == "rate_limited"
    assert error.attempts == 1
    assert clock.sleeps == []
    assert len(server.requests) == 1


def test_total_time_budget_stops_retries_before_max_attempts(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    # Each 503 asks for 1 s; a 2.5 s budget allows two waits, and the third would reach it.
    server.default = failure(503, {"Retry-After": "1"})

    error = call_failing(
        make_client(server.base_url, clock, max_attempts=10, max_total_seconds=2.5)
    )

    assert error.kind == "server_error"
    assert error.attempts == 3
    assert clock.sleeps == [pytest.approx(1.0), pytest.approx(1.0)]


# --- non-retryable failures ---------------------------------------------------------------


def test_unauthorized_is_non_retryable_after_one_attempt_and_hides_the_key(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.default = ScriptedResponse(
        status=401, json=error_body(f"Incorrect API key provided: {API_KEY}")
    )

    error = call_failing(make_client(server.base_url, clock))

    assert error.outcome is Outcome.NON_RETRYABLE_FAILED
    assert error.kind == "auth"
    assert error.status_code == 401
    assert error.attempts == 1
    assert len(server.requests) == 1
    assert API_KEY not in str(error)
    assert error.__cause__ is None


def test_bad_request_is_non_retryable_after_one_attempt(
    server: ScriptedOpenAIServer, clock: FakeClock
) -> None:
    server.default = failure(400)

    error = call_failing(make_client(server.base_url, clock))

    assert (error.outcome, error.kind, error.attempts) == (
        Outcome.NON_RETRYABLE_FAILED,
        "bad_request",
        1,
    )
    assert "scripted 400" in str(error)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(403, "auth"), (404, "not_found"), (409, "client_error"), (422, "client_error")],
)
def test_other_client_errors_are_non_retryable(
    server: ScriptedOpenAIServer, clock: FakeClock, status: int, kind: str
) -> None:
    server.default = failure(status)

    error = call_failing(make_client(server.base_url, clock))

    assert (error.outcome, error.kind, error.status_code) == (
        Outcome.NON_RETRYABLE_FAILED,
        kind,
        status,
    )
    assert len(server.requests) == 1


def test_refusal_is_non_retryable(server: ScriptedOpenAIServer, clock: FakeClock) -> None:
    server.script(ScriptedResponse(json=completion(None, refusal="I can't help with that.")))

    error = call_failing(make_client(server.base_url, clock))

    assert (error.outcome, error.kind, error.attempts) == (
        Outcome.NON_RETRYABLE_FAILED,
        "refusal",
        1,
    )
    assert "I can't help with that." in str(error)


def test_content_filter_finish_is_a_refusal(server: ScriptedOpenAIServer, clock: FakeClock) -> None:
    server.script(ScriptedResponse(json=completion("", finish_reason="content_filter")))

    assert call_failing(make_client(server.base_url, clock)).kind == "refusal"


# --- malformed server bodies --------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        ScriptedResponse(raw=b'{"choices": ['),
        ScriptedResponse(raw=b"<html>502 from a proxy</html>", content_type="text/html"),
        ScriptedResponse(json={"object": "chat.completion", "choices": []}),
    ],
    ids=["truncated-json", "html-200", "no-choices"],
)
def test_malformed_server_body_is_retryable_but_not_retried_by_the_transport(
    server: ScriptedOpenAIServer, clock: FakeClock, response: ScriptedResponse
) -> None:
    server.script(response, ok())

    error = call_failing(make_client(server.base_url, clock))

    assert (error.outcome, error.kind, error.attempts) == (
        Outcome.RETRYABLE_FAILED,
        "malformed_response",
        1,
    )
    assert len(server.requests) == 1
