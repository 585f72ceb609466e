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
    ensure: Any = getattr(found.model, "ensure_capabilities", None)  # none on the offline model
    capabilities = None if ensure is None else ensure().as_dict()  # probed once, then cached
    if capabilities is not None:
        data["llmCapabilities"] = capabilities
    if database != "ok":
        return envelope(503, "the database is unavailable", data)
    problems = ["session history unavailable"] if redis == "unavailable" else []
    problems += [
        f"{t['backend']} telemetry unavailable" for t in data["telemetry"] if not t["reachable"]
    ]
    problems += _llm_problems(capabilities)
    status = f"degraded: {'; '.join(problems)}" if problems else "success"
    return envelope(200, status, data)


def _llm_problems(capabilities: dict[str, Any] | None) -> list[str]:
    """Why the model is not fit to answer, from the probe and the last call."""
    if capabilities is None:
        return []
    if capabilities.get("probeError"):
        return [f"the model endpoint failed its probe ({capabilities['probeError']})"]
    last = capabilities.get("lastCall") or {}
    if last.get("outcome") == "failed":
        return [f"the last model call failed ({last.get('detail')})"]
    return []


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The OpenAPI 3.1 description of this API (a bare document, not an envelope)."""
    return jsonify(openapi_document())
