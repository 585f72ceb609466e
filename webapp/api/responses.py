"""Response models: what each endpoint's ``data`` holds, camelCase by alias generator.

Views validate them from store rows (snake_case); ``JsonValue`` fields pass stored JSON through.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from diagnosis_graph.workflow.render import headline_of

from ..telemetry.common import iso
from .models import ID_REGEX, FeedbackValue

#: ``2026-11-30T10:00:00.123Z`` for a naive-UTC datetime.
Timestamp = Annotated[
    datetime | None,
    PlainSerializer(lambda value: iso(value, millis=True) if value else None),
    WithJsonSchema({"type": ["string", "null"], "format": "date-time"}),
]
IdOut = Annotated[str, WithJsonSchema({"type": "string", "pattern": ID_REGEX})]
JsonValue = Annotated[Any, WithJsonSchema({})]
JsonDocument = Annotated[Any, WithJsonSchema({"type": ["object", "null"]})]


class ResponseModel(BaseModel):
    """Base of response data: camelCase out, snake_case (store rows) or camelCase in."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
    )


Model = TypeVar("Model", bound=ResponseModel)


def paged(model: type[Model], rows: str, page: Any) -> Model:
    """``model`` of one store ``page``: its rows as ``rows``, and the next page's cursor."""
    return model.model_validate({rows: page.rows, "next_cursor": page.next_cursor})


class ChatResult(ResponseModel):
    success: bool
    answer: str | None
    error_message: str | None
    session_id: IdOut
    run_id: IdOut
    flow: Literal["complex", "simple", "aiops"]
    status: Literal["PENDING", "RUNNING", "SUCCESS", "FAILED"]
    degraded: bool


#: An answer's headline (its first line as plain text), read from the row's ``answer``.
Headline = Annotated[
    str | None, BeforeValidator(headline_of), Field(validation_alias="answer", default=None)
]


class RunSummary(ResponseModel):
    run_id: IdOut
    session_id: IdOut
    agent_flow: Literal["CHAT", "AI_OPS", "MCP"]
    flow: Literal["complex", "simple", "aiops", "tool"]
    status: Literal["PENDING", "RUNNING", "SUCCESS", "FAILED"]
    question: str
    answer: str | None
    headline: Headline
    degraded: bool
    error_message: str | None
    step_count: int
    tool_count: int
    duration_ms: int | None
    feedback: FeedbackValue | None
    feedback_comment: str | None
    started_at: Timestamp
    finished_at: Timestamp
    #: Tokens the run's model calls sent and received; null for a run recorded before they were.
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    #: Dollars by the LLM_PRICES table; null without one.
    cost_usd: float | None = None


class RunDetail(RunSummary):
    self_evaluation: JsonDocument
    orchestration_trace: JsonDocument


class Session(ResponseModel):
    session_id: IdOut
    title: str | None
    created_at: Timestamp
    updated_at: Timestamp
    expires_at: Timestamp


class SessionSummary(Session):
    run_count: int


class SessionInfo(SessionSummary):
    history_messages: int
    history_available: bool


class Step(ResponseModel):
    id: int
    run_id: IdOut
    session_id: IdOut
    step_index: int
    agent_name: str
    model: str
    model_input: JsonValue = None
    model_output: JsonValue
    has_tool_call: bool
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    duration_ms: int | None
    status: Literal["RUNNING", "SUCCESS", "FAILED"]
    error: str | None
    created_at: Timestamp


class Invocation(ResponseModel):
    id: int
    run_id: IdOut
    session_id: IdOut
    invocation_id: str
    step_id: int | None = Field(validation_alias="step")
    agent_name: str
    tool_name: str
    arguments: JsonValue
    raw_output: JsonValue
    status: Literal["SUCCESS", "ERROR", "BLOCKED"]
    error_message: str | None
    duration_ms: int | None
    retrieval_details: JsonValue
    evidence_refs: JsonValue
    created_at: Timestamp


class Trace(ResponseModel):
    session: Session | None
    run: RunDetail
    steps: list[Step]
    tool_invocations: list[Invocation]


class RunPage(ResponseModel):
    """A page of runs, newest first; ``nextCursor`` is null on the last page."""

    runs: list[RunSummary]
    next_cursor: str | None


class SessionPage(ResponseModel):
    """A page of sessions by last activity, newest first."""

    sessions: list[SessionSummary]
    next_cursor: str | None


class Investigation(ResponseModel):
    """The AIOps run started for one alert (linked to it in ``alert_run``)."""

    fingerprint: str
    session_id: IdOut
    run_id: IdOut


