"""One typed definition per endpoint: the ``@operation`` decorator.

It validates path parameters, query string, headers and JSON body into the view's arguments (400
or 415 otherwise), wraps a returned response model in the envelope, and records the
:class:`Operation` the OpenAPI document is written from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import request
from flask.typing import ResponseReturnValue
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from ..container import services
from .errors import ApiError, envelope
from .models import DocId, Id, StepIndex
from .requests import json_body

#: Path parameters by view argument name: (documented name, type). Declared once for all views.
PATH_PARAMETERS: dict[str, tuple[str, Any]] = {
    "session_id": ("sessionId", Id),
    "run_id": ("runId", Id),
    "doc_id": ("docId", DocId),
    "fingerprint": ("fingerprint", Id),
    "step_index": ("stepIndex", StepIndex),
}
_ADAPTERS = {name: TypeAdapter(kind) for name, (_, kind) in PATH_PARAMETERS.items()}


@dataclass(frozen=True)
class Operation:
    """What one endpoint accepts and answers, for parsing and for the OpenAPI document."""

    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    errors: tuple[int, ...] = ()
    stream: bool = False  # answers text/event-stream
    upload: bool = False  # takes multipart/form-data with a ``file`` part
    description: str = ""
    #: Statuses other than 200 whose envelope still carries ``response`` data (readiness 503).
    extra_responses: dict[int, str] = field(default_factory=dict)
    headers: type[BaseModel] | None = None


def operation(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., ResponseReturnValue]]:
    """Declare a view's request and response models: the keyword fields of :class:`Operation`."""

    def decorate(view: Callable[..., Any]) -> Callable[..., ResponseReturnValue]:
        summary, _, description = (view.__doc__ or "").strip().partition("\n")
        spec = Operation(summary.strip(), description=" ".join(description.split()), **options)
        query, headers, body = spec.query, spec.headers, spec.body

        @functools.wraps(view)
        def wrapper(**kwargs: Any) -> ResponseReturnValue:
            for name, value in kwargs.items():
                if name in _ADAPTERS:
                    _validate(_ADAPTERS[name], value, PATH_PARAMETERS[name][0])
            if query is not None:
                kwargs["query"] = _validate(query, request.args.to_dict(), None)
            if headers is not None:  # looked up by alias: header names are case-insensitive
                names = [info.alias or name for name, info in headers.model_fields.items()]
                sent = {name: request.headers[name] for name in names if name in request.headers}
                kwargs["headers"] = _validate(headers, sent, None)
            if body is not None:
                kwargs["body"] = _validate(body, json_body(), None)
            result = view(**kwargs)
            if isinstance(result, BaseModel):
                return envelope(200, "success", result.model_dump(mode="json", by_alias=True))
            return result  # type: ignore[no-any-return]

        wrapper.operation = spec  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _validate(schema: Any, value: Any, name: str | None) -> Any:
    """``value`` validated by a model or TypeAdapter; the first problem as a 400."""
    context = {"max_question_chars": services().settings.max_question_chars}
    try:
        if isinstance(schema, TypeAdapter):
            return schema.validate_python(value, context=context)
        return schema.model_validate(value, context=context)
    except ValidationError as exc:
        raise ApiError(400, message(exc.errors()[0], name)) from None


def message(error: ErrorDetails, name: str | None = None) -> str:
    """A person's sentence for one pydantic error, naming the field as the client spelled it."""
    field_name = name or ".".join(str(part) for part in error["loc"]) or "the body"
    kind, context = error["type"], error.get("ctx") or {}
    if kind == "missing" or error.get("input", "") is None:
        return f"{field_name} is required"
    if kind == "bad_id":
        return f"{field_name} {error['msg']}"
    if kind == "literal_error":
        expected = str(context.get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"{field_name} must be one of: {expected}"
    if kind == "string_too_short":
        return f"{field_name} must not be blank"
    if kind == "string_too_long":
        length = len(error["input"]) if isinstance(error["input"], str) else "?"
        limit = context.get("max_length")
        return f"{field_name} is too long: {length} characters, at most {limit}"
    if kind == "string_type":
        return f"{field_name} must be a string"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{field_name} must be an integer"
    if kind in ("greater_than_equal", "less_than_equal"):
        bound = context.get("ge", context.get("le"))
        side = "at least" if kind == "greater_than_equal" else "at most"
        return f"{field_name} must be {side} {bound}"
    return f"{field_name} {error['msg'][0].lower()}{error['msg'][1:]}"
