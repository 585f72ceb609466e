"""Keyset-paged lists: runs, sessions, the case library, received alerts, a run's steps and its
invocations.

Every list has one stable order, newest first, on a unique indexed key (``(started_at,
run_id)`` for runs, ``(updated_at, session_id)`` for sessions, ``(created_at, run_id)`` for
cases, ``(updated_at, id)`` for alerts; steps by ``step_index`` and invocations by ``id``, oldest
first). A page is the first ``limit`` rows after the cursor, and the cursor of the next page is
the key of the last row, encoded (:func:`encode_cursor`). No COUNT is run per request.

Column filters narrow the same range scan. The text filter (question or answer) and the service
filter are checked row by row on that scan until a page is filled, so a rare match costs a
longer scan: a plain substring test (``INSTR``/``strpos`` of ``LOWER`` on both sides, so ``%``
and ``_`` match themselves) rather than a full-text index, which finds words, not substrings.
``LOWER`` folds Unicode on MariaDB and PostgreSQL, ASCII only on SQLite.

A run's steps are read with each model input in one of three forms (:data:`InputForm`): rebuilt
in full, as stored, or ``none`` (selected as NULL, so listing a long run's steps never reads the
inputs; :meth:`Listing.step` then reads one step with its input).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

import orjson
from peewee import JOIN, SQL, Database, Field, fn

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
from .step_inputs import CONTINUES, InputRebuilder, continues

__all__ = [
    "CursorError",
    "InputForm",
    "Listing",
    "Page",
    "RunFilter",
    "SessionFilter",
    "columns_of",
    "decode_cursor",
    "encode_cursor",
    "raw_columns",
]

#: Rows read per batch when a whole trace is streamed (memory is one batch, not the run).
STREAM_BATCH = 500
#: Run columns a list shows: every column but the two JSON documents and the lease.
RUN_COLUMNS: tuple[Field, ...] = tuple(
    field
    for field in DiagnosisRun._meta.sorted_fields
    if not isinstance(field, JSONField) and field.name not in ("lease_owner", "lease_expires_at")
)
NO_FEEDBACK = "none"
#: How a step's model input is read: rebuilt in ``full``, as ``stored`` (new messages and the
#: ``continues`` link, see :mod:`.step_inputs`), or ``none``: not read at all, the column
#: selected as NULL (the trace list's form; a step's input is then read on its own).
InputForm = Literal["full", "stored", "none"]


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


def _dicts(query: Any) -> list[dict[str, Any]]:
    """Every row of ``query`` as a plain dict."""
    return list(query.dicts())


def _page(rows: list[dict[str, Any]], limit: int, kind: str, *key_names: str) -> Page:
    """The first ``limit`` of ``limit + 1`` rows, with the next cursor when there are more."""
    if len(rows) <= limit:
        return Page(rows, None)
    last = rows[limit - 1]
    return Page(rows[:limit], encode_cursor(kind, *(last[name] for name in key_names)))


class Listing:
    """The list queries; each opens its own connection context."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._postgres = is_postgres(database)

    # -- runs ------------------------------------------------------------------------------

    def runs(self, filters: RunFilter, limit: int, cursor: str | None = None) -> Page:
        """Runs matching ``filters``, newest first."""
        run, postgres = DiagnosisRun, self._postgres
        query = run.select(*RUN_COLUMNS)
        for condition in _run_conditions(filters, postgres):
            query = query.where(condition)
        if cursor:
            key = decode_cursor("runs", cursor, datetime, str)
            query = query.where(_before(run.started_at, run.run_id, key))
        order: tuple[Any, ...] = (run.started_at.desc(), run.run_id.desc())
        if filters.session_id is not None:
            order = (run.session_id.desc(), *order)
        with self.database.connection_context():
            rows = _dicts(query.order_by(*order).limit(limit + 1))
        for row in rows:
            row["degraded"] = bool(row["degraded"])
        return _page(rows, limit, "runs", "started_at", "run_id")

    # -- sessions --------------------------------------------------------------------------

    def sessions(self, filters: SessionFilter, limit: int, cursor: str | None = None) -> Page:
        """Sessions by last activity, newest first, each with its number of runs."""
        session = ChatSession
        query = session.select(
            session.session_id,
            session.title,
            session.created_at,
            session.updated_at,
            session.expires_at,
        )
        if filters.text:
            query = query.where(_contains(session.title, filters.text, self._postgres))
        if filters.since is not None:
            query = query.where(session.updated_at >= filters.since)
        if filters.until is not None:
            query = query.where(session.updated_at < filters.until)
        if cursor:
            key = decode_cursor("sessions", cursor, datetime, str)
            query = query.where(_before(session.updated_at, session.session_id, key))
        with self.database.connection_context():
            rows = _dicts(
                query.order_by(session.updated_at.desc(), session.session_id.desc()).limit(
                    limit + 1
                )
            )
            page = _page(rows, limit, "sessions", "updated_at", "session_id")
            counts = self._run_counts([row["session_id"] for row in page.rows])
        for row in page.rows:
            row["run_count"] = counts.get(row["session_id"], 0)
        return page

    @staticmethod
    def _run_counts(session_ids: list[str]) -> dict[str, int]:
        """Runs per session for one page of sessions (one grouped query on the session index)."""
        if not session_ids:
            return {}
        query = (
            DiagnosisRun.select(DiagnosisRun.session_id, fn.COUNT(DiagnosisRun.id).alias("n"))
            .where(DiagnosisRun.session_id.in_(session_ids))
            .group_by(DiagnosisRun.session_id)
            .tuples()
        )
        return {session_id: int(count) for session_id, count in cast(Any, query)}

    # -- cases -----------------------------------------------------------------------------

    def cases(self, limit: int, cursor: str | None = None, text: str | None = None) -> Page:
        """The case library, newest first."""
        case = CaseLibrary
        query = case.select(
            case.run_id, case.session_id, case.question, case.answer, case.created_at
        )
        if text:
            postgres = self._postgres
            query = query.where(
                _contains(case.question, text, postgres) | _contains(case.answer, text, postgres)
            )
        if cursor:
            key = decode_cursor("cases", cursor, datetime, str)
            query = query.where(_before(case.created_at, case.run_id, key))
        with self.database.connection_context():
            rows = _dicts(
                query.order_by(case.created_at.desc(), case.run_id.desc()).limit(limit + 1)
            )
        return _page(rows, limit, "cases", "created_at", "run_id")

    def cases_at(self, limit: int, offset: int) -> Page:
        """A page of cases by offset (the original paging, kept for existing clients)."""
        case = CaseLibrary
        query = case.select(
            case.run_id, case.session_id, case.question, case.answer, case.created_at
        ).order_by(case.created_at.desc(), case.run_id.desc())
        with self.database.connection_context():
            rows = _dicts(query.limit(limit + 1).offset(offset))
        return _page(rows, limit, "cases", "created_at", "run_id")

    # -- received alerts -------------------------------------------------------------------

    def alerts(self, state: str | None, limit: int, cursor: str | None = None) -> Page:
        """Received alerts (of one ``state``, or all), most recently updated first."""
        query = self._alert_query(state)
        if cursor:
            key = decode_cursor("alerts", cursor, datetime, int)
            query = query.where(_before(AlertRecord.updated_at, AlertRecord.id, key))
        with self.database.connection_context():
            rows = _dicts(query.limit(limit + 1))
        return _page(rows, limit, "alerts", "updated_at", "id")

    def alerts_at(self, state: str | None, limit: int, offset: int) -> Page:
        """A page of alerts by offset (the original paging, kept for existing clients)."""
        with self.database.connection_context():
            rows = _dicts(self._alert_query(state).limit(limit + 1).offset(offset))
        return _page(rows, limit, "alerts", "updated_at", "id")

    @staticmethod
    def _alert_query(state: str | None) -> Any:
        alert = AlertRecord
        query = alert.select(*(f for f in alert._meta.sorted_fields if f.name != "created_at"))
        if state is not None:
            query = query.where(alert.status == state)
        return query.order_by(alert.updated_at.desc(), alert.id.desc())

    # -- a run's steps and invocations -----------------------------------------------------

    def steps(
        self,
        run_id: str,
        limit: int,
        cursor: str | None = None,
        *,
        inputs: InputForm = "full",
    ) -> Page:
        """The run's steps in ``step_index`` order, from after the cursor, each model input in
        the ``inputs`` form."""
        after = decode_cursor("steps", cursor, int)[0] if cursor else None
        query = self._step_query(run_id, inputs)
        if after is not None:
            query = query.where(AgentStep.step_index > after)
        with self.database.connection_context():
            rows = _dicts(query.order_by(AgentStep.step_index).limit(limit + 1))
            if inputs == "full":
                self._full_inputs(run_id, rows)
        return _page(rows, limit, "steps", "step_index")

    def step(
        self, run_id: str, step_index: int, *, inputs: InputForm = "full"
    ) -> dict[str, Any] | None:
        """One step of the run (None when it has none of that index): a trace listed with
        ``inputs="none"`` reads a step's input here when it is opened."""
        query = self._step_query(run_id, inputs).where(AgentStep.step_index == step_index)
        with self.database.connection_context():
            rows = _dicts(query)
            if inputs == "full":
                self._full_inputs(run_id, rows)
        return rows[0] if rows else None

    @staticmethod
    def _step_query(run_id: str, inputs: InputForm) -> Any:
        skip = ("model_input",) if inputs == "none" else ()
        columns = columns_of(AgentStep, False, skip)
        return AgentStep.select(*columns).where(AgentStep.run_id == run_id)

    def _full_inputs(self, run_id: str, rows: list[dict[str, Any]]) -> None:
        """Rebuild the rows' inputs (consecutive steps, in order). When a row continues a step
        before the page, the run's earlier stored inputs are read first, in one query."""
        if not rows:
            return
        texts = [
            None if row["model_input"] is None else orjson.dumps(row["model_input"]).decode()
            for row in rows
        ]
        rebuilder = InputRebuilder()
        first = rows[0]["step_index"]
        links = [_link(text) for text in texts if text is not None and continues(text)]
        if any(link is not None and link < first for link in links):
            earlier = (
                AgentStep.select(
                    AgentStep.agent_name, AgentStep.step_index, _raw(AgentStep.model_input)
                )
                .where(AgentStep.run_id == run_id, AgentStep.step_index < first)
                .order_by(AgentStep.step_index)
                .tuples()
            )
            for agent, index, stored in cast(Any, earlier):
                rebuilder.full(agent, index, stored)
        for row, text in zip(rows, texts, strict=True):
            full = rebuilder.full(row["agent_name"], row["step_index"], text)
            row["model_input"] = None if full is None else orjson.loads(full)

    def invocations(self, run_id: str, limit: int, cursor: str | None = None) -> Page:
        """The run's tool invocations in creation order, from after the cursor."""
        after = decode_cursor("invocations", cursor, int)[0] if cursor else None
        with self.database.connection_context():
            rows = self._invocation_rows(run_id, after, limit + 1)
        return _page(rows, limit, "invocations", "id")

    def stream_steps(
        self, run_id: str, *, inputs: InputForm = "full"
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Every step of the run in batches of :data:`STREAM_BATCH` raw rows (call within a
        connection context): the driver's values in :func:`raw_columns` order, unconverted,
        JSON documents as their stored text, each model input rebuilt in full - or, with
        ``inputs="stored"``, as stored: the rows as the driver returns them, untouched; with
        ``"none"``, the text ``null`` (the column is not read)."""
        if inputs == "full":
            return self._full_stream(run_id)
        skip = ("model_input",) if inputs == "none" else ()
        return self._stream(AgentStep, AgentStep.step_index, run_id, skip)

    def _full_stream(self, run_id: str) -> Iterator[list[tuple[Any, ...]]]:
        names = raw_columns(AgentStep)
        agent, index, stored = (names.index(n) for n in ("agent_name", "step_index", "model_input"))
        rebuilder = InputRebuilder()
        for batch in self._stream(AgentStep, AgentStep.step_index, run_id):
            rows = []
            for row in batch:
                values = list(row)
                values[stored] = rebuilder.full(row[agent], row[index], row[stored])
                rows.append(tuple(values))
            yield rows

    def stream_invocations(self, run_id: str) -> Iterator[list[tuple[Any, ...]]]:
        """Every invocation of the run, as :meth:`stream_steps`."""
        return self._stream(ToolInvocation, ToolInvocation.id, run_id)

    def _stream(
        self, model: Any, key: Any, run_id: str, skip: tuple[str, ...] = ()
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Keyset batches on the integer ``key``, as the driver returns the rows."""
        columns = columns_of(model, raw_json=True, skip=skip)
        at = raw_columns(model).index(key.name)
        query = model.select(*columns).where(model.run_id == run_id).order_by(key)
        after = None
        while True:
            batch = query if after is None else query.where(key > after)
            rows = self.database.execute(batch.limit(STREAM_BATCH)).fetchall()
            if rows:
                yield rows
            if len(rows) < STREAM_BATCH:
                return
            after = rows[-1][at]

    @staticmethod
    def _invocation_rows(run_id: str, after: int | None, limit: int) -> list[dict[str, Any]]:
        query = ToolInvocation.select().where(ToolInvocation.run_id == run_id)
        if after is not None:
            query = query.where(ToolInvocation.id > after)
        return _dicts(query.order_by(ToolInvocation.id).limit(limit))


def raw_columns(model: Any) -> list[str]:
    """The field names of the rows :meth:`Listing.stream_steps` and
    :meth:`Listing.stream_invocations` yield, in order."""
    return [field.name for field in model._meta.sorted_fields]


def _link(stored: str) -> int | None:
    """The step index a stored input's ``continues`` link names (None without one)."""
    document = orjson.loads(stored)
    link = document.get(CONTINUES) if isinstance(document, dict) else None
    index = link.get("step_index") if isinstance(link, dict) else None
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _raw(field: Any) -> Any:
    """``field``'s stored JSON text (no field converter; NULL reads as JSON null)."""
    return fn.COALESCE(field, "null").coerce(False).alias(field.name)


def columns_of(model: Any, raw_json: bool, skip: tuple[str, ...] = ()) -> list[Any]:
    """Every column of ``model``; JSON columns as their stored text when ``raw_json``; those
    named in ``skip`` not read but selected as NULL (JSON null text when ``raw_json``), so the
    row keeps its shape."""
    columns: list[Any] = []
    for field in model._meta.sorted_fields:
        if field.name in skip:
            # coerce(False) as in _raw: the JSON null text stays text
            absent = fn.COALESCE(SQL("NULL"), "null").coerce(False) if raw_json else SQL("NULL")
            columns.append(absent.alias(field.name))
        elif raw_json and isinstance(field, JSONField):
            # coerce(False): no field converter, the text stays text; NULL reads as JSON null.
            columns.append(_raw(field))
        else:
            columns.append(field)
    return columns


def _run_conditions(filters: RunFilter, postgres: bool) -> list[Any]:
    """The conditions of a :class:`RunFilter`."""
    run = DiagnosisRun
    conditions: list[Any] = []
    if filters.text:
        text = filters.text
        conditions.append(
            _contains(run.question, text, postgres) | _contains(run.answer, text, postgres)
        )
    if filters.session_id is not None:
        conditions.append(run.session_id == filters.session_id)
    if filters.status:
        conditions.append(run.status == filters.status)
    if filters.flow:
        conditions.append(run.flow == filters.flow)
    if filters.degraded is not None:
        conditions.append(run.degraded == filters.degraded)
    if filters.feedback == NO_FEEDBACK:
        conditions.append(run.feedback.is_null())
    elif filters.feedback:
        conditions.append(run.feedback == filters.feedback)
    if filters.since is not None:
        conditions.append(run.started_at >= filters.since)
    if filters.until is not None:
        conditions.append(run.started_at < filters.until)
    if filters.service:
        conditions.append(_names_service(filters.service, postgres))
    return conditions


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
