"""Binding the models to the database ``DATABASE_URL`` names: connections, transactions, retries.

``sqlite:///relative/path.db`` (or ``sqlite:////absolute/path.db``; WAL, a busy timeout),
``mysql://user:password@host:3306/db`` (PyMySQL, utf8mb4) and
``postgresql://user:password@host:5432/db`` (psycopg2), each pooled. ``playhouse.db_url``
parses the URL; its query string sets driver and pool options over the defaults here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from peewee import Database, InterfaceError, OperationalError, SqliteDatabase
from playhouse import db_url
from playhouse.pool import PooledDatabase
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from .models import database_proxy

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a run's writes meeting a dropped connection are retried on a fresh one (0.2 s,
#: doubling up to 2 s apart): a failover costs retries, not a run; shorter than a lease.
RETRY_SECONDS = 15.0

# busy_timeout first: switching a fresh file to WAL takes a lock that concurrent processes
# must wait for, not fail on.
SQLITE_PRAGMAS = {"busy_timeout": 15000, "journal_mode": "wal", "foreign_keys": 1, "synchronous": 1}
#: Per process: up to 30 s waiting for one of 32 connections; none reused after 5 minutes.
POOL = {"max_connections": 32, "stale_timeout": 300, "timeout": 30}
# Binary collation: ids compare case-sensitively (session "Foo" is not session "foo"), as they
# do on SQLite and PostgreSQL. DATETIME(3): millisecond timestamps, as on the other backends.
MYSQL_TABLE_SETTINGS = ["ENGINE=InnoDB", "DEFAULT CHARSET=utf8mb4", "COLLATE=utf8mb4_bin"]
MYSQL_FIELD_TYPES = {"DATETIME": "DATETIME(3)"}
#: ``DATABASE_URL`` scheme -> the ``playhouse.db_url`` scheme of its pooled database class.
#: SQLite too: closing the last connection of a WAL database checkpoints it (~5 ms a request).
POOLED_SCHEMES = {
    "sqlite": "sqlite+pool",
    "mysql": "mysql+pool",
    "mariadb": "mysql+pool",
    "postgres": "postgres+pool",
    "postgresql": "postgres+pool",
}
#: Options of each backend's database class, before the URL's own.
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "sqlite+pool": {
        "pragmas": SQLITE_PRAGMAS,
        "field_types": {"LONGTEXT": "TEXT"},
        "check_same_thread": False,
    },
    "mysql+pool": {"charset": "utf8mb4", "field_types": MYSQL_FIELD_TYPES},
    "postgres+pool": {"field_types": {"LONGTEXT": "TEXT"}},
}


class DatabaseURLError(ValueError):
    """``DATABASE_URL`` is not one of the supported forms."""


def open_database(url: str, *, base_dir: Path | None = None) -> Database:
    """Build (without connecting) the peewee database ``url`` names; a relative SQLite path is
    taken from ``base_dir`` (its folder is created)."""
    parsed = urlparse(url)
    scheme = POOLED_SCHEMES.get(parsed.scheme.split("+", 1)[0].lower())
    if scheme is None:
        raise DatabaseURLError(
            f"unsupported DATABASE_URL scheme {parsed.scheme!r}: use sqlite:///, mysql:// or "
            f"postgresql://"
        )
    options = db_url.parseresult_to_dict(
        parsed._replace(scheme=scheme), unquote_password=True, unquote_user=True
    )
    name = options.pop("database")
    if scheme != "sqlite+pool" and not (parsed.hostname and name):
        raise DatabaseURLError(f"{parsed.scheme}:// URLs need a host and a database name")
    if name == ":memory:":  # every connection would be a new, empty database: no pool
        return SqliteDatabase(name, **DEFAULT_OPTIONS[scheme], **options)
    if scheme == "sqlite+pool":
        if base_dir is not None:
            name = str(base_dir / name)  # an absolute path stays as it is
        Path(name).parent.mkdir(parents=True, exist_ok=True)
    database: Database = db_url.schemes[scheme](
        name, **{**POOL, **DEFAULT_OPTIONS[scheme], **options}
    )
    return database


def bind(database: Database) -> Database:
    database_proxy.initialize(database)
    return database


def is_bound(database: Database) -> bool:
    """True while the models are bound to ``database`` (they are process-wide)."""
    return database_proxy.obj is database


def is_mysql(database: Database) -> bool:
    """True for MySQL/MariaDB (which need explicit table options)."""
    return "mysql" in type(database).__name__.lower()


def is_postgres(database: Database) -> bool:
    return "postgres" in type(database).__name__.lower()


def write_transaction(database: Database) -> Any:
    """A transaction holding the write lock from its start: ``BEGIN IMMEDIATE`` on SQLite (a
    read-then-write waits for the lock instead of failing when it upgrades), else plain."""
    if isinstance(database, SqliteDatabase):
        return database.atomic("IMMEDIATE")
    return database.atomic()


@contextmanager
def connection(database: Database) -> Iterator[None]:
    """The calling thread's open connection if it has one (``connection_context()`` would close
    it on exit), else a short connection context."""
    if not database.is_closed():
        yield
        return
    with database.connection_context():
        yield


def discard_connection(database: Database) -> None:
    """Throw away this thread's connection (never back to the pool): it may be broken.
    Connection contexts further up this thread get a fresh one."""
    if database.is_closed():
        return
    state: Any = getattr(database, "_state")  # noqa: B009 - peewee's per-thread state
    outer = list(state.ctx)
    try:
        if isinstance(database, PooledDatabase):
            database.manual_close()
        elif not (isinstance(database, SqliteDatabase) and database.database == ":memory:"):
            database.close()
    except Exception:  # the connection is broken anyway; the next use opens a fresh one
        log.debug("discarding a broken connection failed", exc_info=True)
        state.reset()
    if outer:
        try:
            database.connect(reuse_if_open=True)
        except Exception:
            log.debug("no fresh connection after discarding a broken one", exc_info=True)
        state.ctx = outer


def retry_disconnects(
    database: Database, write: Callable[[], T], *, seconds: float = RETRY_SECONDS
) -> T:
    """``write()`` on the thread's connection (or a short one), retried on a fresh connection
    for ``seconds`` when the connection drops or the server cannot be reached; the thread's
    connection stays open (a run's, held for its whole duration)."""

    def attempt() -> T:
        try:
            with connection(database):
                return write()
        except (OperationalError, InterfaceError):
            discard_connection(database)
            raise

    retrying = Retrying(
        stop=stop_after_delay(seconds),
        wait=wait_exponential(multiplier=0.2, max=2),
        retry=retry_if_exception_type((OperationalError, InterfaceError)),
        reraise=True,
    )
    return retrying(attempt)
