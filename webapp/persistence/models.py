"""Peewee models of the audit tables, bound late through a DatabaseProxy.

``schema.sql`` is the MySQL/MariaDB DDL of exactly these models; a test applies it to a real
MariaDB and compares every table, column and index with them.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import orjson
from peewee import (
    AutoField,
    BooleanField,
    CharField,
    DatabaseProxy,
    DateTimeField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

database_proxy = DatabaseProxy()

ID_LENGTH = 64


def utcnow() -> datetime:
    """Naive UTC now, millisecond precision (what every backend stores the same way)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class LongTextField(TextField):
    """Text that may exceed 64 KiB: LONGTEXT on MySQL/MariaDB, TEXT elsewhere."""

    field_type = "LONGTEXT"


#: orjson leaves these to ``default=str``, as the standard library's encoder would.
ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


class JSONField(LongTextField):
    """A JSON document stored as text, verbatim (key order kept), on every backend.

    Encoded and decoded with orjson (a run's steps carry tens of kilobytes of messages each:
    the standard library's encoder was the largest cost of writing them); what orjson refuses
    (integers beyond 64 bits, non-string keys) falls back to the standard library.
    """

    def db_value(self, value: Any) -> str | None:
        """Serialise to compact JSON text (None stays NULL)."""
        if value is None:
            return None
        try:
            return orjson.dumps(value, default=str, option=ORJSON_OPTIONS).decode()
        except (TypeError, ValueError):
            pass
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError):
            # default=str does not cover non-string keys or cycles: keep a readable trace
            # of the value rather than fail the run that is being recorded.
            return json.dumps(repr(value), ensure_ascii=False)

    def python_value(self, value: Any) -> Any:
        """Parse the stored JSON text."""
        if value is None or not isinstance(value, str):
            return value
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:  # e.g. NaN, which older rows may hold
            return json.loads(value)


class BaseModel(Model):
    """Every table lives on the proxy bound by ``webapp.persistence.db``."""

    # The primary key peewee would add implicitly, declared so type checkers know ``Model.id``.
    id = AutoField()

    class Meta:
        database = database_proxy
        legacy_table_names = False


class ChatSession(BaseModel):
    """A conversation: the directory of its runs and the key of its history."""

    session_id = CharField(max_length=ID_LENGTH, unique=True)
    title = CharField(max_length=200, default="")
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)
    expires_at = DateTimeField(null=True)
    # Without Redis, history is read from the session's runs started after this (SqlHistory).
    history_cleared_at = DateTimeField(null=True)

    class Meta:
        table_name = "chat_session"
        indexes = ((("updated_at", "session_id"), False),)  # the sessions list


class DiagnosisRun(BaseModel):
    """One replayable execution: a chat answer or an AIOps report."""

    run_id = CharField(max_length=ID_LENGTH, unique=True)
    session_id = CharField(max_length=ID_LENGTH, index=True)
    agent_flow = CharField(max_length=16)
    flow = CharField(max_length=16)
    status = CharField(max_length=16)  # indexed with the list order (Meta.indexes)
    question = TextField()
    answer = LongTextField(null=True)
    degraded = BooleanField(default=False)
    error_message = TextField(null=True)
    step_count = IntegerField(default=0)
    tool_count = IntegerField(default=0)
    duration_ms = IntegerField(null=True)
    self_evaluation = JSONField(null=True)
    orchestration_trace = JSONField(null=True)
    feedback = CharField(max_length=16, null=True)
    feedback_comment = TextField(null=True)
    started_at = DateTimeField(default=utcnow)
    finished_at = DateTimeField(null=True)
    # The lease of a PENDING or RUNNING run: who holds it (``host:pid``) and until when. Its
    # holder renews it while the run is alive; a reaper fails runs whose lease ran out.
    lease_owner = CharField(max_length=128, null=True)
    lease_expires_at = DateTimeField(null=True)
    # What the run's model calls sent and received (the sums of its steps), and what they cost
    # by the LLM_PRICES table (null: no table, or none of its models priced).
    prompt_tokens = IntegerField(null=True)
    completion_tokens = IntegerField(null=True)
    cost_usd = DoubleField(null=True)
    # How many times the run was taken back from a holder that died and resumed (bounded).
    resumes = IntegerField(default=0)

    class Meta:
        table_name = "diagnosis_run"
        # The runs list and a session's runs, newest first (webapp.persistence.listing).
        indexes = (
            (("session_id", "started_at", "run_id"), False),
            (("started_at", "run_id"), False),
            # A status filter in list order; its prefix serves the reaper's status lookups.
            (("status", "started_at", "run_id"), False),
        )


