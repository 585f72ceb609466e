"""Statements of a run's hot path whose SQL peewee renders once (issue 12).

peewee builds a query object and renders its SQL on every call: 0.1-0.2 ms for each of the
UPDATEs and SELECTs a run issues on its rows (claim, finish, status), more than SQLite takes
to execute them. A :class:`Prepared` statement is built by peewee on its first call only; later
calls reuse its SQL text with new parameters. :class:`Inserts` does the same for the INSERTs of
a table (one SQL text per row count).

``params(*args)`` gives the parameters in the order the SQL takes them, each through its
field's ``db_value`` as peewee's own would be. The first call checks them against what peewee
bound for the same arguments and refuses a mismatch, so a wrong order fails on first use (the
tests run every statement on every backend), never silently on a later one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from peewee import Database, Field

from .db import is_postgres
from .models import BaseModel


class PreparedMismatch(ValueError):
    """A prepared statement's parameters are not the ones its SQL takes."""


class Prepared:
    """One statement on ``database``: ``build(*args)`` is the peewee query, ``params(*args)``
    its parameters; ``shape(*args)``, when the SQL text depends on the arguments (an IN list's
    length), says which text they take - each shape is rendered and checked once."""

    def __init__(
        self,
        database: Database,
        build: Callable[..., Any],
        params: Callable[..., Sequence[Any]],
        shape: Callable[..., Hashable] | None = None,
    ) -> None:
        self.database = database
        self._build = build
        self._params = params
        self._shape = shape
        self._sql: dict[Hashable, str] = {}

    def execute(self, *args: Any) -> Any:
        """Run the statement for ``args``; the DB-API cursor."""
        values = list(self._params(*args))
        key = None if self._shape is None else self._shape(*args)
        sql = self._sql.get(key)
        if sql is None:
            sql, bound = self._build(*args).bind(self.database).sql()
            if list(bound) != values:
                at = next(
                    (i for i, (a, b) in enumerate(zip(values, bound, strict=False)) if a != b),
                    min(len(values), len(bound)),
                )
                raise PreparedMismatch(
                    f"parameter {at} of {len(values)}: {values[at : at + 1]!r:.200} where the SQL "
                    f"takes {list(bound)[at : at + 1]!r:.200} (of {len(bound)})"
                )
            self._sql[key] = sql
        return self.database.execute_sql(sql, values)

    def rowcount(self, *args: Any) -> int:
        """Run the statement (an UPDATE or DELETE); how many rows it changed."""
        return int(self.execute(*args).rowcount)

    def rows(self, fields: Sequence[Field], *args: Any) -> list[dict[str, Any]]:
        """Run the statement (a SELECT of ``fields``); its rows by field name, each value
        through the field's ``python_value``.

        Every row is fetched: a SQLite statement not stepped to its end keeps its read
        transaction open on the pooled connection, and a later write on it then fails
        "database is locked" at once instead of waiting.
        """
        cursor = self.execute(*args)
        rows = cursor.fetchall()
        cursor.close()
        return [
            {f.name: f.python_value(v) for f, v in zip(fields, row, strict=True)} for row in rows
        ]

    def first(self, fields: Sequence[Field], *args: Any) -> dict[str, Any] | None:
        """:meth:`rows`' first row (the statement should select at most one), or None."""
        rows = self.rows(fields, *args)
        return rows[0] if rows else None


class Inserts:
    """INSERT statements of one table, built once per row count and reused.

    peewee builds a query object and renders its SQL on every call - after JSON encoding the
    largest CPU cost of writing a run's steps. Every column but the primary key is always
    written (missing values get the field's default), so the SQL text depends on the row count
    only; values go through each field's ``db_value`` as peewee's own would.
    """

    def __init__(
        self, database: Database, model: type[BaseModel], *, skip_conflicts: bool = False
    ) -> None:
        self.database = database
        self.fields = [f for f in model._meta.sorted_fields if f is not model._meta.primary_key]
        self.model = model
        self._sql: dict[int, str] = {}
        self.returning = is_postgres(database)
        #: PostgreSQL only: ``ON CONFLICT DO NOTHING``, and a row that conflicted is told by
        #: no id coming back (an error would end the transaction the INSERT runs in).
        self.skip_conflicts = skip_conflicts and self.returning

    def __call__(self, rows: Sequence[Mapping[Any, Any]]) -> int | None:
        """Insert ``rows``; the id of the first one (None: it conflicted, ``skip_conflicts``)."""
        sql = self._sql.get(len(rows))
        if sql is None:
            query = self.model.insert_many([dict.fromkeys(self.fields) for _ in rows])
            if self.skip_conflicts:
                query = query.on_conflict_ignore()
            sql = self._sql[len(rows)] = query.bind(self.database).sql()[0]
        params = [field.db_value(_value(row, field)) for row in rows for field in self.fields]
        cursor = self.database.execute_sql(sql, params)
        if not self.returning:
            return int(cursor.lastrowid)
        first = cursor.fetchone()
        return None if first is None else int(first[0])


def _value(row: Mapping[Any, Any], field: Field) -> Any:
    if field in row:
        return row[field]
    return field.default() if callable(field.default) else field.default
