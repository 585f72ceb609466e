"""An older SQLite database, whose ``agent_step`` has ``model_input`` before the step's other
columns, is rebuilt once with it last: every row, id, index and foreign key kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from peewee import Database, IntegrityError

from tests.conftest import close_database
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import AgentStep, ToolInvocation
from webapp.persistence.schema import create_schema

#: ``agent_step`` as databases created before the change have it (peewee's DDL of the time).
OLD_TABLE = (
    'CREATE TABLE "agent_step" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" VARCHAR(64) NOT NULL,'
    ' "session_id" VARCHAR(64) NOT NULL, "step_index" INTEGER NOT NULL, "agent_name"'
    ' VARCHAR(32) NOT NULL, "model" VARCHAR(128) NOT NULL, "model_input" TEXT, "model_output"'
    ' TEXT, "has_tool_call" INTEGER NOT NULL, "prompt_tokens" INTEGER NOT NULL,'
    ' "completion_tokens" INTEGER NOT NULL, "token_count" INTEGER NOT NULL, "attempts" INTEGER'
    ' NOT NULL, "duration_ms" INTEGER, "status" VARCHAR(16) NOT NULL, "error" TEXT,'
    ' "created_at" DATETIME NOT NULL)'
)
OLD_INDEXES = (
    'CREATE INDEX "agent_step_run_id" ON "agent_step" ("run_id")',
    'CREATE INDEX "agent_step_session_id" ON "agent_step" ("session_id")',
    'CREATE UNIQUE INDEX "agent_step_run_id_step_index" ON "agent_step" ("run_id", "step_index")',
)


def columns(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [row[1] for row in connection.execute("PRAGMA table_info(agent_step)")]


def table_sql(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        row = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'agent_step'")
        return str(row.fetchone()[0])


def rows(model: Any) -> list[dict[str, Any]]:
    return list(model.select().order_by(model.id).dicts())


@pytest.fixture
def old_database(tmp_path: Path) -> Path:
    """A database of the current schema but an ``agent_step`` of the old column order, holding
    20 steps (big inputs among them) and an invocation per step."""
    path = tmp_path / "old.db"
    database = open_database(f"sqlite:///{path}")
    bind(database)
    create_schema(database)
    close_database(database)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA foreign_keys = 0")
        connection.execute("DROP TABLE agent_step")
        connection.execute(OLD_TABLE)
        for statement in OLD_INDEXES:
            connection.execute(statement)
    database = open_database(f"sqlite:///{path}")
    bind(database)
    with database.connection_context():
        for index in range(20):
            step = AgentStep.create(
                run_id="run-1",
                session_id="sess-1",
                step_index=index,
                agent_name="executor",
                model="m",
                model_input={"messages": [{"role": "user", "content": "x" * 9000 * (index % 3)}]},
                model_output={"content": f"out {index}"},
                status="SUCCESS",
                error=None if index % 5 else "boom",
            )
            ToolInvocation.create(
                invocation_id=f"inv-{index}",
                run_id="run-1",
                session_id="sess-1",
                step=step.id,
                agent_name="executor",
                tool_name="query_logs",
                status="SUCCESS",
            )
    close_database(database)
    assert columns(path).index("model_input") == 6
    return path


def reopen(path: Path) -> Database:
    database = open_database(f"sqlite:///{path}")
    bind(database)
    return database


def test_an_old_step_table_is_rebuilt_with_model_input_last_and_nothing_lost(
    old_database: Path,
) -> None:
    database = reopen(old_database)
    with database.connection_context():
        steps_before, invocations_before = rows(AgentStep), rows(ToolInvocation)
    create_schema(database)
    assert columns(old_database)[-1] == "model_input"
    assert columns(old_database) == [f.column_name for f in AgentStep._meta.sorted_fields]
    with database.connection_context():
        assert rows(AgentStep) == steps_before
        assert rows(ToolInvocation) == invocations_before
        assert [i["step"] for i in invocations_before] == [s["id"] for s in steps_before]
        # the unique (run_id, step_index) index is back
        with pytest.raises(IntegrityError), database.atomic():
            AgentStep.create(
                run_id="run-1", session_id="s", step_index=3, agent_name="a", model="m", status="S"
            )
        # foreign keys are on again and reference the rebuilt table: deleting a step nulls
        # its invocation's step_id (ON DELETE SET NULL)
        AgentStep.delete().where(AgentStep.step_index == 4).execute()
        nulled = ToolInvocation.get(ToolInvocation.invocation_id == "inv-4")
        assert nulled.step_id is None
        assert ToolInvocation.get(ToolInvocation.invocation_id == "inv-5").step_id is not None
    close_database(database)


def test_a_rebuilt_or_new_table_is_left_as_it_is(old_database: Path, tmp_path: Path) -> None:
    database = reopen(old_database)
    create_schema(database)
    rebuilt = table_sql(old_database)
    with sqlite3.connect(old_database) as connection:
        page = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'agent_step'")
        root = page.fetchone()[0]
    create_schema(database)
    with sqlite3.connect(old_database) as connection:
        page = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'agent_step'")
        assert page.fetchone()[0] == root  # not rebuilt again
    assert table_sql(old_database) == rebuilt
    close_database(database)
    fresh = tmp_path / "new.db"
    database = reopen(fresh)
    create_schema(database)
    assert columns(fresh)[-1] == "model_input"
    assert table_sql(fresh) == rebuilt.replace('"agent_step__rebuilt"', '"agent_step"')
    close_database(database)
