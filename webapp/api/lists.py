"""Runs and sessions from the server: filtered, keyset-paged lists."""

from __future__ import annotations

from flask import Blueprint

from ..container import services
from ..services.reads import RunFilter, SessionFilter
from .contract import operation
from .models import RunsQuery, SessionsQuery
from .responses import RunPage, SessionPage, paged

bp = Blueprint("lists", __name__, url_prefix="/api")
PAGING = {"limit", "cursor"}  # the query fields that are not filters


@bp.get("/runs")
@operation(query=RunsQuery, response=RunPage)
def runs(query: RunsQuery) -> RunPage:
    """Runs of every session, newest first (by ``startedAt``, then ``runId``).

    Filters: ``text`` (in the question or the answer, case-insensitive), ``service`` (named by
    one of the run's tool calls or investigated alerts), ``status``, ``flow``, ``degraded``,
    ``feedback`` (``none`` for runs without), ``since``/``until`` (ISO-8601 on ``startedAt``,
    UTC without a zone), ``sessionId``. Pass ``nextCursor`` back as ``cursor`` for the next page.
    """
    filters = RunFilter(**query.model_dump(exclude=PAGING))
    page = services().listing.runs(filters, query.limit, query.cursor)
    return paged(RunPage, "runs", page)


@bp.get("/sessions")
@operation(query=SessionsQuery, response=SessionPage)
def sessions(query: SessionsQuery) -> SessionPage:
    """Sessions by last activity, newest first, with their number of runs.

    Filters: ``text`` (in the title), ``since``/``until`` (on ``updatedAt``).
    """
    filters = SessionFilter(**query.model_dump(exclude=PAGING))
    page = services().listing.sessions(filters, query.limit, query.cursor)
    return paged(SessionPage, "sessions", page)
