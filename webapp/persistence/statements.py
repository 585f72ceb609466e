"""Counting the SQL statements a database executes, with peewee's query hooks.

Every statement peewee sends to the driver (``Database._execute_cursor``) calls the hooks in
``database.query_hooks`` with a ``QueryEvent(sql, params, duration, exc)`` - a real count of
what reached the DB-API cursor, not an estimate. Used by the benchmarks and the tests that
bound a run's statements; nothing is hooked unless a caller asks.
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
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __len__(self) -> int:
        return len(self.sql)

    def writes(self) -> list[str]:
        """The INSERT, UPDATE and DELETE statements."""
        return [s for s in self.sql if s.lstrip().split(" ", 1)[0].upper() in WRITES]


WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


@contextmanager
def count_statements(database: Database) -> Iterator[StatementLog]:
    """Record every statement ``database`` executes inside the block (any thread)."""
    log = StatementLog()

    def hook(event: Any) -> None:
        with log.lock:
            log.sql.append(str(event.sql))

    database.query_hooks.append(hook)
    try:
        yield log
    finally:
        database.query_hooks.remove(hook)
