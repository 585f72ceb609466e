"""Real Celery workers on a private Redis: runs execute there and stream through the web app.

The worker is a subprocess (``worker_main``: a threads pool, a slow model); the web app is
this test process in ``RUN_EXECUTOR=celery`` mode, which only enqueues. A SIGKILLed worker's
run, once its resumes are spent (``RUN_MAX_RESUMES=0`` here; resuming is
``test_kill_windows``'s), is failed ``interrupted`` by the web app's reaper within its lease,
never left RUNNING.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.conftest import ScratchServers, close_database
from webapp import create_app
from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun
from webapp.wiring import build_services

from .conftest import RedisServer, wait_for

ROOT = Path(__file__).parents[3]
QUESTION = "Why is payment-service slow since 10:00?"
LEASE_SECONDS = 2


@pytest.fixture(params=["sqlite", "mysql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path, scratch_servers: ScratchServers) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/shared.db"
    return scratch_servers.new_database_url("mysql")


class Worker:
    """``python -m tests.webapp.execution.worker_main`` with its environment."""

    def __init__(self, env: dict[str, str], tmp_path: Path, delay: float) -> None:
        self.env = {
            **os.environ,
            **env,
            "TEST_MODEL_DELAY": str(delay),
            "KNOWLEDGE_DB": str(tmp_path / f"worker-{time.monotonic_ns()}.db"),
        }
        self.log = open(tmp_path / f"worker-{time.monotonic_ns()}.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.webapp.execution.worker_main"],
            env=self.env,
            cwd=ROOT,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def log_text(self) -> str:
        return Path(self.log.name).read_text()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def environment(db_url: str, redis: RedisServer) -> dict[str, str]:
    return {
        "DATABASE_URL": db_url,
        "REDIS_URL": redis.url,
        "RUN_EXECUTOR": "celery",
        "RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        "RUN_MAX_RESUMES": "0",
    }


def web_app(env: dict[str, str], backend: DemoTelemetryBackend, tmp_path: Path) -> Flask:
    overrides: dict[str, Any] = {k.lower(): v for k, v in env.items()}
    for name in ("run_lease_seconds", "run_max_resumes"):
        if name in overrides:
            overrides[name] = int(overrides[name])
    overrides["knowledge_db"] = str(tmp_path / f"web-{time.monotonic_ns()}.db")
    settings = Settings.from_env({}, overrides=overrides)
    return create_app(services=build_services(settings, backend=backend))


@pytest.fixture
def cluster(
    db_url: str,
    private_redis: RedisServer,
    demo_backend: DemoTelemetryBackend,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> Iterator[tuple[Flask, Worker, dict[str, str]]]:
    delay = getattr(request, "param", 0.0)
    env = environment(db_url, private_redis)
    app = web_app(env, demo_backend, tmp_path)  # creates the schema before the worker boots
    worker = Worker(env, tmp_path, delay)
    yield app, worker, env
    worker.stop()
    app.extensions["diagnosis"].workers.shutdown()
    database = app.extensions["diagnosis"].database
    close_database(database)


def events_of(body: Any) -> list[dict[str, Any]]:
    text = body.decode() if isinstance(body, bytes) else str(body)
    frames = [f for f in text.split("\n\n") if "data: " in f]
    return [
        {
            "id": dict(line.split(": ", 1) for line in f.splitlines() if ": " in line).get("id"),
            **json.loads(f.split("data: ", 1)[1].split("\n", 1)[0]),
        }
        for f in frames
    ]


def row(app: Flask, run_id: str) -> DiagnosisRun:
    with app.extensions["diagnosis"].database.connection_context():
        return DiagnosisRun.get(DiagnosisRun.run_id == run_id)


def test_runs_execute_in_the_worker_and_stream_through_the_web_process(
    cluster: tuple[Flask, Worker, dict[str, str]],
    demo_backend: DemoTelemetryBackend,
    tmp_path: Path,
) -> None:
    app, worker, env = cluster
    response = app.test_client().post("/api/chat_stream", json={"Question": QUESTION})
    events = events_of(response.get_data(as_text=True))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "metadata" and kinds[-1] == "done" and "progress" in kinds
    assert events[-1]["data"]["status"] == "SUCCESS"
    run_id = events[0]["data"]["runId"]
    run = row(app, run_id)
    assert run.status == "SUCCESS" and run.answer
    assert str(run.lease_owner).endswith(f":{worker.process.pid}")  # executed there, not here
    # Another web process attaches to the finished run and resumes after an event it saw.
    other = web_app(env, demo_backend, tmp_path)
    session_id = events[0]["data"]["sessionId"]
    path = f"/api/diagnosis/{session_id}/runs/{run_id}/events"
    again = events_of(other.test_client().get(path).get_data(as_text=True))
    assert [e["id"] for e in again] == [e["id"] for e in events]
    resumed = other.test_client().get(path, headers={"Last-Event-ID": events[2]["id"]})
    assert [e["id"] for e in events_of(resumed.get_data(as_text=True))] == [
        e["id"] for e in events[3:]
    ]
    # The plain endpoint too waits for the worker, never executing the run itself.
    plain = app.test_client().post("/api/chat", json={"Question": QUESTION}).json["data"]
    assert plain["status"] == "SUCCESS" and plain["answer"] == row(app, plain["runId"]).answer
    assert str(row(app, plain["runId"]).lease_owner).endswith(f":{worker.process.pid}")


@pytest.mark.parametrize("cluster", [0.4], indirect=True)
def test_a_sigkilled_worker_leaves_its_run_failed_interrupted_within_its_lease(
    cluster: tuple[Flask, Worker, dict[str, str]],
) -> None:
    app, worker, _ = cluster
    response = app.test_client().post(
        "/api/chat_stream", json={"Question": QUESTION}, buffered=False
    )
    chunks: Iterator[bytes] = iter(response.response)  # type: ignore[arg-type]
    first = events_of(next(chunks))[0]
    run_id = first["data"]["runId"]
    assert wait_for(lambda: row(app, run_id).status == "RUNNING", 60)
    time.sleep(0.5)
    worker.kill()
    killed = time.monotonic()
    assert wait_for(lambda: row(app, run_id).status != "RUNNING", LEASE_SECONDS * 3)
    waited = time.monotonic() - killed
    run = row(app, run_id)
    assert run.status == "FAILED" and str(run.error_message).startswith("interrupted: ")
    assert run.orchestration_trace["termination_reason"] == "error"
    assert waited < LEASE_SECONDS + 2
    rest = events_of(b"".join(chunks).decode())
    assert [e["type"] for e in rest][-2:] == ["error", "done"]
    assert rest[-1]["data"]["status"] == "FAILED"
