"""Peewee audit store: ``agent_step`` and ``tool_invocation`` rows, written as the run happens.

One class implements the step hook, the invocation recorder and the workflow's invocation store
(:mod:`webapp.persistence.audit`), mirroring :class:`.memory_audit.MemoryAudit`, plus the read
helpers of the trace API, which issue a constant number of queries whatever the size of the run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from peewee import CharField, Database, DatabaseError, IntegrityError, InterfaceError

from diagnosis_graph.workflow.ports import InvocationRecord

from .audit import AuditWriteError, InvocationDraft, StepEnd, StepStart, new_invocation_id
from .context import current_run, current_run_or_none
from .db import discard_connection
from .models import AgentStep, ToolInvocation

log = logging.getLogger(__name__)

RUNNING = "RUNNING"
#: Inserting a step retries this many times when its index was taken by a concurrent writer of
#: the same run (runs are sequential within themselves, so one attempt is the normal case).
STEP_INDEX_ATTEMPTS = 5
#: MySQL/MariaDB ``TEXT`` holds 65,535 bytes; longer error texts are cut, not allowed to fail.
TEXT_MAX_BYTES = 65_535


def _clip(value: Any, field: CharField) -> Any:
    """``value`` cut to the column's length (strict SQL modes reject longer strings)."""
    if isinstance(value, str) and field.max_length and len(value) > field.max_length:
        return value[: field.max_length]
    return value


def _clip_text(value: str | None) -> str | None:
    """``value`` cut to what a MySQL ``TEXT`` column holds, on a character boundary."""
    if value is None or len(value) * 4 <= TEXT_MAX_BYTES:
        return value
    encoded = value.encode("utf-8")
    if len(encoded) <= TEXT_MAX_BYTES:
        return value
    return encoded[:TEXT_MAX_BYTES].decode("utf-8", errors="ignore")


