"""Audit ports: the agent-step hook and the tool-invocation recorder (seed 003 sections 5-6).

Both are written as the run happens: a step row before every model call, completed after it;
an invocation row as each tool call finishes, linked to the model step that asked for it.
Identity (session_id, run_id) comes from :mod:`webapp.persistence.context`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from diagnosis_graph.workflow.ports import InvocationRecord


class AuditWriteError(RuntimeError):
    """A step or invocation row could not be written: the run's record would be incomplete, so
    the run must end FAILED with this cause rather than carry on as if the model had failed."""


def new_invocation_id() -> str:
    """``inv-`` plus 16 random hex characters."""
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


class StepHook(Protocol):
    """Writes ``agent_step`` rows around every model call."""

    def before_model(self, start: StepStart) -> int:
        """Insert the step (input only) and return its id."""
        ...

    def after_model(self, step_id: int, end: StepEnd) -> None:
        """Complete the step with the output, timing, tokens and status."""
        ...


class InvocationRecorder(Protocol):
    """Writes ``tool_invocation`` rows; assigns ``inv-...`` ids."""

    def record(self, draft: InvocationDraft) -> str:
        """Persist the invocation for the current run and return its invocation id."""
        ...

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """Every invocation of ``run_id`` in creation order (the workflow's InvocationStore)."""
        ...

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        """Store, per invocation id, the verified evidence the answer drew from it."""
        ...
