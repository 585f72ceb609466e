"""Server-sent events: a run's events relayed from its event log to one response.

The run never depends on its client: it executes on an executor (a pool in this process, or a
Celery worker anywhere) and is persisted whether or not anyone reads the stream. A client that
disconnects only stops its relay; it may attach again (``Last-Event-ID``). Every frame carries
the event's id. When the log ends without ``done`` (its worker died and the reaper failed the
run in a process without the log, or the log expired), the end is told from the database.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..execution.events import DONE, Event, EventLog

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
CHUNK_CHARS = 400

Emit = Callable[[str, Any], None]
#: The events that end a finished run, from its database row (None while it is in flight).
Settled = Callable[[], "list[tuple[str, Any]] | None"]


def sse_event(kind: str, data: Any, event_id: str | None = None) -> str:
    """One SSE frame: event ``message``, data ``{"type": kind, "data": data}``."""
    payload = json.dumps({"type": kind, "data": data}, ensure_ascii=False, default=str)
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: message\ndata: {payload}\n\n"


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, split at line ends where possible."""
    pieces: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:size])
            line = line[size:]
        if len(current) + len(line) > size and current:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return pieces


def relay(
    events: EventLog,
    run_id: str,
    settled: Settled,
    *,
    after: str | None = None,
    keepalive: float | None = None,
) -> Iterator[str]:
    """SSE frames of ``run_id``'s events after id ``after``, until ``done``.

    Keep-alive comments fill long gaps; on each gap the database is asked whether the run
    ended without its ``done`` reaching the log, and if so its end is sent from the row.
    """
    position = after
    while True:
        try:
            batch = events.read(run_id, position, keepalive or KEEPALIVE_SECONDS)
        except Exception as exc:  # the log is gone (Redis down): finish from the database
            log.warning("event log of run %s unreadable: %s", run_id, exc)
            batch = []
            time.sleep(min(1.0, keepalive or KEEPALIVE_SECONDS))  # no tight loop meanwhile
        for item in batch:
            position = item.id
            yield sse_event(item.kind, item.data, item.id)
            if item.kind == DONE:
                return
        if batch:
            continue
        ending = settled()
        if ending is not None:
            for kind, data in ending:
                yield sse_event(kind, data)
            return
        yield ": keep-alive\n\n"


def publish(events: EventLog, run_id: str) -> Emit:
    """An ``emit(kind, data)`` into ``run_id``'s log that never fails the run."""

    def emit(kind: str, data: Any) -> None:
        try:
            events.append(run_id, kind, data)
        except Exception as exc:  # progress is best effort; the database is the record
            log.warning("event %s of run %s not published: %s", kind, run_id, exc)

    return emit


def ending_events(outcome: Any) -> list[tuple[str, Any]]:
    """``content`` chunks (or ``error``) then ``done`` for a finished run's outcome."""
    items: list[tuple[str, Any]] = []
    if outcome.answer:
        items.extend(("content", {"text": piece}) for piece in chunks(outcome.answer))
    if not outcome.success:
        message = outcome.error_message or "the run failed"
        items.append(("error", {"message": message, "runId": outcome.run_id}))
    items.append(
        (
            DONE,
            {
                "sessionId": outcome.session_id,
                "runId": outcome.run_id,
                "status": outcome.status,
                "success": outcome.success,
                "degraded": outcome.degraded,
            },
        )
    )
    return items


__all__ = [
    "CHUNK_CHARS",
    "KEEPALIVE_SECONDS",
    "Emit",
    "Event",
    "chunks",
    "ending_events",
    "publish",
    "relay",
    "sse_event",
]
