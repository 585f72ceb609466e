"""Run rows: sessions, the run status machine, and finishing a run (seed 003 section 4).

PENDING -> RUNNING -> SUCCESS | FAILED; feedback never changes the status. Every function
opens its own short connection context, so it works from request threads and worker threads.

Leases: a PENDING or RUNNING run carries ``lease_expires_at``; whoever holds the run renews it
(:class:`webapp.execution.leases.LeaseKeeper`), and :meth:`RunStore.reap` fails runs whose lease
ran out with ``error_message`` "interrupted: ..." and the partial trace saved so far. Claiming
(PENDING -> RUNNING) is one conditional UPDATE, so a redelivered run executes at most once; the
final writes only touch a run still PENDING or RUNNING (a reaped run stays FAILED) and retry on
a fresh connection (:func:`webapp.persistence.db.write_with_retry`).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Protocol

from peewee import Database, IntegrityError

from diagnosis_graph.workflow.trace import TERMINATION_ERROR, build_orchestration_trace

from .db import write_with_retry
from .models import ChatSession, DiagnosisRun, utcnow

log = logging.getLogger(__name__)

PENDING, RUNNING, SUCCESS, FAILED = "PENDING", "RUNNING", "SUCCESS", "FAILED"
CHAT, AI_OPS = "CHAT", "AI_OPS"


ACTIVE = (PENDING, RUNNING)
COMPLEX_FLOW = "complex"


def worker_id() -> str:
    """``host:pid`` of this process: who holds a run's lease."""
    return f"{socket.gethostname()}:{os.getpid()}"[:128]


class WriteFaults(Protocol):
    """An audit store that remembers the first write it could not make for a run."""

    def take_write_failure(self, run_id: str) -> str | None:
        """The failed write's cause for ``run_id`` (forgotten once taken), or None."""
        ...


@dataclass(frozen=True)
class Reaped:
    """A run the reaper failed: its lease ran out."""

    run_id: str
    session_id: str
    error_message: str


def new_session_id() -> str:
    """``sess-`` plus 24 random hex characters."""
    return f"sess-{secrets.token_hex(12)}"


@dataclass(frozen=True)
class Finish:
    """What a finished run is saved with."""

    status: str
    answer: str | None
    degraded: bool = False
    error_message: str | None = None
    self_evaluation: dict[str, Any] | None = None
    orchestration_trace: dict[str, Any] | None = None
    step_count: int = 0
    tool_count: int = 0
    duration_ms: int = 0
    #: True when the run had already been executed (a redelivered task): nothing was done.
    replayed: bool = False


