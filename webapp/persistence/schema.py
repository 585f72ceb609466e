"""Creating the schema, and upgrading a database made by an earlier version.

Schema creation is race-free with any number of processes booting at once (web workers and
Celery workers alike): :func:`create_schema` holds a database-level lock while it creates what
is missing - ``GET_LOCK`` on MySQL/MariaDB, ``pg_advisory_lock`` on PostgreSQL, a
``BEGIN IMMEDIATE`` write transaction on SQLite - so the second process waits, then finds
everything there. A lock rather than creation in the gunicorn master: it also covers Celery
workers, ``flask init-db`` and several machines starting together.

Column order (issue 12): SQLite stores a row's columns in table order, and a value larger than a
page's share spills into a chain of overflow pages; reading any column stored after it walks
that chain. A step's ``model_input`` (tens of KB) sat before the step's other columns, so
listing a trace's steps without their inputs still read every input's pages (88 vs 38 ms for
10,000 steps). It is now the table's last column; :func:`_large_columns_last` rebuilds an
older SQLite table once, in one transaction (SQLite's own procedure: a new table, the rows
copied, the old one dropped, the new one renamed, foreign keys off meanwhile and checked
before the commit). MariaDB and PostgreSQL keep an existing table as it is: InnoDB stores a
large LONGTEXT off the row and PostgreSQL TOASTs it, so column order does not change what
their reads touch (measured: 179 and 55 ms for the same read without ``model_input``).

``diagnosis_run_text`` (:class:`~webapp.persistence.models.RunText`, what the runs list's text
filter scans) is kept by triggers on ``diagnosis_run`` (:data:`RUN_TEXT_TRIGGERS`), created here
with the table; a database created before it gets the table, the triggers, then a backfill of
the runs it already holds (``INSERT ... SELECT``, skipping rows a trigger wrote meanwhile).
Triggers rather than writes from the app: every writer (the run lifecycle, imports, a DBA's
SQL) keeps it right, at no extra statement per run. On MySQL and
MariaDB creating a trigger needs the TRIGGER privilege and, with binary logging on, SUPER or
``log_bin_trust_function_creators=1``; a user without them gets a warning at start-up, no
``diagnosis_run_text``, and the text filter scanning ``diagnosis_run`` (slower, same rows).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from weakref import WeakKeyDictionary

from peewee import (
    Database,
    DatabaseError,
    MySQLDatabase,
    OperationalError,
    SchemaManager,
    SqliteDatabase,
)
from playhouse.migrate import SchemaMigrator, migrate
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .db import MYSQL_FIELD_TYPES, MYSQL_TABLE_SETTINGS, is_mysql, is_postgres
from .models import MODELS, AgentStep, BaseModel, ChatSession, DiagnosisRun, RunText

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
#: Large columns that must be a table's last on SQLite (:func:`_large_columns_last`).
LARGE_COLUMNS_LAST: tuple[tuple[type[BaseModel], str], ...] = ((AgentStep, "model_input"),)


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
    """Create the missing tables, indexes and columns under the schema lock; return new tables.

    On SQLite a process may still meet "database is locked" where SQLite does not wait (a
    fresh file switching to WAL): that is retried, 5 attempts 0.1-0.8 s apart.
    """
    retrying = Retrying(
        stop=stop_after_attempt(5 if not (is_mysql(database) or is_postgres(database)) else 1),
        wait=wait_exponential(multiplier=0.1, max=0.8),
        retry=retry_if_exception_type(OperationalError),
        reraise=True,
    )
    return retrying(_create_schema, database)


def _create_schema(database: Database) -> list[str]:
    with database.connection_context():
        if not (is_mysql(database) or is_postgres(database)):
            _large_columns_last(database)
        return _create_missing(database)


def _create_missing(database: Database) -> list[str]:
    with schema_lock(database):
        existing = set(database.get_tables())
        for model in MODELS:
            model._meta.table_settings = MYSQL_TABLE_SETTINGS if is_mysql(database) else []
        # Stored in key order on SQLite too (peewee would print it for every backend).
        RunText._meta.without_rowid = isinstance(database, SqliteDatabase)
        try:
            database.create_tables(MODELS, safe=True)
        finally:
            RunText._meta.without_rowid = False
        _add_later_columns(database, existing)
        _add_missing_indexes(database, existing)
        _add_run_text(database, existing)
        now = set(database.get_tables())  # without diagnosis_run_text if it was dropped again
    return [m._meta.table_name for m in MODELS if m._meta.table_name in now - existing]


def _large_columns_last(database: Database) -> None:
    """Rebuild each SQLite table of :data:`LARGE_COLUMNS_LAST` whose large column is not its
    last, in the models' column order (once: a rebuilt table is left alone).

    Foreign keys are switched off for the connection around the transaction (SQLite ignores the
    pragma inside one): dropping the old table must not run ``tool_invocation``'s ``ON DELETE
    SET NULL``. ``PRAGMA foreign_key_check`` must find nothing before the commit."""
    if not any(_not_last(database, model, column) for model, column in LARGE_COLUMNS_LAST):
        return
    database.execute_sql("PRAGMA foreign_keys = 0")
    try:
        with database.atomic("IMMEDIATE"):  # the schema lock: another process waits, then skips
            for model, column in LARGE_COLUMNS_LAST:
                if _not_last(database, model, column):
                    _rebuild(database, model)
            broken = database.execute_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise OperationalError(f"foreign keys broken by the rebuild: {broken[:5]}")
    finally:
        database.execute_sql("PRAGMA foreign_keys = 1")


def _not_last(database: Database, model: type[BaseModel], column: str) -> bool:
    names = [c.name for c in database.get_columns(model._meta.table_name)]
    return column in names and names[-1] != column


def _rebuild(database: Database, model: type[BaseModel]) -> None:
    """``model``'s table recreated from its declaration, rows, ids and indexes kept."""
    table = model._meta.table_name
    rebuilt = f"{table}__rebuilt"
    schema: Any = getattr(model, "_schema")  # noqa: B009 - peewee's schema manager
    sql, params = database.get_sql_context().sql(schema._create_table(safe=False)).query()
    create = f'CREATE TABLE "{table}"'
    if not sql.startswith(create):
        raise OperationalError(f"unexpected DDL for {table}: {sql[:80]}")
    database.execute_sql(f'CREATE TABLE "{rebuilt}"' + sql[len(create) :], params)
    present = {c.name for c in database.get_columns(table)}
    names = ", ".join(
        f'"{f.column_name}"' for f in model._meta.sorted_fields if f.column_name in present
    )
    database.execute_sql(f'INSERT INTO "{rebuilt}" ({names}) SELECT {names} FROM "{table}"')
    database.execute_sql(f'DROP TABLE "{table}"')
    database.execute_sql(f'ALTER TABLE "{rebuilt}" RENAME TO "{table}"')
    for index in model._meta.fields_to_index():
        database.execute(schema._create_index(index, safe=False))
    log.info("rebuilt table %s with its large column last", table)


