"""Construction of real adapters: the only module that builds them (STYLE: build_services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peewee import Database

from .aiops import AiOpsService, AiOpsSupervisor
from .config import Settings
from .db import bind, create_schema, open_database, schema_exists
from .demo.backend import DemoTelemetryBackend
from .diagnosis import Diagnoser
from .execution.events import EventLog, MemoryEventLog, RedisEventLog
from .execution.executors import CeleryExecutor, Executor, ThreadExecutor
from .execution.jobs import JobRunner
from .execution.leases import LeaseKeeper
from .llm.offline import OfflineChatModel
from .llm.openai_client import OpenAIChatClient
from .llm.types import ChatModel
from .services.chat import ChatService
from .services.container import Services
from .services.history import HistoryStore, history_store
from .services.records import RunRecords
from .services.routing import FlowRouter
from .services.runs import RunStore
from .services.simple import SimpleChat
from .services.sql_history import SqlHistory
from .stores.memory import MemoryAudit
from .stores.sql import SqlAudit
from .tools.backends import TelemetryBackend
from .tools.doc_tracker import RetrievedDocTracker
from .tools.knowledge import KnowledgeIndex


def knowledge_for(
    backend: TelemetryBackend, db_path: str | Path = ":memory:", folder: str | Path | None = None
) -> KnowledgeIndex:
    """A knowledge index synced with ``folder`` (default: the backend's runbooks)."""
    if isinstance(db_path, Path) or db_path != ":memory:":
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    index = KnowledgeIndex(db_path)
    runbooks = Path(folder) if folder else backend.runbook_dir()
    if runbooks is not None and runbooks.is_dir():
        index.sync_directory(runbooks)
    return index


def chat_model(settings: Settings) -> ChatModel:
    """The OpenAI-compatible client when an API key is set, else the offline provider."""
    if settings.offline:
        return OfflineChatModel()
    return OpenAIChatClient(
        api_key=settings.openai_api_key or "",
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        timeout_seconds=settings.llm_timeout_seconds,
    )


def offline_diagnoser(
    data_dir: str | Path | None = None, model: ChatModel | None = None
) -> Diagnoser:
    """A diagnoser on the demo dataset, the offline model and in-memory audit rows."""
    backend = DemoTelemetryBackend(Path(data_dir) if data_dir else None)
    return Diagnoser(
        model=model or OfflineChatModel(),
        backend=backend,
        knowledge=knowledge_for(backend),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )


def offline_supervisor(
    data_dir: str | Path | None = None, model: ChatModel | None = None
) -> AiOpsSupervisor:
    """An AIOps supervisor on the demo dataset, the offline model and in-memory audit rows."""
    backend = DemoTelemetryBackend(Path(data_dir) if data_dir else None)
    return AiOpsSupervisor(
        model=model or OfflineChatModel(),
        audit=MemoryAudit(),
        backend=backend,
        knowledge=knowledge_for(backend),
    )


def build_services(
    settings: Settings,
    *,
    database: Database | None = None,
    backend: TelemetryBackend | None = None,
    history: HistoryStore | None = None,
    model: ChatModel | None = None,
    events: EventLog | None = None,
    role: str = "web",
    tracer_provider: Any = None,
) -> Services:
    """Every real adapter the app runs on, from ``settings``; tests may hand in some of them.

    ``role`` is ``web`` (the Flask app: with ``RUN_EXECUTOR=celery`` it only enqueues runs) or
    ``worker`` (a Celery worker: it executes them). ``tracer_provider`` (an OpenTelemetry SDK
    ``TracerProvider``) overrides the OTLP exporter ``OTEL_EXPORTER_OTLP_ENDPOINT`` configures.
    """
    database = bind(database or open_database(settings.database_url))
    if settings.create_schema and not schema_exists(database):
        create_schema(database)  # under a database-level lock: safe with any number at once
    backend = backend or DemoTelemetryBackend()
    knowledge = knowledge_for(backend, settings.knowledge_db, settings.knowledge_dir)
    model = model or chat_model(settings)
    audit = SqlAudit(database)
    telemetry = run_telemetry(settings, tracer_provider)
    # Model steps and tool invocations become spans where their audit rows are written.
    traced: Any = audit if telemetry is None else _traced(audit, telemetry)
    tracker = RetrievedDocTracker()
    diagnoser = Diagnoser(
        model=model,
        backend=backend,
        knowledge=knowledge,
        audit=traced,
        tracker=tracker,
        response_mode=settings.llm_response_format,
    )
    # The simple flow's agent uses the same knowledge, log and metric tools as the executor.
    simple = SimpleChat(model, traced, traced, lambda: diagnoser.tools)
    history = history or (
        history_store(
            settings.redis_url, settings.history_max_messages, settings.session_ttl_seconds
        )
        if settings.redis_url
        else SqlHistory(database, settings.history_max_messages)
    )
    router = FlowRouter(
        backend.services,
        lambda: [a["alert_name"] for a in backend.query_alerts(state="all")["alerts"]],
    )
    celery_mode = settings.run_executor == "celery"
    runs = RunStore(
        database,
        settings.session_ttl_seconds,
        lease_seconds=settings.run_lease_seconds,
        # Queued on the broker, a run may wait for a free worker this long before it is failed.
        pending_lease_seconds=settings.run_queue_timeout_seconds if celery_mode else None,
        faults=audit,
    )
    chat = ChatService(
        runs=runs,
        diagnoser=diagnoser,
        simple=simple,
        history=history,
        router=router,
        audit=audit,
    )
    supervisor = AiOpsSupervisor(
        model=model,
        audit=traced,
        backend=backend,
        knowledge=knowledge,
        response_mode=settings.llm_response_format,
    )
    aiops = AiOpsService(runs=runs, supervisor=supervisor, audit=audit)
    if events is None:
        events = RedisEventLog(settings.redis_url) if settings.redis_url else MemoryEventLog()
    keeper = LeaseKeeper(runs, events, settings.run_lease_seconds)
    runner = JobRunner(
        runs=runs, chat=chat, aiops=aiops, events=events, keeper=keeper, telemetry=telemetry
    )
    return Services(
        settings,
        database,
        backend,
        knowledge,
        model,
        history,
        diagnoser,
        chat,
        RunRecords(database),
        executor_for(settings, runner, role),
        aiops=aiops,
        events=events,
        runner=runner,
        telemetry=telemetry,
    )


def run_telemetry(settings: Settings, provider: Any = None) -> Any:
    """Span export of runs: the given provider, or OTLP/HTTP when an endpoint is set, or None."""
    if provider is None and not settings.otel_exporter_otlp_endpoint:
        return None
    from .execution.telemetry import RunTelemetry, otlp_provider

    if provider is None:
        assert settings.otel_exporter_otlp_endpoint is not None
        provider = otlp_provider(settings.otel_exporter_otlp_endpoint, settings.otel_service_name)
    return RunTelemetry(provider)


def _traced(audit: SqlAudit, telemetry: Any) -> Any:
    from .execution.telemetry import TracingAudit

    return TracingAudit(audit, telemetry.tracer)


def executor_for(settings: Settings, runner: JobRunner, role: str) -> Executor:
    """The pool in this process, or (web role, ``RUN_EXECUTOR=celery``) the Celery broker."""
    if settings.run_executor == "celery" and role == "web":
        from .execution.celery_app import create_celery

        return CeleryExecutor(create_celery(settings), runner.keeper)
    return ThreadExecutor(runner, settings.run_workers)
