"""Binding the models to the database ``DATABASE_URL`` names, and creating the schema.

``sqlite:///relative/path.db`` (or ``sqlite:////absolute/path.db``; WAL mode, foreign keys on,
a busy timeout for concurrent writers), ``mysql://user:password@host:3306/db`` (PyMySQL,
utf8mb4, pooled) and ``postgresql://user:password@host:5432/db`` (psycopg2, pooled). Nothing
connects at import time; the app connects per request and the run lifecycle per run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlparse

from peewee import Database, SqliteDatabase
from playhouse.pool import PooledMySQLDatabase, PooledPostgresqlDatabase, PooledSqliteDatabase

from .models import MODELS, database_proxy

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 15000,
    "synchronous": "normal",
}
POOL = {"max_connections": 32, "stale_timeout": 300, "timeout": 10}
# Binary collation: ids compare case-sensitively (session "Foo" is not session "foo"), as they
# do on SQLite and PostgreSQL. DATETIME(3): millisecond timestamps, as on the other backends.
MYSQL_TABLE_SETTINGS = ["ENGINE=InnoDB", "DEFAULT CHARSET=utf8mb4", "COLLATE=utf8mb4_bin"]
MYSQL_FIELD_TYPES = {"DATETIME": "DATETIME(3)"}


class DatabaseURLError(ValueError):
    """``DATABASE_URL`` is not one of the supported forms."""


def open_database(url: str, *, base_dir: Path | None = None) -> Database:
    """Build (without connecting) the peewee database ``url`` names."""
    parsed = urlparse(url)
    scheme = parsed.scheme.split("+", 1)[0].lower()
    options: dict[str, Any] = dict(parse_qsl(parsed.query))
    if scheme == "sqlite":
        path = unquote(parsed.path[1:] if parsed.path.startswith("/") else parsed.path)
        if not path or path == ":memory:":
            path = ":memory:"
        elif not Path(path).is_absolute() and base_dir is not None:
            path = str(base_dir / path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        if path == ":memory:":  # every connection would be a new, empty database: no pool
            return SqliteDatabase(
                path,
                pragmas=SQLITE_PRAGMAS,
                field_types={"LONGTEXT": "TEXT"},
                check_same_thread=False,
            )
        # Pooled: closing the last connection of a WAL database checkpoints it (~5 ms a request).
        return PooledSqliteDatabase(
            path,
            pragmas=SQLITE_PRAGMAS,
            field_types={"LONGTEXT": "TEXT"},
            check_same_thread=False,
            **POOL,
        )
    if not parsed.hostname or not parsed.path.strip("/"):
        raise DatabaseURLError(f"{scheme}:// URLs need a host and a database name")
    common = {
        "host": parsed.hostname,
        "user": unquote(parsed.username or ""),
        "password": unquote(parsed.password or ""),
        **POOL,
    }
    name = parsed.path.strip("/")
    if scheme in ("mysql", "mariadb"):
        return PooledMySQLDatabase(
            name,
            port=parsed.port or 3306,
            charset="utf8mb4",
            field_types=MYSQL_FIELD_TYPES,
            **common,
            **options,
        )
    if scheme in ("postgres", "postgresql"):
        return PooledPostgresqlDatabase(
            name, port=parsed.port or 5432, field_types={"LONGTEXT": "TEXT"}, **common, **options
        )
    raise DatabaseURLError(
        f"unsupported DATABASE_URL scheme {parsed.scheme!r}: use sqlite:///, mysql:// or "
        f"postgresql://"
    )


def bind(database: Database) -> Database:
    """Point every model at ``database``."""
    database_proxy.initialize(database)
    return database


def is_mysql(database: Database) -> bool:
    """True for MySQL/MariaDB (which need explicit table options)."""
    return "mysql" in type(database).__name__.lower()


def create_schema(database: Database) -> list[str]:
    """Create the missing tables and indexes (idempotent); return the tables created."""
    with database.connection_context():
        existing = set(database.get_tables())
        for model in MODELS:
            model._meta.table_settings = MYSQL_TABLE_SETTINGS if is_mysql(database) else []
        database.create_tables(MODELS, safe=True)
    return [m._meta.table_name for m in MODELS if m._meta.table_name not in existing]


def schema_exists(database: Database) -> bool:
    """True when every table of the models exists."""
    with database.connection_context():
        existing = set(database.get_tables())
    return all(m._meta.table_name in existing for m in MODELS)