#: The triggers that keep ``diagnosis_run_text`` equal to ``LOWER`` of every run's question and
#: answer, per backend: name -> DDL. MySQL/MariaDB triggers fire on every UPDATE (there is no
#: ``UPDATE OF``): theirs touches the text row only when a copied column changed (a lease
#: renewal writes nothing). Single statements, so ``schema.sql`` carries the MySQL ones as is.
RUN_TEXT_TRIGGERS: dict[str, dict[str, str]] = {
    "sqlite": {
        "diagnosis_run_text_insert": """
CREATE TRIGGER IF NOT EXISTS diagnosis_run_text_insert AFTER INSERT ON diagnosis_run
BEGIN
  INSERT INTO diagnosis_run_text (run_id, started_at, question, answer)
  VALUES (NEW.run_id, NEW.started_at, LOWER(NEW.question), LOWER(NEW.answer));
END""",
        "diagnosis_run_text_update": """
CREATE TRIGGER IF NOT EXISTS diagnosis_run_text_update
AFTER UPDATE OF run_id, started_at, question, answer ON diagnosis_run
BEGIN
  UPDATE diagnosis_run_text SET run_id = NEW.run_id, started_at = NEW.started_at,
    question = LOWER(NEW.question), answer = LOWER(NEW.answer)
  WHERE run_id = OLD.run_id;
END""",
        "diagnosis_run_text_delete": """
CREATE TRIGGER IF NOT EXISTS diagnosis_run_text_delete AFTER DELETE ON diagnosis_run
BEGIN
  DELETE FROM diagnosis_run_text WHERE run_id = OLD.run_id;
END""",
    },
    "mysql": {
        "diagnosis_run_text_insert": """
CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_insert` AFTER INSERT ON `diagnosis_run`
FOR EACH ROW
  INSERT INTO `diagnosis_run_text` (`run_id`, `started_at`, `question`, `answer`)
  VALUES (NEW.`run_id`, NEW.`started_at`, LOWER(NEW.`question`), LOWER(NEW.`answer`))""",
        "diagnosis_run_text_update": """
CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_update` AFTER UPDATE ON `diagnosis_run`
FOR EACH ROW
  UPDATE `diagnosis_run_text` SET `run_id` = NEW.`run_id`, `started_at` = NEW.`started_at`,
    `question` = LOWER(NEW.`question`), `answer` = LOWER(NEW.`answer`)
  WHERE `run_id` = OLD.`run_id`
    AND NOT (NEW.`run_id` <=> OLD.`run_id` AND NEW.`started_at` <=> OLD.`started_at`
      AND NEW.`question` <=> OLD.`question` AND NEW.`answer` <=> OLD.`answer`)""",
        "diagnosis_run_text_delete": """
CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_delete` AFTER DELETE ON `diagnosis_run`
FOR EACH ROW
  DELETE FROM `diagnosis_run_text` WHERE `run_id` = OLD.`run_id`""",
    },
    "postgres": {
        "diagnosis_run_text_sync()": """
CREATE OR REPLACE FUNCTION diagnosis_run_text_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO diagnosis_run_text (run_id, started_at, question, answer)
    VALUES (NEW.run_id, NEW.started_at, LOWER(NEW.question), LOWER(NEW.answer));
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE diagnosis_run_text SET run_id = NEW.run_id, started_at = NEW.started_at,
      question = LOWER(NEW.question), answer = LOWER(NEW.answer)
    WHERE run_id = OLD.run_id;
  ELSE
    DELETE FROM diagnosis_run_text WHERE run_id = OLD.run_id;
  END IF;
  RETURN NULL;
END
$$""",
        "diagnosis_run_text_sync": """
CREATE TRIGGER diagnosis_run_text_sync
AFTER INSERT OR UPDATE OF run_id, started_at, question, answer OR DELETE ON diagnosis_run
FOR EACH ROW EXECUTE FUNCTION diagnosis_run_text_sync()""",
    },
}