class AgentStep(BaseModel):
    """One logical model call, written before the call and completed after it."""

    run_id = CharField(max_length=ID_LENGTH, index=True)
    session_id = CharField(max_length=ID_LENGTH, index=True)
    step_index = IntegerField()
    agent_name = CharField(max_length=32)
    model = CharField(max_length=128)
    model_output = JSONField(null=True)
    has_tool_call = BooleanField(default=False)
    prompt_tokens = IntegerField(default=0)
    completion_tokens = IntegerField(default=0)
    token_count = IntegerField(default=0)
    attempts = IntegerField(default=1)
    duration_ms = IntegerField(null=True)
    status = CharField(max_length=16)
    error = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    #: Last: tens of KB, it spills into SQLite overflow pages, which a read of any column
    #: stored after it must walk.
    model_input = JSONField(null=True)

    class Meta:
        table_name = "agent_step"
        indexes = ((("run_id", "step_index"), True),)


class ToolInvocation(BaseModel):
    """One tool call with its verbatim raw output; ordered by the auto-increment id."""

    invocation_id = CharField(max_length=ID_LENGTH, unique=True)
    run_id = CharField(max_length=ID_LENGTH, index=True)
    session_id = CharField(max_length=ID_LENGTH, index=True)
    step = ForeignKeyField(
        AgentStep,
        null=True,
        column_name="step_id",
        field="id",
        on_delete="SET NULL",
        backref="invocations",
    )
    step_id: int | None  # the raw foreign key column (peewee's accessor), read without a query
    agent_name = CharField(max_length=32)
    tool_name = CharField(max_length=64)
    arguments = JSONField(null=True)
    raw_output = JSONField(null=True)
    status = CharField(max_length=16)
    error_message = TextField(null=True)
    duration_ms = IntegerField(default=0)
    retrieval_details = JSONField(null=True)
    evidence_refs = JSONField(null=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "tool_invocation"


class RunCheckpoint(BaseModel):
    """The latest checkpoint of a run's graph: the state after its last completed node.

    One row per run in flight, replaced after every node that called a model or a tool and
    deleted when the run finishes; a run taken over from a holder that died resumes from it
    (:class:`webapp.persistence.checkpoints.SqlCheckpointer`).
    """

    run_id = CharField(max_length=ID_LENGTH, unique=True)
    step = IntegerField()
    node = CharField(max_length=64)
    state = JSONField()
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "run_checkpoint"


class CaseLibrary(BaseModel):
    """Runs users marked useful: question and answer kept as a reusable case."""

    run_id = CharField(max_length=ID_LENGTH, unique=True)
    session_id = CharField(max_length=ID_LENGTH, index=True)
    question = TextField()
    answer = LongTextField()
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "case_library"
        indexes = ((("created_at", "run_id"), False),)  # the case library, newest first


class AlertRecord(BaseModel):
    """One alert received from Alertmanager, de-duplicated by its fingerprint."""

    fingerprint = CharField(max_length=64, unique=True)
    alert_name = CharField(max_length=200, index=True)
    status = CharField(max_length=16)
    severity = CharField(max_length=32, default="")
    service = CharField(max_length=200, default="")
    labels = JSONField()
    annotations = JSONField(null=True)
    starts_at = DateTimeField(null=True)
    ends_at = DateTimeField(null=True)
    group_key = CharField(max_length=255, index=True)
    receiver = CharField(max_length=200, default="")
    generator_url = TextField(null=True)
    received_count = IntegerField(default=1)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "alert_record"
        # The alert list, most recently updated first: all alerts, or those of one state.
        indexes = ((("updated_at", "id"), False), (("status", "updated_at", "id"), False))


class AlertRun(BaseModel):
    """An investigation run an alert was linked to (an alert may be investigated again)."""

    alert = ForeignKeyField(
        AlertRecord, column_name="alert_id", field="id", on_delete="CASCADE", backref="runs"
    )
    alert_id: int  # the raw foreign key column
    run_id = CharField(max_length=ID_LENGTH, index=True)
    session_id = CharField(max_length=ID_LENGTH)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "alert_run"
        indexes = ((("alert", "run_id"), True),)


MODELS: tuple[type[BaseModel], ...] = (
    ChatSession,
    DiagnosisRun,
    AgentStep,
    ToolInvocation,
    RunCheckpoint,
    CaseLibrary,
    AlertRecord,
    AlertRun,
)
