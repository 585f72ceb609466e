"""``ChatModel`` over the official ``openai`` SDK, for any OpenAI-compatible endpoint.

Works against OpenAI, Azure-compatible base URLs, DashScope compatible mode, DeepSeek, vLLM,
Ollama and the llama.cpp server: only ``chat.completions.create`` is used, and the response is
read defensively because compatible servers omit fields OpenAI always sends.

Retry budget (the one place transport retries happen; the SDK runs with ``max_retries=0``):

* Only transient transport errors are retried: timeouts, connection errors, HTTP 408, 429 and
  5xx (:func:`webapp.llm.errors.is_transient`). Anything else fails on its first attempt.
* At most ``max_attempts`` requests per call (default 3: the call and two retries).
* Between attempts: the server's ``retry-after-ms`` / ``Retry-After`` when it sent one, else
  full-jitter exponential backoff, uniform in [0, 0.5 s] after the first attempt, [0, 1 s]
  after the second, doubling up to [0, 8 s].
* Everything within ``max_total_seconds`` of wall time (default ``2 * timeout_seconds + 10``,
  at most 300 s): a wait is cut to what remains of the budget, no retry starts when its wait
  would reach the end of the budget (so a Retry-After longer than the budget ends the call at
  once instead of sleeping), and each attempt's timeout is cut to the time left.

With the defaults and a 60 s timeout a call therefore makes at most 3 requests in at most 130 s;
with the workflow's one technical retry per node, a node makes at most 6 requests.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from webapp.llm.errors import (
    MalformedResponseError,
    classify_error,
    is_transient,
    redact,
    refusal_error,
    retry_after_seconds,
)
from webapp.llm.types import ChatResult, Message, ToolCall

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

#: Passed explicitly so the SDK never falls back to ``OPENAI_BASE_URL`` from the environment.
OPENAI_BASE_URL = "https://api.openai.com/v1"
MAX_TOTAL_SECONDS_CAP = 300.0
# An attempt with less time than this cannot get an answer; it only turns a 5xx into a timeout.
_MIN_ATTEMPT_SECONDS = 0.05
# What a call can fail with that is about the endpoint, not about this code: the SDK's errors,
# a body that is not JSON, or a JSON body that is not a completion.
_CLASSIFIED = (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError, MalformedResponseError)


def default_max_total_seconds(timeout_seconds: float) -> float:
    """Two full-length attempts plus room for backoff, capped at five minutes."""
    return min(2 * timeout_seconds + 10.0, MAX_TOTAL_SECONDS_CAP)


class _Budget:
    """The wall-time budget of one logical call, measured on the injected clock."""

    def __init__(self, clock: Callable[[], float], total: float) -> None:
        self._clock = clock
        self.total = total
        self._start = clock()

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining(self) -> float:
        return max(0.0, self.total - self.elapsed())


class _StopWhenBudgetSpent(stop_base):
    """Stop before a retry whose wait would reach the end of the budget."""

    def __init__(self, budget: _Budget) -> None:
        self._budget = budget

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self._budget.elapsed() + retry_state.upcoming_sleep >= self._budget.total


class _WaitRetryAfterOrBackoff(wait_base):
    """Wait what the server asked for (Retry-After), else back off; never past the budget."""

    def __init__(self, budget: _Budget, backoff: wait_base) -> None:
        self._budget = budget
        self._backoff = backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        hinted = retry_after_seconds(exc) if exc is not None else None
        delay = hinted if hinted is not None else self._backoff(retry_state)
        return min(delay, self._budget.remaining())


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
        http_client: httpx2.Client | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("api_key is required (local servers accept any placeholder)")
        if not model:
            raise ValueError("model is required")
        if timeout_seconds <= 0 or max_attempts < 1:
            raise ValueError("timeout_seconds must be > 0 and max_attempts >= 1")
        self._api_key = api_key
        self._model = model
        self._timeout = float(timeout_seconds)
        self._max_attempts = max_attempts
        total = (
            default_max_total_seconds(self._timeout)
            if max_total_seconds is None
            else max_total_seconds
        )
        if total <= 0:
            raise ValueError("max_total_seconds must be > 0")
        self._max_total = min(float(total), MAX_TOTAL_SECONDS_CAP)
        self._sleep = sleep
        self._clock = clock
        self._backoff = wait_random_exponential(multiplier=0.5, max=8)
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or OPENAI_BASE_URL,
            timeout=self._timeout,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def model_name(self) -> str:
        """The configured model name."""
        return self._model

    @property
    def max_total_seconds(self) -> float:
        """The wall-time budget of one call, retries included."""
        return self._max_total

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        """Send one chat-completions request (retrying transient failures) and map the reply."""
        request: dict[str, Any] = {"model": self._model, "messages": list(messages)}
        if tools:
            # Some servers reject an empty list, so "no tools" means leaving the key out.
            request["tools"] = list(tools)
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        if response_format is not None:
            request["response_format"] = response_format
        budget = _Budget(self._clock, self._max_total)
        attempts = 0

        def attempt() -> object:
            nonlocal attempts
            attempts += 1
            timeout = max(min(self._timeout, budget.remaining()), _MIN_ATTEMPT_SECONDS)
            return self._client.chat.completions.create(**request, timeout=timeout)

        retrying = Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self._max_attempts) | _StopWhenBudgetSpent(budget),
            wait=_WaitRetryAfterOrBackoff(budget, self._backoff),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            response = retrying(attempt)
            return self._to_result(response, attempts)
        except _CLASSIFIED as exc:
            # ``from None``: the SDK exception carries the request (and its Authorization
            # header); the classified message already says what went wrong.
            raise classify_error(exc, attempts=attempts, secret=self._api_key) from None

    def _log_retry(self, retry_state: RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        logger.warning(
            "LLM call attempt %d failed (%s); retrying in %.2f s",
            retry_state.attempt_number,
            redact(f"{type(exc).__name__}: {exc}", self._api_key),
            retry_state.upcoming_sleep,
        )

    def _to_result(self, response: object, attempts: int) -> ChatResult:
        choice = _first_choice(response)
        message = choice.message
        if message is None:
            raise MalformedResponseError("choice without a message")
        finish_reason = choice.finish_reason
        refusal = getattr(message, "refusal", None)
        if refusal or finish_reason == "content_filter":
            reason = refusal if isinstance(refusal, str) else "finish_reason content_filter"
            raise refusal_error(reason, attempts=attempts, secret=self._api_key)
        content = message.content
        if content is not None and not isinstance(content, str):
            raise MalformedResponseError("message content is not a string")
        usage = getattr(response, "usage", None)
        return ChatResult(
            content=content,
            tool_calls=_tool_calls(message.tool_calls or []),
            model=getattr(response, "model", None) or self._model,
            prompt_tokens=_token_count(usage, "prompt_tokens"),
            completion_tokens=_token_count(usage, "completion_tokens"),
            attempts=attempts,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            refusal=None,
        )


def _first_choice(response: object) -> Any:
    # With non-strict validation the SDK hands back whatever the server sent: a str for a
    # non-JSON 200, a list, or a ChatCompletion with missing fields.
    choices = getattr(response, "choices", None)
    if not isinstance(response, ChatCompletion) or not choices:
        raise MalformedResponseError("response is not a chat completion with choices")
    return choices[0]


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


__all__ = ["OPENAI_BASE_URL", "OpenAIChatClient", "default_max_total_seconds"]
