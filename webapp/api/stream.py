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
from .context import services
from .contract import operation
from .errors import ApiError
from .models import AiOpsRequest, ChatRequest

bp = Blueprint("stream", __name__, url_prefix="/api")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


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
@operation(body=ChatRequest, stream=True)
def chat_stream(body: ChatRequest) -> ResponseReturnValue:
    """Ask a question and stream the run as server-sent events.

    Events named `message`, data `{"type", "data"}`: `metadata` first (sessionId, runId,
    flow), one `progress` per node execution (node, outcome, reason_code, attempt), `content`
    chunks of the answer, `error`, `done` last. Keep-alive comments on long gaps. A client that
    disconnects does not stop the run.
    """
    found = services()
    chat = found.chat
    question = body.question
    session_id, run_id, flow = chat.start(question, body.session_id, body.mode)

    def work(emit: Emit) -> None:
        outcome = chat.execute(
            question, session_id, run_id, flow, on_event=lambda event: emit("progress", event)
        )
        finish(emit, outcome)

    channel = found.workers.start(work)
    first = ("metadata", {"sessionId": session_id, "runId": run_id, "flow": flow})
    return Response(channel.relay(first), mimetype="text/event-stream", headers=SSE_HEADERS)


@bp.post("/ai_ops")
@operation(body=AiOpsRequest, stream=True)
def ai_ops(body: AiOpsRequest) -> ResponseReturnValue:
    """Investigate every firing alert and stream the report (SSE).

    Same event format as /api/chat_stream; the first event carries sessionId and runId, the
    flow is `aiops`.
    """
    found = services()
    if found.aiops is None:
        raise ApiError(503, "the AIOps flow is not available")
    aiops = found.aiops
    request_text = body.user_request
    session_id, run_id = aiops.start(body.session_id, request_text)

    def work(emit: Emit) -> None:
        outcome = aiops.execute(
            session_id, run_id, request_text, on_event=lambda event: emit("progress", event)
        )
        finish(emit, outcome)

    channel = found.workers.start(work)
    first = ("metadata", {"sessionId": session_id, "runId": run_id, "flow": "aiops"})
    return Response(channel.relay(first), mimetype="text/event-stream", headers=SSE_HEADERS)
