"""Run identity for nested agents, held in contextvars (never globals or thread locals).

``run_scope`` sets the business identity of the run being executed and always resets it, so two
runs in parallel threads, or one after another in the same thread, never see each other's ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class RunIdentity:
    """Business identity of a run: the only context nested agents and tools receive."""

    session_id: str
    run_id: str


_CURRENT: ContextVar[RunIdentity | None] = ContextVar("diagnosis_run", default=None)


@contextmanager
def run_scope(session_id: str, run_id: str) -> Iterator[RunIdentity]:
    """Make ``(session_id, run_id)`` current for the block; reset in ``finally``."""
    identity = RunIdentity(session_id, run_id)
    token = _CURRENT.set(identity)
    try:
        yield identity
    finally:
        _CURRENT.reset(token)


def current_run() -> RunIdentity:
    """The identity of the run being executed; raises when called outside a run."""
    identity = _CURRENT.get()
    if identity is None:
        raise RuntimeError("no diagnosis run is active in this context")
    return identity


def current_run_or_none() -> RunIdentity | None:
    """The identity of the run being executed, or None outside a run."""
    return _CURRENT.get()
