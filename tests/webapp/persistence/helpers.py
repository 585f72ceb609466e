"""Builders of the audit dataclasses with sensible defaults, and readers of a run's rows, for
the persistence tests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from webapp.persistence.audit import InvocationDraft, StepEnd, StepStart
from webapp.persistence.db import connection
from webapp.persistence.models import AgentStep, ToolInvocation
from webapp.persistence.sql_audit import SqlAudit


def start(agent: str = "planner", model_input: Any = None, **changes: Any) -> StepStart:
    """A step start; ``changes`` override any field."""
    base = StepStart(agent_name=agent, model="test-model", model_input=model_input or {"q": 1})
    return replace(base, **changes)


def end(status: str = "SUCCESS", **changes: Any) -> StepEnd:
    """A step end of 10 prompt + 5 completion tokens; ``changes`` override any field."""
    base = StepEnd(
        model_output={"answer": "ok"},
        has_tool_call=False,
        prompt_tokens=10,
        completion_tokens=5,
        attempts=1,
        duration_ms=12,
        status=status,
    )
    return replace(base, **changes)


def draft(step_id: int | None, raw_output: Any = None, **changes: Any) -> InvocationDraft:
    """A successful ``query_metrics`` invocation; ``changes`` override any field."""
    base = InvocationDraft(
        agent_name="executor",
        tool_name="query_metrics",
        arguments={"service": "checkout"},
        raw_output={"rows": [1, 2]} if raw_output is None else raw_output,
        status="SUCCESS",
        error_message=None,
        duration_ms=7,
        step_id=step_id,
    )
    return replace(base, **changes)


def steps_of(audit: SqlAudit, run_id: str) -> list[AgentStep]:
    """The run's step rows in step order."""
    query = AgentStep.select().where(AgentStep.run_id == run_id).order_by(AgentStep.step_index)
    with connection(audit.database):
        return list(query)


def invocations_of(audit: SqlAudit, run_id: str) -> list[ToolInvocation]:
    """The run's invocation rows in creation order (read ``step_id``, never ``.step``)."""
    query = ToolInvocation.select().where(ToolInvocation.run_id == run_id)
    with connection(audit.database):
        return list(query.order_by(ToolInvocation.id))


def counts_of(audit: SqlAudit, run_id: str) -> tuple[int, int]:
    """``(steps, invocations)`` stored for the run."""
    return len(steps_of(audit, run_id)), len(invocations_of(audit, run_id))
