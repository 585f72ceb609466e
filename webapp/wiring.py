"""Construction of real adapters. The only module that builds them (STYLE: build_services)."""

from __future__ import annotations

from pathlib import Path

from .demo.backend import DemoTelemetryBackend
from .diagnosis import Diagnoser
from .llm.offline import OfflineChatModel
from .llm.types import ChatModel
from .stores.memory import MemoryAudit
from .tools.doc_tracker import RetrievedDocTracker
from .tools.knowledge import KnowledgeIndex


def knowledge_for(
    backend: DemoTelemetryBackend, db_path: str | Path = ":memory:"
) -> KnowledgeIndex:
    """A knowledge index synced with the backend's runbook folder."""
    index = KnowledgeIndex(db_path)
    runbooks = backend.runbook_dir()
    if runbooks is not None and runbooks.is_dir():
        index.sync_directory(runbooks)
    return index


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
