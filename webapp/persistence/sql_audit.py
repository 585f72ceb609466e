"""Peewee audit store: ``agent_step`` and ``tool_invocation`` rows, written as the run goes."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import fields
from typing import Any, cast

from peewee import (
    Case,
    CharField,
    Database,
    DatabaseError,
    IntegrityError,
    InterfaceError,
    TextField,
    fn,
)

from diagnosis_graph.workflow.ports import InvocationRecord

from .audit import (
    AuditWriteError,
    InvocationDraft,
    OpenCalls,
    StepEnd,
    StepStart,
    invocation_record,
    new_invocation_id,
)
from .context import RunContext, RunJournal, current_run, current_run_or_none
from .db import connection, discard_connection, is_postgres
from .models import AgentStep, BaseModel, ToolInvocation, utcnow

log = logging.getLogger(__name__)

#: Inserting a step retries this many times when its index was taken by a concurrent writer of
#: the same run (runs are sequential within themselves, so one attempt is the normal case).
STEP_INDEX_ATTEMPTS = 5
#: MySQL/MariaDB ``TEXT`` holds 65,535 bytes; longer error texts are cut, not allowed to fail.
TEXT_MAX_BYTES = 65_535


def _row(model: type[BaseModel], run: RunContext, values: Mapping[str, Any]) -> dict[Any, Any]:
    """``values`` as a row of ``model`` written now for ``run``: texts cut to what their columns
    hold (strict SQL modes reject longer ones), a MySQL ``TEXT`` on a character boundary."""
    row = {}
    values = {"run_id": run.run_id, "session_id": run.session_id, "created_at": utcnow(), **values}
    for name, value in values.items():
        field = model._meta.combined[name]
        if isinstance(value, str) and isinstance(field, CharField) and field.max_length:
            value = value[: field.max_length]
        elif (
            isinstance(value, str) and type(field) is TextField and len(value) * 4 > TEXT_MAX_BYTES
        ):
            value = value.encode("utf-8")[:TEXT_MAX_BYTES].decode("utf-8", errors="ignore")
        row[field] = value
    return row


class SqlAudit:
    """The :class:`~.audit.Audit` store on the bound peewee models: each write commits alone, on
    the thread's connection if it holds one; step indexes and invocations are kept in the run's
    journal, the invocations written in one multi-row INSERT per :meth:`flush`."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._calls = OpenCalls()

    @contextmanager
    def _writing(self, what: str, journal: RunJournal | None) -> Iterator[None]:
        """A write of a run: on a database error, discard the connection (it may be broken),
        remember the cause in the run's journal and raise :class:`AuditWriteError`."""
        try:
            with connection(self.database):
                yield
        except (DatabaseError, InterfaceError) as exc:
            discard_connection(self.database)
            cause = f"audit write failed ({what}): {type(exc).__name__}: {exc}"[:2000]
            if journal is not None:
                journal.fail(cause)
            log.error("%s", cause)
            raise AuditWriteError(cause) from exc

    def before_model(self, start: StepStart) -> int:
        """Nothing is written yet: the step is inserted when the call returns."""
        return self._calls.open(start)

    def after_model(self, ticket: int, end: StepEnd) -> int:
        run, start = self._calls.close(ticket)
        journal = run.journal
        index = journal.take_step_index()
        tokens = end.prompt_tokens + end.completion_tokens
        values = {"step_index": index, **vars(start), **vars(end), "token_count": tokens}
        row = _row(AgentStep, run, values)
        last_index = AgentStep.select(fn.MAX(AgentStep.step_index)).where(
            AgentStep.run_id == run.run_id
        )
        with self._writing("agent_step insert", journal):
            for _ in range(STEP_INDEX_ATTEMPTS):
                # PostgreSQL ends a transaction at its first error, so there a step index taken
                # by another writer is told by no id coming back (ON CONFLICT DO NOTHING).
                insert = AgentStep.insert(row).on_conflict_ignore(is_postgres(self.database))
                with suppress(IntegrityError):
                    if (step_id := insert.execute(self.database)) is not None:
                        break
                # (run_id, step_index) is unique: another writer of this run (a second
                # process on a redelivered run) took the index; continue after its last.
                last = last_index.scalar()
                row[AgentStep.step_index] = index = 0 if last is None else int(last) + 1
            else:
                raise IntegrityError(f"no free step index for run {run.run_id}")
        with journal.lock:
            journal.count_step(start.model, end.prompt_tokens, end.completion_tokens)
            journal.next_step_index = max(journal.next_step_index, index + 1)
        return int(step_id)

    def record(self, draft: InvocationDraft) -> str:
        """Keep an invocation of the current run (written at the next :meth:`flush`)."""
        run = current_run()
        invocation_id = new_invocation_id()
        row = _row(ToolInvocation, run, {"invocation_id": invocation_id, **vars(draft)})
        with run.journal.lock:
            run.journal.invocations.append(invocation_record(invocation_id, run.run_id, draft))
            run.journal.pending.append(row)
        return invocation_id

    def flush(self) -> None:
        """Write the current run's pending invocations in one multi-row INSERT (the end of a
        node, and of a run)."""
        run = current_run_or_none()
        if run is None:
            return
        with run.journal.lock:
            rows, run.journal.pending = run.journal.pending, []
        if rows:
            with self._writing("tool_invocation insert", run.journal):
                ToolInvocation.insert_many(rows).execute(self.database)

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        """One UPDATE for every invocation cited."""
        if not refs:
            return
        self.flush()
        encoded = [(i, ToolInvocation.evidence_refs.db_value(refs[i])) for i in refs]
        value = Case(ToolInvocation.invocation_id, encoded)
        query = ToolInvocation.update({ToolInvocation.evidence_refs: value}).where(
            ToolInvocation.invocation_id.in_(list(refs))
        )
        with connection(self.database):
            query.execute(self.database)

    def restore(self, run: RunContext) -> None:
        query = (
            AgentStep.select(
                AgentStep.model,
                fn.COUNT(AgentStep.id),
                fn.MAX(AgentStep.step_index),
                fn.SUM(AgentStep.prompt_tokens),
                fn.SUM(AgentStep.completion_tokens),
            )
            .where(AgentStep.run_id == run.run_id)
            .group_by(AgentStep.model)
        )
        with connection(self.database):
            rows: list[tuple[Any, ...]] = list(query.tuples())  # type: ignore[arg-type]
        usage = {str(m): (int(p or 0), int(c or 0)) for m, _, _, p, c in rows}
        last = max((int(r[2]) for r in rows), default=-1)
        steps = sum(int(r[1]) for r in rows)
        run.journal.restore(steps, last + 1, self._stored_invocations(run.run_id), usage)

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """From memory for the current run."""
        run = current_run_or_none()
        if run is not None and run.run_id == run_id:
            with run.journal.lock:
                return list(run.journal.invocations)
        return self._stored_invocations(run_id)

    def _stored_invocations(self, run_id: str) -> list[InvocationRecord]:
        columns = [getattr(ToolInvocation, f.name) for f in fields(InvocationRecord)]
        query = (
            ToolInvocation.select(*columns)
            .where(ToolInvocation.run_id == run_id)
            .order_by(ToolInvocation.id)
        )
        with connection(self.database):
            rows: list[dict[str, Any]] = list(cast(Any, query.dicts()))
        return [InvocationRecord(**{**row, "arguments": row["arguments"] or {}}) for row in rows]
