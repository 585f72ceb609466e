"""Runs and sessions from the server: filtered, keyset-paged lists."""

from __future__ import annotations

from flask import Blueprint

from ..services.reads import RunFilter, SessionFilter
from . import services
from .contract import operation
from .models import RunsQuery, SessionsQuery
from .responses import RunPage, SessionPage

bp = Blueprint("lists", __name__, url_prefix="/api")


@bp.get("/runs")
@operation(query=RunsQuery, response=RunPage)
def runs(query: RunsQuery) -> RunPage:
    """Runs of every session, newest first (by ``startedAt``, then ``runId``).

    Filters: ``text`` (in the question or the answer, case-insensitive), ``service`` (named by
    one of the run's tool calls or investigated alerts), ``status``, ``flow``, ``degraded``,
    ``feedback`` (``none`` for runs without), ``since``/``until`` (ISO-8601 on ``startedAt``,
    UTC without a zone), ``sessionId``. Pass ``nextCursor`` back as ``cursor`` for the next page.
    """
    filters = RunFilter(
        text=query.text,
        service=query.service,
        status=query.status,
        flow=query.flow,
        degraded=query.degraded,
        feedback=query.feedback,
        since=query.since,
        until=query.until,
        session_id=query.session_id,
    )
    listing = services().listing
    page = listing.runs(filters, query.limit, query.cursor)
    return RunPage.model_validate(
        {"runs": page.rows, "next_cursor": page.next_cursor, "limit": query.limit}
    )


@bp.get("/sessions")
@operation(query=SessionsQuery, response=SessionPage)
def sessions(query: SessionsQuery) -> SessionPage:
    """Sessions by last activity, newest first, with their number of runs.

    Filters: ``text`` (in the title), ``since``/``until`` (on ``updatedAt``).
    """
    filters = SessionFilter(text=query.text, since=query.since, until=query.until)
    listing = services().listing
    page = listing.sessions(filters, query.limit, query.cursor)
    return SessionPage.model_validate(
        {"sessions": page.rows, "next_cursor": page.next_cursor, "limit": query.limit}
    )
