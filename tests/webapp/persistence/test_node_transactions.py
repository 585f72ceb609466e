"""When a run's rows are committed, on every backend: one transaction per node on MariaDB and
PostgreSQL (a fast model call's step waits for its node, a slow one's is committed at once),
each statement alone on SQLite; the session and run rows in one commit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from peewee import Database, SqliteDatabase

from webapp.persistence.context import RunContext, run_scope
from webapp.persistence.models import ChatSession, DiagnosisRun
from webapp.persistence.runs import CHAT, FAILED, PENDING, Finish, RunStore
from webapp.persistence.sql_audit import COMMIT_AT_ONCE_MS, SqlAudit
from webapp.persistence.statements import count_statements
from webapp.services.lifecycle import RunLifecycle

from .helpers import draft, end, start

FAST, SLOW = 5, COMMIT_AT_ONCE_MS


def seen_elsewhere(audit: SqlAudit, run_id: str) -> int:
    """How many of the run's steps another connection (another thread's) reads."""
    with ThreadPoolExecutor(1) as pool:
        return len(pool.submit(audit.steps_for_run, run_id).result())


def step(audit: SqlAudit, duration_ms: int) -> int:
    return audit.after_model(audit.before_model(start()), end(duration_ms=duration_ms))


def test_a_nodes_fast_steps_are_committed_with_it_and_a_slow_call_at_once(
    audit: SqlAudit, database: Database
) -> None:
    with run_scope("sess-a", "run-n"), database.connection_context():
        first = step(audit, FAST)
        step(audit, FAST)
        audit.record(draft(first))
        mid_node = seen_elsewhere(audit, "run-n")
        step(audit, SLOW)
        after_slow = seen_elsewhere(audit, "run-n")
        step(audit, FAST)
        audit.flush()  # the node's end
        after_node = seen_elsewhere(audit, "run-n")
        invocations = audit.invocations_rows_for_run("run-n")
    sqlite = isinstance(database, SqliteDatabase)
    assert mid_node == (2 if sqlite else 0)  # SQLite: every statement commits alone
    assert after_slow == 3 and after_node == 4
    assert [row.step_id for row in invocations] == [first]


def test_steps_outside_a_held_connection_commit_alone(audit: SqlAudit) -> None:
    with run_scope("sess-a", "run-s"):
        step(audit, FAST)  # no connection held: a short one, which cannot keep a transaction
        assert seen_elsewhere(audit, "run-s") == 1


def test_a_run_that_fails_mid_node_keeps_the_nodes_rows_and_ends_failed(
    audit: SqlAudit, database: Database
) -> None:
    runs = RunStore(database, 3600)
    runs.open_run("run-f", "sess-a", CHAT, "complex", "why?", new_session=True)

    def work(run: RunContext) -> Finish:
        step(audit, FAST)
        raise RuntimeError("the node crashed")

    finish = RunLifecycle(runs, audit).execute("sess-a", "run-f", work)
    assert finish.status == FAILED and "the node crashed" in str(finish.error_message)
    row = runs.status("run-f")
    assert row is not None and row.status == FAILED
    assert seen_elsewhere(audit, "run-f") == 1  # flushed and committed, no transaction left
    assert database.is_closed()


def test_the_session_and_the_run_are_created_in_one_transaction(database: Database) -> None:
    runs = RunStore(database, 3600)
    with count_statements(database) as statements:
        runs.open_run("run-1", "sess-new", CHAT, "complex", "why?", new_session=True)
    assert [s.split(" ")[0] for s in statements.sql] == ["INSERT", "INSERT"]  # one commit
    runs.open_run("run-2", "sess-new", CHAT, "complex", "again?")  # an existing session
    with database.connection_context():
        session = ChatSession.get(ChatSession.session_id == "sess-new")
        statuses = [r.status for r in DiagnosisRun.select().order_by(DiagnosisRun.run_id)]
    assert session.title == "why?" and statuses == [PENDING, PENDING]
    with pytest.raises(Exception):  # noqa: B017 - the backend's IntegrityError
        runs.open_run("run-1", "sess-other", CHAT, "complex", "dup?", new_session=True)
    with database.connection_context():  # rolled back together: no session without its run
        assert not ChatSession.select().where(ChatSession.session_id == "sess-other").exists()
