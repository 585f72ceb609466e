"""Reading requests defensively: JSON bodies, aliases, ids, questions, pagination."""

from __future__ import annotations

import re
from typing import Any

from flask import request

from .errors import ApiError

ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# C0/C1 control characters other than tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def json_body() -> dict[str, Any]:
    """The request's JSON object: 415 without a JSON content type, 400 when malformed."""
    if not request.is_json:
        raise ApiError(415, "send a JSON body with Content-Type: application/json")
    data = request.get_json(silent=True)
    if data is None:
        raise ApiError(400, "the body is not valid JSON")
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def pick(body: dict[str, Any], *names: str) -> Any:
    """The first present value among the accepted spellings of a field."""
    for name in names:
        if name in body and body[name] is not None:
            return body[name]
    return None


def valid_id(value: Any, field: str, *, required: bool = True) -> str | None:
    """A session or run id: 1-64 characters of ``[A-Za-z0-9_.:-]``, else 400."""
    if value is None:
        if required:
            raise ApiError(400, f"{field} is required")
        return None
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise ApiError(400, f"{field} must be 1-64 characters of letters, digits and _ . : -")
    return value


def valid_text(value: Any, field: str, max_chars: int, *, required: bool = True) -> str | None:
    """Stripped text of 1..``max_chars`` characters without control characters, else 400."""
    if value is None:
        if required:
            raise ApiError(400, f"{field} is required")
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{field} must be a string")
    text = value.strip()
    if not text:
        if required:
            raise ApiError(400, f"{field} must not be blank")
        return None
    if len(text) > max_chars:
        raise ApiError(400, f"{field} is too long: {len(text)} characters, at most {max_chars}")
    if _CONTROL.search(text):
        raise ApiError(400, f"{field} contains control characters")
    return text


def valid_choice(value: Any, field: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (default when absent), else 400."""
    if value is None:
        return default
    if not isinstance(value, str) or value not in choices:
        raise ApiError(400, f"{field} must be one of: {', '.join(choices)}")
    return value


def page() -> tuple[int, int]:
    """``limit`` (1-200, default 50) and ``offset`` (>= 0) from the query string."""
    try:
        limit = int(request.args.get("limit", 50))
        offset = int(request.args.get("offset", 0))
    except ValueError:
        raise ApiError(400, "limit and offset must be integers") from None
    if not 1 <= limit <= 200 or offset < 0 or offset > 1_000_000:
        raise ApiError(400, "limit must be 1-200 and offset 0-1000000")
    return limit, offset
