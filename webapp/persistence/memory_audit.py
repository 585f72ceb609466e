"""In-memory audit store: the step hook, invocation recorder and invocation store in one.

Used by the offline example, tests and benchmarks; thread-safe; keeps everything until cleared.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from diagnosis_graph.workflow.ports import InvocationRecord

from .audit import InvocationDraft, StepEnd, StepStart, new_invocation_id
from .context import current_run


class MemoryAudit:
    """``agent_step`` and ``tool_invocation`` rows as dicts, keyed by run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.steps: list[dict[str, Any]] = []
        self.invocations: list[dict[str, Any]] = []

    def before_model(self, start: StepStart) -> int:
        """Insert a step for the current run and return its id."""
        identity = current_run()
        with self._lock:
            index = sum(1 for s in self.steps if s["run_id"] == identity.run_id)
            step = {
                "id": len(self.steps) + 1,
                "run_id": identity.run_id,
                "session_id": identity.session_id,
                "step_index": index,
                **vars(start),
                "status": "RUNNING",
            }
            self.steps.append(step)
            return int(step["id"])

    def after_model(self, step_id: int, end: StepEnd) -> None:
        """Complete step ``step_id``."""
        with self._lock:
            self.steps[step_id - 1].update(vars(end))

    def record(self, draft: InvocationDraft) -> str:
        """Store an invocation of the current run and return its new id."""
        identity = current_run()
        invocation_id = new_invocation_id()
        with self._lock:
            self.invocations.append(
                {
                    "id": len(self.invocations) + 1,
                    "invocation_id": invocation_id,
                    "run_id": identity.run_id,
                    "session_id": identity.session_id,
                    **vars(draft),
                }
            )
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

    def steps_for_run(self, run_id: str) -> list[dict[str, Any]]:
        """Steps of ``run_id`` ordered by step index."""
        with self._lock:
            return [dict(s) for s in self.steps if s["run_id"] == run_id]
