"""The services one app instance runs on, built by ``webapp.wiring.build_services``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import Database

from ..config import Settings
from ..diagnosis import Diagnoser
from ..llm.types import ChatModel
from ..tools.backends import TelemetryBackend
from ..tools.knowledge import KnowledgeIndex
from .chat import ChatService
from .history import HistoryStore
from .records import RunRecords
from .streams import RunWorkers


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
    workers: RunWorkers
    aiops: Any = None
