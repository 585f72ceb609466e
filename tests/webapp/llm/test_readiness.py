"""``/readyz`` reports what the client learned of the model endpoint and its last call's outcome."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from webapp import create_app
from webapp.config import Settings
from webapp.wiring import build_services

from .scripted_server import ScriptedOpenAIServer, ScriptedResponse, error_body, serve
from .servers import llamacpp


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    yield from serve()


def app_for(server: ScriptedOpenAIServer, tmp_path: Path) -> FlaskClient:
    settings = Settings.from_env(
        {},
        overrides={
            "database_url": f"sqlite:///{tmp_path / 'app.db'}",
            "knowledge_db": str(tmp_path / "knowledge.db"),
            "openai_api_key": "local-placeholder",
            "openai_base_url": server.base_url,
            "llm_model": "gemma3-270m",
        },
    )
    return create_app(services=build_services(settings)).test_client()


def test_readyz_reports_the_mode_without_calling_the_endpoint(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.responder = llamacpp(lambda kept, body: '{"steps": []}')
    client = app_for(server, tmp_path)

    first = client.get("/readyz").json
    second = client.get("/readyz").json

    caps = first["data"]["llmCapabilities"]
    assert first["message"] == "success" and second["data"]["llmCapabilities"] == caps
    assert caps["mode"] == "json_schema" and caps["nativeTools"] is True
    assert caps["downgrades"] == [] and caps["lastCall"] is None
    assert server.requests == []  # neither building the app nor readiness connects


def test_readyz_is_degraded_when_the_last_call_failed_with_the_cause(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.default = ScriptedResponse(status=401, json=error_body("Invalid API key"))
    client = app_for(server, tmp_path)
    client.post("/api/chat", json={"Question": "why is payment-service slow?"})

    response = client.get("/readyz")
    body = response.json or {}

    assert response.status_code == 200  # the database is the only hard dependency
    assert body["message"].startswith("degraded: the last model call failed")
    assert "auth" in body["message"] and "Invalid API key" in body["message"]
    assert body["data"]["llmCapabilities"]["mode"] == "json_schema"


def test_a_failing_run_shows_each_steps_cause_in_the_trace_and_on_readyz(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    # Every plan misses its required `queries` (llama.cpp's 270M model).
    server.responder = llamacpp(lambda kept, body: '{"summary": "looks fine"}')
    client = app_for(server, tmp_path)
    assert client.get("/readyz").json["message"] == "success"

    answered = client.post("/api/chat", json={"Question": "why is payment-service slow?"})
    data = answered.json["data"]
    trace = client.get(f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}").json

    assert trace["data"]["run"]["degraded"] and "Field required" in data["answer"]
    steps = trace["data"]["steps"]
    assert [(s["agentName"], s["status"]) for s in steps] == [("planner", "FAILED")] * 2
    assert all(s["error"].startswith("invalid output") and "queries" in s["error"] for s in steps)
    route = trace["data"]["run"]["orchestrationTrace"]["transitions"]
    assert [t["reason_code"] for t in route] == ["invalid_output", "retry_exhausted"]
    ready = client.get("/readyz").json
    last = ready["data"]["llmCapabilities"]["lastCall"]
    assert last["outcome"] == "failed" and last["kind"] == "invalid_output"
    assert "queries" in last["detail"]
    assert ready["message"].startswith("degraded: the last model call failed (invalid output")
    capabilities = ready["data"]["llmCapabilities"]
    assert capabilities["mode"] == "json_object_schema"
    assert capabilities["downgrades"] == ["json_schema -> json_object_schema: HTTP 500"]
