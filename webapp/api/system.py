"""Liveness, readiness and the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue
from peewee import PeeweeException

from .context import services
from .contract import operation
from .errors import envelope
from .openapi import build_document
from .responses import Health, Readiness

bp = Blueprint("system", __name__)


@bp.get("/healthz")
@operation(response=Health)
def healthz() -> Health:
    """Liveness: the process answers."""
    return Health(status="ok")


@bp.get("/readyz")
@operation(response=Readiness, extra_responses={503: "The database is unavailable"})
def readyz() -> ResponseReturnValue:
    """Readiness: the database answers (required); Redis and the LLM configuration reported."""
    found = services()
    try:
        found.database.execute_sql("SELECT 1")
        database = "ok"
    except PeeweeException:
        database = "unavailable"
    if found.settings.redis_url:
        redis = "ok" if found.history.ping() else "unavailable"
    else:
        redis = "disabled"
    llm = "offline" if found.settings.offline else "openai-compatible"
    data = {"database": database, "redis": redis, "llm": llm, "model": found.model.model_name}
    if database != "ok":
        return envelope(503, "the database is unavailable", data)
    status = "degraded: session history unavailable" if redis == "unavailable" else "success"
    return envelope(200, status, data)


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The OpenAPI 3.1 description of this API (a bare document, not an envelope)."""
    document = current_app.extensions.get("openapi")
    if document is None:
        document = current_app.extensions["openapi"] = build_document(current_app)
    return jsonify(document)
