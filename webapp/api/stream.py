"""Server-sent events: the chat and AIOps runs streamed as they happen, relayed from each run's
event log, so ``GET /api/diagnosis/<sessionId>/runs/<runId>/events`` can attach to any run,
running or finished, executing anywhere, and resume after ``Last-Event-ID``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response
from flask.typing import ResponseReturnValue

from ..container import Services, services
from ..execution.jobs import AIOPS, CHAT, RunJob
from ..execution.streams import ending_events, publish, relay, sse_event
from ..services.chat import ChatOutcome
from ..services.reads import ACTIVE
from . import release_connection
from .contract import operation
from .errors import ApiError
from .models import AiOpsRequest, ChatRequest, EventsHeaders

bp = Blueprint("stream", __name__, url_prefix="/api")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
#: How long a relay of a finished run waits for more of its events: they are all logged.
FINISHED_RUN_WAIT = 0.05


def settled_from_db(found: Services, run_id: str) -> Any:
    """A relay's check: the ending events of ``run_id`` once its row is finished, else None."""

    def settled() -> list[tuple[str, Any]] | None:
        row = found.chat.runs.status(run_id)
        if row is None or row.status in ACTIVE:
            return None
        return ending_events(ChatOutcome.of_row(row))

    return settled


def submit(found: Services, job: RunJob) -> Iterator[str]:
    """Publish ``metadata``, hand the job to the executor; the frames of its relayed events."""
    release_connection()  # enqueueing and relaying need none (their reads open their own)
    publish(found.events, job.run_id)("metadata", _metadata(job))
    found.workers.submit(job)
    return relay(found.events, job.run_id, settled_from_db(found, job.run_id))


def _metadata(run: Any) -> dict[str, str]:
    """The ``metadata`` event of a job or a run's row: its ids and flow."""
    return {"sessionId": run.session_id, "runId": run.run_id, "flow": run.flow}


def submit_and_relay(found: Services, job: RunJob) -> Response:
    """:func:`submit`, answered as an event stream."""
    return Response(submit(found, job), mimetype="text/event-stream", headers=SSE_HEADERS)


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
    session_id, run_id, flow = found.chat.start(body.question, body.session_id, body.mode)
    return submit_and_relay(found, RunJob(CHAT, session_id, run_id, body.question, flow))


@bp.post("/ai_ops")
@operation(body=AiOpsRequest, stream=True)
def ai_ops(body: AiOpsRequest) -> ResponseReturnValue:
    """Investigate every firing alert and stream the report (SSE).

    Same event format as /api/chat_stream; the first event carries sessionId and runId, the
    flow is `aiops`.
    """
    found = services()
    session_id, run_id = found.aiops.start(body.session_id, body.user_request)
    return submit_and_relay(found, RunJob(AIOPS, session_id, run_id, body.user_request, "aiops"))


@bp.get("/diagnosis/<session_id>/runs/<run_id>/events")
@operation(headers=EventsHeaders, stream=True, errors=(404,))
def run_events(session_id: str, run_id: str, headers: EventsHeaders) -> ResponseReturnValue:
    """Attach to a run's events as server-sent events, running or finished.

    The same frames as /api/chat_stream, each with an `id`; a `Last-Event-ID` header resumes
    after that event. A malformed id is 400. A finished run's stream ends at once: after its
    logged events, its ending from its record.
    """
    found = services()
    row = found.chat.runs.status(run_id)
    if row is None or row.session_id != session_id:
        raise ApiError(404, f"run {run_id} not found in session {session_id}")
    settled, after = settled_from_db(found, run_id), headers.last_event_id
    wait = None if row.status in ACTIVE else FINISHED_RUN_WAIT  # no 15 s wait past its end
    frames = relay(found.events, run_id, settled, after=after, keepalive=wait)
    if not found.events.exists(run_id):
        # The log expired, or the run executes in a process whose log this one cannot read:
        # ``metadata``, then the run's ending from its row once it is finished.
        frames = itertools.chain([sse_event("metadata", _metadata(row))], frames)
    return Response(frames, mimetype="text/event-stream", headers=SSE_HEADERS)
