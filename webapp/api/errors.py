"""Every exception mapped to the API's JSON envelope, in one place.

``{"code": <HTTP status>, "message": <readable text>, "data": null}``. Bad input is a 4xx with a
clear message; a database that is down is 503; only a genuine bug is a 500 (and it is logged).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify, request
from flask.typing import ResponseReturnValue
from peewee import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException

from ..persistence.history import HistoryUnavailable
from ..persistence.listing import CursorError
from ..persistence.records import Conflict, NotFound

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error the client should see as it is: status, message, optional headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def envelope(code: int, message: str, data: Any = None) -> Response:
    """The JSON envelope with ``code`` as the HTTP status."""
    response = jsonify({"code": code, "message": message, "data": data})
    response.status_code = code
    return response


def register_error_handlers(app: Flask) -> None:
    """Install the handlers on ``app``."""

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> ResponseReturnValue:
        response = envelope(error.status, error.message)
        response.headers.update(error.headers)
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> ResponseReturnValue:
        code = error.code or 500
        message = (error.name or "error").lower()
        if code == 404:
            message = f"not found: {request.path}"
        elif code == 429:
            message = f"too many requests ({error.description}); retry after the Retry-After delay"
        elif code == 405:
            message = f"method {request.method} not allowed on {request.path}"
        elif code == 413:
            message = (
                f"request too large: the limit is {app.config.get('MAX_CONTENT_LENGTH')} bytes"
            )
        response = envelope(code, message)
        if code == 405 and error.response is None:
            allowed = getattr(error, "valid_methods", None) or []
            response.headers["Allow"] = ", ".join(allowed)
        return response

    for kind, status in ((NotFound, 404), (CursorError, 400), (Conflict, 409)):
        app.register_error_handler(kind, lambda error, code=status: envelope(code, str(error)))

    @app.errorhandler(HistoryUnavailable)
    def history_down(error: HistoryUnavailable) -> ResponseReturnValue:
        return envelope(503, "session history is unavailable right now; try again later")

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def database_down(error: Exception) -> ResponseReturnValue:
        log.error("database unavailable: %s", error)
        return envelope(503, "the database is unavailable right now; try again later")

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> ResponseReturnValue:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return envelope(500, "internal server error")
