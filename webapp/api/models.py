"""Request models: every field of every request, its accepted spellings and its limits, once.

A limit that is a setting (``MAX_QUESTION_CHARS``) is checked against the validation context on
top of the documented maximum.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel, to_pascal
from pydantic_core import PydanticCustomError

from ..services.reads import UtcTime
from .requests import ID_MESSAGE, ID_PATTERN, has_control, is_id

ID_REGEX = f"^{ID_PATTERN.pattern}$"  # the documented form; the check is a full match
MAX_QUESTION_CHARS = 4000
MAX_AIOPS_REQUEST_CHARS = 1000
MAX_COMMENT_CHARS = 2000
MAX_DOC_ID_CHARS = 300
MAX_PAGE_LIMIT, MAX_OFFSET = 200, 1_000_000
MAX_CURSOR_CHARS = 512
MAX_FILTER_CHARS = 200
Mode = Literal["auto", "simple", "complex"]
FeedbackValue = Literal["useful", "not_useful"]


def _id(value: Any) -> Any:
    if value is not None and not is_id(value):
        raise PydanticCustomError("bad_id", ID_MESSAGE)
    return value


def _text(value: Any) -> Any:
    """Strip a string; refuse control characters (other types fall through to the type check)."""
    if isinstance(value, str):
        value = value.strip()
        if has_control(value):
            raise PydanticCustomError("control_characters", "contains control characters")
    return value


def _optional_text(value: Any) -> Any:
    """As :func:`_text`, and blank counts as absent."""
    value = _text(value)
    return None if value == "" else value


def _count(value: Any) -> Any:
    """A query-string count: plain ASCII digits only (``int()`` would also read ``"٣"``)."""
    if isinstance(value, str) and not (value.isascii() and value.isdigit() and len(value) <= 9):
        raise PydanticCustomError("int_parsing", "must be an integer")
    return value


#: A session or run id, matched as a whole string (a final newline is a bad id).
Id = Annotated[str, StringConstraints(pattern=ID_REGEX), BeforeValidator(_id)]
DocId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_DOC_ID_CHARS)]
#: A step's index within its run (the column is a 32-bit INTEGER).
StepIndex = Annotated[int, Field(ge=0, le=2**31 - 1)]
Question = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_QUESTION_CHARS), BeforeValidator(_text)
]
Comment = Annotated[
    str | None, StringConstraints(max_length=MAX_COMMENT_CHARS), BeforeValidator(_optional_text)
]
Count = BeforeValidator(_count)


def spellings(*names: str) -> Any:
    """A field accepted under each of ``names``; the first is the documented one."""
    return Field(validation_alias=AliasChoices(*names))


class RequestModel(BaseModel):
    """Base of request bodies and queries: camelCase (and PascalCase) names, extras ignored."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(
            validation_alias=lambda name: AliasChoices(to_camel(name), to_pascal(name))
        ),
        extra="ignore",
        frozen=True,
    )


class ChatRequest(RequestModel):
    """One chat turn: ``POST /api/chat`` and ``POST /api/chat_stream``."""

    question: Question = spellings("Question", "question")
    session_id: Annotated[Id | None, spellings("Id", "id", "sessionId")] = None
    mode: Mode = "auto"

    @field_validator("question")
    @classmethod
    def _configured_limit(cls, value: str, info: ValidationInfo) -> str:
        limit = (info.context or {}).get("max_question_chars", MAX_QUESTION_CHARS)
        if len(value) > limit:
            raise PydanticCustomError(
                "string_too_long", "is too long", {"max_length": limit, "length": len(value)}
            )
        return value


class AiOpsRequest(RequestModel):
    """``POST /api/ai_ops``: an optional session and an optional instruction."""

    session_id: Annotated[Id | None, spellings("sessionId", "SessionId", "Id", "id")] = None
    user_request: Annotated[
        str | None,
        StringConstraints(max_length=MAX_AIOPS_REQUEST_CHARS),
        BeforeValidator(_optional_text),
    ] = None


