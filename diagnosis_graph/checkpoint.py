"""Checkpoints: after each node the engine calls ``put(thread_id, step, node, state)``.

``state`` is a new dict (append-only keys as new lists) the engine never mutates, but its nested
values are shared with the run and its caller: a checkpointer that keeps them copies them (the
in-memory one deep-copies; a database one serialises)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Checkpoint:
    """The state of thread ``thread_id`` after ``node`` completed as step ``step``."""

    thread_id: str
    step: int
    node: str
    state: dict[str, Any]


@runtime_checkable
class Checkpointer(Protocol):
    """Stores each thread's checkpoints; the engine reads only the latest."""

    def put(self, thread_id: str, step: int, node: str, state: Mapping[str, Any]) -> None:
        """Record the state after ``node`` completed as step ``step`` of ``thread_id``."""

    def latest(self, thread_id: str) -> Checkpoint | None:
        """Return the thread's most recent checkpoint, or None if it has none."""


class InMemoryCheckpointer:
    """The latest checkpoint of each thread, in memory; safe to share between threads.

    ``put`` and ``latest`` deep-copy the state, so neither a run nor a reader can change what
    is stored. Nothing is evicted: :meth:`delete` forgets a finished thread.
    """

    def __init__(self) -> None:
        self._latest: dict[str, Checkpoint] = {}
        self._lock = threading.Lock()

    def put(self, thread_id: str, step: int, node: str, state: Mapping[str, Any]) -> None:
        """Replace the thread's checkpoint with a copy of this one."""
        saved = Checkpoint(thread_id, step, node, copy.deepcopy(dict(state)))
        with self._lock:
            self._latest[thread_id] = saved

    def latest(self, thread_id: str) -> Checkpoint | None:
        """Return a copy of the thread's checkpoint, or None."""
        with self._lock:
            saved = self._latest.get(thread_id)
        return None if saved is None else replace(saved, state=copy.deepcopy(saved.state))

    def delete(self, thread_id: str) -> None:
        """Forget the thread's checkpoint, if it has one."""
        with self._lock:
            self._latest.pop(thread_id, None)
