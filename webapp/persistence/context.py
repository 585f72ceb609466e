"""The run being executed: one :class:`RunContext`, held in a contextvar for the run's duration.

A run's identity (session id, run id) and its :class:`RunJournal` - what the run has written so
far, kept in the run's memory - travel together in one object. The service layer opens it once
per run (:class:`webapp.services.lifecycle.RunLifecycle`); the audit store, the tools and the
agents read it with :func:`current_run`. The engine's config metadata is the workflow port's
own copy of the identity; the agent invoker reads it only when driven outside a run (the engine
on its own, in tests and benchmarks).

``run_scope`` always resets, so two runs in parallel threads, or one after another in the same
thread, never see each other's context. Entered again for the run already current (an adapter
used on its own and inside a run), it keeps the current context and its journal.
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
    """What one run wrote, kept in its memory so the run never reads its own rows back.

    * ``next_step_index`` numbers the run's steps (no SELECT for the next index);
    * ``invocations`` are the run's tool invocations as the gatekeeper and the evaluation read
      them (the workflow's ``InvocationStore``), in creation order;
    * ``conversations`` holds, per agent, the step index and full message list of its last
      step: a step stores only the messages that follow that prefix (see
      :mod:`webapp.persistence.step_inputs`);
    * ``step_ids`` maps the ids the step hook handed out to the rows' ids;
    * ``pending`` are invocation rows not yet written (flushed at the end of each agent's
      execution and before the run finishes);
    * ``failure`` is the first write of the run that failed: the run must end FAILED with it;
    * ``usage`` sums the prompt and completion tokens of the run's steps, per model;
    * ``resumed`` is set when the journal was restored from the run's rows
      (:meth:`restore`): the run continues after its checkpoint instead of starting;
    * ``checkpointed`` is :meth:`counts` when the run's graph state was last checkpointed.
    """

    next_step_index: int = 0
    steps: int = 0
    invocations: list[InvocationRecord] = field(default_factory=list)
    conversations: dict[str, tuple[int, list[Any]]] = field(default_factory=dict)
    step_ids: dict[int, int] = field(default_factory=dict)
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
            self.conversations.clear()
            self.step_ids.clear()
            self.pending = []
            self.failure = None
            self.resumed = True
            self.checkpointed = None

    def take_step_index(self) -> int:
        """The next step index of the run (0, 1, 2, ...)."""
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
        """The first failed write (then forgotten), or None."""
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
    """The run being executed, or None outside a run."""
    return _CURRENT.get()
