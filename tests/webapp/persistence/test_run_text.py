"""The runs list's text filter on every backend: ``diagnosis_run_text`` follows every write to
``diagnosis_run`` (triggers), a database from before it is backfilled, and the search text is
matched as plain characters, case-insensitively by the backend's own ``LOWER``."""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from functools import partial
from urllib.parse import urlparse

import pytest
from peewee import Database

from tests.conftest import ScratchServers, _admin_execute, close_database
from webapp.persistence.db import bind, open_database
from webapp.persistence.listing import Listing, RunFilter
from webapp.persistence.models import DiagnosisRun, RunText
from webapp.persistence.schema import create_schema, dialect, run_text_kept

T0 = datetime(2026, 11, 30, 10, 0, 0, 123000)

QUESTIONS = {
    "run-pct": "disk at 100% on db-1",
    "run-100x": "disk at 100x on db-1",
    "run-under": "job a_b failed",
    "run-axb": "job axb failed",
    "run-slash": "path C:\\temp\\x is gone",
    "run-quote": "it's the cache",
    "run-upper": "ÄRGER mit dem Cache",
    "run-title": "Ärger mit dem Cache",
    "run-lower": "ärger mit dem cache",
}


def add_runs(database: Database, questions: dict[str, str]) -> None:
    with database.connection_context():
        for n, (run_id, question) in enumerate(questions.items()):
            DiagnosisRun.create(
                run_id=run_id,
                session_id=f"sess-{n % 2}",
                agent_flow="CHAT",
                flow="simple",
                status="SUCCESS",
                question=question,
                started_at=T0 + timedelta(seconds=n),
            )


def found(
    database: Database, text: str, session_id: str | None = None, status: str | None = None
) -> set[str]:
    page = Listing(database).runs(RunFilter(text=text, session_id=session_id, status=status), 100)
    assert page.next_cursor is None
    return {row["run_id"] for row in page.rows}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100%", {"run-pct"}),
        ("%", {"run-pct"}),
        ("a_b", {"run-under"}),
        ("_", {"run-under"}),
        ("\\", {"run-slash"}),
        ("c:\\TEMP\\", {"run-slash"}),
        ("it's", {"run-quote"}),
        ("'", {"run-quote"}),
    ],
)
def test_wildcards_backslashes_and_quotes_are_plain_characters(
    database: Database, text: str, expected: set[str]
) -> None:
    add_runs(database, QUESTIONS)
    assert found(database, text) == expected
    # the same through a session's index (the other scan the filter can take)
    assert found(database, text, session_id="sess-0") == {
        r for r in expected if list(QUESTIONS).index(r) % 2 == 0
    }


def test_non_ascii_case_follows_the_backends_lower(database: Database) -> None:
    add_runs(database, QUESTIONS)
    umlauts = {"run-upper", "run-title", "run-lower"}
    if dialect(database) == "sqlite":
        # SQLite's LOWER folds ASCII only: a text always finds itself and its ASCII case
        # variants, but Ä and ä stay different letters.
        assert found(database, "ÄRGER") == {"run-upper", "run-title"}
        assert found(database, "ärger") == {"run-lower"}
    else:
        assert found(database, "ÄRGER") == umlauts
        assert found(database, "ärger") == umlauts
    assert found(database, "MIT DEM cache") == umlauts


def test_the_text_table_follows_updates_and_deletes(database: Database) -> None:
    add_runs(database, QUESTIONS)
    with database.connection_context():
        DiagnosisRun.update(answer="A COLD Cache").where(DiagnosisRun.run_id == "run-pct").execute()
        DiagnosisRun.update(status="FAILED").where(DiagnosisRun.run_id == "run-axb").execute()
        DiagnosisRun.delete().where(DiagnosisRun.run_id == "run-quote").execute()
        rows = {r.run_id: r for r in RunText.select()}
    assert found(database, "cold cache") == {"run-pct"}
    assert found(database, "cold cache", status="SUCCESS") == {"run-pct"}
    assert found(database, "cache") == {"run-pct", "run-upper", "run-title", "run-lower"}
    assert "run-quote" not in rows and rows["run-pct"].answer == "a cold cache"
    assert rows["run-axb"].question == "job axb failed" and rows["run-axb"].answer is None
    assert rows["run-pct"].started_at == T0


