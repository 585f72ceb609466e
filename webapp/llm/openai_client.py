"""``ChatModel`` over the official ``openai`` SDK, for any OpenAI-compatible endpoint.

Transient transport errors (timeouts, connection errors, 408, 429, 5xx) are retried here (the
SDK runs with ``max_retries=0``): at most ``max_attempts`` requests within ``max_total_seconds``,
waiting the server's Retry-After or a full-jitter backoff. A request rejected for its
``response_format`` is sent again one structured-output mode lower (``auto`` only).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_random_exponential

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.llm import formats, tokens
from webapp.llm.capabilities import Capabilities, probe
from webapp.llm.errors import (
    MalformedResponseError,
    classify_error,
    is_format_rejection,
    is_retryable_transport,
    names_field,
    parse_retry_after,
    redact,
    refusal_error,
)
from webapp.llm.streaming import Assembled, collect
from webapp.llm.types import ChatResult, LLMError, Message, ToolCall

logger = logging.getLogger(__name__)

#: Passed explicitly so the SDK never falls back to ``OPENAI_BASE_URL`` from the environment.
OPENAI_BASE_URL = "https://api.openai.com/v1"
MAX_TOTAL_SECONDS_CAP = 300.0
#: Each probe request's timeout (at most the call timeout): small answers, one attempt.
PROBE_TIMEOUT_SECONDS = 60.0
# An attempt with less time than this cannot get an answer; it only turns a 5xx into a timeout.
_MIN_ATTEMPT_SECONDS = 0.05
# What a call can fail with that is about the endpoint, not about this code: the SDK's errors,
# a body that is not JSON, or a JSON body that is not a completion.
_CLASSIFIED = (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError, MalformedResponseError)


class OpenAIChatClient:
    """A :class:`~webapp.llm.types.ChatModel` talking to an OpenAI-compatible HTTP endpoint."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout_seconds: float = 60.0,
        max_attempts: int = 3,
        max_total_seconds: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        response_format: str = formats.AUTO,
        max_tokens: Mapping[str, int] | None = None,
        temperature: float = 0.0,
        stream: bool = True,
        probe_capabilities: bool = True,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required (local servers accept any placeholder)")
        if not model:
            raise ValueError("model is required")
        if max_total_seconds is None:  # two full-length attempts plus room for backoff
            max_total_seconds = 2 * timeout_seconds + 10.0
        self._api_key = api_key
        self._model = model
        self._timeout = float(timeout_seconds)
        self._max_attempts = max_attempts
        self._max_total = min(float(max_total_seconds), MAX_TOTAL_SECONDS_CAP)
        self._sleep = sleep
        self._clock = clock
        self._backoff = wait_random_exponential(multiplier=0.5, max=8)
        self._max_tokens = dict(max_tokens or tokens.DEFAULT_MAX_TOKENS)
        self._temperature = temperature
        self._stream = stream
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or OPENAI_BASE_URL,
            timeout=self._timeout,
            max_retries=0,
        )
        self.capabilities = Capabilities(setting=response_format)
        self._probe_capabilities = probe_capabilities
        self._probe_lock = threading.Lock()

    @property
    def model_name(self) -> str:
        """The configured model name."""
        return self._model

    @property
    def native_tools(self) -> bool:
        """Whether tool calling is native (False: the ReAct loop uses JSON actions)."""
        return self.ensure_capabilities().native_tools

    def ensure_capabilities(self) -> Capabilities:
        """Probe the endpoint unless a cached probe result is still good (one probe at a time)."""
        caps = self.capabilities
        if not self._probe_capabilities or not caps.needs_probe(time.monotonic()):
            return caps
        timeout = min(self._timeout, PROBE_TIMEOUT_SECONDS)
        deadline = tokens.current_deadline()
        if deadline is not None:
            # Probing inside a run: its (at most four) requests fit in what the run has left.
            timeout = min(timeout, max(1.0, (deadline - time.monotonic()) / 4))
        with self._probe_lock:
            if caps.needs_probe(time.monotonic()):
                try:
                    probe(self._client, self._model, caps, timeout=timeout, secret=self._api_key)
                finally:
                    caps.probed_at = time.monotonic()
        return caps

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        """Send one chat-completions request (retrying transient failures) and map the reply."""
        caps = self.ensure_capabilities()
        ends = self._clock() + self._call_budget()
        call = _Call(caps.mode, _schema_name(response_format) is not None, ends, self._clock)
        try:
            while True:
                try:
                    return self._attempts(call, messages, tools, response_format, tool_choice)
                except openai.APIStatusError as exc:
                    if not self._adjust(call, exc, response_format):
                        raise
        except _CLASSIFIED as exc:
            # ``from None``: the SDK exception carries the request (and its Authorization
            # header); the classified message already says what went wrong.
            error = classify_error(exc, attempts=call.attempts, secret=self._api_key)
            if error.kind == "format_unsupported" and not caps.adaptive:
                error = LLMError(
                    f"{error} - the server does not accept LLM_RESPONSE_FORMAT={caps.mode}; set "
                    "LLM_RESPONSE_FORMAT=auto (or a weaker mode such as json_object)",
                    outcome=error.outcome,
                    attempts=error.attempts,
                    status_code=error.status_code,
                    kind=error.kind,
                )
            caps.record_call("failed", kind=error.kind, detail=str(error))
            raise error from None

    def _call_budget(self) -> float:
        deadline = tokens.current_deadline()
        if deadline is None:
            return self._max_total
        left = deadline - time.monotonic()
        if left <= 0:
            error = LLMError(
                "LLM call not started: the run's deadline has passed",
                outcome=Outcome.NON_RETRYABLE_FAILED,
                attempts=0,
                kind="deadline",
            )
            self.capabilities.record_call("failed", kind=error.kind, detail=str(error))
            raise error
        return min(self._max_total, left)

    def _adjust(
        self, call: _Call, exc: openai.APIStatusError, response_format: dict[str, Any] | None
    ) -> bool:
        """Change the request after a rejection of its shape; False when nothing is left to try."""
        if names_field(exc, "stream_options") and self.capabilities.stream_usage:
            self.capabilities.stream_usage = False
            return True
        structured = response_format is not None and response_format.get("type") == "json_schema"
        if not structured or not is_format_rejection(exc):
            return False
        lower = self.capabilities.downgrade(call.mode, f"HTTP {exc.status_code}")
        if lower is None or lower == call.mode:
            return False
        call.downgrades.append(f"{call.mode} -> {lower}")
        call.mode = lower
        logger.warning("LLM server rejected response_format; now using %s", lower)
        return True

    def _attempts(
        self,
        call: _Call,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        response_format: dict[str, Any] | None,
        tool_choice: str | None,
    ) -> ChatResult:
        sent, wire_format = formats.adapt(messages, response_format, call.mode)
        request = self._request(sent, tools, wire_format, tool_choice, response_format)

        def attempt() -> Assembled:
            call.attempts += 1
            timeout = max(min(self._timeout, call.remaining()), _MIN_ATTEMPT_SECONDS)
            return self._send(request, timeout)

        def wait(state: RetryCallState) -> float:
            """What the server asked for (Retry-After), else backoff; never past the budget."""
            exc = state.outcome.exception() if state.outcome else None
            hinted = None
            if isinstance(exc, openai.APIStatusError):
                hinted = parse_retry_after(exc.response.headers)
            return min(self._backoff(state) if hinted is None else hinted, call.remaining())

        retrying = Retrying(
            retry=retry_if_exception(is_retryable_transport),
            # No retry whose wait would reach the end of the budget.
            stop=lambda state: (
                state.attempt_number >= self._max_attempts
                or state.upcoming_sleep >= call.remaining()
            ),
            wait=wait,
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        result = self._to_result(retrying(attempt), call)
        self.capabilities.record_call("ok")
        return result

    def _request(
        self,
        messages: list[Message],
        tools: Sequence[dict[str, Any]] | None,
        wire_format: dict[str, Any] | None,
        tool_choice: str | None,
        asked_format: dict[str, Any] | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self._model, "messages": messages}
        if tools:
            # Some servers reject an empty list, so "no tools" means leaving the key out.
            request["tools"] = list(tools)
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        if wire_format is not None:
            request["response_format"] = wire_format
        request["max_tokens"] = tokens.max_tokens_for(self._max_tokens, _schema_name(asked_format))
        request["temperature"] = self._temperature
        if self._stream:
            request["stream"] = True
            if self.capabilities.stream_usage:
                request["stream_options"] = {"include_usage": True}
        return request

    def _send(self, request: dict[str, Any], timeout: float) -> Assembled:
        response = self._client.chat.completions.create(**request, timeout=timeout)
        if self._stream and not isinstance(response, ChatCompletion):
            # A server may answer a streamed request in one body (the ChatCompletion case).
            return collect(response, deadline=self._clock() + timeout, clock=self._clock)
        return _whole(response)

    def _log_retry(self, retry_state: RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        logger.warning(
            "LLM call attempt %d failed (%s); retrying in %.2f s",
            retry_state.attempt_number,
            redact(f"{type(exc).__name__}: {exc}", self._api_key),
            retry_state.upcoming_sleep,
        )

    def _to_result(self, response: Assembled, call: _Call) -> ChatResult:
        if response.chunks == 0:
            raise MalformedResponseError("the stream ended without a completion chunk")
        finish_reason, refusal = response.finish_reason, response.refusal
        if refusal or finish_reason == "content_filter":
            reason = refusal if isinstance(refusal, str) else "finish_reason content_filter"
            raise refusal_error(reason, attempts=call.attempts, secret=self._api_key)
        if response.content is not None and not isinstance(response.content, str):
            raise MalformedResponseError("message content is not a string")
        return ChatResult(
            content=response.content,
            tool_calls=_tool_calls(response.tool_calls),
            model=response.model or self._model,
            prompt_tokens=_token_count(response.usage, "prompt_tokens"),
            completion_tokens=_token_count(response.usage, "completion_tokens"),
            attempts=call.attempts,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            response_mode=call.mode if call.structured else None,
            downgrades=tuple(call.downgrades),
        )


@dataclass
class _Call:
    """The state of one logical call across its attempts, and its wall-time budget."""

    mode: str
    structured: bool
    ends: float
    clock: Callable[[], float]
    attempts: int = 0
    downgrades: list[str] = field(default_factory=list)

    def remaining(self) -> float:
        return max(0.0, self.ends - self.clock())


def _schema_name(response_format: dict[str, Any] | None) -> str | None:
    if not response_format:
        return None
    spec = response_format.get("json_schema")
    name = spec.get("name") if isinstance(spec, dict) else None
    return str(name) if name else None


def _whole(response: object) -> Assembled:
    """A completion answered in one body, in the shape a stream adds up to."""
    # With non-strict validation the SDK hands back whatever the server sent: a str for a
    # non-JSON 200, a list, or a ChatCompletion with missing fields.
    choices = getattr(response, "choices", None)
    if not isinstance(response, ChatCompletion) or not choices:
        raise MalformedResponseError("response is not a chat completion with choices")
    choice = choices[0]
    message = choice.message
    if message is None:
        raise MalformedResponseError("choice without a message")
    return Assembled(
        content=message.content,
        tool_calls=message.tool_calls or [],
        finish_reason=choice.finish_reason,
        refusal=getattr(message, "refusal", None),
        model=getattr(response, "model", None),
        usage=getattr(response, "usage", None),
        chunks=1,
    )


def _tool_calls(raw_calls: Sequence[Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for index, raw in enumerate(raw_calls):
        function = getattr(raw, "function", raw)  # a streamed call is flat
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise MalformedResponseError(f"tool call {index} has no function name")
        arguments = getattr(function, "arguments", None)
        if arguments is None:
            # Servers send null for a call without arguments; "{}" is what it means.
            arguments = "{}"
        elif not isinstance(arguments, str):
            # Older Ollama sent an object; keep the contract that arguments are JSON text.
            arguments = json.dumps(arguments)
        call_id = getattr(raw, "id", None)
        # Tool messages must echo an id back, so invent a stable one if the server omitted it.
        calls.append(ToolCall(id=call_id or f"call_{index}", name=name, arguments=arguments))
    return calls


def _token_count(usage: object, field: str) -> int:
    value = getattr(usage, field, None)
    return value if isinstance(value, int) else 0
