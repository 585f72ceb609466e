"""Classify OpenAI SDK failures into node outcomes, and read a server's Retry-After.

Outcome table (``LLMError.kind`` in brackets):

* RETRYABLE_FAILED - the call may succeed if repeated later, once the client's own retries are
  spent: timeouts and HTTP 408 [``timeout``], connection errors [``connection``], 429
  [``rate_limited``], 5xx [``server_error``], and a garbled body from the server - invalid
  JSON, a non-JSON 200 or a completion without choices [``malformed_response``].
* NON_RETRYABLE_FAILED - repeating the same request cannot help: 401/403 [``auth``], 400
  [``bad_request``], 404 [``not_found``], 422 and every other 4xx [``client_error``], a model
  refusal or content filter [``refusal``], a request rejected for its ``response_format``
  [``format_unsupported``] (see :func:`is_format_rejection`), a call that would outlive the
  run's deadline [``deadline``].

A *format rejection* is a 4xx other than 401/403/404/408/429 whose body names
``response_format``, ``json_schema`` or ``json_object``, or a 5xx whose body names
``response_format`` (llama-cpp-python answers an unsupported ``json_schema`` with a 500
validation error). It is never retried as transient: the same request fails the same way, so the
client steps its structured-output mode down instead (``webapp.llm.formats``).

A malformed *server* body is classified RETRYABLE because in practice it is a truncated
response or an error page from a proxy, which is transient. It is deliberately not retried by
the transport loop: the graph's single technical retry covers the transient case, and an
endpoint that always answers garbage (a base URL pointing at a web UI) fails after one request
instead of burning the whole transport budget. A *model* answering with malformed JSON
content is not an error here at all; the content is returned as-is and the caller validates it.
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


def is_transient(exc: BaseException) -> bool:
    """True for the transport errors worth retrying: timeouts, connection errors, 408, 429, 5xx."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


_NOT_FORMAT = (401, 403, 404, 408, 429)
_FORMAT_WORDS_4XX = ("response_format", "json_schema", "json_object")


def body_text(exc: BaseException) -> str:
    """The server's error body as text (the SDK's message plus the parsed body)."""
    if not isinstance(exc, openai.APIStatusError):
        return str(exc)
    return f"{exc.message} {exc.body!s}"


def names_field(exc: BaseException, *fields: str) -> bool:
    """True for a 4xx/5xx (not auth, not rate limiting) whose body names one of ``fields``."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code < 400 or exc.status_code in _NOT_FORMAT:
        return False
    text = body_text(exc).lower()
    return any(field in text for field in fields)


def is_format_rejection(exc: BaseException) -> bool:
    """True when the server rejected the request for its ``response_format`` (module doc)."""
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return names_field(exc, "response_format")
    return names_field(exc, *_FORMAT_WORDS_4XX)


def is_retryable_transport(exc: BaseException) -> bool:
    """Transient and not a rejection of the request's shape: what the transport loop retries."""
    return (
        is_transient(exc)
        and not is_format_rejection(exc)
        and not names_field(exc, "stream_options")
    )


def classify_error(exc: BaseException, *, attempts: int = 1, secret: str | None = None) -> LLMError:
    """Map an exception raised while calling the model to an :class:`LLMError`."""
    outcome, kind, status = _classify(exc)
    message = f"LLM call failed ({kind}"
    message += f", HTTP {status})" if status is not None else ")"
    detail = _detail(exc)
    if detail:
        message += f": {detail}"
    if attempts > 1:
        message += f" after {attempts} attempts"
    return LLMError(
        redact(message, secret), outcome=outcome, attempts=attempts, status_code=status, kind=kind
    )


def refusal_error(reason: str, *, attempts: int, secret: str | None = None) -> LLMError:
    """The error for a model that refused to answer (``refusal`` or ``content_filter``)."""
    message = f"LLM refused to answer: {_shorten(reason)}"
    return LLMError(
        redact(message, secret), outcome=NON_RETRYABLE, attempts=attempts, kind="refusal"
    )


def _classify(exc: BaseException) -> tuple[Outcome, str, int | None]:
    if isinstance(exc, openai.APITimeoutError):
        return RETRYABLE, "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        return RETRYABLE, "connection", None
    if isinstance(exc, openai.APIResponseValidationError):
        return RETRYABLE, "malformed_response", exc.status_code
    if isinstance(exc, openai.APIStatusError):
        if is_format_rejection(exc):
            return NON_RETRYABLE, "format_unsupported", exc.status_code
        return _classify_status(exc.status_code)
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return NON_RETRYABLE, "refusal", None
    if isinstance(exc, ValueError):
        # json.JSONDecodeError from the SDK's response.json(), or our MalformedResponseError.
        return RETRYABLE, "malformed_response", None
    # Any other SDK error (configuration, unexpected client state) will not fix itself.
    return NON_RETRYABLE, "client_error", None


def _classify_status(status: int) -> tuple[Outcome, str, int]:
    if status == 408:
        return RETRYABLE, "timeout", status
    if status == 429:
        return RETRYABLE, "rate_limited", status
    if status >= 500:
        return RETRYABLE, "server_error", status
    kinds = {401: "auth", 403: "auth", 400: "bad_request", 404: "not_found"}
    return NON_RETRYABLE, kinds.get(status, "client_error"), status


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


def retry_after_seconds(exc: BaseException, *, now: float | None = None) -> float | None:
    """The delay a 429/503-style response asked for, or None when it did not say."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    return parse_retry_after(exc.response.headers, now=now)


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Read ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP-date) as seconds >= 0."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _as_float(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _as_float(raw)
    if seconds is not None:
        return seconds
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
