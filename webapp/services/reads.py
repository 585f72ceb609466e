"""What the HTTP API reads from the store: the list filters and the active run states."""

from ..persistence.listing import RunFilter, SessionFilter
from ..persistence.runs import ACTIVE

__all__ = ["ACTIVE", "RunFilter", "SessionFilter"]
