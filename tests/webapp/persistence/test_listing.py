"""The runs list's text filter on every backend: the search text is matched as plain characters,
case-insensitively by the backend's own ``LOWER``, and follows updates and deletes."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from peewee import Database

from webapp.persistence.db import is_mysql, is_postgres
from webapp.persistence.listing import Listing, RunFilter
from webapp.persistence.models import DiagnosisRun

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
    if not (is_mysql(database) or is_postgres(database)):
        # SQLite's LOWER folds ASCII only: a text always finds itself and its ASCII case
        # variants, but Ä and ä stay different letters.
        assert found(database, "ÄRGER") == {"run-upper", "run-title"}
        assert found(database, "ärger") == {"run-lower"}
    else:
        assert found(database, "ÄRGER") == umlauts
        assert found(database, "ärger") == umlauts
    assert found(database, "MIT DEM cache") == umlauts


def test_the_filter_follows_updates_and_deletes(database: Database) -> None:
    add_runs(database, QUESTIONS)
    with database.connection_context():
        DiagnosisRun.update(answer="A COLD Cache").where(DiagnosisRun.run_id == "run-pct").execute()
        DiagnosisRun.update(status="FAILED").where(DiagnosisRun.run_id == "run-axb").execute()
        DiagnosisRun.delete().where(DiagnosisRun.run_id == "run-quote").execute()
    assert found(database, "cold cache") == {"run-pct"}
    assert found(database, "cold cache", status="SUCCESS") == {"run-pct"}
    assert found(database, "cache") == {"run-pct", "run-upper", "run-title", "run-lower"}
    assert found(database, "it's") == set()