def test_a_database_from_before_the_text_table_is_backfilled(database: Database) -> None:
    add_runs(database, QUESTIONS)
    with database.connection_context():
        # the schema of a database from before the text table: no table, no triggers
        for name in ("insert", "update", "delete"):
            if dialect(database) == "postgres":
                database.execute_sql(
                    "DROP TRIGGER IF EXISTS diagnosis_run_text_sync ON diagnosis_run"
                )
            else:
                database.execute_sql(f"DROP TRIGGER IF EXISTS diagnosis_run_text_{name}")
        database.drop_tables([RunText])
        DiagnosisRun.create(
            run_id="run-between",
            session_id="sess-0",
            agent_flow="CHAT",
            flow="simple",
            status="SUCCESS",
            question="written while no trigger existed",
            started_at=T0 - timedelta(days=1),
        )
    assert create_schema(database) == ["diagnosis_run_text"]
    assert found(database, "ärger mit") >= {"run-lower"}
    with database.connection_context():
        assert RunText.select().count() == len(QUESTIONS) + 1
    assert found(database, "NO TRIGGER") == {"run-between"}
    add_runs(database, {"run-new": "a new COLD cache"})  # and the triggers are back
    assert found(database, "cold") == {"run-new"}
    assert create_schema(database) == []  # idempotent: nothing filled twice
    with database.connection_context():
        assert RunText.select().count() == len(QUESTIONS) + 2


def test_a_mysql_user_without_the_trigger_privilege_falls_back_to_scanning_the_runs(
    scratch_servers: ScratchServers, caplog: pytest.LogCaptureFixture
) -> None:
    """No TRIGGER privilege: the app still starts, without the text table, and finds the same
    runs; once the privilege is granted the next schema pass adds and backfills it."""
    admin_url = scratch_servers.shared_url("mysql")  # skips (fails under CI) without MariaDB
    url = scratch_servers.new_database_url("mysql")
    name, user = urlparse(url).path.strip("/"), f"notrig_{secrets.token_hex(4)}"
    admin = partial(_admin_execute, "mysql", admin_url)
    admin(f"CREATE USER '{user}'@'%'")
    limited = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, REFERENCES"
    admin(f"GRANT {limited} ON `{name}`.* TO '{user}'@'%'")
    database = open_database(
        urlparse(url)
        ._replace(netloc=f"{user}@{urlparse(url).hostname}:{urlparse(url).port}")
        .geturl()
    )
    try:
        bind(database)
        with caplog.at_level(logging.WARNING, logger="webapp.persistence.schema"):
            assert "diagnosis_run" in create_schema(database)
        assert "grant TRIGGER" in caplog.text
        assert not run_text_kept(database)
        with database.connection_context():
            assert "diagnosis_run_text" not in database.get_tables()
            assert not RunText.table_exists()
        add_runs(database, QUESTIONS)
        assert found(database, "100%") == {"run-pct"}
        assert found(database, "Ärger") == {"run-upper", "run-title", "run-lower"}

        admin(f"GRANT TRIGGER ON `{name}`.* TO '{user}'@'%'")
        close_database(database)  # a database privilege counts from the next connection on
        assert create_schema(database) == ["diagnosis_run_text"]
        assert run_text_kept(database)
        with database.connection_context():
            assert RunText.select().count() == len(QUESTIONS)
        assert found(database, "Ärger") == {"run-upper", "run-title", "run-lower"}
    finally:
        close_database(database)
        admin(f"DROP USER '{user}'@'%'")
