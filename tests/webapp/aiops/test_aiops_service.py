"""The AIOps run lifecycle on every database backend: PENDING -> RUNNING -> SUCCESS | FAILED."""

from __future__ import annotations

from typing import Any

from flask import Flask
from peewee import Database

from webapp.aiops import AiOpsRunner, AiOpsService
from webapp.diagnosis import DiagnosisResult
from webapp.persistence.models import DiagnosisRun
from webapp.persistence.runs import RunStore
from webapp.persistence.sql_audit import SqlAudit

from .test_aiops_api import stream, trace


class Exploding(AiOpsRunner):
    """A runner with a bug: the run must still end FAILED, with the error recorded."""

    def __init__(self) -> None:  # no adapters: it never gets as far as using them
        self.status_seen: str | None = None

    def run(
        self, request: str | None, *, session_id: str, run_id: str, **_: Any
    ) -> DiagnosisResult:
        with DiagnosisRun._meta.database.connection_context():
            self.status_seen = DiagnosisRun.get(DiagnosisRun.run_id == run_id).status
        raise RuntimeError("runner bug")


def test_start_creates_the_run_pending_with_the_aiops_flow(database: Database) -> None:
    service = AiOpsService(
        runs=RunStore(database, 3600),
        runner=Exploding(),
        audit=SqlAudit(database),
    )
    session_id, run_id = service.start(None, None)
    with database.connection_context():
        run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
    assert session_id.startswith("sess-") and run_id.startswith("run-")
    assert (run.session_id, run.agent_flow, run.flow, run.status) == (
        session_id,
        "AI_OPS",
        "aiops",
        "PENDING",
    )
    assert run.question == "Investigate the firing alerts"


def test_an_unhandled_error_ends_the_run_failed(database: Database) -> None:
    runner = Exploding()
    service = AiOpsService(
        runs=RunStore(database, 3600),
        runner=runner,
        audit=SqlAudit(database),
    )
    with database.connection_context():
        session_id, run_id = service.start("sess-x", "check the alerts")
        outcome = service.execute(session_id, run_id, "check the alerts")
        run = DiagnosisRun.get(DiagnosisRun.run_id == outcome.run_id)
    assert runner.status_seen == "RUNNING"
    assert (outcome.success, outcome.status, outcome.flow) == (False, "FAILED", "aiops")
    assert outcome.error_message == "RuntimeError: runner bug"
    assert run.status == "FAILED" and run.error_message == "RuntimeError: runner bug"
    assert run.finished_at is not None and run.answer is None
    assert run.orchestration_trace["version"] == "aiops-stategraph-v1"
    assert run.orchestration_trace["termination_reason"] == "error"


def test_a_failed_run_streams_an_error_before_done(app: Flask) -> None:
    app.extensions["diagnosis"].aiops.runner = Exploding()
    events = stream(app, {"userRequest": "anything firing?"})
    kinds = [e["type"] for e in events]
    assert kinds == ["metadata", "error", "done"]
    done = events[-1]["data"]
    assert done["status"] == "FAILED" and not done["success"]
    assert events[1]["data"]["message"] == "RuntimeError: runner bug"
    run = trace(app, done["sessionId"], done["runId"])["run"]
    assert run["status"] == "FAILED" and run["agentFlow"] == "AI_OPS"
    assert run["orchestrationTrace"]["termination_reason"] == "error"