class FeedbackRequest(RequestModel):
    """``POST /api/feedback``: rate one run of one session."""

    session_id: Annotated[Id, spellings("sessionId", "SessionId", "Id", "id")]
    run_id: Id
    feedback: FeedbackValue
    comment: Comment = None


class ClearRequest(RequestModel):
    """``POST /api/chat/clear``: the session whose history is forgotten."""

    session_id: Annotated[Id, spellings("Id", "id", "sessionId")]


Cursor = Annotated[
    str | None,
    StringConstraints(max_length=MAX_CURSOR_CHARS, pattern=r"^[A-Za-z0-9_-]*$"),
    BeforeValidator(_optional_text),
]
FilterText = Annotated[
    str | None, StringConstraints(max_length=MAX_FILTER_CHARS), BeforeValidator(_optional_text)
]
#: A service name as tools and alerts carry it (no quotes or backslashes: they are JSON-escaped).
ServiceName = Annotated[
    str | None,
    StringConstraints(max_length=MAX_FILTER_CHARS, pattern=r'^[^"\\]+$'),
    BeforeValidator(_optional_text),
]


class CursorQuery(RequestModel):
    """``limit`` and the opaque ``cursor`` of the next page (from the previous page's
    ``nextCursor``)."""

    limit: Annotated[int, Field(ge=1, le=MAX_PAGE_LIMIT), Count] = 50
    cursor: Cursor = None


class TimeRange(CursorQuery):
    """``since`` (inclusive) and ``until`` (exclusive), ISO-8601; without a zone, UTC."""

    since: UtcTime = None
    until: UtcTime = None

    @field_validator("until")
    @classmethod
    def _after_since(cls, until: datetime | None, info: ValidationInfo) -> datetime | None:
        since = info.data.get("since")
        if since is not None and until is not None and since >= until:
            raise PydanticCustomError("time_range", "must be after since")
        return until


class RunsQuery(TimeRange):
    """``GET /api/runs``: filters on top of keyset paging (newest first)."""

    text: FilterText = None  # in the question or the answer, case-insensitive
    service: ServiceName = None  # named by one of the run's tool calls or alerts
    status: Literal["PENDING", "RUNNING", "SUCCESS", "FAILED"] | None = None
    flow: Literal["complex", "simple", "aiops", "tool"] | None = None
    degraded: bool | None = None
    feedback: Literal["useful", "not_useful", "none"] | None = None
    session_id: Annotated[Id | None, spellings("sessionId", "SessionId")] = None


class SessionsQuery(TimeRange):
    """``GET /api/sessions``: title text and last activity, keyset paging."""

    text: FilterText = None


class CasesQuery(CursorQuery):
    """The case library: ``cursor`` (keyset) or ``offset``, and a text filter."""

    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET), Count] = 0
    text: FilterText = None


class AlertQuery(CursorQuery):
    """Which received alerts to list, keyset-paged."""

    state: Literal["firing", "resolved", "all"] = "all"


#: A trace's step model inputs: ``full``, or ``none`` (null, not read).
Inputs = Literal["full", "none"]


class RunQuery(RequestModel):
    """The run a trace or graph request is about."""

    run_id: Id


class TraceQuery(RunQuery):
    """The run's trace, with its steps' model inputs in full or left out."""

    inputs: Inputs = "full"


#: An event id as the event logs hand them out: ``7`` (in process) or ``1764590000000-0``
#: (a Redis Stream); anything else would make the Redis log refuse the read.
EventId = Annotated[
    str | None,
    StringConstraints(max_length=40, pattern=r"^[0-9]{1,19}(-[0-9]{1,19})?$"),
    BeforeValidator(_optional_text),
]


class EventsHeaders(BaseModel):
    """``Last-Event-ID``: what a browser's EventSource sends when it reconnects."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    last_event_id: EventId = Field(default=None, alias="Last-Event-ID")
