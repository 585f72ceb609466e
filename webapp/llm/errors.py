"""Classify OpenAI SDK failures into node outcomes, and read a server's Retry-After.

RETRYABLE_FAILED: timeouts and 408, connection errors, 429, 5xx and a garbled body from the
server (not retried by the transport loop: an endpoint that always answers garbage fails after
one request). NON_RETRYABLE_FAILED: 401/403, other 4xx, refusals, a request rejected for its
``response_format`` (the client steps its mode down instead) or for its ``tools`` (the ReAct
loop goes on with JSON actions instead), the run's deadline.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from datetime import timezone

import openai

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.llm.types import LLMError

RETRYABLE = Outcome.RETRYABLE_FAILED
NON_RETRYABLE = Outcome.NON_RETRYABLE_FAILED

# Long enough for the server's explanation, short enough not to flood logs and traces.
_MAX_MESSAGE = 300


class MalformedResponseError(ValueError):
    """The server answered 200 with a body that is not a usable chat completion."""


_NOT_FORMAT = (401, 403, 404, 408, 429)
_STATUS_KINDS = {
    400: "bad_request",
    401: "auth",
    403: "auth",
    404: "not_found",
    408: "timeout",
    429: "rate_limited",
}
_TRANSIENT_KINDS = {"timeout", "connection", "rate_limited", "server_error"}
_RETRYABLE_KINDS = {*_TRANSIENT_KINDS, "malformed_response"}


def is_transient(exc: BaseException) -> bool:
    """True for the transport errors worth retrying: timeouts, connection errors, 408, 429, 5xx
    (not a request rejected for its ``response_format``)."""
    return _classify(exc)[0] in _TRANSIENT_KINDS


def names_field(exc: BaseException, *fields: str) -> bool:
    """True for a 4xx/5xx (not auth, not rate limiting) whose body names one of ``fields``."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code < 400 or exc.status_code in _NOT_FORMAT:
        return False
    text = f"{exc.message} {exc.body!s}".lower()
    return any(field in text for field in fields)


def is_format_rejection(exc: BaseException) -> bool:
    """A 4xx naming ``response_format``/``json_schema``/``json_object``, or a 5xx naming the first
    (llama-cpp-python answers an unsupported ``json_schema`` with a 500)."""
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return names_field(exc, "response_format")
    return names_field(exc, "response_format", "json_schema", "json_object")


def is_tools_rejection(exc: BaseException) -> bool:
    """A 4xx naming ``tool`` (vLLM without a tool-call parser refuses automatic tool choice)."""
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return False
    return names_field(exc, "tool")


def classify_error(exc: BaseException, *, attempts: int = 1, secret: str | None = None) -> LLMError:
    """Map an exception raised while calling the model to an :class:`LLMError`."""
    kind, status = _classify(exc)
    message = f"LLM call failed ({kind}"
    message += f", HTTP {status})" if status is not None else ")"
    detail = _detail(exc)
    if detail:
        message += f": {detail}"
    if attempts > 1:
        message += f" after {attempts} attempts"
    outcome = RETRYABLE if kind in _RETRYABLE_KINDS else NON_RETRYABLE
    return LLMError(
        redact(message, secret), outcome=outcome, attempts=attempts, status_code=status, kind=kind
    )


def refusal_error(reason: str, *, attempts: int, secret: str | None = None) -> LLMError:
    """The error for a model that refused to answer (``refusal`` or ``content_filter``)."""
    message = f"LLM refused to answer: {_shorten(reason)}"
    return LLMError(
        redact(message, secret), outcome=NON_RETRYABLE, attempts=attempts, kind="refusal"
    )


def _classify(exc: BaseException) -> tuple[str, int | None]:
    """The failure's kind and HTTP status."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        return "connection", None
    if isinstance(exc, openai.APIResponseValidationError):
        return "malformed_response", exc.status_code
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if is_format_rejection(exc):
            return "format_unsupported", status
        if is_tools_rejection(exc):
            return "tools_unsupported", status
        if status >= 500:
            return "server_error", status
        return _STATUS_KINDS.get(status, "client_error"), status
    if isinstance(exc, ValueError):
        # json.JSONDecodeError from the SDK's response.json(), or our MalformedResponseError.
        return "malformed_response", None
    # Any other SDK error (configuration, unexpected client state) will not fix itself.
    return "client_error", None


def _detail(exc: BaseException) -> str:
    cause = exc.__cause__
    if isinstance(exc, openai.APIConnectionError) and cause is not None:
        # "Connection error." alone does not say refused vs DNS vs TLS; the cause does.
        return _shorten(f"{exc} ({type(cause).__name__}: {cause})")
    if isinstance(exc, openai.APIStatusError) and isinstance(exc.body, Mapping):
        # The SDK's own message repeats the whole body; the server's sentence is enough.
        inner = exc.body.get("message")
        if isinstance(inner, str) and inner:
            return _shorten(inner)
    return _shorten(str(exc))


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def redact(text: str, secret: str | None) -> str:
    """Replace every occurrence of ``secret`` (the API key) in ``text``."""
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Read ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP-date) as seconds >= 0."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for name, unit in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = _as_float(lowered.get(name))
        if value is not None:
            return value / unit
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        # "-0000" parses naive; HTTP dates are always UTC.
        when = when.replace(tzinfo=timezone.utc)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _as_float(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
