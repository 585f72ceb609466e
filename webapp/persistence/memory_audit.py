"""In-memory audit store: :class:`webapp.persistence.audit.Audit` as dicts.

Used by the offline example, tests and benchmarks; thread-safe; keeps everything until cleared.
"""

from __future__ import annotations

import threading
from collections import defaultdict
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
        self._records: defaultdict[str, list[InvocationRecord]] = defaultdict(list)
        self._calls = OpenCalls()

    def before_model(self, start: StepStart) -> int:
        return self._calls.open(start)

    def after_model(self, ticket: int, end: StepEnd) -> int:
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
        run = current_run()
        invocation_id = new_invocation_id()
        record = invocation_record(invocation_id, run.run_id, draft)
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
            self._records[run.run_id].append(record)
        with run.journal.lock:
            run.journal.invocations.append(record)
        return invocation_id

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        with self._lock:
            for row in self.invocations:
                if row["invocation_id"] in refs:
                    row["evidence_refs"] = refs[row["invocation_id"]]

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        with self._lock:
            return list(self._records.get(run_id, ()))

    def restore(self, run: RunContext) -> None:
        with self._lock:
            steps = [s for s in self.steps if s["run_id"] == run.run_id]
        next_index = max((int(s["step_index"]) for s in steps), default=-1) + 1
        run.journal.restore(0, next_index, list(self.invocations_for_run(run.run_id)), {})
        journal = run.journal
        with journal.lock:
            for step in steps:
                journal.count_step(step["model"], step["prompt_tokens"], step["completion_tokens"])
