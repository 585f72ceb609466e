"""Each run's events, in order, readable by anyone from any point (SSE ``Last-Event-ID``).

:class:`RedisEventLog` (``REDIS_URL`` set): one capped, expiring Redis Stream per run, read
with blocking ``XREAD`` by any web worker. :class:`MemoryEventLog`: the same in process, for the
most recently active runs. An event is ``(id, kind, data)``; ``done`` is always a run's last event.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

import redis

DONE = "done"
#: A stream keeps at most about this many events (a run emits a few dozen to a few hundred).
MAX_EVENTS = 5000
#: A run's stream expires this long after its last event (attach to a finished run within it).
TTL_SECONDS = 3600
#: The in-process log keeps the events of at most this many runs (the most recently active).
MAX_RUNS = 2000


@dataclass(frozen=True)
class Event:
    """One event of a run: its id in the run's log, its kind and its data."""

    id: str
    kind: str
    data: Any


class EventLog(Protocol):
    """Append-only per-run event logs."""

    def append(self, run_id: str, kind: str, data: Any) -> str:
        """Add one event to ``run_id``'s log; return its id."""
        ...

    def read(self, run_id: str, after: str | None, timeout: float) -> list[Event]:
        """Events after id ``after`` (all when None), waiting up to ``timeout`` s for one."""
        ...

    def exists(self, run_id: str) -> bool:
        """True while ``run_id`` has a log."""
        ...


class MemoryEventLog:
    """Event logs in this process (no Redis): only runs executed here can be relayed."""

    def __init__(self) -> None:
        self._logs: OrderedDict[str, list[Event]] = OrderedDict()
        self._changed = threading.Condition()

    def append(self, run_id: str, kind: str, data: Any) -> str:
        """Add one event; ids are ``1``, ``2``, ... per run."""
        with self._changed:
            log = self._logs.setdefault(run_id, [])
            self._logs.move_to_end(run_id)
            if len(self._logs) > MAX_RUNS:
                self._logs.popitem(last=False)  # the run longest without an event
            event = Event(str(len(log) + 1), kind, data)
            log.append(event)
            self._changed.notify_all()
            return event.id

    def read(self, run_id: str, after: str | None, timeout: float) -> list[Event]:
        start = _position(after)

        with self._changed:
            self._changed.wait_for(lambda: len(self._logs.get(run_id, ())) > start, timeout)
            return self._logs.get(run_id, [])[start:]

    def exists(self, run_id: str) -> bool:
        with self._changed:
            return run_id in self._logs


def _position(after: str | None) -> int:
    """The number of events ``after`` has seen; ``N-M`` (a Redis Stream's form) reads as ``N``,
    in the order a Redis log compares them (``4`` is ``4-0``)."""
    try:
        return max(0, int(after.split("-", 1)[0])) if after else 0
    except ValueError:
        return 0


class RedisEventLog:
    """One capped, expiring Redis Stream per run: ``<prefix><run_id>``."""

    def __init__(self, url: str, *, key_prefix: str = "diagnosis:events:") -> None:
        # Reads block up to the keep-alive interval; the socket timeout must outlast them.
        # A down Redis must cost a run little per event: connecting gives up after 1 s.
        self.client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=60)
        self.prefix = key_prefix

    def append(self, run_id: str, kind: str, data: Any) -> str:
        """``XADD`` (capped) and refresh the stream's TTL, in one round trip."""
        key = self.prefix + run_id
        body = json.dumps({"kind": kind, "data": data}, ensure_ascii=False, default=str)
        pipe = self.client.pipeline(transaction=False)
        pipe.xadd(key, {"e": body}, maxlen=MAX_EVENTS, approximate=True)
        pipe.expire(key, TTL_SECONDS)
        event_id, _ = pipe.execute()
        return _text(event_id)

    def read(self, run_id: str, after: str | None, timeout: float) -> list[Event]:
        """``XREAD BLOCK`` after ``after`` (from the start when None)."""
        key = self.prefix + run_id
        reply: Any = self.client.xread({key: after or "0-0"}, block=max(1, int(timeout * 1000)))
        events: list[Event] = []
        for _stream, entries in reply or ():
            for event_id, fields in entries:
                body = json.loads(_text(fields.get(b"e") or fields.get("e") or "{}"))
                events.append(Event(_text(event_id), body.get("kind", ""), body.get("data")))
        return events

    def exists(self, run_id: str) -> bool:
        """True while the stream exists (it expires :data:`TTL_SECONDS` after its last event)."""
        return bool(self.client.exists(self.prefix + run_id))

    def close(self) -> None:
        self.client.close()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
