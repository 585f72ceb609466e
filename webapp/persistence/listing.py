"""Keyset-paged lists: runs, sessions, the case library and received alerts; a run's step.

Every list has one stable order, newest first, on an indexed key (``(started_at, run_id)``
for runs, ``(updated_at, session_id)`` for sessions, ``(created_at, run_id)`` for cases,
``(updated_at, id)`` for alerts). A page is the first ``limit`` rows after the cursor (or at
an ``offset``), and the next page's cursor encodes the key of its last row. No COUNT is run.
The text and service filters are substring tests (``INSTR``/``strpos`` of ``LOWER``) checked
row by row on the list's range scan.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from peewee import JOIN, Database, Field, IntegerField, fn

from .db import is_postgres
from .models import (
    AgentStep,
    AlertRecord,
    AlertRun,
    CaseLibrary,
    ChatSession,
    DiagnosisRun,
    JSONField,
    ToolInvocation,
)

#: Run columns a list shows: every column but the two JSON documents and the lease.
RUN_COLUMNS: tuple[Field, ...] = tuple(
    field
    for field in DiagnosisRun._meta.sorted_fields
    if not isinstance(field, JSONField) and field.name not in ("lease_owner", "lease_expires_at")
)
NO_FEEDBACK = "none"


class CursorError(ValueError):
    """A cursor that this list did not hand out (or that was altered)."""


def encode_cursor(kind: str, *key: Any) -> str:
    """The opaque cursor of a position in the list ``kind``."""
    values = [v.isoformat() if isinstance(v, datetime) else v for v in key]
    text = json.dumps([kind, *values], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str, *types: type) -> tuple[Any, ...]:
    """The key a cursor of ``kind`` holds, each value of the given type; CursorError otherwise."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        decoded = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise CursorError("cursor is not a cursor this server handed out") from None
    if not isinstance(decoded, list) or len(decoded) != len(types) + 1 or decoded[0] != kind:
        raise CursorError(f"cursor is not a cursor of the {kind} list")
    try:
        return tuple(_typed(v, t) for v, t in zip(decoded[1:], types, strict=True))
    except (TypeError, ValueError):
        raise CursorError(f"cursor is not a cursor of the {kind} list") from None


def _typed(value: Any, kind: type) -> Any:
    """``value`` as a key part of type ``kind`` (TypeError/ValueError when it is not one)."""
    if kind is datetime:
        return datetime.fromisoformat(value)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(value)
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise ValueError(value)  # no key column holds it (SQLite would raise OverflowError)
    if isinstance(value, str) and not value.isprintable():
        raise ValueError(value)  # lone surrogates and NULs no driver can send
    return value


@dataclass(frozen=True)
class Page:
    """One page of a list and the cursor of the next (None on the last page)."""

    rows: list[dict[str, Any]]
    next_cursor: str | None


@dataclass(frozen=True)
class RunFilter:
    """Which runs to list; every field optional (None: no condition)."""

    text: str | None = None
    service: str | None = None
    status: str | None = None
    flow: str | None = None
    degraded: bool | None = None
    feedback: str | None = None  # useful, not_useful, or "none" for runs without feedback
    since: datetime | None = None  # started_at >= since (naive UTC)
    until: datetime | None = None  # started_at < until
    session_id: str | None = None


@dataclass(frozen=True)
class SessionFilter:
    """Which sessions to list: title text and a range of last activity."""

    text: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _before(first: Any, second: Any, key: tuple[Any, Any]) -> Any:
    """Rows strictly before ``key`` in descending ``(first, second)`` order.

    Written as a range on ``first`` plus a tie-break, so every backend scans the index range.
    """
    at, tie = key
    return (first <= at) & ((first < at) | (second < tie))


def _contains(field: Any, text: str, postgres: bool) -> Any:
    """Case-insensitive substring match, the same on every backend (MySQL's columns are binary
    collated, so LIKE alone would be case-sensitive there)."""
    position = fn.STRPOS if postgres else fn.INSTR
    return position(fn.LOWER(field), fn.LOWER(text)) > 0


def _asked_or_answered(model: Any, text: str, postgres: bool) -> Any:
    """``text`` is in the question or the answer."""
    return _contains(model.question, text, postgres) | _contains(model.answer, text, postgres)


