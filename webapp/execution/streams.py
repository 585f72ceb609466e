"""Server-sent events: a run's events relayed from its event log to one response.

A client that disconnects only stops its relay (it may attach again with ``Last-Event-ID``).
When the log ends without ``done`` (it expired, or the reaper failed the run elsewhere), the end
is told from the database; a check that keeps failing for :data:`SETTLED_RETRY_SECONDS` ends
the relay with an ``error`` and no status.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from .events import DONE, EventLog

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
CHUNK_CHARS = 400
#: How long a relay keeps asking a database that fails before it ends the stream with ``error``.
SETTLED_RETRY_SECONDS = 20.0

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
    pieces = [""]
    for line in text.splitlines(keepends=True):
        for start in range(0, len(line), size):
            part = line[start : start + size]
            if len(pieces[-1]) + len(part) > size:
                pieces.append("")
            pieces[-1] += part
    return [piece for piece in pieces if piece]


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
    settled = _patient(settled, run_id, min(1.0, keepalive or KEEPALIVE_SECONDS))
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


def _patient(settled: Settled, run_id: str, pause: float) -> Settled:
    """``settled`` riding out a failing database: a failed check counts as "still in flight"
    (after ``pause`` s) for :data:`SETTLED_RETRY_SECONDS`, then the ending is one ``error``
    naming the cause (and no status: the record's is unknown)."""
    failing_since: float | None = None

    def check() -> list[tuple[str, Any]] | None:
        nonlocal failing_since
        try:
            ending = settled()
        except Exception as exc:
            now = time.monotonic()
            failing_since = failing_since or now
            if now - failing_since < SETTLED_RETRY_SECONDS:
                time.sleep(pause)
                return None
            log.warning("relay of run %s ends: its record is unreadable: %s", run_id, exc)
            cause = f"the run's status could not be read: {type(exc).__name__}: {exc}"
            return [("error", {"message": cause[:500], "runId": run_id})]
        failing_since = None
        return ending

    return check


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
    done = {
        "sessionId": outcome.session_id,
        "runId": outcome.run_id,
        "status": outcome.status,
        "success": outcome.success,
        "degraded": outcome.degraded,
    }
    return [*items, (DONE, done)]
