"""Reading request bodies defensively, and the id and text checks the models use.

A JSON body is parsed by orjson, which refuses lone surrogates, ``NaN`` and invalid UTF-8;
nesting deeper than :data:`MAX_JSON_DEPTH` and NUL characters (PostgreSQL cannot store them)
are refused too. A chunked body that reaches the app's size limit is 413.
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
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: The escape of a NUL in a JSON text (after an even number of backslashes: not a literal one).
_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


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


def too_deep(value: Any, level: int = 1) -> bool:
    """Whether arrays and objects nest deeper than :data:`MAX_JSON_DEPTH` in ``value``."""
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, list):
        return False
    return level > MAX_JSON_DEPTH or any(too_deep(child, level + 1) for child in value)


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
    if too_deep(value):
        raise ApiError(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    if _NUL.search(data):
        raise ApiError(400, "the body contains control characters that cannot be stored (NUL)")
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


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character other than tab and line breaks."""
    return _CONTROL.search(text) is not None
