"""Every request gives its database connection back.

Served as ``make run`` serves (a thread per request), on every backend: a leaked connection
stays checked out of the pool for good, and once the pool is empty every request waits for
one and fails.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from flask.testing import FlaskClient
from peewee import Database

from webapp.persistence.db import POOL

QUESTION = "Why is payment-service slow since 10:00?"
TRACE_READS = 200


def call(port: int, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """One request on a fresh HTTP connection (so on a fresh server thread); status, JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_many_trace_reads_leave_the_pool_whole_and_a_chat_still_answers(server: int) -> None:
    assert POOL["max_connections"] < TRACE_READS
    status, first = call(server, "/api/chat", {"Question": QUESTION})
    assert status == 200, first
    session_id, run_id = first["data"]["sessionId"], first["data"]["runId"]
    for _ in range(TRACE_READS):
        status, trace = call(server, f"/api/diagnosis/{session_id}/trace?runId={run_id}")
        assert status == 200, trace
        assert trace["data"]["run"]["runId"] == run_id
        assert trace["data"]["steps"] and trace["data"]["toolInvocations"]
    status, second = call(server, "/api/chat", {"Question": QUESTION, "Id": session_id})
    assert status == 200, second
    assert second["data"]["status"] == "SUCCESS"
    assert second["data"]["answer"].startswith("**Likely cause in mysql-primary")


def test_a_trace_response_gives_its_connection_back(
    client: FlaskClient, answered: dict[str, Any], database: Database
) -> None:
    path = f"/api/diagnosis/{answered['sessionId']}/trace?runId={answered['runId']}"
    assert client.get(path).status_code == 200
    assert database.is_closed()
