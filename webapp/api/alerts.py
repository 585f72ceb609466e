"""Alertmanager's webhook receiver and the list of received alerts.

``POST /api/alerts/alertmanager`` is authenticated by its own bearer token
(``ALERT_WEBHOOK_TOKEN``; without one the receiver is disabled, 503), not by ``API_KEY``, so
Alertmanager needs only one credential. ``GET /api/alerts`` is an ordinary ``/api`` endpoint.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint
from flask.typing import ResponseReturnValue

from ..container import services
from ..execution.jobs import AIOPS, RunJob
from ..services.alert_inbox import AlertInbox, WebhookPayload
from .contract import operation
from .errors import envelope
from .models import AlertQuery
from .responses import AlertList, Investigation, WebhookReceipt, paged

bp = Blueprint("alerts", __name__, url_prefix="/api")


def _inbox() -> AlertInbox:
    found = services()
    aiops = found.aiops

    def start_run(request_text: str) -> tuple[str, str, Callable[[], None]]:
        session_id, run_id = aiops.start(None, request_text)
        job = RunJob(AIOPS, session_id, run_id, request_text, "aiops")
        # Executed like any AIOps run (thread pool or Celery); its events go to the run's stream.
        return session_id, run_id, lambda: found.workers.submit(job)

    return AlertInbox(found.database, start_run)


@bp.post("/alerts/alertmanager")
@operation(
    body=WebhookPayload,
    response=WebhookReceipt,
    errors=(401, 503),
    extra_responses={202: "Stored; a firing group's AIOps run started or joined"},
)
def alertmanager(body: WebhookPayload) -> ResponseReturnValue:
    """Store a webhook notification's alerts (Alertmanager version 4); investigate a firing group.

    Authenticated by `Authorization: Bearer $ALERT_WEBHOOK_TOKEN` (not `API_KEY`); 503 while
    no token is configured. Alerts are de-duplicated by fingerprint; answers 202.
    """
    answer = WebhookReceipt.model_validate(_inbox().receive(body), from_attributes=True)
    return envelope(202, "success", answer.model_dump(mode="json"))


@bp.get("/alerts")
@operation(query=AlertQuery, response=AlertList)
def alerts(query: AlertQuery) -> AlertList:
    """Received alerts with their investigation runs, most recently updated first.

    Keyset pages: pass ``nextCursor`` back as ``cursor`` (null on the last page). No total is
    counted.
    """
    page = _inbox().page(query.state, query.limit, query.cursor)
    return paged(AlertList, "alerts", page)


@bp.post("/alerts/<fingerprint>/investigate")
@operation(
    response=Investigation,
    errors=(404, 503),
    extra_responses={202: "The AIOps run was started; follow its events or trace"},
)
def investigate(fingerprint: str) -> ResponseReturnValue:
    """Investigate one received alert now: a new AIOps run, linked to the alert.

    Answers 202 with the run's ``sessionId`` and ``runId``; 404 for an unknown fingerprint.
    """
    session_id, run_id = _inbox().investigate(fingerprint)
    answer = Investigation(fingerprint=fingerprint, session_id=session_id, run_id=run_id)
    return envelope(202, "success", answer.model_dump(mode="json"))
