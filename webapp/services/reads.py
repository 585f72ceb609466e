"""What the HTTP API reads from the store: the list filters, their times, the active run states."""

from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from ..persistence.listing import RunFilter, SessionFilter
from ..persistence.runs import ACTIVE

__all__ = ["ACTIVE", "RunFilter", "SessionFilter", "Utc", "UtcTime"]


def _utc(value: datetime | None) -> datetime | None:
    """Naive UTC (what the tables store); a time without a zone is UTC."""
    if value is None or value.tzinfo is None:
        return value
    try:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is after the last representable time
        raise PydanticCustomError("datetime_range", "is out of range in UTC") from None


#: A time as the tables hold it: naive UTC.
Utc = AfterValidator(_utc)
UtcTime = Annotated[datetime | None, Utc]
