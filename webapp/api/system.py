"""Liveness, readiness and the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue
from peewee import PeeweeException

from .context import services
from .errors import envelope, ok
from .openapi import openapi_document

bp = Blueprint("system", __name__)


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    """Liveness: the process answers."""
    return ok({"status": "ok"})


@bp.get("/readyz")
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
    return jsonify(openapi_document())
