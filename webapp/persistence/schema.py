"""Creating the schema (its MySQL/MariaDB DDL, ``schema.sql``, is written by ``make schema``).

:func:`create_schema` creates what is missing under a database-wide lock (``GET_LOCK``,
``pg_advisory_lock``, or a ``BEGIN IMMEDIATE`` transaction on SQLite), so any number of
processes may boot at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from peewee import Database, OperationalError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .db import MYSQL_TABLE_SETTINGS, is_mysql, is_postgres
from .models import MODELS

SCHEMA_LOCK = "diagnosis_schema"
SCHEMA_LOCK_SECONDS = 120


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
    """Create the missing tables and their indexes under the schema lock unless every table
    exists; return the new tables ("database is locked" while a fresh SQLite file switches to
    WAL is retried)."""
    retrying = Retrying(
        stop=stop_after_attempt(5 if not (is_mysql(database) or is_postgres(database)) else 1),
        wait=wait_exponential(multiplier=0.1, max=0.8),
        retry=retry_if_exception_type(OperationalError),
        reraise=True,
    )
    return retrying(_create_schema, database)


def _create_schema(database: Database) -> list[str]:
    tables = [m._meta.table_name for m in MODELS]
    with database.connection_context():
        if set(tables) <= set(database.get_tables()):
            return []  # nothing to create: no lock taken
        with schema_lock(database):
            existing = set(database.get_tables())
            for model in MODELS:
                model._meta.table_settings = MYSQL_TABLE_SETTINGS if is_mysql(database) else []
            database.create_tables(MODELS, safe=True)
    return [table for table in tables if table not in existing]
