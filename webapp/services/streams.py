"""Runs executed on worker threads, their events relayed to a server-sent-events response.

The run never depends on its client: it executes on a bounded worker pool and is persisted
whether or not anyone still reads the stream. A client that disconnects only stops the relay;
a run waiting for a free worker stays PENDING until one picks it up.
"""

from __future__ import annotations

import json
import logging
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
CHUNK_CHARS = 400
_END = object()

Emit = Callable[[str, Any], None]


def sse_event(kind: str, data: Any) -> str:
    """One SSE frame: event ``message``, data ``{"type": kind, "data": data}``."""
    payload = json.dumps({"type": kind, "data": data}, ensure_ascii=False, default=str)
    return f"event: message\ndata: {payload}\n\n"


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


class Channel:
    """Events from one run's worker to whoever relays them (maybe nobody)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()

    def emit(self, kind: str, data: Any) -> None:
        """Queue one event (never blocks the run)."""
        self._queue.put((kind, data))

    def close(self) -> None:
        """No more events."""
        self._queue.put(_END)

    def relay(self, first: tuple[str, Any], keepalive: float | None = None) -> Iterator[str]:
        """SSE frames: ``first``, every event as it arrives, keep-alive comments on long gaps."""
        yield sse_event(*first)
        while True:
            try:
                item = self._queue.get(timeout=keepalive or KEEPALIVE_SECONDS)
            except queue.Empty:
                yield ": keep-alive\n\n"
                continue
            if item is _END:
                return
            yield sse_event(*item)


class RunWorkers:
    """A bounded pool that executes runs off the request thread."""

    def __init__(self, max_workers: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="run")

    def start(self, work: Callable[[Emit], None]) -> Channel:
        """Run ``work(emit)`` on a worker; the channel is closed when it returns or raises."""
        channel = Channel()

        def execute() -> None:
            try:
                work(channel.emit)
            except Exception as exc:  # the run itself records its failure; tell the client
                log.exception("streamed run failed")
                channel.emit("error", {"message": f"{type(exc).__name__}: {exc}"})
            finally:
                channel.close()

        self._pool.submit(execute)
        return channel

    def shutdown(self) -> None:
        """Wait for running runs to finish."""
        self._pool.shutdown(wait=True)
