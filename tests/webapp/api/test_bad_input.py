"""Bad input, as a hostile client sends it: always a clear 4xx, never a 500, nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from webapp.persistence.models import CaseLibrary, ChatSession, DiagnosisRun

from .openapi_check import assert_documented


def counts(app: Flask) -> tuple[int, int, int]:
    with app.extensions["diagnosis"].database.connection_context():
        return (
            ChatSession.select().count(),
            DiagnosisRun.select().count(),
            CaseLibrary.select().count(),
        )


@pytest.mark.parametrize(
    ("body", "content_type", "status", "message"),
    [
        ("{", "application/json", 400, "not valid JSON"),
        ('{"Question": "why"', "application/json", 400, "not valid JSON"),
        ("[1, 2]", "application/json", 400, "must be a JSON object"),
        ('"why"', "application/json", 400, "must be a JSON object"),
        ("null", "application/json", 400, "not valid JSON"),
        ('{"Question": "why"}', "text/plain", 415, "Content-Type: application/json"),
        ("Question=why", "application/x-www-form-urlencoded", 415, "application/json"),
        ("{}", "application/json", 400, "Question is required"),
        ('{"Question": null}', "application/json", 400, "Question is required"),
        ('{"Question": "   \\n\\t "}', "application/json", 400, "must not be blank"),
        ('{"Question": 42}', "application/json", 400, "must be a string"),
        ('{"Question": ["why"]}', "application/json", 400, "must be a string"),
        ('{"Question": "why\\u0000 now"}', "application/json", 400, "control characters"),
        ('{"Question": "why \\u001b[31m"}', "application/json", 400, "control characters"),
        ('{"Question": "why", "mode": "turbo"}', "application/json", 400, "mode must be one of"),
        ('{"Question": "why", "mode": 1}', "application/json", 400, "mode must be one of"),
        ('{"Question": "why", "Id": ""}', "application/json", 400, "Id must be 1-64"),
        ('{"Question": "why", "Id": "a/b"}', "application/json", 400, "Id must be 1-64"),
        ('{"Question": "why", "Id": "\' OR 1=1 --"}', "application/json", 400, "Id must be 1-64"),
        ('{"Question": "why", "Id": 12}', "application/json", 400, "Id must be 1-64"),
    ],
)
def test_chat_rejects_bad_bodies_and_writes_nothing(
    client: FlaskClient, app: Flask, body: str, content_type: str, status: int, message: str
) -> None:
    before = counts(app)
    response = client.post("/api/chat", data=body, content_type=content_type)
    assert_documented(response, "POST", "/api/chat")
    assert response.status_code == status and message in response.json["message"]
    assert response.json["data"] is None and response.json["code"] == status
    assert counts(app) == before


def test_oversized_fields_and_bodies(client: FlaskClient, app: Flask) -> None:
    before = counts(app)
    long_question = client.post("/api/chat", json={"Question": "why " * 1001})
    assert long_question.status_code == 400 and "too long" in long_question.json["message"]
    long_id = client.post("/api/chat", json={"Question": "why", "Id": "s" * 65})
    assert long_id.status_code == 400
    huge = client.post(
        "/api/chat", data='{"Question": "' + "x" * 3_000_000 + '"}', content_type="application/json"
    )
    assert_documented(huge, "POST", "/api/chat")
    assert huge.status_code == 413 and "limit" in huge.json["message"]
    assert counts(app) == before


def test_unicode_and_sql_metacharacters_are_just_text(client: FlaskClient, app: Flask) -> None:
    question = 'Why is payment-service slow? 🔥 支付服务 \'; DROP TABLE diagnosis_run; -- "x" \\ %_'
    data = client.post("/api/chat", json={"question": question}).json["data"]
    assert data["status"] == "SUCCESS"
    trace = client.get(f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}").json
    assert trace["data"]["run"]["question"] == question
    with app.extensions["diagnosis"].database.connection_context():
        assert DiagnosisRun.select().count() == 1


@pytest.mark.parametrize(
    "path",
    [
        "/api/diagnosis/bad%20id/trace?runId=run-1",
        "/api/diagnosis/s1/trace?runId=bad%20id",
        "/api/diagnosis/s1/trace?runId=" + "r" * 65,
        "/api/diagnosis/s1/trace?runId=",
        "/api/diagnosis/%27%3B--/runs",
        "/api/chat/session/" + "s" * 65,
        "/api/cases/bad$id",
        "/api/cases?limit=0",
        "/api/cases?limit=abc",
        "/api/cases?offset=-1",
        "/api/diagnosis/s1/runs?limit=201",
    ],
)
def test_malformed_ids_and_pages_are_400(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert_documented(response, "GET", path)
    assert response.status_code == 400, response.json


def test_unknown_routes_and_methods(client: FlaskClient) -> None:
    assert client.get("/api/nope").status_code == 404
    response = client.get("/api/chat")
    assert response.status_code == 405 and "POST" in response.headers["Allow"]
    assert response.json == {
        "code": 405,
        "message": "method GET not allowed on /api/chat",
        "data": None,
    }


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"sessionId": "s1"},
        {"sessionId": "s1", "runId": "r1"},
        {"sessionId": "s 1", "runId": "r1", "feedback": "useful"},
        {"sessionId": "s1", "runId": "r1", "feedback": "useful", "comment": 5},
        {"sessionId": "s1", "runId": "r1", "feedback": "useful", "comment": "x" * 2001},
    ],
)
def test_feedback_bad_bodies_are_400(client: FlaskClient, body: dict[str, Any]) -> None:
    response = client.post("/api/feedback", json=body)
    assert_documented(response, "POST", "/api/feedback")
    assert response.status_code == 400


def test_feedback_on_an_unknown_run_is_404_and_writes_nothing(
    client: FlaskClient, app: Flask
) -> None:
    before = counts(app)
    response = client.post(
        "/api/feedback", json={"sessionId": "s1", "runId": "run-x", "feedback": "useful"}
    )
    assert response.status_code == 404 and counts(app) == before
