"""Session history read from the session's SUCCESS chat runs (no Redis configured).

Shared by every process and durable; ``append`` writes nothing (the run is the history) and
``clear`` stamps ``chat_session.history_cleared_at``: earlier runs are no longer history.
"""

from __future__ import annotations

from collections.abc import Sequence

from peewee import Database, DatabaseError, InterfaceError

from .history import HistoryLoad, HistoryMessage, HistoryWrite, check_session_id
from .models import ChatSession, DiagnosisRun, utcnow
from .runs import CHAT, SUCCESS


class SqlHistory:
    """A :class:`~webapp.persistence.history.HistoryStore` over ``diagnosis_run`` rows."""

    def __init__(self, database: Database, max_messages: int) -> None:
        self.database = database
        self.max_messages = max_messages

    def load(self, session_id: str) -> HistoryLoad:
        """The newest question/answer pairs of the session's successful chat runs."""
        check_session_id(session_id)
        try:
            with self.database.connection_context():
                return HistoryLoad(self._messages(session_id))
        except (DatabaseError, InterfaceError) as exc:
            return HistoryLoad([], available=False, error=f"{type(exc).__name__}: {exc}")

    def _messages(self, session_id: str) -> list[HistoryMessage]:
        pairs = (self.max_messages + 1) // 2
        run, session, now = DiagnosisRun, ChatSession.alias(), utcnow()
        # the session's conditions (not expired, runs after a clear) are joined in
        query = (
            run.select(run.run_id, run.question, run.answer, run.started_at)
            .join(session, on=(session.session_id == run.session_id))
            .where(
                (run.session_id == session_id)
                & (run.agent_flow == CHAT)
                & (run.status == SUCCESS)
                & run.answer.is_null(False)
                & (session.expires_at.is_null() | (session.expires_at >= now))
                & (
                    session.history_cleared_at.is_null()
                    | (run.started_at > session.history_cleared_at)
                )
            )
            .order_by(run.started_at.desc())
            .limit(pairs)
        )
        rows = list(query.dicts().execute(self.database))
        messages: list[HistoryMessage] = []
        for row in reversed(rows):
            at = row["started_at"].isoformat(timespec="milliseconds") + "Z"
            messages.append(HistoryMessage("user", row["question"], row["run_id"], at))
            messages.append(HistoryMessage("assistant", row["answer"], row["run_id"], at))
        return messages[-self.max_messages :]

    def append(self, session_id: str, messages: Sequence[HistoryMessage]) -> HistoryWrite:
        """Nothing to write: the finished run is the history."""
        check_session_id(session_id)
        return HistoryWrite()

    def clear(self, session_id: str) -> int:
        """Start the session's history afresh; return how many messages it had."""
        had = len(self.load(session_id).messages)
        with self.database.connection_context():
            (
                ChatSession.update(history_cleared_at=utcnow())
                .where(ChatSession.session_id == session_id)
                .execute()
            )
        return had

    def ping(self) -> bool:
        try:
            with self.database.connection_context():
                self.database.execute_sql("SELECT 1")
            return True
        except (DatabaseError, InterfaceError):
            return False
