"""Chat: ask a question (complex or simple flow), read and clear a session."""

from __future__ import annotations

from flask import Blueprint
from flask.typing import ResponseReturnValue

from ..services.routing import MODES
from . import serializers
from .context import services
from .errors import ApiError, ok
from .requests import json_body, pick, valid_choice, valid_id, valid_text

bp = Blueprint("chat", __name__, url_prefix="/api")


def chat_request() -> tuple[str, str | None, str]:
    """``(question, session_id, mode)`` from the body, validated (aliases accepted)."""
    body = json_body()
    limit = services().settings.max_question_chars
    question = valid_text(pick(body, "Question", "question"), "Question", limit)
    session_id = valid_id(pick(body, "Id", "id", "sessionId"), "Id", required=False)
    mode = valid_choice(pick(body, "mode", "Mode"), "mode", MODES, "auto")
    assert question is not None
    return question, session_id, mode


@bp.post("/chat")
def chat() -> ResponseReturnValue:
    """Run one chat turn and answer with its outcome (a FAILED run is still HTTP 200).

    The run executes on the configured executor like a streamed one (never in this request
    with ``RUN_EXECUTOR=celery``); the request waits for its ``done``, then answers from the
    run's row.
    """
    from ..execution.jobs import CHAT, RunJob
    from .stream import submit

    question, session_id, mode = chat_request()
    found = services()
    session_id, run_id, flow = found.chat.start(question, session_id, mode)
    for _frame in submit(found, RunJob(CHAT, session_id, run_id, question, flow)):
        pass  # waits for the run's done (the request's connection was given back)
    row = found.chat.runs.status(run_id)
    assert row is not None
    return ok(
        {
            "success": row.status == "SUCCESS",
            "answer": row.answer,
            "errorMessage": row.error_message,
            "sessionId": session_id,
            "runId": run_id,
            "flow": flow,
            "status": row.status,
            "degraded": bool(row.degraded),
        }
    )


@bp.get("/chat/session/<session_id>")
def session_info(session_id: str) -> ResponseReturnValue:
    """Session metadata, with its run count and whether its history is readable."""
    valid_id(session_id, "sessionId")
    records = services().records
    row = records.session(session_id)
    if row is None:
        raise ApiError(404, f"session {session_id} not found")
    history = services().history.load(session_id)
    return ok(
        {
            **serializers.session(row),
            "runCount": records.run_count(session_id),
            "historyMessages": len(history.messages),
            "historyAvailable": history.available,
        }
    )


@bp.post("/chat/clear")
def clear() -> ResponseReturnValue:
    """Forget a session's history (its runs stay: they are the audit record)."""
    body = json_body()
    session_id = valid_id(pick(body, "Id", "id", "sessionId"), "Id")
    assert session_id is not None
    if services().records.session(session_id) is None:
        raise ApiError(404, f"session {session_id} not found")
    removed = services().history.clear(session_id)
    return ok({"sessionId": session_id, "cleared": removed})
