"""``POST /api/ai_ops`` over HTTP on every database backend: the SSE stream (progress from the
supervisor graph's and the nested graphs' nodes), the persisted run with its orchestration
trace, the graph endpoint drawing the supervisor topology, and bad input that never writes a
run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from webapp.persistence.models import DiagnosisRun

from ..api.openapi_check import assert_documented
from ..api.test_stream_api import event, frames

PATH = "/api/ai_ops"


def stream(app: Flask, request: dict[str, Any]) -> list[dict[str, Any]]:
    response = app.test_client().post(PATH, json=request, buffered=False)
    assert_documented(response, "POST", PATH)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    body_chunks: Any = response.response  # the streamed body, read as it arrives
    return [event(f) for f in frames(body_chunks) if not f.startswith(":")]


def trace(app: Flask, session_id: str, run_id: str) -> dict[str, Any]:
    path = f"/api/diagnosis/{session_id}/trace?runId={run_id}"
    response = app.test_client().get(path)
    assert_documented(response, "GET", path)
    assert response.status_code == 200
    data: dict[str, Any] = response.json["data"]
    return data


def test_an_aiops_run_streams_metadata_progress_report_and_done(app: Flask) -> None:
    events = stream(app, {"userRequest": "What is on fire right now?"})
    kinds = [e["type"] for e in events]
    assert kinds[0] == "metadata" and kinds[-1] == "done" and "error" not in kinds
    meta, done = events[0]["data"], events[-1]["data"]
    assert meta["flow"] == "aiops" and meta["runId"] == done["runId"]
    assert meta["sessionId"] == done["sessionId"]
    assert done["status"] == "SUCCESS" and done["success"] and not done["degraded"]
    progress = [e["data"] for e in events if e["type"] == "progress"]
    assert progress[0] == {
        "node": "load_alerts",
        "outcome": "COMPLETED",
        "reason_code": "completed",
        "attempt": 1,
    }
    assert progress[-1]["node"] == "report"
    assert {p["alert"] for p in progress if p["node"] == "executor"} == {
        "PaymentLatencyHigh",
        "ShippingErrorRateHigh",
        "OrderErrorRateHigh",
        "RedisMemoryFull",
        "CatalogLatencyHigh",
    }
    investigated = [p["alert"] for p in progress if p["node"] == "investigate"]
    assert investigated[0] == "PaymentLatencyHigh" and len(investigated) == 5
    report = "".join(e["data"]["text"] for e in events if e["type"] == "content")
    assert len([k for k in kinds if k == "content"]) > 1

    found = trace(app, meta["sessionId"], meta["runId"])
    run = found["run"]
    assert (run["agentFlow"], run["flow"], run["status"]) == ("AI_OPS", "aiops", "SUCCESS")
    assert run["question"] == "What is on fire right now?" and run["answer"] == report
    assert run["durationMs"] >= 0
    orchestration = run["orchestrationTrace"]
    assert orchestration["version"] == "aiops-stategraph-v1"
    assert orchestration["termination_reason"] == "report_all_investigated"
    assert len(orchestration["alerts"]) == 5 and not orchestration["degraded"]
    supervisor = [p for p in progress if "alert_id" not in p]
    assert len(supervisor) == len(orchestration["transitions"]) + 1  # one per node execution
    rules = run["selfEvaluation"]["aiops_rule_evaluation"]
    assert rules["alerts_firing"] == rules["alerts_covered"] == 5
    assert rules["all_citations_verified"] and rules["citations_total"] > 0
    steps, invocations = found["steps"], found["toolInvocations"]
    assert run["stepCount"] == len(steps) and run["toolCount"] == len(invocations)
    assert [s["stepIndex"] for s in steps] == list(range(len(steps)))
    assert {s["agentName"] for s in steps} == {"planner", "executor", "verifier", "composer"}
    step_ids = {s["id"] for s in steps}
    assert invocations[0]["toolName"] == "query_alerts" and invocations[0]["stepId"] is None
    assert all(i["stepId"] in step_ids for i in invocations[1:])
    cited = {r["evidence_id"] for i in invocations for r in i["evidenceRefs"] or [] if r["cited"]}
    assert cited == set(rules["cited_evidence_ids"])
    assert found["session"]["title"] == "What is on fire right now?"


def test_a_run_without_a_request_uses_the_default_and_keeps_the_session(app: Flask) -> None:
    events = stream(app, {"sessionId": "sess-aiops-1"})
    meta = events[0]["data"]
    assert meta["sessionId"] == "sess-aiops-1"
    run = trace(app, "sess-aiops-1", meta["runId"])["run"]
    assert run["question"] == "Investigate the firing alerts"
    runs = app.test_client().get("/api/diagnosis/sess-aiops-1/runs").json["data"]["runs"]
    assert [r["agentFlow"] for r in runs] == ["AI_OPS"]
    path = f"/api/diagnosis/sess-aiops-1/graph?runId={meta['runId']}"
    response = app.test_client().get(path)
    assert_documented(response, "GET", path)
    graph = response.json["data"]
    assert graph["flow"] == "aiops" and graph["mermaid"].startswith("flowchart")
    for node in ("load_alerts", "select_alerts", "investigate", "report", "next_alert"):
        assert node in graph["mermaid"]
    assert "gatekeeper" not in graph["mermaid"]  # the supervisor topology, not the chat's
    assert graph["route"] == ["load_alerts", "select_alerts", *["investigate"] * 5, "report"]
    assert [a["alertId"] for a in graph["alerts"]] == ["A1", "A2", "A3", "A4", "A5"]
    for alert in graph["alerts"]:
        assert alert["route"][0] == "planner" and alert["route"][-1] == "composer"
        assert "gatekeeper" in alert["route"]


def test_the_graph_of_a_chat_run_is_still_the_diagnosis_graph(app: Flask) -> None:
    client = app.test_client()
    body = client.post("/api/chat", json={"Question": "why is payment-service slow since 10:00?"})
    data = body.json["data"]
    graph = client.get(f"/api/diagnosis/{data['sessionId']}/graph?runId={data['runId']}")
    found = graph.json["data"]
    assert "gatekeeper" in found["mermaid"] and "investigate" not in found["mermaid"]
    assert found.get("alerts") is None  # per-alert routes are for AIOps runs only


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"userRequest": "x" * 1001}, "userRequest is too long"),
        ({"userRequest": 42}, "userRequest must be a string"),
        ({"userRequest": ["why"]}, "userRequest must be a string"),
        ({"sessionId": "not a valid id!"}, "sessionId must be"),
        ({"sessionId": "x" * 65}, "sessionId must be"),
        ({"sessionId": 7}, "sessionId must be"),
    ],
)
def test_bad_input_is_400_and_writes_no_run(app: Flask, body: dict[str, Any], message: str) -> None:
    response = app.test_client().post(PATH, json=body)
    assert_documented(response, "POST", PATH)
    assert response.status_code == 400 and response.json["message"].startswith(message)
    with app.extensions["diagnosis"].database.connection_context():
        assert DiagnosisRun.select().count() == 0


def test_a_body_that_is_not_json_is_415(app: Flask) -> None:
    response = app.test_client().post(PATH, data=json.dumps({}), content_type="text/plain")
    assert_documented(response, "POST", PATH)
    assert response.status_code == 415
