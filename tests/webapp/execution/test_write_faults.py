"""A step write the database refuses ends the run FAILED with its cause, on both paths.

The fault is real: a 20 MB model reply exceeds MariaDB's 16 MB ``max_allowed_packet``; the
server answers with an error and drops the connection, so the FAILED write must go through a
fresh one. The run is executed again from its checkpoint first (a dropped connection looks
the same as a passing fault), here without pauses between the attempts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun
from webapp.services import lifecycle

from .conftest import app_for, services_for
from .models import HugeOutputModel

QUESTION = "Why is payment-service slow since 10:00?"
TWENTY_MB = 20 * 1024 * 1024


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "RETRY_PAUSE_SECONDS", 0.0)


def stored(database: Database, run_id: str) -> DiagnosisRun:
    with database.connection_context():
        return DiagnosisRun.get(DiagnosisRun.run_id == run_id)


@pytest.mark.parametrize("database", ["mysql"], indirect=True)
def test_a_refused_step_write_fails_the_plain_chat_run_with_its_cause(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    app = app_for(services_for(database, demo_backend, tmp_path, HugeOutputModel(TWENTY_MB)))
    body = app.test_client().post("/api/chat", json={"Question": QUESTION}).json["data"]
    assert body["status"] == "FAILED" and body["success"] is False
    assert "audit write failed (agent_step insert)" in body["errorMessage"]
    run = stored(database, body["runId"])
    assert run.status == "FAILED" and run.degraded is False and run.finished_at is not None
    # MariaDB answers an oversized packet with 1153, or (timing-dependent) just drops the
    # connection: 2006/2013. Either way the database's own error is the recorded cause.
    assert any(
        code in str(run.error_message) for code in ("max_allowed_packet", "1153", "2006", "2013")
    )


@pytest.mark.parametrize("database", ["mysql"], indirect=True)
def test_a_refused_step_write_fails_the_streamed_run_never_success_degraded(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    app = app_for(services_for(database, demo_backend, tmp_path, HugeOutputModel(TWENTY_MB)))
    response = app.test_client().post("/api/chat_stream", json={"Question": QUESTION})
    frames = [f for f in response.get_data(as_text=True).split("\n\n") if "data: " in f]
    events = [json.loads(f.split("data: ", 1)[1]) for f in frames]
    done = events[-1]["data"]
    assert events[-1]["type"] == "done" and done["status"] == "FAILED"
    assert done["degraded"] is False
    errors = [e["data"]["message"] for e in events if e["type"] == "error"]
    assert errors and "audit write failed" in errors[0]
    assert stored(database, done["runId"]).status == "FAILED"
