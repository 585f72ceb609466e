"""The run lifecycle on every backend: claim, work, flush, check, finish - or fail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from peewee import Database

from diagnosis_graph.workflow.ports import InvocationRecord
from webapp.persistence.audit import AuditWriteError, InvocationDraft, StepEnd, StepStart
from webapp.persistence.context import RunContext
from webapp.persistence.runs import CHAT, FAILED, SUCCESS, Finish, RunStore
from webapp.persistence.sql_audit import SqlAudit
from webapp.services.lifecycle import RunLifecycle


class RefusingFlush:
    """An audit store whose held-back rows cannot be written (the database refused them)."""

    def __init__(self, inner: SqlAudit) -> None:
        self.inner = inner

    def before_model(self, start: StepStart) -> int:
        return self.inner.before_model(start)

    def after_model(self, ticket: int, end: StepEnd) -> int:
        return self.inner.after_model(ticket, end)

    def record(self, draft: InvocationDraft) -> str:
        return self.inner.record(draft)

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        return self.inner.invocations_for_run(run_id)

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        self.inner.attach_evidence(refs)

    def restore(self, run: RunContext) -> None:
        self.inner.restore(run)

    def flush(self) -> None:
        raise AuditWriteError("audit write failed (tool_invocation insert): packet too large")


def started(database: Database, run_id: str) -> RunStore:
    runs = RunStore(database, 3600)
    runs.open_run(run_id, "sess-a", CHAT, "complex", "why?", new_session=True)
    return runs


def test_a_run_is_saved_with_the_counts_its_journal_kept(database: Database) -> None:
    runs = started(database, "run-1")
    seen: list[RunContext] = []

    def work(run: RunContext) -> Finish:
        seen.append(run)
        with run.journal.lock:
            run.journal.steps = 3
        return Finish(SUCCESS, "the answer")

    finish = RunLifecycle(runs, SqlAudit(database)).execute("sess-a", "run-1", work)
    row = runs.status("run-1")
    assert row is not None and (row.status, row.answer, row.step_count) == (
        SUCCESS,
        "the answer",
        3,
    )
    assert finish.step_count == 3 and seen[0].run_id == "run-1"
    assert database.is_closed()  # the run's connection went back when it ended

    again = RunLifecycle(runs, SqlAudit(database)).execute("sess-a", "run-1", work)
    assert again.replayed and len(seen) == 1  # a redelivered run is not executed twice


def test_a_failed_flush_ends_the_run_failed_with_its_cause(database: Database) -> None:
    runs = started(database, "run-2")
    lifecycle = RunLifecycle(runs, RefusingFlush(SqlAudit(database)))
    finish = lifecycle.execute("sess-a", "run-2", lambda run: Finish(SUCCESS, "looks fine"))
    row = runs.status("run-2")
    assert row is not None and row.status == FAILED and finish.status == FAILED
    assert "packet too large" in (row.error_message or "")
