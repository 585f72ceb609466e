"""The database drops every connection, or refuses them, while runs execute and streams relay.

The app reaches a scratch MariaDB database through a TCP proxy this test runs
(:class:`.proxy.TcpProxy`). A stream whose database checks keep failing ends with ``error``
naming the cause - never with a status its run's record does not have; a run whose connection
dropped mid-node is executed again from its last checkpoint and ends SUCCESS.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from flask import Flask

from tests.conftest import ScratchServers, close_database
from webapp.demo.backend import DemoTelemetryBackend
from webapp.execution import streams
from webapp.persistence.models import AgentStep, DiagnosisRun

from .conftest import app_for, services_for, wait_for
from .models import GatedModel
from .proxy import TcpProxy

QUESTION = "Why is payment-service slow since 10:00?"


@pytest.fixture
def proxied(
    scratch_servers: ScratchServers,
    demo_backend: DemoTelemetryBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Flask, TcpProxy, GatedModel]]:
    monkeypatch.setattr(streams, "KEEPALIVE_SECONDS", 0.2)
    monkeypatch.setattr(streams, "SETTLED_RETRY_SECONDS", 1.0)
    url = urlparse(scratch_servers.new_database_url("mysql"))
    proxy = TcpProxy(url.port or 3306)
    through = url._replace(netloc=f"{url.username}@127.0.0.1:{proxy.port}").geturl()
    model = GatedModel()
    services = services_for(None, demo_backend, tmp_path, model, database_url=through)
    yield app_for(services), proxy, model
    model.gate.set()
    proxy.up()
    services.workers.shutdown()
    close_database(services.database)
    proxy.down()


def events_of(chunks: Iterator[bytes]) -> list[dict[str, Any]]:
    text = b"".join(chunks).decode()
    return [json.loads(f.split("data: ", 1)[1]) for f in text.split("\n\n") if "data: " in f]


def row(app: Flask, run_id: str) -> DiagnosisRun:
    with app.extensions["diagnosis"].database.connection_context():
        return DiagnosisRun.get(DiagnosisRun.run_id == run_id)


def test_a_relay_whose_database_checks_fail_ends_with_error_and_the_run_still_succeeds(
    proxied: tuple[Flask, TcpProxy, GatedModel],
) -> None:
    app, proxy, model = proxied
    response = app.test_client().post(
        "/api/chat_stream", json={"Question": QUESTION}, buffered=False
    )
    chunks: Iterator[bytes] = iter(response.response)  # type: ignore[arg-type]
    first = events_of(iter([next(chunks)]))[0]
    run_id = first["data"]["runId"]
    assert model.started.wait(30)  # the planner's model call is in flight
    proxy.down()  # every connection dropped, new ones refused
    rest = events_of(chunks)
    assert rest[-1]["type"] == "error" and "could not be read" in rest[-1]["data"]["message"]
    assert "done" not in [e["type"] for e in rest]  # no end status the record does not have
    proxy.up()
    model.gate.set()
    # The run's connection dropped mid-node: its planner runs again from the start.
    assert wait_for(lambda: row(app, run_id).status not in ("PENDING", "RUNNING"), 60)
    run = row(app, run_id)
    assert run.status == "SUCCESS" and run.answer
    with app.extensions["diagnosis"].database.connection_context():
        planners = AgentStep.select().where(
            (AgentStep.run_id == run_id) & (AgentStep.agent_name == "planner")
        )
        assert planners.count() == 1


def test_attaching_to_a_run_whose_record_becomes_unreadable_ends_with_error(
    proxied: tuple[Flask, TcpProxy, GatedModel],
) -> None:
    app, proxy, _ = proxied
    chat = app.extensions["diagnosis"].chat
    session_id, run_id, _ = chat.start(QUESTION, None, "auto")  # never enqueued: no event log
    response = app.test_client().get(
        f"/api/diagnosis/{session_id}/runs/{run_id}/events", buffered=False
    )
    chunks: Iterator[bytes] = iter(response.response)  # type: ignore[arg-type]
    assert events_of(iter([next(chunks)]))[0]["type"] == "metadata"
    proxy.down()
    rest = events_of(chunks)
    assert [e["type"] for e in rest] == ["error"]
    assert "could not be read" in rest[0]["data"]["message"]
    proxy.up()
    assert row(app, run_id).status == "PENDING"
