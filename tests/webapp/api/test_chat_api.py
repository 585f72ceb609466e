"""Chat over HTTP: both flows, the run lifecycle as stored, history, sessions."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from webapp.persistence.models import AgentStep, ChatSession, DiagnosisRun, ToolInvocation

from .openapi_check import assert_documented


def chat(client: FlaskClient, question: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/api/chat", json={"Question": question, **fields})
    assert_documented(response, "POST", "/api/chat")
    assert response.status_code == 200, response.json
    data: dict[str, Any] = response.json["data"]
    return data


def stored_run(app: Flask, run_id: str) -> DiagnosisRun:
    with app.extensions["diagnosis"].database.connection_context():
        return DiagnosisRun.get(DiagnosisRun.run_id == run_id)


def test_a_diagnosis_question_runs_the_complex_flow_and_is_persisted(
    client: FlaskClient, app: Flask
) -> None:
    data = chat(client, "Why is payment-service slow since 10:00?")
    assert (data["success"], data["status"], data["flow"], data["degraded"]) == (
        True,
        "SUCCESS",
        "complex",
        False,
    )
    assert data["answer"].startswith("**Likely cause in mysql-primary")
    assert "connection pool exhaustion" in data["answer"]
    run = stored_run(app, data["runId"])
    assert (run.session_id, run.agent_flow, run.status, run.flow) == (
        data["sessionId"],
        "CHAT",
        "SUCCESS",
        "complex",
    )
    assert run.answer == data["answer"]
    assert run.finished_at is not None and run.finished_at >= run.started_at
    assert run.orchestration_trace["termination_reason"] == "composer_completed"
    assert set(run.self_evaluation) == {"rule_evaluation", "verifier_evaluation", "question_window"}
    assert run.self_evaluation["question_window"]["text"] == "since 10:00"
    assert run.self_evaluation["rule_evaluation"]["history"] == {
        "available": True,
        "messages": 0,
        "error": None,
    }
    with app.extensions["diagnosis"].database.connection_context():
        steps = AgentStep.select().where(AgentStep.run_id == data["runId"]).count()
        tools = ToolInvocation.select().where(ToolInvocation.run_id == data["runId"]).count()
        assert ChatSession.get(ChatSession.session_id == data["sessionId"]).title.startswith(
            "Why is"
        )
    assert (run.step_count, run.tool_count) == (steps, tools) and steps > 0 and tools > 0
    assert run.duration_ms is not None and run.duration_ms >= 0


def test_small_talk_and_knowledge_questions_take_the_simple_flow(
    client: FlaskClient, app: Flask
) -> None:
    hello = chat(client, "hello")
    assert hello["flow"] == "simple" and "offline" in hello["answer"]
    knowledge = chat(
        client, "What does the runbook say about cache evictions?", Id=hello["sessionId"]
    )
    assert knowledge["flow"] == "simple" and "Cache eviction" in knowledge["answer"]
    run = stored_run(app, knowledge["runId"])
    assert set(run.self_evaluation) == {"rule_evaluation"} and run.orchestration_trace is None
    assert run.self_evaluation["rule_evaluation"]["tools_used"] == ["lookup_knowledge"]
    assert run.self_evaluation["rule_evaluation"]["history"]["messages"] == 2


def test_mode_overrides_the_automatic_routing(client: FlaskClient) -> None:
    assert chat(client, "hello", mode="complex")["flow"] == "complex"
    assert chat(client, "Why is payment-service slow?", mode="simple")["flow"] == "simple"


def test_a_question_with_no_known_service_still_answers_safely(client: FlaskClient) -> None:
    data = chat(client, "Why is everything slow since 10:00?", mode="complex")
    assert data["status"] == "SUCCESS" and data["answer"]


def test_the_session_carries_history_into_the_next_turn(client: FlaskClient, app: Flask) -> None:
    first = chat(client, "hello")
    second = chat(client, "Why is shipping-service failing since 10:20?", id=first["sessionId"])
    assert second["sessionId"] == first["sessionId"]
    run = stored_run(app, second["runId"])
    assert run.self_evaluation["rule_evaluation"]["history"]["messages"] == 2
    info = client.get(f"/api/chat/session/{first['sessionId']}")
    assert_documented(info, "GET", f"/api/chat/session/{first['sessionId']}")
    assert info.json["data"]["runCount"] == 2 and info.json["data"]["historyMessages"] == 4


def test_clearing_a_session_forgets_history_but_keeps_runs(client: FlaskClient) -> None:
    data = chat(client, "hello")
    cleared = client.post("/api/chat/clear", json={"Id": data["sessionId"]})
    assert_documented(cleared, "POST", "/api/chat/clear")
    assert cleared.json["data"] == {"sessionId": data["sessionId"], "cleared": 2}
    info = client.get(f"/api/chat/session/{data['sessionId']}").json["data"]
    assert info["historyMessages"] == 0 and info["runCount"] == 1


def test_runs_of_a_session_are_listed_newest_first(client: FlaskClient) -> None:
    first = chat(client, "hello")
    second = chat(client, "thanks", Id=first["sessionId"])
    response = client.get(f"/api/diagnosis/{first['sessionId']}/runs")
    assert_documented(response, "GET", f"/api/diagnosis/{first['sessionId']}/runs")
    assert [r["runId"] for r in response.json["data"]["runs"]] == [second["runId"], first["runId"]]
    path = f"/api/diagnosis/{first['sessionId']}/runs?limit=1"
    cursor = client.get(path).json["data"]["nextCursor"]
    page = client.get(f"{path}&cursor={cursor}").json["data"]
    assert [r["runId"] for r in page["runs"]] == [first["runId"]]


def test_unknown_sessions_are_404(client: FlaskClient) -> None:
    for method, path in [
        ("GET", "/api/chat/session/sess-unknown"),
        ("GET", "/api/diagnosis/sess-unknown/runs"),
    ]:
        response = client.open(path, method=method)
        assert_documented(response, method, path)
        assert response.status_code == 404 and "sess-unknown" in response.json["message"]
    response = client.post("/api/chat/clear", json={"Id": "sess-unknown"})
    assert response.status_code == 404


def test_a_follow_up_keeps_the_window_its_plan_worked_with(client: FlaskClient, app: Flask) -> None:
    first = chat(client, "Why is payment-service slow since 10:00?")
    follow_up = chat(client, "and what about order-service?", Id=first["sessionId"])
    evaluation = stored_run(app, follow_up["runId"]).self_evaluation
    planned = evaluation["rule_evaluation"]["understanding"]["window"]
    assert planned["text"] == "since 10:00"
    assert evaluation["question_window"] == {**planned, "found": True}