class RunStore:
    """Writes ``chat_session`` and ``diagnosis_run`` rows through the run lifecycle."""

    def __init__(
        self,
        database: Database,
        session_ttl_seconds: int,
        *,
        lease_seconds: int = 60,
        pending_lease_seconds: int | None = None,
        faults: WriteFaults | None = None,
    ) -> None:
        self.database = database
        self.ttl = timedelta(seconds=session_ttl_seconds)
        self.lease = timedelta(seconds=lease_seconds)
        self.pending_lease = timedelta(seconds=pending_lease_seconds or lease_seconds)
        self.faults = faults
        self.owner = worker_id()

    def ensure_session(self, session_id: str, title: str) -> None:
        """Create the session row, or refresh its ``updated_at``/``expires_at``."""
        now = utcnow()
        with self.database.connection_context():
            updated = (
                ChatSession.update(updated_at=now, expires_at=now + self.ttl)
                .where(ChatSession.session_id == session_id)
                .execute()
            )
            if updated:
                return
            with suppress(IntegrityError):  # a concurrent request created it first
                ChatSession.create(
                    session_id=session_id,
                    title=title[:200],
                    created_at=now,
                    updated_at=now,
                    expires_at=now + self.ttl,
                )

    def create_run(
        self, run_id: str, session_id: str, agent_flow: str, flow: str, question: str
    ) -> None:
        """Insert the run PENDING, leased for as long as it may wait for a worker."""
        now = utcnow()
        with self.database.connection_context():
            DiagnosisRun.create(
                run_id=run_id,
                session_id=session_id,
                agent_flow=agent_flow,
                flow=flow,
                status=PENDING,
                question=question,
                started_at=now,
                lease_expires_at=now + self.pending_lease,
            )

    def claim(self, run_id: str) -> bool:
        """PENDING -> RUNNING under this process's lease; False if someone else got it first."""
        now = utcnow()
        with self.database.connection_context():
            return bool(
                DiagnosisRun.update(
                    status=RUNNING, lease_owner=self.owner, lease_expires_at=now + self.lease
                )
                .where((DiagnosisRun.run_id == run_id) & (DiagnosisRun.status == PENDING))
                .execute()
            )

    def mark_running(self, run_id: str) -> None:
        """PENDING -> RUNNING (see :meth:`claim`)."""
        self.claim(run_id)

    def renew(self, run_ids: Sequence[str]) -> int:
        """Extend the lease of these runs while they are PENDING or RUNNING; how many were."""
        if not run_ids:
            return 0
        with self.database.connection_context():
            return int(
                DiagnosisRun.update(lease_expires_at=utcnow() + self.lease)
                .where(DiagnosisRun.run_id.in_(list(run_ids)) & DiagnosisRun.status.in_(ACTIVE))
                .execute()
            )

    def save_partial_trace(self, run_id: str, trace: dict[str, Any]) -> None:
        """Keep the trace so far on a run in flight (what an interrupted run is left with)."""
        with self.database.connection_context():
            (
                DiagnosisRun.update(orchestration_trace=trace)
                .where((DiagnosisRun.run_id == run_id) & (DiagnosisRun.status == RUNNING))
                .execute()
            )

    def status(self, run_id: str) -> DiagnosisRun | None:
        """The run row (status, answer, error...), or None."""
        with self.database.connection_context():
            return DiagnosisRun.get_or_none(DiagnosisRun.run_id == run_id)

    def finish(self, run_id: str, finish: Finish) -> None:
        """PENDING/RUNNING -> SUCCESS or FAILED, retried on a fresh connection.

        A run the reaper already failed keeps its FAILED status: its client was told so.
        """

        def write() -> int:
            return int(
                DiagnosisRun.update(
                    status=finish.status,
                    answer=finish.answer,
                    degraded=finish.degraded,
                    error_message=finish.error_message,
                    self_evaluation=finish.self_evaluation,
                    orchestration_trace=finish.orchestration_trace,
                    step_count=finish.step_count,
                    tool_count=finish.tool_count,
                    duration_ms=finish.duration_ms,
                    finished_at=utcnow(),
                    lease_expires_at=None,
                )
                .where((DiagnosisRun.run_id == run_id) & DiagnosisRun.status.in_(ACTIVE))
                .execute()
            )

        if not write_with_retry(self.database, write):
            log.warning("run %s was no longer in flight: its %s was not saved", run_id, finish)

    def reap(self) -> list[Reaped]:
        """Fail every PENDING or RUNNING run whose lease ran out; return the runs failed."""
        now = utcnow()
        with self.database.connection_context():
            expired = list(
                DiagnosisRun.select(
                    DiagnosisRun.run_id,
                    DiagnosisRun.session_id,
                    DiagnosisRun.status,
                    DiagnosisRun.flow,
                    DiagnosisRun.lease_owner,
                    DiagnosisRun.started_at,
                    DiagnosisRun.orchestration_trace,
                ).where(DiagnosisRun.status.in_(ACTIVE) & (DiagnosisRun.lease_expires_at < now))
            )
            return [r for r in (self._reap_one(row, now) for row in expired) if r is not None]

    def _reap_one(self, row: DiagnosisRun, now: Any) -> Reaped | None:
        if row.status == RUNNING:
            message = f"interrupted: its worker {row.lease_owner} stopped renewing its lease"
        else:
            message = "interrupted: no worker started the run before its lease ran out"
        trace = row.orchestration_trace
        if trace is None and row.flow == COMPLEX_FLOW:
            trace = build_orchestration_trace([], 0, stopped_by=TERMINATION_ERROR)
        updated = (
            DiagnosisRun.update(
                status=FAILED,
                error_message=message,
                orchestration_trace=trace,
                finished_at=now,
                duration_ms=int((now - row.started_at).total_seconds() * 1000),
                lease_expires_at=None,
            )
            .where(
                (DiagnosisRun.run_id == row.run_id)
                & (DiagnosisRun.status == row.status)
                & (DiagnosisRun.lease_expires_at < now)
            )
            .execute()
        )
        if not updated:  # renewed or finished meanwhile
            return None
        log.warning("run %s failed: %s", row.run_id, message)
        return Reaped(row.run_id, row.session_id, message)

    def fail_best_effort(self, run_id: str, finish: Finish) -> None:
        """Mark the run FAILED; if even that fails (database gone), log and carry on."""
        try:
            self.finish(run_id, finish)
        except Exception:
            log.exception("could not mark run %s FAILED", run_id)

    def execute(
        self,
        run_id: str,
        work: Callable[[], Finish],
        counts: Callable[[str], tuple[int, int]],
        *,
        failed_trace: dict[str, Any] | None = None,
    ) -> Finish:
        """Claim the run, ``work()``, then save its Finish with counts and duration.

        Never raises. A run already claimed or finished (a redelivered task) is not executed
        again: the stored outcome is returned. Anything unhandled (``work`` itself, the counts,
        the save), or an audit write that failed while it ran, ends the run FAILED with the
        cause, ``failed_trace`` and the duration, saved best-effort.
        """
        started = time.perf_counter()
        try:
            if not self.claim(run_id):
                return self._stored(run_id)
            finish = work()
            fault = self.faults.take_write_failure(run_id) if self.faults else None
            if fault is not None:
                raise AuditWriteFailed(fault)
            steps, tools = counts(run_id)
            finish = replace(
                finish, step_count=steps, tool_count=tools, duration_ms=_elapsed_ms(started)
            )
            self.finish(run_id, finish)
        except Exception as exc:
            log.exception("run %s failed", run_id)
            if self.faults is not None:
                self.faults.take_write_failure(run_id)
            finish = Finish(
                FAILED,
                None,
                error_message=str(exc)
                if isinstance(exc, AuditWriteFailed)
                else f"{type(exc).__name__}: {exc}",
                orchestration_trace=failed_trace,
                duration_ms=_elapsed_ms(started),
            )
            self.fail_best_effort(run_id, finish)
        return finish

    def _stored(self, run_id: str) -> Finish:
        row = self.status(run_id)
        if row is None:
            return Finish(FAILED, None, error_message=f"run {run_id} does not exist")
        log.info("run %s is already %s: not executed again", run_id, row.status)
        return Finish(
            row.status,
            row.answer,
            bool(row.degraded),
            row.error_message,
            step_count=row.step_count,
            tool_count=row.tool_count,
            duration_ms=row.duration_ms or 0,
            replayed=True,
        )


class AuditWriteFailed(Exception):
    """A step or invocation row of the run could not be written: the run cannot be trusted."""


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
