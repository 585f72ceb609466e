"""open_database, create_schema and the shared database fixtures' skip/fail rules."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from peewee import Database, SqliteDatabase
from playhouse.pool import MaxConnectionsExceeded, PooledMySQLDatabase, PooledPostgresqlDatabase

from tests.conftest import ScratchServers, close_database
from webapp.persistence.db import DatabaseURLError, bind, open_database
from webapp.persistence.models import MODELS, ChatSession
from webapp.persistence.schema import create_schema


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://host/db",
        "oracle://user@host:1521/db",
        "mysql://",
        "mysql://127.0.0.1:3306",
        "mysql://127.0.0.1:3306/",
        "postgresql:///test",
        "postgres://user@/test",
    ],
)
def test_open_database_rejects_bad_urls(url: str) -> None:
    with pytest.raises(DatabaseURLError):
        open_database(url)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("mysql://root@127.0.0.1:1/nowhere", PooledMySQLDatabase),
        ("mariadb://u:p%40ss@db.invalid/audit", PooledMySQLDatabase),
        ("postgresql://postgres@127.0.0.1:1/nowhere", PooledPostgresqlDatabase),
        ("postgres://u@db.invalid:5433/audit", PooledPostgresqlDatabase),
        ("sqlite:///:memory:", SqliteDatabase),
    ],
)
def test_open_database_builds_without_connecting(url: str, kind: type[Database]) -> None:
    database = open_database(url)
    assert isinstance(database, kind)
    assert database.is_closed()


def test_open_database_reads_credentials_and_options_from_the_url() -> None:
    database = open_database("mariadb://u:p%40ss@db.invalid:3307/audit?connect_timeout=3")
    assert database.database == "audit"
    assert database.connect_params == {
        "host": "db.invalid",
        "port": 3307,
        "user": "u",
        "password": "p@ss",
        "connect_timeout": 3,
        "charset": "utf8mb4",
    }


def test_the_url_sets_the_pool_size_and_wait(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'pool.db'}?max_connections=1&timeout=1")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with database.connection_context():
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        with pytest.raises(MaxConnectionsExceeded):  # the one connection is taken: 1 s, then no
            database.connect()
    finally:
        release.set()
        holder.join()
    with database.connection_context():  # given back: the next one gets it
        assert database.execute_sql("SELECT 1").fetchone() == (1,)
    close_database(database)


def test_open_database_resolves_relative_sqlite_paths_against_base_dir(tmp_path: Path) -> None:
    database = open_database("sqlite:///instance/audit.db", base_dir=tmp_path)
    assert database.database == str(tmp_path / "instance" / "audit.db")
    assert (tmp_path / "instance").is_dir()


def test_create_schema_is_idempotent(database: Database) -> None:
    with database.connection_context():
        ChatSession.create(session_id="sess-1", title="kept")
    assert create_schema(database) == []
    assert create_schema(database) == []
    with database.connection_context():
        assert [s.title for s in ChatSession.select()] == ["kept"]
        tables = set(database.get_tables())
    assert {m._meta.table_name for m in MODELS} <= tables


def test_create_schema_creates_every_table_of_an_empty_database(tmp_path: Path) -> None:
    database = bind(open_database("sqlite:///" + str(tmp_path / "empty.db")))
    try:
        assert create_schema(database) == [m._meta.table_name for m in MODELS]
        assert create_schema(database) == []
    finally:
        database.close()


UNREACHABLE = "mysql://root@127.0.0.1:1/test"


def test_unset_server_url_skips_with_the_variable_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_MYSQL_URL", raising=False)
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.skip.Exception, match="TEST_MYSQL_URL not set"):
        ScratchServers().shared_url("mysql")


def test_unreachable_server_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_MYSQL_URL", UNREACHABLE)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(
        pytest.skip.Exception, match=re.escape("MariaDB at 127.0.0.1:1 is unreachable")
    ):
        ScratchServers().shared_url("mysql")


def test_unreachable_server_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_MYSQL_URL", UNREACHABLE)
    monkeypatch.setenv("CI", "1")
    servers = ScratchServers()
    for _ in range(2):  # the failure is remembered, not retried for every test
        with pytest.raises(pytest.fail.Exception, match="CI=1: TEST_MYSQL_URL is set but"):
            servers.new_database_url("mysql")


def test_redis_url_fixture_yields_a_server_that_answers(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url, socket_connect_timeout=5)
    try:
        assert client.ping()
    finally:
        client.close()