class Listing:
    """The list queries; each opens its own connection context."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._postgres = is_postgres(database)

    def _page(
        self,
        query: Any,
        kind: str,
        keys: tuple[Any, Any],
        limit: int,
        cursor: str | None,
        offset: int = 0,
        order: tuple[Any, ...] = (),
    ) -> Page:
        """The rows of ``query`` after ``cursor`` (or from ``offset``), newest ``keys`` first."""
        first, second = keys
        if cursor:
            types = (datetime, int if isinstance(second, IntegerField) else str)
            query = query.where(_before(first, second, decode_cursor(kind, cursor, *types)))
        elif offset:
            query = query.offset(offset)
        query = query.order_by(*order, first.desc(), second.desc()).limit(limit + 1)
        with self.database.connection_context():
            rows: list[dict[str, Any]] = list(query.dicts())
        if len(rows) <= limit:
            return Page(rows, None)
        last = rows[limit - 1]
        return Page(rows[:limit], encode_cursor(kind, last[first.name], last[second.name]))

    def runs(
        self, filters: RunFilter, limit: int, cursor: str | None = None, offset: int = 0
    ) -> Page:
        """Runs matching ``filters``, newest first."""
        run = DiagnosisRun
        query = run.select(*RUN_COLUMNS)
        for condition in _run_conditions(filters, self._postgres):
            query = query.where(condition)
        # one session's runs: ordered on the (session_id, started_at, run_id) index
        order = (run.session_id.desc(),) if filters.session_id is not None else ()
        keys = (run.started_at, run.run_id)
        return self._page(query, "runs", keys, limit, cursor, offset, order)

    def sessions(self, filters: SessionFilter, limit: int, cursor: str | None = None) -> Page:
        """Sessions by last activity, newest first, each with its number of runs."""
        session = ChatSession
        hidden = ("id", "history_cleared_at")
        query = session.select(*(f for f in session._meta.sorted_fields if f.name not in hidden))
        for condition in _range(session.updated_at, filters.since, filters.until):
            query = query.where(condition)
        if filters.text:
            query = query.where(_contains(session.title, filters.text, self._postgres))
        keys = (session.updated_at, session.session_id)
        page = self._page(query, "sessions", keys, limit, cursor)
        counts = self._run_counts([row["session_id"] for row in page.rows])
        for row in page.rows:
            row["run_count"] = counts.get(row["session_id"], 0)
        return page

    def _run_counts(self, session_ids: list[str]) -> dict[str, int]:
        """Runs per session for one page of sessions (one grouped query on the session index)."""
        if not session_ids:
            return {}
        query = (
            DiagnosisRun.select(DiagnosisRun.session_id, fn.COUNT(DiagnosisRun.id).alias("n"))
            .where(DiagnosisRun.session_id.in_(session_ids))
            .group_by(DiagnosisRun.session_id)
            .tuples()
        )
        with self.database.connection_context():
            return {session_id: int(count) for session_id, count in cast(Any, query)}

    def cases(
        self, limit: int, cursor: str | None = None, text: str | None = None, offset: int = 0
    ) -> Page:
        """The case library, newest first."""
        case = CaseLibrary
        query = case.select(
            case.run_id, case.session_id, case.question, case.answer, case.created_at
        )
        if text:
            query = query.where(_asked_or_answered(case, text, self._postgres))
        return self._page(query, "cases", (case.created_at, case.run_id), limit, cursor, offset)

    def alerts(
        self, state: str | None, limit: int, cursor: str | None = None, offset: int = 0
    ) -> Page:
        """Received alerts (of one ``state``, or all), most recently updated first."""
        alert = AlertRecord
        query = alert.select(*(f for f in alert._meta.sorted_fields if f.name != "created_at"))
        if state is not None:
            query = query.where(alert.status == state)
        return self._page(query, "alerts", (alert.updated_at, alert.id), limit, cursor, offset)

    def step(self, run_id: str, step_index: int) -> dict[str, Any] | None:
        """One step of the run with its model input (None when it has none of that index)."""
        query = AgentStep.select().where(
            (AgentStep.run_id == run_id) & (AgentStep.step_index == step_index)
        )
        with self.database.connection_context():
            rows = list(cast(Any, query.dicts()))
        return dict(rows[0]) if rows else None


def _run_conditions(filters: RunFilter, postgres: bool) -> list[Any]:
    """The conditions of a :class:`RunFilter`: ``session_id`` and ``degraded`` apply when set,
    the other texts when non-empty; feedback "none" means none given."""
    run, given = DiagnosisRun, vars(filters)
    conditions = _range(run.started_at, filters.since, filters.until)
    conditions += [
        getattr(run, name) == given[name]
        for name in ("session_id", "degraded")
        if given[name] is not None
    ]
    conditions += [getattr(run, name) == given[name] for name in ("status", "flow") if given[name]]
    if filters.text:
        conditions.append(_asked_or_answered(run, filters.text, postgres))
    if filters.feedback == NO_FEEDBACK:
        conditions.append(run.feedback.is_null())
    elif filters.feedback:
        conditions.append(run.feedback == filters.feedback)
    if filters.service:
        conditions.append(_names_service(filters.service, postgres))
    return conditions


def _range(field: Any, since: datetime | None, until: datetime | None) -> list[Any]:
    """``since <= field < until``, each bound optional."""
    bounds = [field >= since] if since is not None else []
    return bounds + ([field < until] if until is not None else [])


def _names_service(service: str, postgres: bool) -> Any:
    """The run called a tool with ``"service":"<service>"``, or investigated an alert of it.

    Both are correlated EXISTS probes on indexed ``run_id`` columns, evaluated per candidate
    run of the page's range scan.
    """
    pattern = json.dumps({"service": service}, ensure_ascii=False, separators=(",", ":"))[1:-1]
    called = ToolInvocation.select(ToolInvocation.id).where(
        (ToolInvocation.run_id == DiagnosisRun.run_id)
        & _contains(ToolInvocation.arguments, pattern, postgres)
    )
    alerted = (
        AlertRun.select(AlertRun.id)
        .join(AlertRecord, JOIN.INNER, on=AlertRecord.id == AlertRun.alert)
        .where((AlertRun.run_id == DiagnosisRun.run_id) & (AlertRecord.service == service))
    )
    return fn.EXISTS(called) | fn.EXISTS(alerted)
