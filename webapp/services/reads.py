"""What the HTTP API reads from the store: keyset-paged lists and a run's trace rows.

The queries are :mod:`webapp.persistence.listing`'s (reached as ``Services.listing``); the API
takes their filters, pages and the trace's column names from here, so it names no ORM model and
imports nothing of the persistence layer but the errors it maps to statuses.
"""

from __future__ import annotations

from ..persistence.listing import InputForm, Listing, Page, RunFilter, SessionFilter, raw_columns
from ..persistence.models import AgentStep, ToolInvocation
from ..persistence.runs import ACTIVE

__all__ = [
    "ACTIVE",
    "InputForm",
    "Listing",
    "Page",
    "RunFilter",
    "SessionFilter",
    "invocation_columns",
    "step_columns",
]


def step_columns() -> list[str]:
    """The column names of the step rows ``Listing.stream_steps`` yields, in order."""
    return raw_columns(AgentStep)


def invocation_columns() -> list[str]:
    """The column names of the invocation rows ``Listing.stream_invocations`` yields, in order."""
    return raw_columns(ToolInvocation)
