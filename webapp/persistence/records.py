"""Reading runs back: the exact-run trace (the run matched on session AND run id, so another
session's run is "not found"), feedback and the case library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import Database, SqliteDatabase

from .db import write_transaction
from .models import (
    AgentStep,
    CaseLibrary,
    ChatSession,
    DiagnosisRun,
    ToolInvocation,
    utcnow,
)
from .runs import PENDING, RUNNING, SUCCESS

USEFUL, NOT_USEFUL = "useful", "not_useful"
FEEDBACK = (USEFUL, NOT_USEFUL)


class NotFound(LookupError):
    """The session or run does not exist (or belongs to another session)."""


class Conflict(ValueError):
    """The request is valid but clashes with the run's state."""


@dataclass(frozen=True)
class Trace:
    """A run with everything that explains it."""

    session: dict[str, Any] | None
    run: dict[str, Any]
    steps: list[dict[str, Any]]
    invocations: list[dict[str, Any]]


def _rows(query: Any) -> list[dict[str, Any]]:
    """Every row of ``query`` as a plain dict."""
    return list(query.dicts())


def _first(query: Any) -> dict[str, Any] | None:
    """The first row of ``query`` as a dict, or None."""
    rows = _rows(query.limit(1))
    return rows[0] if rows else None


class RunRecords:
    """Queries behind the trace, runs, session, feedback and cases endpoints."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def run(self, session_id: str, run_id: str, *, lock: bool = False) -> dict[str, Any]:
        """The run ``run_id`` of ``session_id``; NotFound otherwise (exact ownership). With
        ``lock``, the row stays locked until the transaction ends (not on SQLite)."""
        query = DiagnosisRun.select().where(
            (DiagnosisRun.run_id == run_id) & (DiagnosisRun.session_id == session_id)
        )
        if lock and not isinstance(self.database, SqliteDatabase):
            query = query.for_update()
        row = _first(query)
        # Compared again in Python: ownership must not depend on a database's collation.
        if row is None or row["session_id"] != session_id or row["run_id"] != run_id:
            raise NotFound(f"run {run_id} not found in session {session_id}")
        return row

    def session(self, session_id: str) -> dict[str, Any] | None:
        return _first(ChatSession.select().where(ChatSession.session_id == session_id))

    def trace(self, session_id: str, run_id: str, *, inputs: bool = True) -> Trace:
        """The exact run's trace in four queries; without ``inputs`` the steps' model inputs
        (most of a long run's bytes) are not read."""
        run = self.run(session_id, run_id)
        columns = [f for f in AgentStep._meta.sorted_fields if inputs or f.name != "model_input"]
        query = AgentStep.select(*columns).where(AgentStep.run_id == run_id)
        steps = _rows(query.order_by(AgentStep.step_index))
        return Trace(self.session(session_id), run, steps, self._invocations(run_id))

    def invocations(
        self, session_id: str, run_id: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The exact run and its tool invocations, without its model steps."""
        return self.run(session_id, run_id), self._invocations(run_id)

    @staticmethod
    def _invocations(run_id: str) -> list[dict[str, Any]]:
        query = ToolInvocation.select().where(ToolInvocation.run_id == run_id)
        return _rows(query.order_by(ToolInvocation.id))

    def run_count(self, session_id: str) -> int:
        return DiagnosisRun.select().where(DiagnosisRun.session_id == session_id).count()

    def feedback(
        self, session_id: str, run_id: str, value: str, comment: str | None
    ) -> dict[str, Any]:
        """Record feedback; ``useful`` adds the run to the case library, ``not_useful`` removes
        it. Idempotent; never changes the run's status; only an answered, finished run can be
        useful (Conflict otherwise). Concurrent requests on a run are serialised by a write
        lock taken before it is read, so the case library always agrees with the feedback.
        """
        with write_transaction(self.database):
            run = self.run(session_id, run_id, lock=True)
            if run["status"] in (PENDING, RUNNING):
                raise Conflict(f"run {run_id} is still {run['status']}; give feedback when it ends")
            if run["feedback"] == value and (run["feedback_comment"] or None) == comment:
                return run
            if value == USEFUL and (run["status"] != SUCCESS or not run["answer"]):
                raise Conflict(f"run {run_id} has no answer, so it cannot join the case library")
            (
                DiagnosisRun.update(feedback=value, feedback_comment=comment)
                .where(DiagnosisRun.run_id == run_id)
                .execute()
            )
            if value == USEFUL:
                case = {k: run[k] for k in ("run_id", "session_id", "question", "answer")}
                CaseLibrary.insert(**case, created_at=utcnow()).on_conflict_ignore().execute()
            else:
                CaseLibrary.delete().where(CaseLibrary.run_id == run_id).execute()
        return self.run(session_id, run_id)

    def case(self, run_id: str) -> dict[str, Any]:
        """One case; NotFound when the run is not in the library."""
        row = _first(CaseLibrary.select().where(CaseLibrary.run_id == run_id))
        if row is None:
            raise NotFound(f"run {run_id} is not in the case library")
        return row
