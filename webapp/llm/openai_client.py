"""``ChatModel`` over the official ``openai`` SDK, for any OpenAI-compatible endpoint.

Transient transport errors (timeouts, connection errors, 408, 429, 5xx) are retried here (the
SDK runs with ``max_retries=0``): at most ``max_attempts`` requests within ``max_total_seconds``,
waiting the server's Retry-After or a full-jitter backoff. Each attempt's timeout (cut to what
the run has left) closes the connection of an answer that does not come in time. A request
rejected for its ``response_format`` is sent again one structured-output mode lower (``auto``
only).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_random_exponential

from webapp.llm import formats, tokens
from webapp.llm.errors import (
    MalformedResponseError,
    classify_error,
    is_format_rejection,
    is_transient,
    parse_retry_after,
    redact,
    refusal_error,
)
from webapp.llm.types import ChatResult, LLMError, Message, ToolCall

logger = logging.getLogger(__name__)

#: Passed explicitly so the SDK never falls back to ``OPENAI_BASE_URL`` from the environment.
OPENAI_BASE_URL = "https://api.openai.com/v1"
MAX_TOTAL_SECONDS_CAP = 300.0
# An attempt with less time than this cannot get an answer; it only turns a 5xx into a timeout.
_MIN_ATTEMPT_SECONDS = 0.05
# What a call can fail with that is about the endpoint, not about this code: the SDK's errors,
# a body that is not JSON, or a JSON body that is not a completion.
_CLASSIFIED = (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError, MalformedResponseError)


@dataclass
class Capabilities:
    """What the client learned of its endpoint while calling it, and the last call's outcome.

    With ``LLM_RESPONSE_FORMAT=auto`` requests start in ``json_schema`` and step down the
    ladder of :mod:`~webapp.llm.formats` when one is rejected for its format. Tool calling is
    native until a tool request is refused or answered with plain content that is not the
    expected output; a reply with tool calls settles it as native. ``/readyz`` reports
    :meth:`as_dict`.
    """

    setting: str = formats.AUTO
    #: True once a reply carried tool calls, False once tools were refused or ignored.
    tool_calls: bool | None = None
    downgrades: list[str] = field(default_factory=list)
    last_call: dict[str, Any] | None = None
    _mode: str = formats.JSON_SCHEMA
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def mode(self) -> str:
        """The structured-output mode requests use now."""
        return self._mode if self.adaptive else self.setting

    @property
    def adaptive(self) -> bool:
        """True when the mode may be stepped down (``LLM_RESPONSE_FORMAT=auto``)."""
        return self.setting == formats.AUTO

    @property
    def native_tools(self) -> bool:
        """False once the endpoint refused or ignored a tool request (the ReAct loop then speaks
        JSON actions)."""
        return self.tool_calls is not False

    def downgrade(self, rejected: str, reason: str) -> str | None:
        """Step down from ``rejected`` (auto only); the new mode, or None when none is left."""
        with self._lock:
            if not self.adaptive:
                return None
            lower = formats.next_mode(rejected)
            if lower is None:
                return None
            if self._mode == rejected:
                self._mode = lower
                self.downgrades.append(f"{rejected} -> {lower}: {reason}")
            return self._mode

    def saw_tools(self, native: bool) -> None:
        """Settle whether tool calling is native, from the first tool request that tells."""
        with self._lock:
            if self.tool_calls is None:
                self.tool_calls = native

    def record_call(
        self, outcome: str, *, kind: str | None = None, detail: str | None = None
    ) -> None:
        """Remember how the last model call ended."""
        self.last_call = {
            "outcome": outcome,
            "kind": kind,
            "detail": detail,
            "at": time.time(),
        }

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape ``/readyz`` reports."""
        return {
            "setting": self.setting,
            "mode": self.mode,
            "toolCalls": self.tool_calls,
            "nativeTools": self.native_tools,
            "downgrades": list(self.downgrades),
            "lastCall": dict(self.last_call) if self.last_call else None,
        }


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
        max_tokens: int | None = None,
        temperature: float = 0.0,
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
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or OPENAI_BASE_URL,
            timeout=self._timeout,
            max_retries=0,
        )
        self.capabilities = Capabilities(setting=response_format)

    @property
    def model_name(self) -> str:
        """The configured model name."""
        return self._model

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        """Send one chat-completions request (retrying transient failures) and map the reply."""
        caps = self.capabilities
        deadline = tokens.current_ledger().deadline  # checked before the call; cuts its budget
        left = self._max_total if deadline is None else deadline - time.monotonic()
        ends = self._clock() + min(self._max_total, left)
        call = _Call(caps.mode, _schema_name(response_format) is not None, ends, self._clock)
        try:
            while True:
                try:
                    result = self._attempts(call, messages, tools, response_format, tool_choice)
                    if tools and result.tool_calls:
                        caps.saw_tools(True)
                    return result
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
            if error.kind == "tools_unsupported":
                caps.saw_tools(False)
            caps.record_call("failed", kind=error.kind, detail=str(error))
            raise error from None

    def _adjust(
        self, call: _Call, exc: openai.APIStatusError, response_format: dict[str, Any] | None
    ) -> bool:
        """Step the mode down after a rejection of the format; False when nothing is left."""
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

        def attempt() -> object:
            call.attempts += 1
            timeout = max(min(self._timeout, call.remaining()), _MIN_ATTEMPT_SECONDS)
            return self._client.chat.completions.create(**request, timeout=timeout)

        def wait(state: RetryCallState) -> float:
            """What the server asked for (Retry-After), else backoff; never past the budget."""
            exc = state.outcome.exception() if state.outcome else None
            hinted = None
            if isinstance(exc, openai.APIStatusError):
                hinted = parse_retry_after(exc.response.headers)
            return min(self._backoff(state) if hinted is None else hinted, call.remaining())

        retrying = Retrying(
            retry=retry_if_exception(is_transient),
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
        request["max_tokens"] = tokens.max_tokens_for(_schema_name(asked_format), self._max_tokens)
        request["temperature"] = self._temperature
        return request

    def _log_retry(self, retry_state: RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        logger.warning(
            "LLM call attempt %d failed (%s); retrying in %.2f s",
            retry_state.attempt_number,
            redact(f"{type(exc).__name__}: {exc}", self._api_key),
            retry_state.upcoming_sleep,
        )

    def _to_result(self, response: object, call: _Call) -> ChatResult:
        # With non-strict validation the SDK hands back whatever the server sent: a str for a
        # non-JSON 200, a list, or a ChatCompletion with missing fields.
        choices = getattr(response, "choices", None)
        if not isinstance(response, ChatCompletion) or not choices:
            raise MalformedResponseError("response is not a chat completion with choices")
        choice = choices[0]
        message = choice.message
        if message is None:
            raise MalformedResponseError("choice without a message")
        finish_reason, refusal = choice.finish_reason, getattr(message, "refusal", None)
        if refusal or finish_reason == "content_filter":
            reason = refusal if isinstance(refusal, str) else "finish_reason content_filter"
            raise refusal_error(reason, attempts=call.attempts, secret=self._api_key)
        if message.content is not None and not isinstance(message.content, str):
            raise MalformedResponseError("message content is not a string")
        usage = getattr(response, "usage", None)
        return ChatResult(
            content=message.content,
            tool_calls=_tool_calls(message.tool_calls or []),
            model=getattr(response, "model", None) or self._model,
            prompt_tokens=_token_count(usage, "prompt_tokens"),
            completion_tokens=_token_count(usage, "completion_tokens"),
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


def _tool_calls(raw_calls: Sequence[Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for index, raw in enumerate(raw_calls):
        function = getattr(raw, "function", None)
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
