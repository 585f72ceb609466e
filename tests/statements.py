"""Counting the SQL statements and commits a database executes, with peewee's query hooks.

Every statement that reaches the DB-API cursor is recorded; a write outside a transaction
counts as a commit, and so does every ``commit()`` of a transaction. Used by the benchmarks and
the tests that bound a run's statements.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from peewee import Database


@dataclass
class StatementLog:
    """The statements seen while counting: their SQL text, in order."""

    sql: list[str] = field(default_factory=list)
    #: Commits: writes executed outside a transaction, plus transactions committed.
    commits: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __len__(self) -> int:
        return len(self.sql)


WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


@contextmanager
def count_statements(database: Database) -> Iterator[StatementLog]:
    """Record every statement ``database`` executes inside the block (any thread)."""
    log = StatementLog()
    commit = database.commit

    def hook(event: Any) -> None:
        sql = str(event.sql)
        alone = sql.lstrip().split(" ", 1)[0].upper() in WRITES and not database.in_transaction()
        with log.lock:
            log.sql.append(sql)
            log.commits += alone

    def counted_commit() -> Any:
        with log.lock:
            log.commits += 1
        return commit()

    database.query_hooks.append(hook)
    database.commit = counted_commit  # type: ignore[method-assign]
    try:
        yield log
    finally:
        database.query_hooks.remove(hook)
        del database.commit  # the class's method again
