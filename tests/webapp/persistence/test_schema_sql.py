"""``schema.sql`` is the MySQL/MariaDB DDL of exactly the peewee models.

The committed file is what ``make schema`` generates from the models. On a real MariaDB
(``TEST_MYSQL_URL``): the file, applied twice to one scratch database, and ``create_schema`` in
another must give identical tables, columns, indexes and foreign keys in
``information_schema``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from peewee import Database

from scripts.schema_sql import mysql_schema_sql
from tests.conftest import ScratchServers, close_database
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import MODELS
from webapp.persistence.schema import create_schema

SCHEMA_SQL = Path(__file__).resolve().parents[3] / "schema.sql"
TABLES = sorted(m._meta.table_name for m in MODELS)


def statements(text: str) -> list[str]:
    """The statements of an SQL script without ``--`` comments (no ``;`` inside literals)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


# --- on a real MariaDB ----------------------------------------------------------------------

QUERIES = {
    "tables": """
        SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME""",
    "columns": """
        SELECT TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
               CHARACTER_MAXIMUM_LENGTH, COLUMN_DEFAULT, EXTRA, CHARACTER_SET_NAME, COLLATION_NAME
        FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, ORDINAL_POSITION""",
    "indexes": """
        SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME
        FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX""",
    "foreign_keys": """
        SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME,
               k.REFERENCED_COLUMN_NAME, r.UPDATE_RULE, r.DELETE_RULE
        FROM information_schema.KEY_COLUMN_USAGE k
        JOIN information_schema.REFERENTIAL_CONSTRAINTS r
          ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.TABLE_NAME = k.TABLE_NAME
         AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
        WHERE k.TABLE_SCHEMA = %s AND k.REFERENCED_TABLE_NAME IS NOT NULL
        ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION""",
}


def describe(database: Database) -> dict[str, Any]:
    """Tables, columns, indexes and foreign keys of ``database`` from information_schema."""
    with database.connection_context():
        found: dict[str, Any] = {
            name: [tuple(row) for row in database.execute_sql(sql, (database.database,))]
            for name, sql in QUERIES.items()
        }
    indexes: dict[tuple[str, str], tuple[bool, tuple[str, ...]]] = {}
    for table, index, non_unique, _seq, column in found["indexes"]:
        unique, columns = indexes.get((table, index), (not non_unique, ()))
        indexes[(table, index)] = (unique, (*columns, column))
    found["indexes"] = indexes
    return found


@pytest.fixture
def mariadb_pair(scratch_servers: ScratchServers) -> Iterator[tuple[Database, Database]]:
    """Two new scratch databases on the MariaDB of ``TEST_MYSQL_URL``, dropped afterwards."""
    urls = [scratch_servers.new_database_url("mysql") for _ in range(2)]
    from_file, from_models = (open_database(url) for url in urls)
    try:
        yield from_file, from_models
    finally:
        for database, url in ((from_file, urls[0]), (from_models, urls[1])):
            close_database(database)
            scratch_servers.drop(url)


def apply_schema_sql(database: Database) -> None:
    """Run every statement of ``schema.sql`` on ``database``."""
    with database.connection_context():
        for statement in statements(SCHEMA_SQL.read_text(encoding="utf-8")):
            database.execute_sql(statement)


def test_schema_sql_matches_the_models_on_mariadb(
    mariadb_pair: tuple[Database, Database],
) -> None:
    from_file, from_models = mariadb_pair
    apply_schema_sql(from_file)
    bind(from_models)
    create_schema(from_models)

    expected, actual = describe(from_models), describe(from_file)
    assert [t[0] for t in expected["tables"]] == TABLES
    assert actual["tables"] == expected["tables"]
    assert actual["columns"] == expected["columns"]
    assert actual["indexes"] == expected["indexes"]
    assert actual["foreign_keys"] == expected["foreign_keys"]
    # the things the audit relies on, spelled out
    assert actual["indexes"][("agent_step", "agent_step_run_id_step_index")] == (
        True,
        ("run_id", "step_index"),
    )
    assert actual["indexes"][("chat_session", "chat_session_session_id")] == (True, ("session_id",))
    assert [fk[2:] for fk in actual["foreign_keys"]] == [
        ("alert_id", "alert_record", "id", "RESTRICT", "CASCADE"),
        ("step_id", "agent_step", "id", "RESTRICT", "SET NULL"),
    ]
    longtext = {(c[0], c[2]) for c in actual["columns"] if c[3] == "longtext"}
    assert ("tool_invocation", "raw_output") in longtext


def test_schema_sql_applies_twice_and_keeps_rows(mariadb_pair: tuple[Database, Database]) -> None:
    from_file, _ = mariadb_pair
    apply_schema_sql(from_file)
    with from_file.connection_context():
        from_file.execute_sql(
            "INSERT INTO chat_session (session_id, title, created_at, updated_at) "
            "VALUES ('sess-1', 'kept', NOW(), NOW())"
        )
    before = describe(from_file)
    apply_schema_sql(from_file)
    assert describe(from_file) == before
    with from_file.connection_context():
        assert from_file.execute_sql("SELECT title FROM chat_session").fetchall() == (("kept",),)


def test_the_committed_schema_sql_is_generated_from_the_models() -> None:
    assert SCHEMA_SQL.read_text(encoding="utf-8") == mysql_schema_sql(), "run `make schema`"


def test_the_generated_schema_names_every_table_and_column_of_the_models() -> None:
    text = mysql_schema_sql()
    for model in MODELS:
        table = text.split(f"CREATE TABLE IF NOT EXISTS `{model._meta.table_name}` (")[1]
        columns = [line.split("`")[1] for line in table.split(";")[0].splitlines()[1:-1]]
        names = [f.column_name for f in model._meta.sorted_fields]
        assert columns[: len(names)] == names, model._meta.table_name
