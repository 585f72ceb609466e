"""Fixtures of the persistence tests; ``database`` itself comes from ``tests/conftest.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from peewee import Database

from webapp.persistence.sql_audit import SqlAudit


@pytest.fixture
def audit(database: Database) -> SqlAudit:
    """A ``SqlAudit`` on the test database (every backend)."""
    return SqlAudit(database)


@pytest.fixture
def count_queries(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> Callable[[Callable[[], Any]], int]:
    """``count_queries(fn)``: run ``fn`` and return how many SQL statements it executed."""
    executed: list[str] = []
    original = database.execute_sql

    def counting(sql: str, params: Any = None) -> Any:
        executed.append(sql)
        return original(sql, params)

    monkeypatch.setattr(database, "execute_sql", counting)

    def count(fn: Callable[[], Any]) -> int:
        executed.clear()
        fn()
        return len(executed)

    return count
