"""The HTTP API: blueprints, the error envelope, bearer auth and per-request connections."""

from __future__ import annotations

from flask import Blueprint, Flask, g, request

from .errors import ApiError, register_error_handlers
from .limits import install_rate_limit
from .security import install_security, require_bearer

#: The one ``/api/`` endpoint without API_KEY (ALERT_WEBHOOK_TOKEN instead) or a request
#: connection; everything outside ``/api/`` has neither.
WEBHOOK = "alerts.alertmanager"


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
    def authenticate_and_connect() -> None:
        """The webhook's own token (checked before its body is read); for the rest of ``/api/``
        API_KEY's bearer token, then the request's connection: a peewee connection context,
        exited at teardown."""
        settings = app.extensions["diagnosis"].settings
        if request.endpoint == WEBHOOK:
            if not settings.alert_webhook_token:
                raise ApiError(503, "the Alertmanager webhook is disabled: set ALERT_WEBHOOK_TOKEN")
            require_bearer(settings.alert_webhook_token, "alerts")
            return
        if not request.path.startswith("/api/"):
            return
        key = settings.api_key
        if key:
            require_bearer(key, "diagnosis")
        context = app.extensions["diagnosis"].database.connection_context()
        context.__enter__()
        g.db_context = context

    app.teardown_request(lambda error: release_connection())


def release_connection() -> None:
    """Give the request's pooled connection back (at teardown, or early for a long answer)."""
    context = g.pop("db_context", None)
    if context is not None:
        context.__exit__(None, None, None)