#: Fills ``diagnosis_run_text`` from the runs a database held before it existed.
RUN_TEXT_BACKFILL = {
    "sqlite": "INSERT OR IGNORE INTO {table} {select}",
    "mysql": "INSERT IGNORE INTO {table} {select}",
    "postgres": "INSERT INTO {table} {select} ON CONFLICT DO NOTHING",
}


_BACKFILL_SELECT = (
    "(run_id, started_at, question, answer) "
    "SELECT run_id, started_at, LOWER(question), LOWER(answer) FROM diagnosis_run"
)


def dialect(database: Database) -> str:
    """``sqlite``, ``mysql`` (MySQL/MariaDB) or ``postgres``."""
    return "mysql" if is_mysql(database) else "postgres" if is_postgres(database) else "sqlite"


def _triggers(database: Database) -> set[str]:
    """The names of the triggers on ``diagnosis_run`` (PostgreSQL: also ``name()`` of the
    functions they call)."""
    kind = dialect(database)
    if kind == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'diagnosis_run'"
    elif kind == "mysql":
        sql = (
            "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS "
            "WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'diagnosis_run'"
        )
    else:
        sql = (
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
            "AND tgrelid = 'diagnosis_run'::regclass "
            "UNION SELECT proname || '()' FROM pg_proc WHERE proname = 'diagnosis_run_text_sync'"
        )
    return {str(row[0]) for row in database.execute_sql(sql).fetchall()}


