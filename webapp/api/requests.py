"""Reading requests defensively: JSON bodies, aliases, ids, questions, pagination.

A JSON body is read as bytes and parsed by orjson, which refuses what the standard library
lets through and later fails on: lone surrogates (``"\\ud800"``, which no database or encoder
can store), ``NaN``/``Infinity``, invalid UTF-8. Nesting deeper than :data:`MAX_JSON_DEPTH` is
refused too (the standard decoder would raise RecursionError, a 500). A body sent without a
length (chunked) is read up to the app's limit: reaching it is 413, as a declared length over
the limit is.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from .errors import ApiError

#: Session and run ids; always matched with ``fullmatch`` (``$`` would accept a final newline).
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
ID_MESSAGE = "must be 1-64 characters of letters, digits and _ . : -"
MAX_JSON_DEPTH = 64
# C0/C1 control characters other than tab, newline and carriage return.
_COUNT = re.compile(r"[0-9]{1,9}")  # ASCII digits only: int() also reads "٣" and "1_0"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def is_id(value: object) -> bool:
    """True for a well-formed session or run id (the whole string)."""
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


def body_bytes() -> bytes:
    """The raw body; 413 when it is over the limit, whether or not it declared its length."""
    data = request.get_data(cache=True)
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if request.content_length is None and limit is not None and len(data) >= limit:
        # The stream stops at the limit without saying whether more was coming: assume it was.
        raise RequestEntityTooLarge()
    return data


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def parse_json(data: bytes) -> Any:
    """Decode a JSON document or raise a 400 ApiError saying what is wrong with it."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        if "depth" in reason or "recursion" in reason:
            raise ApiError(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
        if "not valid UTF-8" in reason:
            raise ApiError(400, "the body is not valid JSON: it is not UTF-8 text") from None
        if "surrogate" in reason:
            raise ApiError(400, "the body contains a lone UTF-16 surrogate") from None
        raise ApiError(400, "the body is not valid JSON") from None
    if depth(value) > MAX_JSON_DEPTH:
        raise ApiError(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def json_body() -> dict[str, Any]:
    """The request's JSON object: 415 without a JSON content type, 400 when malformed."""
    if not request.is_json:
        raise ApiError(415, "send a JSON body with Content-Type: application/json")
    data = parse_json(body_bytes())
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
    if not is_id(value):
        raise ApiError(400, f"{field} {ID_MESSAGE}")
    return str(value)


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character other than tab and line breaks."""
    return _CONTROL.search(text) is not None


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
    if has_control(text):
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
    """``limit`` (1-200, default 50) and ``offset`` (0-1000000) from the query string."""
    raw_limit, raw_offset = request.args.get("limit", "50"), request.args.get("offset", "0")
    if not (_COUNT.fullmatch(raw_limit) and _COUNT.fullmatch(raw_offset)):
        raise ApiError(400, "limit and offset must be integers")
    limit, offset = int(raw_limit), int(raw_offset)
    if not 1 <= limit <= 200 or offset > 1_000_000:
        raise ApiError(400, "limit must be 1-200 and offset 0-1000000")
    return limit, offset
