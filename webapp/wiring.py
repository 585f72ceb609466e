"""Construction of real adapters: the only module that builds them (STYLE: build_services)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peewee import Database

from .aiops import AiOpsRunner, AiOpsService
from .config import Settings
from .container import Services
from .demo.backend import DemoTelemetryBackend
from .diagnosis import Diagnoser
from .execution.events import EventLog, MemoryEventLog, RedisEventLog
from .execution.executors import CeleryExecutor, Executor, ThreadExecutor
from .execution.jobs import JobRunner, RunJob
from .execution.leases import LeaseKeeper
from .llm.offline import OfflineChatModel
from .llm.types import ChatModel
from .persistence.checkpoints import SqlCheckpointer
from .persistence.db import bind, open_database
from .persistence.history import HistoryStore, RedisHistory
from .persistence.memory_audit import MemoryAudit
from .persistence.records import RunRecords
from .persistence.runs import RunStore
from .persistence.schema import create_schema
from .persistence.sql_audit import SqlAudit
from .persistence.sql_history import SqlHistory
from .services.chat import ChatService
from .services.routing import FlowRouter
from .services.simple import SimpleChat
from .telemetry import TelemetryBackend, TelemetryError
from .telemetry.alertmanager import AlertmanagerBackend
from .telemetry.composite import CompositeBackend, Signals
from .telemetry.elasticsearch import ElasticsearchBackend
from .telemetry.http import HttpOptions, HttpSource
from .telemetry.logfiles import LogFileBackend
from .telemetry.loki import LokiBackend
from .telemetry.prometheus import PrometheusBackend, PrometheusOptions
from .telemetry.webhook_alerts import WebhookAlertsBackend
from .tools.doc_tracker import RetrievedDocTracker
from .tools.knowledge import KnowledgeIndex


def knowledge_for(
    backend: TelemetryBackend, db_path: str | Path = ":memory:", folder: str | Path | None = None
) -> KnowledgeIndex:
    """A knowledge index synced with ``folder`` (default: the backend's runbooks)."""
    index = KnowledgeIndex(db_path)  # it makes its file's folder
    runbooks = Path(folder) if folder else backend.runbook_dir()
    if runbooks is not None and runbooks.is_dir():
        index.sync_directory(runbooks)
    return index


def chat_model(settings: Settings) -> ChatModel:
    """The OpenAI-compatible client when an API key is set, else the offline provider."""
    if settings.offline:
        return OfflineChatModel(settings.default_timezone)
    from .llm.openai_client import OpenAIChatClient  # the SDK is imported only then

    return OpenAIChatClient(
        api_key=settings.openai_api_key or "",
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        timeout_seconds=settings.llm_timeout_seconds,
        response_format=settings.llm_response_format,
        max_tokens=settings.llm_max_tokens,
        temperature=settings.llm_temperature,
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


def offline_aiops(
    data_dir: str | Path | None = None, model: ChatModel | None = None
) -> AiOpsRunner:
    """An AIOps runner on the demo dataset, the offline model and in-memory audit rows."""
    backend = DemoTelemetryBackend(Path(data_dir) if data_dir else None)
    return AiOpsRunner(
        model=model or OfflineChatModel(),
        audit=MemoryAudit(),
        backend=backend,
        knowledge=knowledge_for(backend),
    )


def http_options(settings: Settings, system: str) -> HttpOptions:
    """``<SYSTEM>_URL`` and its auth, TLS and timeout variables."""
    return HttpOptions(
        url=str(getattr(settings, f"{system}_url")),
        bearer_token=getattr(settings, f"{system}_bearer_token"),
        username=getattr(settings, f"{system}_username"),
        password=getattr(settings, f"{system}_password"),
        tls_verify=getattr(settings, f"{system}_tls_verify"),
        ca_bundle=getattr(settings, f"{system}_ca_bundle"),
        timeout_seconds=getattr(settings, f"{system}_timeout_seconds"),
        attempts=settings.telemetry_attempts,
    )


def _log_backend(settings: Settings) -> TelemetryBackend | None:
    if settings.loki_url:
        return LokiBackend(
            HttpSource("Loki", http_options(settings, "loki")),
            service_label=settings.loki_service_label,
            level_label=settings.loki_level_label,
        )
    if settings.elasticsearch_url:
        return ElasticsearchBackend(
            http_options(settings, "elasticsearch"),
            settings.elasticsearch_index,
            fields=settings.elasticsearch_field_map,
        )
    if settings.log_dir:
        return LogFileBackend(settings.log_dir)
    return None


def telemetry_backend(settings: Settings, database: Database | None = None) -> TelemetryBackend:
    """The demo dataset, or (``TELEMETRY_BACKEND=live``) a backend per configured signal.

    Per signal, first configured wins: metrics PROMETHEUS_URL, TELEMETRY_DIR; logs LOKI_URL,
    ELASTICSEARCH_URL, LOG_DIR (only one may be set), TELEMETRY_DIR; alerts ALERTMANAGER_URL,
    PROMETHEUS_URL (rule alerts), TELEMETRY_DIR, else (ALERT_WEBHOOK_TOKEN set, ``database``
    given) the alerts the webhook received; runbooks TELEMETRY_DIR.
    """
    if settings.telemetry_backend == "demo":
        return DemoTelemetryBackend()
    folder = DemoTelemetryBackend(settings.telemetry_dir) if settings.telemetry_dir else None
    if folder is not None:
        folder.name = "telemetry_dir"
    prometheus = None
    if settings.prometheus_url:
        prometheus = PrometheusBackend(
            HttpSource("Prometheus", http_options(settings, "prometheus")),
            PrometheusOptions(
                service_label=settings.service_label,
                fallback_label=settings.service_fallback_label,
                default_step_seconds=settings.metrics_step_seconds,
                max_points=settings.telemetry_max_points,
            ),
        )
    alertmanager = None
    if settings.alertmanager_url:
        alertmanager = AlertmanagerBackend(
            HttpSource("Alertmanager", http_options(settings, "alertmanager")),
            service_label=settings.service_label,
            fallback_label=settings.service_fallback_label,
            rule_alerts=prometheus.rule_alerts if prometheus else None,
        )
    received = None
    if settings.alert_webhook_token and database is not None:
        received = WebhookAlertsBackend(database, service_label=settings.service_label)
    return CompositeBackend(
        Signals(
            metrics=prometheus or folder,
            logs=_log_backend(settings) or folder,
            alerts=alertmanager or prometheus or folder or received,
            runbooks=folder,
        ),
        aliases=settings.service_aliases,
    )


def alert_names(backend: TelemetryBackend) -> list[str]:
    """Names of the alerts (for routing); none while the alert source is unavailable."""
    try:
        return [a["alert_name"] for a in backend.query_alerts(state="all")["alerts"]]
    except TelemetryError:
        return []


def build_services(
    settings: Settings,
    *,
    database: Database | None = None,
    backend: TelemetryBackend | None = None,
    history: HistoryStore | None = None,
    model: ChatModel | None = None,
    events: EventLog | None = None,
    tracer_provider: Any = None,
) -> Services:
    """Every real adapter the app runs on, from ``settings``; tests may hand in some of them
    (``tracer_provider``: an OpenTelemetry SDK ``TracerProvider`` instead of the OTLP one)."""
    database = bind(database or open_database(settings.database_url))
    if settings.create_schema:
        create_schema(database)  # under a database-level lock: safe with any number at once
    backend = backend or telemetry_backend(settings, database)
    knowledge = knowledge_for(backend, settings.knowledge_db, settings.knowledge_dir)
    model = model or chat_model(settings)
    audit = SqlAudit(database)
    # Span export of runs (the given provider, or OTLP/HTTP when an endpoint is set): steps and
    # tool calls become spans where written.
    telemetry: Any = None
    traced: Any = audit
    endpoint = settings.otel_exporter_otlp_endpoint
    if tracer_provider is not None or endpoint:
        from .execution.telemetry import RunTelemetry, TracingAudit, otlp_provider

        provider = tracer_provider or otlp_provider(endpoint or "", settings.otel_service_name)
        telemetry = RunTelemetry(provider)
        traced = TracingAudit(audit, telemetry.tracer)
    tracker = RetrievedDocTracker()
    external = None
    if settings.mcp_servers:  # the MCP SDK is imported only then
        from .tools.mcp_client import McpTools

        external = McpTools(settings.mcp_server_list(), settings.mcp_timeout_seconds)
    diagnoser = Diagnoser(
        model=model,
        backend=backend,
        knowledge=knowledge,
        audit=traced,
        tracker=tracker,
        default_timezone=settings.default_timezone,
        external=external,
        checkpointer=SqlCheckpointer(database),
    )
    simple = SimpleChat(model, traced, diagnoser.all_tools)
    simple.token_budget = settings.token_budget()
    history = history or (
        RedisHistory(
            settings.redis_url,
            max_messages=settings.history_max_messages,
            ttl_seconds=settings.session_ttl_seconds,
        )
        if settings.redis_url
        else SqlHistory(database, settings.history_max_messages)
    )
    router = FlowRouter(backend.services, lambda: alert_names(backend), backend.service_aliases)
    runs = RunStore(
        database,
        settings.session_ttl_seconds,
        lease_seconds=settings.run_lease_seconds,
        queue_timeout_seconds=settings.run_queue_timeout_seconds,
        max_resumes=settings.run_max_resumes,
    )
    chat = ChatService(
        runs=runs,
        diagnoser=diagnoser,
        simple=simple,
        history=history,
        router=router,
        audit=audit,
    )
    aiops_runner = AiOpsRunner(
        model=model,
        audit=traced,
        backend=backend,
        knowledge=knowledge,
        external=external,
    )
    aiops = AiOpsService(runs=runs, runner=aiops_runner, audit=audit)
    for invoker in (diagnoser.invoker, aiops_runner.diagnoser.invoker):
        invoker.run_deadline_seconds = settings.run_deadline_seconds
        invoker.token_budget = settings.token_budget()
    chat.lifecycle.prices = aiops.lifecycle.prices = settings.price_table()
    if events is None:
        events = RedisEventLog(settings.redis_url) if settings.redis_url else MemoryEventLog()
    keeper = LeaseKeeper(runs, events, settings.run_lease_seconds)
    runner = JobRunner(
        runs=runs, chat=chat, aiops=aiops, events=events, keeper=keeper, telemetry=telemetry
    )
    executor = executor_for(settings, runner)
    keeper.requeue = lambda run: executor.submit(RunJob.of(run))
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
        executor,
        aiops=aiops,
        events=events,
        runner=runner,
        telemetry=telemetry,
    )


def executor_for(settings: Settings, runner: JobRunner) -> Executor:
    """The pool in this process, or (``RUN_EXECUTOR=celery``) the Celery broker: a web process
    enqueues the runs it starts there, and every process the runs its reaper takes back."""
    if settings.run_executor == "celery":
        from .execution.celery_app import create_celery

        return CeleryExecutor(create_celery(settings), runner.keeper)
    return ThreadExecutor(runner, settings.run_workers)
