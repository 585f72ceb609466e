"""Shared fixtures: a bound ``database`` on every available backend, scratch databases, Redis.

SQLite always runs (a temporary file). MariaDB and PostgreSQL run when ``TEST_MYSQL_URL`` /
``TEST_POSTGRES_URL`` are set; each test session then creates its own scratch database on the
server (``test_<pid>_<hex>``, never the database the URL names, so concurrent test runs against
the same server do not meet), every test creates the tables in it and drops them afterwards,
and the scratch databases are dropped when the session ends. Redis runs when ``TEST_REDIS_URL``
is set. With ``CI=1``, a server whose URL is set but which cannot be reached fails the test
instead of skipping it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from peewee import Database
from playhouse.pool import PooledDatabase

from tests.environment import unavailable
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import MODELS
from webapp.persistence.schema import create_schema

BACKENDS = ("sqlite", "mysql", "postgres")
ENV_VARS = {"mysql": "TEST_MYSQL_URL", "postgres": "TEST_POSTGRES_URL"}
LABELS = {"mysql": "MariaDB", "postgres": "PostgreSQL"}
CONNECT_TIMEOUT_SECONDS = 5


def _admin_connection(backend: str, url: str) -> Any:
    """An autocommit DB-API connection to the server ``url`` names (for CREATE/DROP DATABASE)."""
    parsed = urlparse(url)
    credentials = {
        "host": parsed.hostname,
        "user": unquote(parsed.username or ""),
        "password": unquote(parsed.password or ""),
        "connect_timeout": CONNECT_TIMEOUT_SECONDS,
    }
    if backend == "mysql":
        import pymysql

        return pymysql.connect(port=parsed.port or 3306, autocommit=True, **credentials)
    import psycopg2

    conn = psycopg2.connect(
        port=parsed.port or 5432, dbname=parsed.path.strip("/") or "postgres", **credentials
    )
    conn.autocommit = True
    return conn


def _admin_execute(backend: str, url: str, sql: str) -> None:
    """Run one statement on a fresh admin connection and close it."""
    conn = _admin_connection(backend, url)
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


class ScratchServers:
    """Creates scratch databases on the configured servers; drops them all in ``close``."""

    def __init__(self) -> None:
        self._checked: dict[str, str | Exception] = {}
        self._shared: dict[str, str] = {}
        self._created: list[tuple[str, str, str]] = []

    def server_url(self, backend: str) -> str:
        """The ``TEST_*_URL`` of ``backend``, checked reachable (else skip, or fail under CI)."""
        variable = ENV_VARS[backend]
        url = os.environ.get(variable, "")
        if not url:
            pytest.skip(f"{variable} not set: {LABELS[backend]} tests skipped")
        if backend not in self._checked:
            try:
                _admin_execute(backend, url, "SELECT 1")
                self._checked[backend] = url
            except Exception as exc:
                self._checked[backend] = exc
        problem = self._checked[backend]
        if isinstance(problem, Exception):
            where = f"{urlparse(url).hostname}:{urlparse(url).port or ''}"
            unavailable(
                f"{variable} is set but {LABELS[backend]} at {where} is unreachable: {problem}"
            )
        return url

    def new_database_url(self, backend: str) -> str:
        """The URL of a new, empty scratch database on ``backend``'s server."""
        url = self.server_url(backend)
        name = f"test_{os.getpid()}_{secrets.token_hex(4)}"
        options = " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci" if backend == "mysql" else ""
        _admin_execute(backend, url, f"CREATE DATABASE {name}{options}")
        self._created.append((backend, url, name))
        return urlparse(url)._replace(path=f"/{name}").geturl()

    def shared_url(self, backend: str) -> str:
        """The session's scratch database on ``backend`` (created on first use)."""
        if backend not in self._shared:
            self._shared[backend] = self.new_database_url(backend)
        return self._shared[backend]

    def drop(self, database_url: str) -> None:
        """Drop one scratch database now (it is forgotten by ``close``)."""
        name = urlparse(database_url).path.strip("/")
        for created in [c for c in self._created if c[2] == name]:
            self._created.remove(created)
            self._drop(*created)

    def close(self) -> None:
        """Drop every scratch database created so far."""
        while self._created:
            self._drop(*self._created.pop())
        self._shared.clear()

    @staticmethod
    def _drop(backend: str, url: str, name: str) -> None:
        force = " WITH (FORCE)" if backend == "postgres" else ""
        _admin_execute(backend, url, f"DROP DATABASE IF EXISTS {name}{force}")


def close_database(database: Database) -> None:
    """Close every connection of ``database``: the pool's too, so servers see none left."""
    if isinstance(database, PooledDatabase):
        database.close_all()
    else:
        database.close()


@pytest.fixture(scope="session")
def scratch_servers() -> Iterator[ScratchServers]:
    """Scratch databases on the MariaDB/PostgreSQL test servers, dropped after the session."""
    servers = ScratchServers()
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(params=BACKENDS)
def database(
    request: pytest.FixtureRequest, tmp_path: Any, scratch_servers: ScratchServers
) -> Iterator[Database]:
    """An empty schema on each available backend, bound to the models; dropped afterwards."""
    backend: str = request.param
    if backend == "sqlite":
        db = open_database("sqlite:///" + str(tmp_path / "t.db"))
    else:
        db = open_database(scratch_servers.shared_url(backend))
    bind(db)
    create_schema(db)
    try:
        yield db
    finally:
        bind(db)
        try:
            if backend != "sqlite":
                with db.connection_context():
                    db.drop_tables(MODELS, safe=True)
        finally:
            close_database(db)


@pytest.fixture
def redis_url() -> str:
    """``TEST_REDIS_URL``, checked reachable; skips (fails under CI) otherwise."""
    url = os.environ.get("TEST_REDIS_URL", "")
    if not url:
        pytest.skip("TEST_REDIS_URL not set: Redis tests skipped")
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        client.ping()
    except redis.RedisError as exc:
        unavailable(f"TEST_REDIS_URL is set but Redis at {url} is unreachable: {exc}")
    finally:
        client.close()
    return url
