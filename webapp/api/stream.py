"""Server-sent events: the chat and AIOps runs streamed as they happen (SPEC section 8).

Event ``message`` frames with data ``{"type", "data"}``: ``metadata`` first (``sessionId``,
``runId``, ``flow``), one ``progress`` per node execution, ``content`` chunks of the answer,
``error`` when the run failed, ``done`` last.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response
from flask.typing import ResponseReturnValue

from ..services.streams import Emit, chunks
from .chat import chat_request
from .context import services
from .errors import ApiError
from .requests import json_body, pick, valid_id, valid_text

bp = Blueprint("stream", __name__, url_prefix="/api")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MAX_AIOPS_REQUEST_CHARS = 1000


def finish(emit: Emit, outcome: Any) -> None:
    """``content`` chunks (or ``error``) then ``done`` for a finished run."""
    if outcome.answer:
        for piece in chunks(outcome.answer):
            emit("content", {"text": piece})
    if not outcome.success:
        emit(
            "error", {"message": outcome.error_message or "the run failed", "runId": outcome.run_id}
        )
    emit(
        "done",
        {
            "sessionId": outcome.session_id,
            "runId": outcome.run_id,
            "status": outcome.status,
            "success": outcome.success,
            "degraded": outcome.degraded,
        },
    )


@bp.post("/chat_stream")
def chat_stream() -> ResponseReturnValue:
    """Stream one chat turn."""
    question, session_id, mode = chat_request()
    found = services()
    chat = found.chat
    session_id, run_id, flow = chat.start(question, session_id, mode)

    def work(emit: Emit) -> None:
        outcome = chat.execute(
            question, session_id, run_id, flow, on_event=lambda event: emit("progress", event)
        )
        finish(emit, outcome)

    channel = found.workers.start(work)
    first = ("metadata", {"sessionId": session_id, "runId": run_id, "flow": flow})
    return Response(channel.relay(first), mimetype="text/event-stream", headers=SSE_HEADERS)


@bp.post("/ai_ops")
def ai_ops() -> ResponseReturnValue:
    """Investigate every firing alert and stream the report."""
    body = json_body()
    session_id = valid_id(
        pick(body, "sessionId", "SessionId", "Id", "id"), "sessionId", required=False
    )
    request_text = valid_text(
        pick(body, "userRequest", "UserRequest"),
        "userRequest",
        MAX_AIOPS_REQUEST_CHARS,
        required=False,
    )
    found = services()
    if found.aiops is None:
        raise ApiError(503, "the AIOps flow is not available")
    aiops = found.aiops
    session_id, run_id = aiops.start(session_id, request_text)

    def work(emit: Emit) -> None:
        outcome = aiops.execute(
            session_id, run_id, request_text, on_event=lambda event: emit("progress", event)
        )
        finish(emit, outcome)

    channel = found.workers.start(work)
    first = ("metadata", {"sessionId": session_id, "runId": run_id, "flow": "aiops"})
    return Response(channel.relay(first), mimetype="text/event-stream", headers=SSE_HEADERS)
