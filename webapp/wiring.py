"""Construction of real adapters: the only module that builds them (STYLE: build_services)."""

from __future__ import annotations

from pathlib import Path

from peewee import Database

from .aiops import AiOpsService, AiOpsSupervisor
from .config import Settings
from .db import bind, create_schema, open_database, schema_exists
from .demo.backend import DemoTelemetryBackend
from .diagnosis import Diagnoser
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
from .services.streams import RunWorkers
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
        response_format=settings.llm_response_format,
        max_tokens=settings.max_tokens_table(),
        temperature=settings.llm_temperature,
        stream=settings.llm_stream,
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
) -> Services:
    """Every real adapter the app runs on, from ``settings``; tests may hand in some of them."""
    database = bind(database or open_database(settings.database_url))
    if settings.create_schema and not schema_exists(database):
        create_schema(database)
    backend = backend or DemoTelemetryBackend()
    knowledge = knowledge_for(backend, settings.knowledge_db, settings.knowledge_dir)
    model = model or chat_model(settings)
    # Agents ask for json_schema; the OpenAI-compatible client adapts it to
    # LLM_RESPONSE_FORMAT and to what its endpoint supports (webapp.llm.formats).
    audit = SqlAudit(database)
    tracker = RetrievedDocTracker()
    diagnoser = Diagnoser(
        model=model,
        backend=backend,
        knowledge=knowledge,
        audit=audit,
        tracker=tracker,
    )
    diagnoser.invoker.run_deadline_seconds = settings.run_deadline_seconds
    # The simple flow's agent uses the same knowledge, log and metric tools as the executor.
    simple = SimpleChat(model, audit, audit, lambda: diagnoser.tools)
    history = history or history_store(
        settings.redis_url, settings.history_max_messages, settings.session_ttl_seconds
    )
    router = FlowRouter(
        backend.services,
        lambda: [a["alert_name"] for a in backend.query_alerts(state="all")["alerts"]],
    )
    runs = RunStore(database, settings.session_ttl_seconds)
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
        audit=audit,
        backend=backend,
        knowledge=knowledge,
    )
    supervisor.invoker.run_deadline_seconds = settings.run_deadline_seconds
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
        RunWorkers(settings.run_workers),
        aiops=AiOpsService(runs=runs, supervisor=supervisor, audit=audit),
    )
