"""Auth, upload, health, readiness and the OpenAPI document."""

from __future__ import annotations

import re
from io import BytesIO
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore

from .conftest import make_app
from .openapi_check import DOCUMENT, assert_documented


@pytest.fixture
def locked(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> FlaskClient:
    return make_app(database, demo_backend, history, tmp_path, api_key="s3cret").test_client()


def test_api_key_is_required_on_api_routes_when_set(locked: FlaskClient) -> None:
    missing = locked.post("/api/chat", json={"Question": "hello"})
    assert_documented(missing, "POST", "/api/chat")
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = locked.get("/api/cases", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    right = locked.post(
        "/api/chat", json={"Question": "hello"}, headers={"Authorization": "Bearer s3cret"}
    )
    assert right.status_code == 200


def test_health_readiness_and_openapi_stay_open(locked: FlaskClient) -> None:
    for path in ("/healthz", "/readyz"):
        response = locked.get(path)
        assert_documented(response, "GET", path)
        assert response.status_code == 200
    assert locked.get("/openapi.json").status_code == 200


def test_readiness_reports_each_dependency(client: FlaskClient) -> None:
    data = client.get("/readyz").json["data"]
    assert data["database"] == "ok" and data["llm"] == "offline"
    assert data["model"] == "offline-rule-based-v1" and data["redis"] in ("ok", "disabled")


def test_openapi_describes_every_route_of_the_app(app: Flask, client: FlaskClient) -> None:
    served = client.get("/openapi.json").json
    assert served["openapi"] == "3.1.0" and served == DOCUMENT
    routes = {
        (re.sub(r"<[^>]+>", "{}", rule.rule), method.lower())
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
        and rule.endpoint != "static"
        and not rule.endpoint.startswith("ui.")  # the browser UI's HTML pages are not API
        and rule.rule != "/openapi.json"
    }
    documented = {
        (re.sub(r"\{[^}]+\}", "{}", path), method)
        for path, operations in DOCUMENT["paths"].items()
        for method in operations
    }
    assert routes == documented


def upload(client: FlaskClient, name: str, content: bytes) -> object:
    response = client.post(
        "/api/upload", data={"file": (BytesIO(content), name)}, content_type="multipart/form-data"
    )
    assert_documented(response, "POST", "/api/upload")
    return response


def test_an_uploaded_runbook_is_searchable(client: FlaskClient) -> None:
    text = b"# Kafka consumer lag\n\n## Mitigation\n\n- Scale the consumer group out.\n"
    response = upload(client, "kafka.md", text)
    assert response.status_code == 200  # type: ignore[attr-defined]
    data = response.json["data"]  # type: ignore[attr-defined]
    assert data["title"] == "Kafka consumer lag" and data["chunks"] >= 1
    answer = client.post(
        "/api/chat", json={"Question": "What does the runbook say about kafka consumer lag?"}
    ).json["data"]["answer"]
    assert "Kafka consumer lag" in answer


@pytest.mark.parametrize(
    ("name", "content", "status", "message"),
    [
        ("notes.pdf", b"%PDF-1.4", 400, "only .md and .txt"),
        ("empty.md", b"", 400, "empty"),
        ("binary.txt", b"\x00\x01\x02\xff", 400, ""),
        ("big.md", b"# x\n" + b"a" * 1_100_000, 413, ""),
    ],
)
def test_bad_uploads_are_rejected(
    client: FlaskClient, name: str, content: bytes, status: int, message: str
) -> None:
    response = upload(client, name, content)
    assert response.status_code == status  # type: ignore[attr-defined]
    assert message in response.json["message"]  # type: ignore[attr-defined]


def test_upload_needs_multipart_and_a_file(client: FlaskClient) -> None:
    assert client.post("/api/upload", json={"file": "x"}).status_code == 415
    response = client.post("/api/upload", data={"other": "x"}, content_type="multipart/form-data")
    assert response.status_code == 400 and "'file'" in response.json["message"]
