"""Every accepted run executes, once: a worker SIGKILLed in each window of a run, a web process
that dies between committing a run and enqueueing it, a database unreachable at the claim.

Real Celery workers (``worker_main``, threads pool) on a private Redis and a scratch MariaDB
database; the web app is this process (``RUN_EXECUTOR=celery``: it only enqueues, and reaps).
Every model call of every worker is logged (:class:`.models.LoggedModel`), so a test can tell
that no completed node's call was made twice. A worker is killed by itself, once, at the point
the test names (``TEST_KILL_AT``); a second worker then finishes the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from flask import Flask

from tests.conftest import ScratchServers, close_database
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun, RunCheckpoint

from .conftest import RedisServer, wait_for
from .models import calls
from .proxy import TcpProxy
from .test_celery_workers import Worker, events_of, web_app

QUESTION = "Why is payment-service slow since 10:00?"
LEASE_SECONDS = 2


class Cluster:
    """The web app, its environment, and the workers a test started (stopped at the end)."""

    def __init__(self, app: Flask, env: dict[str, str], tmp_path: Path) -> None:
        self.app = app
        self.env = env
        self.tmp_path = tmp_path
        self.call_log = tmp_path / "calls.log"
        self.workers: list[Worker] = []

    def worker(self, kill_at: str = "", **env: str) -> Worker:
        extra = {
            "TEST_CALL_LOG": str(self.call_log),
            "TEST_KILL_AT": kill_at,
            "TEST_KILL_MARKER": str(self.tmp_path / "killed"),
            **env,
        }
        worker = Worker({**self.env, **extra}, self.tmp_path, 0.0)
        self.workers.append(worker)
        return worker

    def row(self, run_id: str) -> DiagnosisRun:
        with self.app.extensions["diagnosis"].database.connection_context():
            return DiagnosisRun.get(DiagnosisRun.run_id == run_id)

    def contracts(self, run_id: str) -> list[str]:
        return [name for name, _ in calls(self.call_log, run_id)]

    def stream(self) -> tuple[str, Iterator[bytes]]:
        """Start a streamed chat; its run id and the rest of its frames."""
        response = self.app.test_client().post(
            "/api/chat_stream", json={"Question": QUESTION}, buffered=False
        )
        chunks: Iterator[bytes] = iter(response.response)  # type: ignore[arg-type]
        first = events_of(next(chunks))[0]
        return str(first["data"]["runId"]), chunks


@pytest.fixture
def cluster(
    scratch_servers: ScratchServers,
    private_redis: RedisServer,
    demo_backend: DemoTelemetryBackend,
    tmp_path: Path,
) -> Iterator[Cluster]:
    env = {
        "DATABASE_URL": scratch_servers.new_database_url("mysql"),
        "REDIS_URL": private_redis.url,
        "RUN_EXECUTOR": "celery",
        "RUN_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    app = web_app(env, demo_backend, tmp_path)  # creates the schema before the workers boot
    found = Cluster(app, env, tmp_path)
    yield found
    for worker in found.workers:
        worker.stop()
    app.extensions["diagnosis"].workers.shutdown()
    close_database(app.extensions["diagnosis"].database)


def finished(cluster: Cluster, chunks: Iterator[bytes]) -> list[dict[str, Any]]:
    """The rest of a stream's events; it must end with ``done``."""
    events = events_of(b"".join(chunks).decode())
    assert events and events[-1]["type"] == "done", [e["type"] for e in events]
    return events


def resumed_edges(run: DiagnosisRun) -> list[dict[str, Any]]:
    return [t for t in run.orchestration_trace["transitions"] if t["reason_code"] == "resumed"]


def test_a_worker_killed_mid_node_is_resumed_without_repeating_the_planners_call(
    cluster: Cluster,
) -> None:
    killed = cluster.worker(kill_at="executor_evidence_v2")
    run_id, chunks = cluster.stream()
    killed.process.wait(timeout=120)  # it reached the executor, then died
    cluster.worker()
    events = finished(cluster, chunks)
    run = cluster.row(run_id)
    assert run.status == "SUCCESS" and run.answer and events[-1]["data"]["status"] == "SUCCESS"
    assert run.resumes == 1
    contracts = cluster.contracts(run_id)
    assert contracts.count("planner_plan") == 1  # the completed planner was not called again
    assert contracts.count("composer_output") == 1
    [edge] = resumed_edges(run)
    assert (edge["from"], edge["to"], edge["attempt"]) == ("planner", "executor", 1)
    with cluster.app.extensions["diagnosis"].database.connection_context():
        assert not RunCheckpoint.select().where(RunCheckpoint.run_id == run_id).exists()


def test_a_worker_killed_during_the_final_write_leaves_a_run_finished_without_a_model_call(
    cluster: Cluster,
) -> None:
    killed = cluster.worker(kill_at="finish")
    run_id, chunks = cluster.stream()
    killed.process.wait(timeout=120)
    before = calls(cluster.call_log, run_id)
    cluster.worker()
    finished(cluster, chunks)
    run = cluster.row(run_id)
    assert run.status == "SUCCESS" and run.answer and run.resumes == 1
    assert calls(cluster.call_log, run_id) == before  # resumed after its last node: no call
    assert len(set(before)) == len(before)


def test_a_worker_killed_before_its_claim_leaves_the_run_to_another(cluster: Cluster) -> None:
    killed = cluster.worker(kill_at="claim")
    run_id, chunks = cluster.stream()
    killed.process.wait(timeout=120)
    assert cluster.row(run_id).status == "PENDING"
    cluster.worker()
    finished(cluster, chunks)
    run = cluster.row(run_id)
    assert run.status == "SUCCESS" and run.resumes == 0
    assert cluster.contracts(run_id).count("planner_plan") == 1


def test_a_run_committed_but_never_enqueued_is_enqueued_by_the_reaper(cluster: Cluster) -> None:
    chat = cluster.app.extensions["diagnosis"].chat
    # The web process "dies" right after the commit: the run is PENDING and no message exists.
    _, run_id, _ = chat.start(QUESTION, None, "auto")
    cluster.worker()
    assert wait_for(lambda: cluster.row(run_id).status not in ("PENDING", "RUNNING"), 120)
    run = cluster.row(run_id)
    assert run.status == "SUCCESS" and run.resumes == 0
    assert cluster.contracts(run_id).count("planner_plan") == 1


def test_a_worker_that_cannot_reach_the_database_gives_the_run_back_and_runs_it_later(
    cluster: Cluster,
) -> None:
    database = urlparse(cluster.env["DATABASE_URL"])
    proxy = TcpProxy(database.port or 3306)
    through = database._replace(netloc=f"{database.username}@127.0.0.1:{proxy.port}").geturl()
    worker = cluster.worker(DATABASE_URL=through)
    warm_id, warm = cluster.stream()  # the worker is up, its connections open
    finished(cluster, warm)
    proxy.down()
    run_id, chunks = cluster.stream()
    assert wait_for(lambda: "given back" in worker.log_text(), 60)
    proxy.up()
    events = finished(cluster, chunks)
    run = cluster.row(run_id)
    assert run.status == "SUCCESS" and events[-1]["data"]["status"] == "SUCCESS"
    assert cluster.contracts(run_id).count("planner_plan") == 1
    assert warm_id != run_id and cluster.row(warm_id).status == "SUCCESS"
    proxy.down()