class AlertRoute(ResponseModel):
    """One alert of an AIOps run: its route through its nested diagnosis graph."""

    alert_id: str | None
    alert_name: str | None
    route: list[str]


class Graph(ResponseModel):
    run_id: IdOut
    flow: Literal["complex", "simple", "aiops"]
    mermaid: str | None
    route: list[str]
    alerts: list[AlertRoute] | None = None  # AIOps runs only


class EvidenceSource(ResponseModel):
    """One verified evidence item and where its excerpt comes from."""

    evidence_id: str
    claim_id: str | None
    invocation_id: str
    tool: str
    role: str
    raw_path: str
    excerpt: str
    statement: str | None
    service: str | None
    signal: str | None  # the metric, log level or analysed signal
    timestamp: str | None  # the time of the cited point, record, finding or template


class CitedPoint(ResponseModel):
    evidence_id: str
    index: int | None  # the point of ``points`` it cites; None for a value of no one point
    raw_path: str
    point: JsonValue


class ChartWindows(ResponseModel):
    """The windows a ``detect_anomalies`` finding of the run states for a series."""

    baseline_start: str | None
    baseline_end: str | None
    onset: str | None
    incident_end: str | None
    baseline_median: float | None
    incident_median: float | None
    peak: float | None
    peak_at: str | None
    change: str | None


class EvidenceChart(ResponseModel):
    """A cited metric series (``kind=series``) or a cited finding without one (``finding``)."""

    kind: Literal["series", "finding"]
    invocation_id: str
    series_index: int  # of the output's ``series`` (kind=series) or ``findings`` (finding)
    service: str
    metric: str
    unit: str | None
    points: list[JsonValue]  # [timestamp, value] as recorded
    cited: list[CitedPoint]
    windows: ChartWindows | None
    finding: JsonDocument


class LogPatternRow(ResponseModel):
    index: int
    template: str | None
    example: str | None
    count_before: int | None
    count_after: int | None
    new: bool
    evidence_ids: list[str]


class LogPatternTable(ResponseModel):
    invocation_id: str
    service: str | None
    level: str | None
    onset: str | None  # of the analysed window
    patterns: list[LogPatternRow]


class RunEvidence(ResponseModel):
    """What the pages draw for a run's cited evidence, from its recorded tool outputs."""

    #: The question's time window as resolved when the run started (``start``, ``end`` in
    #: UTC, ``text``, ``zone``, ``kind``, ``found``): its self-evaluation's, as stored.
    window: JsonDocument
    evidence: list[EvidenceSource]
    charts: list[EvidenceChart]
    log_tables: list[LogPatternTable]


class WebhookReceipt(ResponseModel):
    """What one Alertmanager notification did."""

    stored: int
    firing: int
    resolved: int
    session_id: str | None
    run_id: str | None
    joined_running_run: bool


class AlertList(ResponseModel):
    """A page of received alerts, each with its investigation runs (``runId``, ``status``,
    ...); no total is counted (``nextCursor`` says if there is more)."""

    alerts: list[dict[str, Any]]
    next_cursor: str | None


class Case(ResponseModel):
    run_id: IdOut
    session_id: IdOut
    question: str
    answer: str | None
    headline: Headline
    created_at: Timestamp


class CaseList(ResponseModel):
    """A page of the case library; no total is counted (``nextCursor`` says if there is more)."""

    cases: list[Case]
    next_cursor: str | None


class Cleared(ResponseModel):
    session_id: IdOut
    cleared: int  # messages removed


class UploadResult(ResponseModel):
    doc_id: str
    title: str
    source: str
    chunks: int
    bytes: int


class KnowledgeDocument(ResponseModel):
    doc_id: str
    title: str
    origin: Literal["directory", "upload"]
    chunks: int
    bytes: int
    uploaded_at: str | None = Field(json_schema_extra={"format": "date-time"})
    deletable: bool


class KnowledgeList(ResponseModel):
    documents: list[KnowledgeDocument]


class Deleted(ResponseModel):
    doc_id: str
    title: str
    deleted: bool


class Health(ResponseModel):
    status: Literal["ok"]


class Readiness(ResponseModel):
    database: Literal["ok", "unavailable"]
    redis: Literal["ok", "unavailable", "disabled"]
    llm: Literal["offline", "openai-compatible"]
    model: str
    #: Each configured telemetry backend: signals, reachable, version, latency.
    telemetry: list[dict[str, Any]]
    #: The model endpoint's mode in force, downgrades and last call (absent for the offline model).
    llm_capabilities: dict[str, Any] | None = None
