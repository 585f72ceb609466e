"""Creating the schema, and upgrading a database made by an earlier version.

:func:`create_schema` creates what is missing under a database-wide lock (``GET_LOCK``,
``pg_advisory_lock``, or a ``BEGIN IMMEDIATE`` transaction on SQLite), so any number of
processes may boot at once; an earlier version's tables get the columns of
:data:`LATER_COLUMNS` and the declared indexes they lack.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from peewee import (
    Database,
    MySQLDatabase,
    OperationalError,
    SchemaManager,
)
from playhouse.migrate import SchemaMigrator, migrate
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .db import MYSQL_FIELD_TYPES, MYSQL_TABLE_SETTINGS, is_mysql, is_postgres
from .models import MODELS, BaseModel, ChatSession, DiagnosisRun

log = logging.getLogger(__name__)

SCHEMA_LOCK = "diagnosis_schema"
SCHEMA_LOCK_SECONDS = 120
#: Columns added to tables created before they existed (by :func:`create_schema`).
LATER_COLUMNS: tuple[tuple[type[BaseModel], str], ...] = (
    (DiagnosisRun, "lease_owner"),
    (DiagnosisRun, "lease_expires_at"),
    (ChatSession, "history_cleared_at"),
    (DiagnosisRun, "prompt_tokens"),
    (DiagnosisRun, "completion_tokens"),
    (DiagnosisRun, "cost_usd"),
    (DiagnosisRun, "resumes"),
)


@contextmanager
def schema_lock(database: Database) -> Iterator[None]:
    """Hold the database-wide schema lock (on the open connection) for the block."""
    if is_mysql(database):
        got = database.execute_sql(
            "SELECT GET_LOCK(%s, %s)", (SCHEMA_LOCK, SCHEMA_LOCK_SECONDS)
        ).fetchone()[0]
        if got != 1:
            raise OperationalError(f"schema lock not acquired in {SCHEMA_LOCK_SECONDS} s")
        try:
            yield
        finally:
            database.execute_sql("SELECT RELEASE_LOCK(%s)", (SCHEMA_LOCK,))
    elif is_postgres(database):
        key = int.from_bytes(hashlib.sha256(SCHEMA_LOCK.encode()).digest()[:8], "big", signed=True)
        database.execute_sql("SELECT pg_advisory_lock(%s)", (key,))
        try:
            yield
        finally:
            database.execute_sql("SELECT pg_advisory_unlock(%s)", (key,))
    else:
        with database.atomic("IMMEDIATE"):  # SQLite: one writer at a time, DDL included
            yield


def create_schema(database: Database) -> list[str]:
    """Create the missing tables, indexes and columns under the schema lock; return new tables
    (on SQLite, "database is locked" while a fresh file switches to WAL is retried)."""
    retrying = Retrying(
        stop=stop_after_attempt(5 if not (is_mysql(database) or is_postgres(database)) else 1),
        wait=wait_exponential(multiplier=0.1, max=0.8),
        retry=retry_if_exception_type(OperationalError),
        reraise=True,
    )
    return retrying(_create_schema, database)


def _create_schema(database: Database) -> list[str]:
    with database.connection_context(), schema_lock(database):
        existing = set(database.get_tables())
        for model in MODELS:
            model._meta.table_settings = MYSQL_TABLE_SETTINGS if is_mysql(database) else []
        database.create_tables(MODELS, safe=True)
        _add_later_columns(database, existing)
        _add_missing_indexes(database, existing)
        if "diagnosis_run_text" in existing:
            _drop_run_text(database)
    return [m._meta.table_name for m in MODELS if m._meta.table_name not in existing]


def _drop_run_text(database: Database) -> None:
    """Drop ``diagnosis_run_text`` and its triggers on ``diagnosis_run`` (triggers first: a
    run written in between must not meet a trigger writing to a missing table)."""
    if is_postgres(database):
        database.execute_sql("DROP TRIGGER IF EXISTS diagnosis_run_text_sync ON diagnosis_run")
        database.execute_sql("DROP FUNCTION IF EXISTS diagnosis_run_text_sync()")
    else:
        for event in ("insert", "update", "delete"):
            database.execute_sql(f"DROP TRIGGER IF EXISTS diagnosis_run_text_{event}")
    database.execute_sql("DROP TABLE IF EXISTS diagnosis_run_text")
    log.info("dropped diagnosis_run_text and its triggers")


def _add_later_columns(database: Database, existing: set[str]) -> None:
    """Add the columns of :data:`LATER_COLUMNS` a table created before them lacks."""
    migrator = SchemaMigrator.from_database(database)
    for model, name in LATER_COLUMNS:
        table = model._meta.table_name
        if table not in existing:
            continue
        if name not in {c.name for c in database.get_columns(table)}:
            migrate(migrator.add_column(table, name, model._meta.fields[name]))
            log.info("added column %s to %s", name, table)


def _add_missing_indexes(database: Database, existing: set[str]) -> None:
    """Create the declared indexes a table created before them lacks (MySQL/MariaDB skip a
    table that exists; the other backends create them with IF NOT EXISTS anyway)."""
    for model in MODELS:
        table = model._meta.table_name
        if table not in existing:
            continue
        present = {index.name for index in database.get_indexes(table)}
        for index in model._meta.fields_to_index():
            name = index._name
            if name not in present:
                schema: Any = getattr(model, "_schema")  # noqa: B009 - peewee's schema manager
                database.execute(schema._create_index(index, safe=False))
                log.info("added index %s to %s", name, table)


def schema_exists(database: Database) -> bool:
    """True when every table and column of the models exists."""
    with database.connection_context():
        existing = set(database.get_tables())
        if not all(m._meta.table_name in existing for m in MODELS):
            return False
        columns = {
            table: {c.name for c in database.get_columns(table)}
            for table in {m._meta.table_name for m, _ in LATER_COLUMNS}
        }
    return all(name in columns[m._meta.table_name] for m, name in LATER_COLUMNS)


SCHEMA_SQL_HEADER = """\
-- MySQL/MariaDB DDL of the peewee models (webapp/persistence/models.py), as create_schema
-- creates them. Generated by `make schema` from the models: do not edit (a test checks that
-- this file is what the models generate).
--
-- Idempotent: every table is CREATE TABLE IF NOT EXISTS with its indexes inline, so applying
-- the file twice is harmless. Defaults live in the
-- models (peewee puts none in DDL).
--
--   mariadb -u USER -p DATABASE < schema.sql
"""
_INDEX = re.compile(r"CREATE (UNIQUE )?INDEX (`\w+`) ON `\w+` (\(.*\))")


def mysql_schema_sql() -> str:
    """``schema.sql``: the tables and indexes :func:`create_schema` creates on
    MySQL/MariaDB, rendered by peewee without a connection; each index inline in its table's
    ``CREATE TABLE IF NOT EXISTS`` (MySQL has no ``CREATE INDEX IF NOT EXISTS``)."""
    rendering = MySQLDatabase(None, field_types=MYSQL_FIELD_TYPES)
    blocks = [SCHEMA_SQL_HEADER]
    for model in MODELS:
        kept, model._meta.table_settings = model._meta.table_settings, MYSQL_TABLE_SETTINGS
        try:
            schema: Any = SchemaManager(model, rendering)  # its builders render, not execute
            table = schema._create_table(safe=True).query()[0]
            indexes = [ctx.query()[0] for ctx in schema._create_indexes(safe=False)]
        finally:
            model._meta.table_settings = kept
        head, body = table.split(" (", 1)
        body, options = body.rsplit(")", 1)
        lines = _split_top_level(body) + [_INDEX.sub(r"\1KEY \2 \3", i) for i in indexes]
        blocks.append(f"{head} (\n  " + ",\n  ".join(lines) + f"\n){options};\n")
    return "\n".join(blocks)


def _split_top_level(text: str) -> list[str]:
    """``text`` split on the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:at].strip())
            start = at + 1
    return [*parts, text[start:].strip()]
