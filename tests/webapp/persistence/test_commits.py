"""When a run's rows are committed, on every backend: each step as it returns, a node's
invocations at its end; the session and run rows in one commit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from peewee import Database

from tests.statements import count_statements
from webapp.persistence.context import RunContext, run_scope
from webapp.persistence.models import ChatSession, DiagnosisRun
from webapp.persistence.runs import CHAT, FAILED, PENDING, Finish, RunStore
from webapp.persistence.sql_audit import SqlAudit
from webapp.services.lifecycle import RunLifecycle

from .helpers import draft, end, invocations_of, start, steps_of

FAST = 5


def seen_elsewhere(audit: SqlAudit, run_id: str) -> int:
    """How many of the run's steps another connection (another thread's) reads."""
    with ThreadPoolExecutor(1) as pool:
        return len(pool.submit(steps_of, audit, run_id).result())


def step(audit: SqlAudit, duration_ms: int) -> int:
    return audit.after_model(audit.before_model(start()), end(duration_ms=duration_ms))


def test_each_step_is_committed_as_it_returns_and_invocations_at_the_nodes_end(
    audit: SqlAudit, database: Database
) -> None:
    with run_scope("sess-a", "run-n"), database.connection_context():
        first = step(audit, FAST)
        step(audit, FAST)
        audit.record(draft(first))
        mid_node = seen_elsewhere(audit, "run-n")
        held = invocations_of(audit, "run-n")
        audit.flush()  # the node's end
        invocations = invocations_of(audit, "run-n")
    assert mid_node == 2 and held == []
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