class SqlAudit:
    """``StepHook`` + ``InvocationRecorder`` + ``InvocationStore`` on the bound peewee models.

    ``database`` is the database the models are bound to (:func:`.db.bind`). Every call runs in
    its own short connection context unless the calling thread already holds a connection (a
    request), which it then reuses and leaves open for its owner.
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        self._failures: dict[str, str] = {}
        self._lock = threading.Lock()

    @contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        """A write of the current run: on a database error, discard the connection (it may be
        broken: a packet over ``max_allowed_packet`` closes it server-side), remember the cause
        for the run lifecycle (:meth:`take_write_failure`) and raise :class:`AuditWriteError`."""
        try:
            with self._connection():
                yield
        except (DatabaseError, InterfaceError) as exc:
            discard_connection(self.database)
            cause = f"audit write failed ({what}): {type(exc).__name__}: {exc}"[:2000]
            identity = current_run_or_none()
            if identity is not None:
                with self._lock:
                    self._failures.setdefault(identity.run_id, cause)
            log.error("%s", cause)
            raise AuditWriteError(cause) from exc

    def take_write_failure(self, run_id: str) -> str | None:
        """The first failed write of ``run_id`` (then forgotten), or None."""
        with self._lock:
            return self._failures.pop(run_id, None)

    @contextmanager
    def _connection(self) -> Iterator[None]:
        # connection_context() closes the thread's connection on exit, even one it did not open:
        # a request's connection must survive an audit write made on its thread.
        if not self.database.is_closed():
            yield
            return
        with self.database.connection_context():
            yield

    # -- StepHook -------------------------------------------------------------------------

    def before_model(self, start: StepStart) -> int:
        """Insert a RUNNING step (input only) for the current run and return its id."""
        identity = current_run()
        row = {
            AgentStep.run_id: identity.run_id,
            AgentStep.session_id: identity.session_id,
            AgentStep.agent_name: _clip(start.agent_name, AgentStep.agent_name),
            AgentStep.model: _clip(start.model, AgentStep.model),
            AgentStep.model_input: start.model_input,
            AgentStep.status: RUNNING,
        }
        with self._writing("agent_step insert"):
            for attempt in range(STEP_INDEX_ATTEMPTS):
                index = self._next_step_index(identity.run_id)
                try:
                    return int(AgentStep.insert({**row, AgentStep.step_index: index}).execute())
                except IntegrityError:
                    # (run_id, step_index) is unique: another writer of this run won the index.
                    if attempt == STEP_INDEX_ATTEMPTS - 1:
                        raise
        raise AssertionError("unreachable")  # pragma: no cover

    def after_model(self, step_id: int, end: StepEnd) -> None:
        """Complete step ``step_id`` with the output, tokens, attempts, timing and status."""
        with self._writing("agent_step update"):
            AgentStep.update(
                {
                    AgentStep.model_output: end.model_output,
                    AgentStep.has_tool_call: bool(end.has_tool_call),
                    AgentStep.prompt_tokens: end.prompt_tokens,
                    AgentStep.completion_tokens: end.completion_tokens,
                    AgentStep.token_count: end.prompt_tokens + end.completion_tokens,
                    AgentStep.attempts: end.attempts,
                    AgentStep.duration_ms: end.duration_ms,
                    AgentStep.status: _clip(end.status, AgentStep.status),
                    AgentStep.error: _clip_text(end.error),
                }
            ).where(AgentStep.id == step_id).execute()

    def _next_step_index(self, run_id: str) -> int:
        last = (
            AgentStep.select(AgentStep.step_index)
            .where(AgentStep.run_id == run_id)
            .order_by(AgentStep.step_index.desc())
            .limit(1)
            .scalar()
        )
        return 0 if last is None else int(last) + 1

    # -- InvocationRecorder ---------------------------------------------------------------

    def record(self, draft: InvocationDraft) -> str:
        """Insert an invocation of the current run and return its new ``inv-...`` id."""
        identity = current_run()
        invocation_id = new_invocation_id()
        with self._writing("tool_invocation insert"):
            ToolInvocation.insert(
                {
                    ToolInvocation.invocation_id: invocation_id,
                    ToolInvocation.run_id: identity.run_id,
                    ToolInvocation.session_id: identity.session_id,
                    ToolInvocation.step: draft.step_id,
                    ToolInvocation.agent_name: _clip(draft.agent_name, ToolInvocation.agent_name),
                    ToolInvocation.tool_name: _clip(draft.tool_name, ToolInvocation.tool_name),
                    ToolInvocation.arguments: draft.arguments,
                    ToolInvocation.raw_output: draft.raw_output,
                    ToolInvocation.status: _clip(draft.status, ToolInvocation.status),
                    ToolInvocation.error_message: _clip_text(draft.error_message),
                    ToolInvocation.duration_ms: draft.duration_ms,
                    ToolInvocation.retrieval_details: draft.retrieval_details,
                }
            ).execute()
        return invocation_id

    def attach_evidence(self, refs: Mapping[str, list[dict[str, Any]]]) -> None:
        """Store on each invocation the verified evidence cited from it (``evidence_refs``)."""
        if not refs:
            return
        with self._connection(), self.database.atomic():
            for invocation_id, items in refs.items():
                (
                    ToolInvocation.update(evidence_refs=items)
                    .where(ToolInvocation.invocation_id == invocation_id)
                    .execute()
                )

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """Invocations of ``run_id`` in creation order (the auto-increment id)."""
        query = (
            ToolInvocation.select(
                ToolInvocation.invocation_id,
                ToolInvocation.run_id,
                ToolInvocation.tool_name,
                ToolInvocation.status,
                ToolInvocation.raw_output,
                ToolInvocation.arguments,
            )
            .where(ToolInvocation.run_id == run_id)
            .order_by(ToolInvocation.id)
        )
        with self._connection():
            rows = list(query)
        return [
            InvocationRecord(
                invocation_id=row.invocation_id,
                run_id=row.run_id,
                tool_name=row.tool_name,
                status=row.status,
                raw_output=row.raw_output,
                arguments=row.arguments or {},
            )
            for row in rows
        ]

    # -- trace reads: one query each, whatever the size of the run -------------------------

    def steps_for_run(self, run_id: str) -> list[AgentStep]:
        """Steps of ``run_id`` ordered by step index."""
        query = AgentStep.select().where(AgentStep.run_id == run_id).order_by(AgentStep.step_index)
        with self._connection():
            return list(query)

    def invocations_rows_for_run(self, run_id: str) -> list[ToolInvocation]:
        """Invocation rows of ``run_id`` ordered by id; read ``step_id``, never ``.step``."""
        query = (
            ToolInvocation.select()
            .where(ToolInvocation.run_id == run_id)
            .order_by(ToolInvocation.id)
        )
        with self._connection():
            return list(query)

    def counts_for_run(self, run_id: str) -> tuple[int, int]:
        """``(step_count, tool_count)`` of ``run_id``."""
        with self._connection():
            steps = AgentStep.select().where(AgentStep.run_id == run_id).count()
            tools = ToolInvocation.select().where(ToolInvocation.run_id == run_id).count()
        return int(steps), int(tools)
