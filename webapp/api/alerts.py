"""Alertmanager's webhook receiver and the list of received alerts (SPEC section 8).

``POST /api/alerts/alertmanager`` is authenticated by its own bearer token
(``ALERT_WEBHOOK_TOKEN``; without one the receiver is disabled, 503), not by ``API_KEY``, so
Alertmanager needs only one credential. ``GET /api/alerts`` is an ordinary ``/api`` endpoint.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from flask import Blueprint, request
from flask.typing import ResponseReturnValue

from ..execution.jobs import AIOPS, RunJob
from ..services.alerts import STATES, AlertInbox, PayloadError, parse_payload
from .context import services
from .errors import ApiError, envelope, ok
from .requests import json_body, page, valid_choice

bp = Blueprint("alerts", __name__, url_prefix="/api")


def _inbox() -> AlertInbox:
    found = services()
    aiops = found.aiops
    if aiops is None:
        raise ApiError(503, "the AIOps flow is not available")

    def start_run(request_text: str) -> tuple[str, str, Callable[[], None]]:
        session_id, run_id = aiops.start(None, request_text)
        job = RunJob(AIOPS, session_id, run_id, request_text, "aiops")
        # Executed like any AIOps run (thread pool or Celery); its events go to the run's stream.
        return session_id, run_id, lambda: found.workers.submit(job)

    return AlertInbox(found.database, start_run)


def _authenticate() -> None:
    token = services().settings.alert_webhook_token
    if not token:
        raise ApiError(503, "the Alertmanager webhook is disabled: set ALERT_WEBHOOK_TOKEN")
    header = request.headers.get("Authorization", "")
    sent = header[7:] if header.lower().startswith("bearer ") else ""
    if not hmac.compare_digest(sent.encode(), token.encode()):
        raise ApiError(
            401, "missing or wrong bearer token", {"WWW-Authenticate": 'Bearer realm="alerts"'}
        )


@bp.post("/alerts/alertmanager")
def alertmanager() -> ResponseReturnValue:
    """Store a webhook notification's alerts; investigate a firing group."""
    _authenticate()
    try:
        payload = parse_payload(json_body())
    except PayloadError as exc:
        raise ApiError(400, str(exc)) from None
    receipt = _inbox().receive(payload)
    return envelope(
        202,
        "success",
        {
            "stored": receipt.stored,
            "firing": receipt.firing,
            "resolved": receipt.resolved,
            "sessionId": receipt.session_id,
            "runId": receipt.run_id,
            "joinedRunningRun": receipt.joined,
        },
    )


@bp.get("/alerts")
def alerts() -> ResponseReturnValue:
    """Received alerts with their investigation runs, most recently updated first."""
    state = valid_choice(request.args.get("state"), "state", STATES, "all")
    limit, offset = page()
    rows, total = _inbox().page(state, limit, offset)
    return ok({"alerts": rows, "total": total, "limit": limit, "offset": offset})
