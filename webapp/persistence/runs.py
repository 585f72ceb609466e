"""Run rows: sessions, the run status machine, leases, and finishing a run.

PENDING -> RUNNING -> SUCCESS | FAILED; feedback never changes the status. A PENDING or
RUNNING run carries a lease its holder renews; :meth:`RunStore.reap` takes back runs whose
lease ran out (enqueued again, resumed from their checkpoint, or failed past their bounds).
Claiming is one conditional UPDATE, so a run delivered twice executes once; the final writes
only touch a run still active, retried on a fresh connection for a bounded time.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from peewee import Database, InterfaceError, OperationalError

from diagnosis_graph.workflow.trace import TERMINATION_ERROR, build_orchestration_trace

from .db import retry_disconnects, write_transaction
from .models import ChatSession, DiagnosisRun, JSONField, RunCheckpoint, utcnow

#: The columns :meth:`RunStore.status` reads: all but the JSON documents.
STATUS_COLUMNS = tuple(
    field for field in DiagnosisRun._meta.sorted_fields if not isinstance(field, JSONField)
)

log = logging.getLogger(__name__)

PENDING, RUNNING, SUCCESS, FAILED = "PENDING", "RUNNING", "SUCCESS", "FAILED"
CHAT, AI_OPS = "CHAT", "AI_OPS"


ACTIVE = (PENDING, RUNNING)
COMPLEX_FLOW = "complex"
#: What :meth:`RunStore.claim` answers: someone else has the run, it starts, it resumes.
NOT_CLAIMED, CLAIMED, RESUMED = 0, 1, 2
#: How long (at most; never longer than a lease) a claim meeting an unreachable database is
#: retried before the job is given back.
CLAIM_RETRY_SECONDS = 10.0


class DatabaseUnavailable(Exception):
    """The database could not be reached before the run was claimed: it was not executed."""


@dataclass(frozen=True)
class Reaped:
    """A run whose lease ran out: failed (``error_message``) or to be enqueued again."""

    run_id: str
    session_id: str
    error_message: str | None
    agent_flow: str = CHAT
    flow: str = COMPLEX_FLOW
    question: str = ""

    @property
    def requeued(self) -> bool:
        """True when the run is PENDING again and needs a message on the queue."""
        return self.error_message is None


def new_session_id() -> str:
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
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
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
        queue_timeout_seconds: int = 900,
        max_resumes: int = 2,
    ) -> None:
        self.database = database
        self.ttl = timedelta(seconds=session_ttl_seconds)
        self.lease = timedelta(seconds=lease_seconds)
        self.queue_timeout = timedelta(seconds=queue_timeout_seconds)
        self.max_resumes = max_resumes
        self.owner = f"{socket.gethostname()}:{os.getpid()}"[:128]  # who holds a run's lease

    def open_run(
        self,
        run_id: str,
        session_id: str,
        agent_flow: str,
        flow: str,
        question: str,
        *,
        new_session: bool = False,
    ) -> None:
        """Create the session row (or refresh its ``updated_at``/``expires_at``) and insert the run
        PENDING, in one transaction: one commit, and never a session row whose first run failed
        to be created. If no worker claims the run within a lease it is enqueued again.

        ``new_session``: the id was just generated, so there is nothing to refresh.
        """
        now = utcnow()
        activity = {ChatSession.updated_at: now, ChatSession.expires_at: now + self.ttl}
        run = {
            DiagnosisRun.run_id: run_id,
            DiagnosisRun.session_id: session_id,
            DiagnosisRun.agent_flow: agent_flow,
            DiagnosisRun.flow: flow,
            DiagnosisRun.status: PENDING,
            DiagnosisRun.question: question,
            DiagnosisRun.started_at: now,
            DiagnosisRun.lease_expires_at: now + self.lease,
        }
        with self.database.connection_context(), write_transaction(self.database):
            refreshed = not new_session and (
                ChatSession.update(activity)
                .where(ChatSession.session_id == session_id)
                .execute(self.database)
            )
            if not refreshed:
                # a concurrent request may create it first: no error (which would also end the
                # PostgreSQL transaction)
                session = {ChatSession.session_id: session_id, ChatSession.title: question[:200]}
                ChatSession.insert(
                    {**session, ChatSession.created_at: now, **activity}
                ).on_conflict_ignore().execute(self.database)
            DiagnosisRun.insert(run).execute(self.database)

    def claim(self, run_id: str) -> int:
        """PENDING -> RUNNING under this process's lease: :data:`CLAIMED`, :data:`RESUMED` (it ran
        before) or :data:`NOT_CLAIMED` (not PENDING); :class:`DatabaseUnavailable` when the
        database stays unreachable for :data:`CLAIM_RETRY_SECONDS` (nothing claimed)."""

        def claim() -> int:
            expires = utcnow() + self.lease
            if _claim_query(run_id, self.owner, expires, resumed=False).execute(self.database):
                return CLAIMED
            if _claim_query(run_id, self.owner, expires, resumed=True).execute(self.database):
                return RESUMED
            return NOT_CLAIMED

        try:
            seconds = min(CLAIM_RETRY_SECONDS, self.lease.total_seconds())
            return retry_disconnects(self.database, claim, seconds=seconds)
        except (OperationalError, InterfaceError) as exc:
            raise DatabaseUnavailable(f"database unreachable: {type(exc).__name__}: {exc}") from exc

    def renew(self, run_ids: Sequence[str]) -> int:
        """Extend the lease of these runs while they are PENDING, or RUNNING here; how many
        were."""
        if not run_ids:
            return 0
        mine = (DiagnosisRun.status == PENDING) | (
            (DiagnosisRun.status == RUNNING) & (DiagnosisRun.lease_owner == self.owner)
        )
        query = DiagnosisRun.update(lease_expires_at=utcnow() + self.lease)
        with self.database.connection_context():
            return int(query.where(DiagnosisRun.run_id.in_(list(run_ids)) & mine).execute())

    def save_partial_trace(self, run_id: str, trace: dict[str, Any]) -> None:
        """Keep the trace so far on a run in flight (what an interrupted run is left with)."""
        query = DiagnosisRun.update(orchestration_trace=trace).where(
            (DiagnosisRun.run_id == run_id) & (DiagnosisRun.status == RUNNING)
        )
        with self.database.connection_context():
            query.execute()

    def status(self, run_id: str) -> DiagnosisRun | None:
        """The run row without its two JSON documents, or None. Read to its end, not with
        ``first()``: a SQLite statement not stepped to its end keeps its read transaction open
        on the pooled connection, and a later write on it fails "database is locked"."""
        query = DiagnosisRun.select(*STATUS_COLUMNS).where(DiagnosisRun.run_id == run_id)
        with self.database.connection_context():
            rows = list(query.limit(1).execute(self.database))
        return rows[0] if rows else None

    def finish(self, run_id: str, finish: Finish) -> bool:
        """PENDING/RUNNING -> SUCCESS or FAILED, retried on a fresh connection, its checkpoint
        deleted; False when the run was no longer this process's to finish (the reaper failed
        it, or handed it to another worker): nothing written."""

        mine = (
            (DiagnosisRun.run_id == run_id)
            & DiagnosisRun.status.in_(ACTIVE)
            & (DiagnosisRun.lease_owner.is_null() | (DiagnosisRun.lease_owner == self.owner))
        )
        values = {**vars(finish), "lease_expires_at": None}
        del values["replayed"]

        def write() -> int:
            query = DiagnosisRun.update(**values, finished_at=utcnow()).where(mine)
            finished = int(query.execute(self.database))
            if finished:  # its checkpoint served the run in flight only
                RunCheckpoint.delete().where(RunCheckpoint.run_id == run_id).execute()
            return finished

        if retry_disconnects(self.database, write):
            return True
        log.warning("run %s was no longer ours: its %s was not saved", run_id, finish.status)
        return False

    def reap(self, *, requeue: bool = True) -> list[Reaped]:
        """Take back every PENDING or RUNNING run whose lease ran out; return them.

        With ``requeue`` (someone can enqueue them), a run still within its bounds is put back
        PENDING under a new lease and returned ``requeued``; otherwise it is failed.
        """
        now = utcnow()
        with self.database.connection_context():
            expired = list(
                DiagnosisRun.select().where(
                    DiagnosisRun.status.in_(ACTIVE) & (DiagnosisRun.lease_expires_at < now)
                )
            )
            reaped = (self._reap_one(row, now, requeue) for row in expired)
            return [r for r in reaped if r is not None]

    def _reap_one(self, row: DiagnosisRun, now: Any, requeue: bool) -> Reaped | None:
        if row.status == PENDING and requeue and now - row.started_at < self.queue_timeout:
            return self._requeue(row, now, resumes=row.resumes)
        if row.status == RUNNING and requeue and row.resumes < self.max_resumes:
            return self._requeue(row, now, resumes=row.resumes + 1)
        if row.status == RUNNING:
            message = (
                f"interrupted: its worker {row.lease_owner} died or stopped renewing its lease"
                f" ({row.resumes} of {self.max_resumes} resumes used)"
            )
        else:
            waited = int(self.queue_timeout.total_seconds())
            message = f"queue timeout: no worker started the run within {waited} s"
        trace = row.orchestration_trace
        if trace is None and row.flow == COMPLEX_FLOW:
            trace = build_orchestration_trace([], 0, stopped_by=TERMINATION_ERROR)
        failed = _take_back(
            row,
            now,
            status=FAILED,
            error_message=message,
            orchestration_trace=trace,
            finished_at=now,
            duration_ms=int((now - row.started_at).total_seconds() * 1000),
            lease_expires_at=None,
        )
        if not failed:
            return None
        log.warning("run %s failed: %s", row.run_id, message)
        return Reaped(row.run_id, row.session_id, message)

    def _requeue(self, row: DiagnosisRun, now: Any, *, resumes: int) -> Reaped | None:
        """Put the run back PENDING under a new lease, to be enqueued again; a run still
        waiting for its first start is leased for as long as it has waited (a backlog is
        enqueued again after 1, 2, 4... leases)."""
        waited = now - row.started_at if row.status == PENDING else self.lease
        expires = now + max(self.lease, waited)
        if not _take_back(row, now, status=PENDING, resumes=resumes, lease_expires_at=expires):
            return None
        what = "resumed" if row.status == RUNNING else "enqueued again"
        log.warning(
            "run %s (%s, lease of %s ran out) %s", row.run_id, row.status, row.lease_owner, what
        )
        return Reaped(row.run_id, row.session_id, None, row.agent_flow, row.flow, row.question)

    def fail_best_effort(self, run_id: str, finish: Finish) -> bool:
        """Mark the run FAILED; if even that fails (database gone), log it and return False."""
        try:
            self.finish(run_id, finish)
        except Exception:
            log.exception("could not mark run %s FAILED", run_id)
            return False
        return True


def _take_back(row: DiagnosisRun, now: Any, **values: Any) -> bool:
    """Update an expired run read by the reaper, unless it was renewed or finished meanwhile."""
    query = DiagnosisRun.update(**values).where(
        (DiagnosisRun.run_id == row.run_id)
        & (DiagnosisRun.status == row.status)
        & (DiagnosisRun.lease_expires_at < now)
    )
    return bool(query.execute())


def _claim_query(run_id: str, owner: str, expires: Any, *, resumed: bool) -> Any:
    """PENDING -> RUNNING of a run never started (or, ``resumed``, one put back)."""
    started_before = DiagnosisRun.resumes != 0 if resumed else DiagnosisRun.resumes == 0
    return DiagnosisRun.update(status=RUNNING, lease_owner=owner, lease_expires_at=expires).where(
        (DiagnosisRun.run_id == run_id) & (DiagnosisRun.status == PENDING) & started_before
    )
