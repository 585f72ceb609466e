"""Every demo scenario diagnosed offline on a real Prometheus + LOG_DIR reaches the demo's result.

The metrics are backfilled into Prometheus with promtool, the logs written out as one JSON-lines
file per service; both backends' "now" is pinned to the dataset's reference time (the clock is
the boundary), so the questions' clock times mean the same instants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo.scenarios import scenario_records
from tests.webapp.telemetry.conftest import metrics_backend, pinned
from tests.webapp.telemetry.servers import Server
from webapp.demo.backend import DemoTelemetryBackend
from webapp.diagnosis import Diagnoser, DiagnosisResult
from webapp.llm.offline import OfflineChatModel
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.logfiles import LogFileBackend
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.wiring import knowledge_for, offline_diagnoser

RECORDS = scenario_records("default")


def live_diagnoser(server: Server, demo: DemoTelemetryBackend, exported: Path) -> Diagnoser:
    """The offline diagnoser on Prometheus metrics and alerts plus log files."""
    prometheus = metrics_backend(server, demo)
    logs = LogFileBackend(exported / "logs", clock=pinned(demo.reference_time()))
    backend = CompositeBackend(Signals(metrics=prometheus, logs=logs, alerts=prometheus))
    return Diagnoser(
        model=OfflineChatModel(),
        backend=backend,
        knowledge=knowledge_for(demo),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )


@pytest.fixture(scope="module")
def both(
    prometheus_server: Server, demo: DemoTelemetryBackend, exported: Path
) -> dict[str, dict[str, DiagnosisResult]]:
    diagnosers = {
        "demo": offline_diagnoser(),
        "live": live_diagnoser(prometheus_server, demo, exported),
    }
    return {
        name: {r["id"]: d.diagnose(r["question"], session_id=f"s-{name}") for r in RECORDS}
        for name, d in diagnosers.items()
    }


def _conclusions(result: DiagnosisResult) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in c.items() if k != "evidence_ids"}
        for c in result.run.state["composer_output"]["conclusions"]
    ]


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_the_live_backends_reach_the_demo_conclusions(
    record: dict[str, Any], both: dict[str, dict[str, DiagnosisResult]]
) -> None:
    demo, live = both["demo"][record["id"]], both["live"][record["id"]]
    assert live.run.status == "SUCCESS" and not live.run.degraded, live.answer
    assert (live.answer or "").splitlines()[0] == (demo.answer or "").splitlines()[0]
    if record["failure_type"] != "healthy":
        assert record["cause_service"] in (live.answer or "")
    assert _conclusions(live) == _conclusions(demo)
    rules = live.self_evaluation["rule_evaluation"]
    assert rules["gatekeeper"]["verdict"] == "PASS"
    assert rules["tool_status_counts"] == {"SUCCESS": rules["tool_invocation_count"]}
    assert (
        live.orchestration_trace["evidence_retry_count"]
        == (demo.orchestration_trace["evidence_retry_count"])
    )