#: MySQL/MariaDB errors that mean this user may not create triggers: TRIGGER command denied
#: (1142), SUPER needed (1227), SUPER or ``log_bin_trust_function_creators`` needed because
#: binary logging is on (1419).
TRIGGER_DENIED = frozenset({1142, 1227, 1419})


def _add_run_text(database: Database, existing: set[str]) -> None:
    """Create the missing ``diagnosis_run_text`` triggers; backfill a table created just now
    for runs that were already there (after the triggers: no run is missed).

    A MySQL/MariaDB user that may not create triggers (see :data:`TRIGGER_DENIED`) does not
    stop the app: the table is dropped again, a warning says what to grant, and the text filter
    scans ``diagnosis_run`` as before (:func:`run_text_kept`). The next start (or ``flask
    init-db``) tries again, and backfills then."""
    kind = dialect(database)
    present = _triggers(database)
    table = RunText._meta.table_name
    try:
        for name, ddl in RUN_TEXT_TRIGGERS[kind].items():
            if name not in present or name.endswith("()"):  # a function: always the current body
                database.execute_sql(ddl.strip())
    except DatabaseError as exc:
        if kind != "mysql" or _mysql_errno(exc) not in TRIGGER_DENIED:
            raise
        for name in RUN_TEXT_TRIGGERS[kind]:
            database.execute_sql(f"DROP TRIGGER IF EXISTS `{name}`")
        database.execute_sql(f"DROP TABLE IF EXISTS `{table}`")
        _RUN_TEXT_KEPT[database] = False
        log.warning(
            "cannot create the triggers that keep %s (%s): the runs list's text filter scans "
            "diagnosis_run instead; grant TRIGGER (and, with binary logging on, SUPER or "
            "log_bin_trust_function_creators=1) and restart",
            table,
            exc,
        )
        return
    _RUN_TEXT_KEPT[database] = True
    if table not in existing and DiagnosisRun._meta.table_name in existing:
        cursor = database.execute_sql(
            RUN_TEXT_BACKFILL[kind].format(table=table, select=_BACKFILL_SELECT)
        )
        log.info("filled %s with %s existing runs", table, cursor.rowcount)


_RUN_TEXT_KEPT: WeakKeyDictionary[Database, bool] = WeakKeyDictionary()


def run_text_kept(database: Database) -> bool:
    """Whether ``diagnosis_run_text`` exists (and so its triggers: it is dropped when they
    cannot be created); asked once per database object."""
    kept = _RUN_TEXT_KEPT.get(database)
    if kept is None:
        with database.connection_context():
            kept = _RUN_TEXT_KEPT[database] = RunText.table_exists()
    return kept


def _mysql_errno(exc: BaseException) -> int | None:
    """The server's error number of a PyMySQL error: its first argument, also when peewee has
    wrapped it (peewee's error holds the driver's error, then its arguments)."""
    for arg in exc.args[:2]:
        if isinstance(arg, int):
            return arg
    return None


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
-- Idempotent: every table is CREATE TABLE IF NOT EXISTS with its indexes inline, every trigger
-- CREATE TRIGGER IF NOT EXISTS, so applying the file twice is harmless. Defaults live in the
-- models (peewee puts none in DDL).
--
--   mariadb -u USER -p DATABASE < schema.sql
"""
SCHEMA_SQL_TRIGGERS = """\
-- diagnosis_run_text follows diagnosis_run (with binary logging on, creating a trigger needs
-- SUPER or log_bin_trust_function_creators=1). Filling it for runs that existed before it:
--   INSERT IGNORE INTO diagnosis_run_text (run_id, started_at, question, answer)
--   SELECT run_id, started_at, LOWER(question), LOWER(answer) FROM diagnosis_run
"""
_INDEX = re.compile(r"CREATE (UNIQUE )?INDEX (`\w+`) ON `\w+` (\(.*\))")


def mysql_schema_sql() -> str:
    """``schema.sql``: the tables, indexes and triggers :func:`create_schema` creates on
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
    blocks.append(SCHEMA_SQL_TRIGGERS)
    blocks += [ddl.strip() + ";\n" for ddl in RUN_TEXT_TRIGGERS["mysql"].values()]
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
