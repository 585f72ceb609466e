"""Liveness, readiness and the OpenAPI document."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue
from peewee import PeeweeException

from ..container import services
from ..telemetry.readiness import telemetry_readiness
from .contract import operation
from .errors import envelope
from .openapi import openapi_document
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
    data: dict[str, Any] = {
        "database": database,
        "redis": redis,
        "llm": llm,
        "model": found.model.model_name,
        "telemetry": telemetry_readiness(found.backend),
    }
    capabilities: Any = getattr(found.model, "capabilities", None)  # none on the offline model
    last_call: dict[str, Any] = {}
    if capabilities is not None:
        data["llmCapabilities"] = capabilities.as_dict()
        last_call = data["llmCapabilities"]["lastCall"] or {}
    if database != "ok":
        return envelope(503, "the database is unavailable", data)
    problems = ["session history unavailable"] if redis == "unavailable" else []
    problems += [
        f"{t['backend']} telemetry unavailable" for t in data["telemetry"] if not t["reachable"]
    ]
    if last_call.get("outcome") == "failed":
        problems.append(f"the last model call failed ({last_call.get('detail')})")
    status = f"degraded: {'; '.join(problems)}" if problems else "success"
    return envelope(200, status, data)


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The OpenAPI 3.1 description of this API (a bare document, not an envelope)."""
    return jsonify(openapi_document())
