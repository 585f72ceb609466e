"""Feedback under concurrent requests, on every database: all succeed, the state agrees."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from webapp.persistence.models import CaseLibrary, DiagnosisRun

CLIENTS = 20
ROUNDS = 3


def send_together(app: Flask, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    """POST every body to /api/feedback at the same moment, each from its own thread."""
    barrier = threading.Barrier(len(bodies))

    def send(body: dict[str, Any]) -> tuple[int, Any]:
        client = app.test_client()
        barrier.wait()
        response = client.post("/api/feedback", json=body)
        return response.status_code, response.json

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(send, bodies))


def stored(app: Flask, run_id: str) -> tuple[str | None, int]:
    with app.extensions["diagnosis"].database.connection_context():
        run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
        return run.feedback, CaseLibrary.select().where(CaseLibrary.run_id == run_id).count()


def test_identical_concurrent_feedback_is_all_200_and_one_case(
    app: Flask, client: FlaskClient, answered: dict[str, Any]
) -> None:
    body = {"sessionId": answered["sessionId"], "runId": answered["runId"], "feedback": "useful"}
    for _ in range(ROUNDS):
        results = send_together(app, [body] * CLIENTS)
        assert [status for status, _ in results] == [200] * CLIENTS, results[:3]
        assert {payload["data"]["feedback"] for _, payload in results} == {"useful"}
        assert stored(app, answered["runId"]) == ("useful", 1)


def test_concurrent_flips_all_succeed_and_the_case_library_agrees(
    app: Flask, client: FlaskClient, answered: dict[str, Any]
) -> None:
    ids = {"sessionId": answered["sessionId"], "runId": answered["runId"]}
    values = ["useful", "not_useful"]
    for _ in range(ROUNDS):
        bodies = [{**ids, "feedback": values[n % 2], "comment": f"c{n}"} for n in range(CLIENTS)]
        results = send_together(app, bodies)
        statuses = [status for status, _ in results]
        assert statuses == [200] * CLIENTS, [r for r in results if r[0] != 200][:3]
        feedback, cases = stored(app, answered["runId"])
        assert feedback in values and cases == (1 if feedback == "useful" else 0)
    listed = len(client.get("/api/cases").json["data"]["cases"])
    assert listed == stored(app, answered["runId"])[1]
