"""The run being executed: one :class:`RunContext` (identity and journal) in a contextvar.

``run_scope`` always resets, so runs in parallel threads, or one after another in a thread,
never see each other's context; entered again for the run already current, it keeps it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from diagnosis_graph.workflow.ports import InvocationRecord


@dataclass
class RunJournal:
    """What one run wrote, kept in its memory so the run never reads its own rows back:
    its step count and next index, its invocations (in creation order) and the rows of them
    not yet written (``pending``), the first write that failed, the tokens per model, whether
    it was restored from its rows (``resumed``), and :meth:`counts` at its last checkpoint."""

    next_step_index: int = 0
    steps: int = 0
    invocations: list[InvocationRecord] = field(default_factory=list)
    pending: list[dict[Any, Any]] = field(default_factory=list)
    failure: str | None = None
    usage: dict[str, tuple[int, int]] = field(default_factory=dict)
    resumed: bool = False
    checkpointed: tuple[int, int] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def restore(
        self,
        steps: int,
        next_step_index: int,
        invocations: list[InvocationRecord],
        usage: dict[str, tuple[int, int]],
    ) -> None:
        """Start over from what the run's rows hold (a run resumed after its checkpoint)."""
        with self.lock:
            self.steps, self.next_step_index = steps, next_step_index
            self.invocations = list(invocations)
            self.usage = dict(usage)
            self.pending = []
            self.failure = None
            self.resumed = True
            self.checkpointed = None

    def take_step_index(self) -> int:
        with self.lock:
            index = self.next_step_index
            self.next_step_index += 1
            return index

    def fail(self, cause: str) -> None:
        """Remember ``cause`` unless an earlier write already failed."""
        with self.lock:
            if self.failure is None:
                self.failure = cause

    def take_failure(self) -> str | None:
        with self.lock:
            failure, self.failure = self.failure, None
            return failure

    def count_step(self, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Count one recorded step and its tokens (the caller holds ``lock``)."""
        self.steps += 1
        prompt, completion = self.usage.get(model, (0, 0))
        self.usage[model] = (prompt + prompt_tokens, completion + completion_tokens)

    def token_usage(self) -> dict[str, tuple[int, int]]:
        """``{model: (prompt tokens, completion tokens)}`` of the run's steps so far."""
        with self.lock:
            return dict(self.usage)

    def counts(self) -> tuple[int, int]:
        """``(step_count, tool_count)`` of what the run recorded."""
        with self.lock:
            return self.steps, len(self.invocations)


@dataclass(frozen=True)
class RunContext:
    """The run being executed: its identity and its journal."""

    session_id: str
    run_id: str
    journal: RunJournal = field(default_factory=RunJournal, compare=False)


_CURRENT: ContextVar[RunContext | None] = ContextVar("diagnosis_run", default=None)


@contextmanager
def run_scope(session_id: str, run_id: str) -> Iterator[RunContext]:
    """Make the run ``(session_id, run_id)`` current for the block; reset in ``finally``."""
    current = _CURRENT.get()
    if current is not None and (current.session_id, current.run_id) == (session_id, run_id):
        yield current
        return
    context = RunContext(session_id, run_id)
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def current_run() -> RunContext:
    """The run being executed; raises when called outside a run."""
    context = _CURRENT.get()
    if context is None:
        raise RuntimeError("no diagnosis run is active in this context")
    return context


def current_run_or_none() -> RunContext | None:
    return _CURRENT.get()
