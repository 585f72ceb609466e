"""The error classifier and Retry-After parsing, on SDK exceptions built by hand."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.llm.errors import (
    MalformedResponseError,
    classify_error,
    is_format_rejection,
    is_transient,
    parse_retry_after,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
RETRYABLE = Outcome.RETRYABLE_FAILED
NON_RETRYABLE = Outcome.NON_RETRYABLE_FAILED


_CLASSES: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
    500: openai.InternalServerError,
    503: openai.InternalServerError,
}


def status_error(status: int) -> openai.APIStatusError:
    """Build the exception class the SDK raises for ``status`` (408 has no subclass)."""
    response = httpx2.Response(status, request=REQUEST, json={"error": {"message": "nope"}})
    cls = _CLASSES.get(status, openai.APIStatusError)
    return cls(f"Error code: {status}", response=response, body={"message": "nope"})


@pytest.mark.parametrize(
    ("status", "outcome", "kind"),
    [
        (400, NON_RETRYABLE, "bad_request"),
        (401, NON_RETRYABLE, "auth"),
        (403, NON_RETRYABLE, "auth"),
        (404, NON_RETRYABLE, "not_found"),
        (409, NON_RETRYABLE, "client_error"),
        (422, NON_RETRYABLE, "client_error"),
        (408, RETRYABLE, "timeout"),
        (429, RETRYABLE, "rate_limited"),
        (500, RETRYABLE, "server_error"),
        (503, RETRYABLE, "server_error"),
    ],
)
def test_status_codes_map_to_outcomes(status: int, outcome: Outcome, kind: str) -> None:
    exc = status_error(status)

    error = classify_error(exc, attempts=2)

    assert (error.outcome, error.kind, error.status_code, error.attempts) == (
        outcome,
        kind,
        status,
        2,
    )
    assert is_transient(exc) is (outcome is RETRYABLE)


@pytest.mark.parametrize(
    ("exc", "outcome", "kind"),
    [
        (openai.APITimeoutError(request=REQUEST), RETRYABLE, "timeout"),
        (openai.APIConnectionError(request=REQUEST), RETRYABLE, "connection"),
        (
            json.JSONDecodeError("Expecting value", '{"choices": [', 13),
            RETRYABLE,
            "malformed_response",
        ),
        (MalformedResponseError("no choices"), RETRYABLE, "malformed_response"),
        (openai.OpenAIError("something odd"), NON_RETRYABLE, "client_error"),
    ],
    ids=["timeout", "connection", "json-decode", "no-choices", "other-sdk-error"],
)
def test_transport_and_body_errors_map_to_outcomes(
    exc: Exception, outcome: Outcome, kind: str
) -> None:
    error = classify_error(exc)

    assert (error.outcome, error.kind) == (outcome, kind)


def test_malformed_bodies_are_not_transient_for_the_transport_loop() -> None:
    assert not is_transient(json.JSONDecodeError("Expecting value", "{", 1))
    assert not is_transient(MalformedResponseError("no choices"))


def test_classified_message_never_contains_the_key() -> None:
    exc = openai.OpenAIError("bad key sk-secret-123456 rejected")

    assert "sk-secret-123456" not in str(classify_error(exc, secret="sk-secret-123456"))


def test_parse_retry_after_reads_seconds_millis_and_http_dates() -> None:
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "-3"}) is None
    assert parse_retry_after({}) is None


def error_with(status: int, message: str) -> openai.APIStatusError:
    body = {"error": {"message": message, "type": "x"}}
    response = httpx2.Response(status, request=REQUEST, json=body)
    cls = _CLASSES.get(status, openai.APIStatusError)
    return cls(f"Error code: {status} - {body}", response=response, body=body["error"])


@pytest.mark.parametrize(
    ("status", "message", "rejected"),
    [
        (500, "1 validation error: loc ('body', 'response_format', 'type')", True),
        (400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported", True),
        (422, "json_schema is not supported by this model", True),
        (500, "CUDA out of memory", False),
        (503, "json_schema backend warming up", False),
        (401, "bad key for response_format", False),
        (429, "response_format requests are rate limited", False),
        (400, "maximum context length exceeded", False),
    ],
)
def test_format_rejections_are_told_apart_from_transient_errors(
    status: int, message: str, rejected: bool
) -> None:
    exc = error_with(status, message)
    assert is_format_rejection(exc) is rejected
    if rejected:
        assert not is_transient(exc)  # a request that cannot succeed is not retried
        error = classify_error(exc)
        assert (error.kind, error.outcome) == ("format_unsupported", NON_RETRYABLE)


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, '"auto" tool choice requires --enable-auto-tool-choice', "tools_unsupported"),
        (500, "tool parser crashed", "server_error"),
        (400, "response_format json_schema with tools is not supported", "format_unsupported"),
    ],
)
def test_a_request_refused_for_its_tools_is_told_apart(
    status: int, message: str, kind: str
) -> None:
    error = classify_error(error_with(status, message))
    assert error.kind == kind
    assert (error.outcome is NON_RETRYABLE) is (kind != "server_error")
