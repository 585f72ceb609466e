"""Run rows: sessions, the run status machine, and finishing a run (seed 003 section 4).

PENDING -> RUNNING -> SUCCESS | FAILED; feedback never changes the status. Every function
opens its own short connection context, so it works from request threads and worker threads.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from peewee import Database, IntegrityError

from ..models import ChatSession, DiagnosisRun, utcnow

log = logging.getLogger(__name__)

PENDING, RUNNING, SUCCESS, FAILED = "PENDING", "RUNNING", "SUCCESS", "FAILED"
CHAT, AI_OPS = "CHAT", "AI_OPS"


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


class RunStore:
    """Writes ``chat_session`` and ``diagnosis_run`` rows through the run lifecycle."""

    def __init__(self, database: Database, session_ttl_seconds: int) -> None:
        self.database = database
        self.ttl = timedelta(seconds=session_ttl_seconds)

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
        """Insert the run PENDING."""
        with self.database.connection_context():
            DiagnosisRun.create(
                run_id=run_id,
                session_id=session_id,
                agent_flow=agent_flow,
                flow=flow,
                status=PENDING,
                question=question,
                started_at=utcnow(),
            )

    def mark_running(self, run_id: str) -> None:
        """PENDING -> RUNNING."""
        with self.database.connection_context():
            (
                DiagnosisRun.update(status=RUNNING)
                .where((DiagnosisRun.run_id == run_id) & (DiagnosisRun.status == PENDING))
                .execute()
            )

    def finish(self, run_id: str, finish: Finish) -> None:
        """RUNNING -> SUCCESS or FAILED, with everything the run is saved with."""
        with self.database.connection_context():
            (
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
                )
                .where(DiagnosisRun.run_id == run_id)
                .execute()
            )

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
        """RUNNING, ``work()``, then save its Finish with counts and duration; never raises.

        Anything unhandled (``work`` itself, the counts, the save) ends the run FAILED with the
        error, ``failed_trace`` and the duration, saved best-effort.
        """
        started = time.perf_counter()
        try:
            self.mark_running(run_id)
            finish = work()
            steps, tools = counts(run_id)
            finish = replace(
                finish, step_count=steps, tool_count=tools, duration_ms=_elapsed_ms(started)
            )
            self.finish(run_id, finish)
        except Exception as exc:
            log.exception("run %s failed", run_id)
            finish = Finish(
                FAILED,
                None,
                error_message=f"{type(exc).__name__}: {exc}",
                orchestration_trace=failed_trace,
                duration_ms=_elapsed_ms(started),
            )
            self.fail_best_effort(run_id, finish)
        return finish


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
