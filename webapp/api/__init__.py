"""The HTTP API: blueprints, the error envelope, bearer auth and per-request connections."""

from __future__ import annotations

import hmac

from flask import Blueprint, Flask, g, request

from .errors import ApiError, register_error_handlers
from .limits import install_rate_limit
from .security import install_security

# Endpoints that need no database connection and no API key.
OPEN_ENDPOINTS = {
    "system.healthz",
    "system.readyz",
    "system.openapi",
    "alerts.alertmanager",  # authenticated by ALERT_WEBHOOK_TOKEN instead of API_KEY
    "static",
    "ui.chat",
    "ui.trace",
    "ui.favicon",
    "ui.runs",
    "ui.cases",
    "ui.alerts",
}


def blueprints() -> list[Blueprint]:
    """The API's blueprints; their routes are the OpenAPI document (:mod:`.openapi`)."""
    from . import alerts, chat, knowledge, lists, runs, stream, system

    return [alerts.bp, chat.bp, knowledge.bp, lists.bp, runs.bp, stream.bp, system.bp]


def register_api(app: Flask) -> None:
    """Install blueprints, error handlers, authentication and connection handling."""
    for blueprint in blueprints():
        app.register_blueprint(blueprint)
    register_error_handlers(app)
    install_security(app)
    install_rate_limit(app, app.extensions["diagnosis"].settings)

    @app.before_request
    def authenticate() -> None:
        key = app.extensions["diagnosis"].settings.api_key
        if not key or request.endpoint in OPEN_ENDPOINTS or not request.path.startswith("/api/"):
            return
        header = request.headers.get("Authorization", "")
        token = header[7:] if header.lower().startswith("bearer ") else ""
        if not hmac.compare_digest(token.encode(), key.encode()):
            raise ApiError(
                401,
                "missing or wrong bearer token",
                {"WWW-Authenticate": 'Bearer realm="diagnosis"'},
            )

    @app.before_request
    def connect() -> None:
        """The request's connection: a peewee connection context, exited at teardown (not
        ``playhouse.flask_utils.FlaskDB``, whose ``connect()`` fails on a thread already
        holding a connection, and whose ``close()`` would end it under nested contexts)."""
        if request.endpoint in OPEN_ENDPOINTS or not request.path.startswith("/api/"):
            return
        context = app.extensions["diagnosis"].database.connection_context()
        context.__enter__()
        g.db_context = context

    @app.teardown_request
    def disconnect(error: BaseException | None) -> None:
        context = g.pop("db_context", None)
        if context is not None:
            context.__exit__(None, None, None)
