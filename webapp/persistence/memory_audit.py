"""In-memory audit store: :class:`webapp.persistence.audit.Audit` as dicts.

Used by the offline example, tests and benchmarks; thread-safe; keeps everything until cleared.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis_graph.workflow.ports import InvocationRecord

from .audit import (
    InvocationDraft,
    OpenCalls,
    StepEnd,
    StepStart,
    invocation_record,
    new_invocation_id,
)
from .context import RunContext, current_run


class MemoryAudit:
    """``agent_step`` and ``tool_invocation`` rows as dicts, keyed by run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.steps: list[dict[str, Any]] = []
        self.invocations: list[dict[str, Any]] = []
        self._calls = OpenCalls()

    def before_model(self, start: StepStart) -> int:
        """Note the call for the current run; return its ticket."""
        return self._calls.open(start)

    def after_model(self, ticket: int, end: StepEnd) -> int:
        """Store the finished step of the run and return its id."""
        run, start = self._calls.close(ticket)
        with self._lock:
            step = {
                "id": len(self.steps) + 1,
                "run_id": run.run_id,
                "session_id": run.session_id,
                "step_index": run.journal.take_step_index(),
                **vars(start),
                **vars(end),
            }
            self.steps.append(step)
        with run.journal.lock:
            run.journal.count_step(start.model, end.prompt_tokens, end.completion_tokens)
        return int(step["id"])

    def flush(self) -> None:
        """Nothing is held back in memory."""

    def record(self, draft: InvocationDraft) -> str:
        """Store an invocation of the current run and return its new id."""
        run = current_run()
        invocation_id = new_invocation_id()
        with self._lock:
            self.invocations.append(
                {
                    "id": len(self.invocations) + 1,
                    "invocation_id": invocation_id,
                    "run_id": run.run_id,
                    "session_id": run.session_id,
                    **vars(draft),
                }
            )
        with run.journal.lock:
            run.journal.invocations.append(invocation_record(invocation_id, run.run_id, draft))
        return invocation_id

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        """Store on each invocation the verified evidence cited from it."""
        with self._lock:
            for row in self.invocations:
                if row["invocation_id"] in refs:
                    row["evidence_refs"] = refs[row["invocation_id"]]

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """Invocations of ``run_id`` in creation order."""
        with self._lock:
            rows = [row for row in self.invocations if row["run_id"] == run_id]
        return [
            InvocationRecord(
                invocation_id=row["invocation_id"],
                run_id=row["run_id"],
                tool_name=row["tool_name"],
                status=row["status"],
                raw_output=row["raw_output"],
                arguments=row["arguments"] or {},
            )
            for row in rows
        ]

    def restore(self, run: RunContext) -> None:
        """Reset the run's journal to the steps and invocations stored for it."""
        steps = self.steps_for_run(run.run_id)
        next_index = max((int(s["step_index"]) for s in steps), default=-1) + 1
        usage: dict[str, tuple[int, int]] = {}
        for step in steps:
            prompt, completion = usage.get(step["model"], (0, 0))
            usage[step["model"]] = (
                prompt + step["prompt_tokens"],
                completion + step["completion_tokens"],
            )
        invocations = list(self.invocations_for_run(run.run_id))
        run.journal.restore(len(steps), next_index, invocations, usage)

    def steps_for_run(self, run_id: str) -> list[dict[str, Any]]:
        """Steps of ``run_id`` ordered by step index."""
        with self._lock:
            return [dict(s) for s in self.steps if s["run_id"] == run_id]
