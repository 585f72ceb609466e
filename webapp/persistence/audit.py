"""The audit port: agent steps and tool invocations of the current run.

A step row is written when its model call returns; tool invocations are held in the run's
journal and written in one multi-row INSERT at the end of each node and before the run ends.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from diagnosis_graph.workflow.ports import InvocationRecord

from .context import RunContext, current_run


class AuditWriteError(RuntimeError):
    """A step or invocation row could not be written: the run's record would be incomplete, so
    the run must end FAILED with this cause rather than carry on as if the model had failed."""


def new_invocation_id() -> str:
    return f"inv-{secrets.token_hex(8)}"


@dataclass(frozen=True)
class StepStart:
    """What is known before a model call."""

    agent_name: str
    model: str
    model_input: Any


@dataclass(frozen=True)
class StepEnd:
    """What is known after a model call (successful or not)."""

    model_output: Any
    has_tool_call: bool
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    duration_ms: int
    status: str
    error: str | None = None


@dataclass(frozen=True)
class InvocationDraft:
    """A finished tool call, ready to be recorded."""

    agent_name: str
    tool_name: str
    arguments: Any
    raw_output: Any
    status: str
    error_message: str | None
    duration_ms: int
    step_id: int | None = None
    retrieval_details: Any = None


class OpenCalls:
    """Model calls a step hook was told of and has not written yet: ticket -> (run, start)."""

    def __init__(self) -> None:
        self._tickets = itertools.count(1)
        self._open: dict[int, tuple[RunContext, StepStart]] = {}
        self._lock = threading.Lock()

    def open(self, start: StepStart) -> int:
        """Note a call of the current run (raises outside a run); return its ticket."""
        run = current_run()
        ticket = next(self._tickets)
        with self._lock:
            self._open[ticket] = (run, start)
        return ticket

    def close(self, ticket: int) -> tuple[RunContext, StepStart]:
        """The run and start of the call ``ticket`` (then forgotten)."""
        with self._lock:
            return self._open.pop(ticket)


def invocation_record(invocation_id: str, run_id: str, draft: InvocationDraft) -> InvocationRecord:
    """What the gatekeeper and the evaluation read of a recorded invocation."""
    return InvocationRecord(
        invocation_id=invocation_id,
        run_id=run_id,
        tool_name=draft.tool_name,
        status=draft.status,
        raw_output=draft.raw_output,
        arguments=draft.arguments or {},
    )


class Audit(Protocol):
    """The audit store of runs, used by the step hook, the tool recorder, the workflow's
    ``InvocationStore`` and the run lifecycle, for the run current in :mod:`.context`."""

    def before_model(self, start: StepStart) -> int:
        """Note a model call about to start; return the ticket :meth:`after_model` takes."""
        ...

    def after_model(self, ticket: int, end: StepEnd) -> int:
        """Record the finished step (input and output) and return its id."""
        ...

    def record(self, draft: InvocationDraft) -> str:
        """Record a tool invocation of the current run and return its ``inv-...`` id."""
        ...

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """Every invocation of ``run_id`` in creation order (the workflow's InvocationStore)."""
        ...

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        """Store, per invocation id, the verified evidence the answer drew from it."""
        ...

    def flush(self) -> None:
        """Write what the current run still holds back (its pending invocations)."""
        ...

    def restore(self, run: RunContext) -> None:
        """Reset ``run``'s journal to what its stored rows hold (before resuming it)."""
        ...
