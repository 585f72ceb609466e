"""The services one app instance runs on, built by ``webapp.wiring.build_services``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import current_app
from peewee import Database

from .aiops import AiOpsService
from .config import Settings
from .diagnosis import Diagnoser
from .execution.events import EventLog
from .execution.executors import Executor
from .execution.jobs import JobRunner
from .llm.types import ChatModel
from .persistence.history import HistoryStore
from .persistence.listing import Listing
from .persistence.records import RunRecords
from .services.chat import ChatService
from .telemetry import TelemetryBackend
from .tools.knowledge import KnowledgeIndex


@dataclass
class Services:
    """Everything the blueprints and CLI commands use; tests pass their own."""

    settings: Settings
    database: Database
    backend: TelemetryBackend
    knowledge: KnowledgeIndex
    model: ChatModel
    history: HistoryStore
    diagnoser: Diagnoser
    chat: ChatService
    records: RunRecords
    workers: Executor
    aiops: AiOpsService
    events: EventLog
    runner: JobRunner
    telemetry: Any = None

    @property
    def listing(self) -> Listing:
        """The keyset-paged lists of this instance's store."""
        return Listing(self.database)


def services() -> Services:
    """The services of the current Flask app (``create_app`` keeps them in its extensions)."""
    found: Services = current_app.extensions["diagnosis"]
    return found
