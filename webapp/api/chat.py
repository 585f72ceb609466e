"""Chat: ask a question (complex or simple flow), read and clear a session."""

from __future__ import annotations

from flask import Blueprint

from ..container import services
from ..services.chat import ChatOutcome
from .contract import operation
from .errors import ApiError
from .models import ChatRequest, ClearRequest
from .responses import ChatResult, Cleared, SessionInfo

bp = Blueprint("chat", __name__, url_prefix="/api")


@bp.post("/chat")
@operation(body=ChatRequest, response=ChatResult)
def chat(body: ChatRequest) -> ChatResult:
    """Ask a question; the run's outcome (a FAILED run is still HTTP 200).

    ``mode=auto`` sends questions about a service, an alert, an error, latency or "why" to the
    verified complex flow and the rest to the simple flow. The run executes on the configured
    executor like a streamed one (never in this request with ``RUN_EXECUTOR=celery``); the
    request waits for its ``done``, then answers from the run's row.
    """
    from ..execution.jobs import CHAT, RunJob
    from .stream import submit

    found = services()
    session_id, run_id, flow = found.chat.start(body.question, body.session_id, body.mode)
    for _frame in submit(found, RunJob(CHAT, session_id, run_id, body.question, flow)):
        pass  # waits for the run's done (the request's connection was given back)
    row = found.chat.runs.status(run_id)
    return ChatResult.model_validate(ChatOutcome.of_row(row), from_attributes=True)


@bp.get("/chat/session/<session_id>")
@operation(response=SessionInfo, errors=(404,))
def session_info(session_id: str) -> SessionInfo:
    """Session metadata, with its run count and whether its history is readable."""
    records = services().records
    row = records.session(session_id)
    if row is None:
        raise ApiError(404, f"session {session_id} not found")
    history = services().history.load(session_id)
    return SessionInfo.model_validate(
        {
            **row,
            "run_count": records.run_count(session_id),
            "history_messages": len(history.messages),
            "history_available": history.available,
        }
    )


@bp.post("/chat/clear")
@operation(body=ClearRequest, response=Cleared, errors=(404,))
def clear(body: ClearRequest) -> Cleared:
    """Forget a session's history (its runs stay: they are the audit record)."""
    if services().records.session(body.session_id) is None:
        raise ApiError(404, f"session {body.session_id} not found")
    removed = services().history.clear(body.session_id)
    return Cleared(session_id=body.session_id, cleared=removed)
