"""Without Redis, several workers share a session's history: it is read from the SQL record."""

from __future__ import annotations

from pathlib import Path

from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.sql_history import SqlHistory

from .conftest import app_for, services_for

QUESTIONS = [
    "Why is payment-service slow since 10:00?",
    "What happened to checkout errors?",
    "And the database?",
    "Summarise what you found.",
]


def test_turns_spread_over_two_workers_see_one_growing_history(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    workers = [app_for(services_for(database, demo_backend, tmp_path)) for _ in range(2)]
    assert all(isinstance(w.extensions["diagnosis"].history, SqlHistory) for w in workers)
    session_id = None
    sizes = []
    for turn, question in enumerate(QUESTIONS):
        client = workers[turn % 2].test_client()
        body = {"Question": question, "mode": "simple"}
        if session_id:
            body["Id"] = session_id
        data = client.post("/api/chat", json=body).json["data"]
        assert data["status"] == "SUCCESS", data
        session_id = data["sessionId"]
        info = workers[(turn + 1) % 2].test_client().get(f"/api/chat/session/{session_id}")
        sizes.append(info.json["data"]["historyMessages"])
    assert sizes == [2, 4, 6, 8]


def test_clearing_on_one_worker_clears_the_history_the_other_sees(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    first, second = (app_for(services_for(database, demo_backend, tmp_path)) for _ in range(2))
    data = (
        first.test_client()
        .post("/api/chat", json={"Question": QUESTIONS[0], "mode": "simple"})
        .json["data"]
    )
    session_id = data["sessionId"]
    cleared = second.test_client().post("/api/chat/clear", json={"Id": session_id}).json["data"]
    assert cleared["cleared"] == 2
    info = first.test_client().get(f"/api/chat/session/{session_id}").json["data"]
    assert info["historyMessages"] == 0 and info["runCount"] == 1
