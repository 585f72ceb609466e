"""An incident exported from a live mix (real Prometheus, LOG_DIR, an alert source) into a
TELEMETRY_DIR folder reads back like the demo, and diagnoses to the same conclusions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from demo.scenarios import scenario_records
from tests.webapp.telemetry.conftest import metrics_backend, pinned
from tests.webapp.telemetry.servers import Server
from webapp.demo.backend import DemoTelemetryBackend
from webapp.demo.snapshot import write_snapshot
from webapp.diagnosis import Diagnoser
from webapp.llm.offline import OfflineChatModel
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.logfiles import LogFileBackend
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.wiring import knowledge_for, offline_diagnoser

START = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
RECORDS = scenario_records("default")


@pytest.fixture(scope="module")
def snapshot(
    prometheus_server: Server,
    demo: DemoTelemetryBackend,
    exported: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[DemoTelemetryBackend, dict[str, Any], CompositeBackend]:
    live = CompositeBackend(
        Signals(
            metrics=metrics_backend(prometheus_server, demo),
            logs=LogFileBackend(exported / "logs", clock=pinned(demo.reference_time())),
            alerts=demo,
        )
    )
    out = tmp_path_factory.mktemp("snapshot")
    summary = write_snapshot(live, out, start=START, end=demo.reference_time())
    return DemoTelemetryBackend(out), summary, live


def test_the_folder_reads_back_like_the_source(
    snapshot: tuple[DemoTelemetryBackend, dict[str, Any], CompositeBackend],
    demo: DemoTelemetryBackend,
) -> None:
    folder, summary, live = snapshot
    assert summary["skipped"] == [] and summary["truncated"] == []
    assert folder.reference_time() == demo.reference_time()
    assert folder.services() == demo.services()
    assert folder.metrics_by_service() == demo.metrics_by_service()
    assert folder.query_alerts(state="all") == demo.query_alerts(state="all")
    start, end = START + timedelta(hours=1), START + timedelta(hours=2)
    for service, metrics in demo.metrics_by_service().items():
        for metric in metrics:
            want = demo.query_metrics(service=service, metric=metric, start=start, end=end)
            got = folder.query_metrics(service=service, metric=metric, start=start, end=end)
            assert got["series"][0]["points"] == want["series"][0]["points"], (service, metric)
            seen = live.query_metrics(service=service, metric=metric, start=start, end=end)
            assert got["summary"]["unit"] == seen["summary"]["unit"]  # as the tools saw it
    whole: dict[str, Any] = {"start": START, "end": demo.reference_time(), "limit": 20}
    for service in demo.services():  # api-gateway's logs take three pages to export
        assert folder.query_logs(service=service, **whole) == demo.query_logs(
            service=service, **whole
        )
        errors: dict[str, Any] = {**whole, "level": "ERROR"}
        assert folder.query_logs(service=service, **errors) == demo.query_logs(
            service=service, **errors
        )


def _conclusions(diagnoser: Diagnoser, question: str) -> list[dict[str, Any]]:
    result = diagnoser.diagnose(question, session_id="s-snapshot")
    assert result.run.status == "SUCCESS", result.answer
    return [
        {k: v for k, v in c.items() if k != "evidence_ids"}
        for c in result.run.state["composer_output"]["conclusions"]
    ]


def test_the_folder_diagnoses_to_the_demo_conclusions(
    snapshot: tuple[DemoTelemetryBackend, dict[str, Any], CompositeBackend],
    demo: DemoTelemetryBackend,
) -> None:
    folder = snapshot[0]
    later = Diagnoser(
        model=OfflineChatModel(),
        backend=folder,
        knowledge=knowledge_for(demo),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )
    reference = offline_diagnoser()
    for record in RECORDS:
        assert _conclusions(later, record["question"]) == _conclusions(
            reference, record["question"]
        ), record["id"]
