"""What the HTTP API reads from the store: keyset-paged lists and a run's trace rows.

The queries are :mod:`webapp.persistence.listing`'s (reached as ``Services.listing``); the API
takes their filters, pages and the trace's column names from here, so it names no ORM model and
imports nothing of the persistence layer but the errors it maps to statuses.
"""

from __future__ import annotations

from typing import Any

from ..persistence.listing import InputForm, Listing, Page, RunFilter, SessionFilter, raw_columns
from ..persistence.models import AgentStep, JSONField, ToolInvocation
from ..persistence.runs import ACTIVE

__all__ = [
    "ACTIVE",
    "Columns",
    "InputForm",
    "Listing",
    "Page",
    "RunFilter",
    "SessionFilter",
    "invocation_columns",
    "step_columns",
]


#: A table's raw column names, in order, and those of them that hold stored JSON text.
Columns = tuple[list[str], set[str]]


def _columns(table: Any) -> Columns:
    documents = {f.name for f in table._meta.sorted_fields if isinstance(f, JSONField)}
    return raw_columns(table), documents


def step_columns() -> Columns:
    """The columns of the step rows ``Listing.stream_steps`` yields."""
    return _columns(AgentStep)


def invocation_columns() -> Columns:
    """The columns of the invocation rows ``Listing.stream_invocations`` yields."""
    return _columns(ToolInvocation)
