"""Flaky dependencies and concurrency: degrade, never a 500, never a lost or mixed-up record."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database
from pytest_mock import MockerFixture

from tests.environment import unavailable
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.db import open_database
from webapp.persistence.history import RedisHistory
from webapp.persistence.models import AgentStep, DiagnosisRun, ToolInvocation

from .conftest import make_app
from .openapi_check import assert_documented


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def throwaway_redis() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A private redis-server the test may kill."""
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server is not installed: the Redis-outage test needs its own server")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0", process
    process.kill()
    process.wait()


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_redis_going_away_degrades_to_no_history_and_says_so(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    tmp_path: Path,
    throwaway_redis: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, process = throwaway_redis
    history = RedisHistory(url, socket_timeout=0.5)
    client = make_app(database, demo_backend, history, tmp_path, redis_url=url).test_client()
    first = client.post("/api/chat", json={"Question": "hello"}).json["data"]
    assert client.get("/readyz").json["data"]["redis"] == "ok"
    process.kill()
    process.wait()
    second = client.post(
        "/api/chat",
        json={"Question": "Why is shipping-service failing since 10:20?", "Id": first["sessionId"]},
    )
    assert second.status_code == 200 and second.json["data"]["status"] == "SUCCESS"
    run_id = second.json["data"]["runId"]
    trace = client.get(f"/api/diagnosis/{first['sessionId']}/trace?runId={run_id}").json["data"]
    note = trace["run"]["selfEvaluation"]["rule_evaluation"]["history"]
    assert note["available"] is False and note["error"] and note["messages"] == 0
    assert len(trace["toolInvocations"]) > 0  # the audit record is complete
    info = client.get(f"/api/chat/session/{first['sessionId']}")
    assert info.status_code == 200 and info.json["data"]["historyAvailable"] is False
    cleared = client.post("/api/chat/clear", json={"Id": first["sessionId"]})
    assert_documented(cleared, "POST", "/api/chat/clear")
    assert cleared.status_code == 503 and "history" in cleared.json["message"]
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json["data"]["redis"] == "unavailable"


def test_a_database_that_is_down_gives_503_not_500(
    demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    down = open_database(f"mysql://root@127.0.0.1:{free_port()}/test")
    app = make_app(down, demo_backend, None, tmp_path, create_schema=False)
    client = app.test_client()
    for method, path, body in [
        ("POST", "/api/chat", {"Question": "hello"}),
        ("GET", "/api/cases", None),
        ("GET", "/api/diagnosis/s1/trace?runId=r1", None),
    ]:
        response = client.open(path, method=method, json=body)
        assert_documented(response, method, path)
        assert response.status_code == 503 and "database" in response.json["message"]
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert_documented(ready, "GET", "/readyz")
    assert ready.status_code == 503 and ready.json["data"]["database"] == "unavailable"


def test_an_unhandled_error_mid_run_is_a_failed_run_with_its_partial_trace(
    app: Flask, client: FlaskClient, mocker: MockerFixture
) -> None:
    audit = app.extensions["diagnosis"].diagnoser.audit
    mocker.patch.object(audit, "invocations_for_run", side_effect=RuntimeError("disk I/O error"))
    response = client.post(
        "/api/chat", json={"Question": "Why is payment-service slow since 10:00?"}
    )
    assert_documented(response, "POST", "/api/chat")
    data = response.json["data"]
    assert response.status_code == 200
    assert (data["success"], data["status"], data["answer"]) == (False, "FAILED", None)
    assert "disk I/O error" in data["errorMessage"]
    trace = client.get(f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}").json[
        "data"
    ]
    orchestration = trace["run"]["orchestrationTrace"]
    assert (
        orchestration["termination_reason"] == "error" and orchestration["final_node"] == "executor"
    )
    assert [t["to"] for t in orchestration["transitions"]] == ["executor"]
    assert trace["run"]["status"] == "FAILED" and trace["run"]["finishedAt"]
    assert len(trace["steps"]) > 0 and len(trace["toolInvocations"]) > 0


def test_sixteen_concurrent_chats_never_write_each_others_ids(app: Flask) -> None:
    results: dict[int, dict[str, Any]] = {}
    errors: list[BaseException] = []

    def ask(n: int) -> None:
        try:
            question = f"Why is payment-service slow since 10:00? ticket-{n:02d}"
            response = app.test_client().post("/api/chat", json={"Question": question})
            results[n] = response.json["data"]
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and len(results) == 16
    assert {r["status"] for r in results.values()} == {"SUCCESS"}
    with app.extensions["diagnosis"].database.connection_context():
        for n, result in results.items():
            run = DiagnosisRun.get(DiagnosisRun.run_id == result["runId"])
            assert f"ticket-{n:02d}" in run.question and run.session_id == result["sessionId"]
            steps = list(AgentStep.select().where(AgentStep.run_id == result["runId"]))
            assert [s.step_index for s in sorted(steps, key=lambda s: s.step_index)] == list(
                range(len(steps))
            )
            for step in steps:  # a step stores only its new messages: no other run's ticket
                assert step.session_id == result["sessionId"]
                tickets = set(re.findall(r"ticket-\d\d", str(step.model_input)))
                assert tickets <= {f"ticket-{n:02d}"}, (n, tickets)
            records = app.extensions["diagnosis"].records
            for full in records.trace(result["sessionId"], result["runId"]).steps:
                tickets = set(re.findall(r"ticket-\d\d", str(full["model_input"])))
                assert tickets == {f"ticket-{n:02d}"}, (n, tickets)
            step_ids = {s.id for s in steps}
            invocations = list(
                ToolInvocation.select().where(ToolInvocation.run_id == result["runId"])
            )
            assert invocations and all(i.step_id in step_ids for i in invocations)
            assert all(i.session_id == result["sessionId"] for i in invocations)
        assert AgentStep.select().count() == sum(
            AgentStep.select().where(AgentStep.run_id == r["runId"]).count()
            for r in results.values()
        )
