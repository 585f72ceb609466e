"""The exact-run trace, feedback and the case library."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from .openapi_check import assert_documented


def trace(client: FlaskClient, session_id: str, run_id: str) -> Any:
    path = f"/api/diagnosis/{session_id}/trace?runId={run_id}"
    response = client.get(path)
    assert_documented(response, "GET", path)
    return response


def test_the_trace_replays_the_run(client: FlaskClient, answered: dict[str, Any]) -> None:
    response = trace(client, answered["sessionId"], answered["runId"])
    assert response.status_code == 200
    data = response.json["data"]
    assert data["session"]["sessionId"] == answered["sessionId"]
    run = data["run"]
    assert run["runId"] == answered["runId"] and run["status"] == "SUCCESS"
    assert run["orchestrationTrace"]["termination_reason"] == "composer_completed"
    assert run["selfEvaluation"]["rule_evaluation"]["all_cited_evidence_verified"] is True
    steps, invocations = data["steps"], data["toolInvocations"]
    assert [s["stepIndex"] for s in steps] == list(range(len(steps)))
    assert [i["id"] for i in invocations] == sorted(i["id"] for i in invocations)
    step_ids = {s["id"]: s for s in steps}
    for invocation in invocations:
        assert step_ids[invocation["stepId"]]["agentName"] == "executor"
        assert invocation["rawOutput"] is not None and invocation["invocationId"].startswith("inv-")
    cited = set(re.findall(r"inv-[0-9a-f]{16}", run["answer"]))
    assert cited and cited <= {i["invocationId"] for i in invocations}
    assert run["stepCount"] == len(steps) and run["toolCount"] == len(invocations)
    owner = {"runId": answered["runId"], "sessionId": answered["sessionId"]}
    for row in [*steps, *invocations]:  # an auditor checks ownership row by row
        assert {"runId": row["runId"], "sessionId": row["sessionId"]} == owner


def test_the_trace_requires_the_run_id(client: FlaskClient, answered: dict[str, Any]) -> None:
    response = client.get(f"/api/diagnosis/{answered['sessionId']}/trace")
    assert response.status_code == 400 and response.json["message"] == "runId is required"


def test_another_sessions_run_answers_exactly_like_an_unknown_run(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    other = client.post("/api/chat", json={"Question": "hello"}).json["data"]["sessionId"]
    foreign = trace(client, other, answered["runId"])
    unknown = trace(client, other, "run-doesnotexist")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json["message"].replace(answered["runId"], "X") == unknown.json[
        "message"
    ].replace("run-doesnotexist", "X")


def feedback(client: FlaskClient, **body: Any) -> Any:
    response = client.post("/api/feedback", json=body)
    assert_documented(response, "POST", "/api/feedback")
    return response


def test_useful_feedback_puts_the_run_in_the_case_library(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    ids = {"sessionId": answered["sessionId"], "runId": answered["runId"]}
    response = feedback(client, **ids, feedback="useful", comment="spot on")
    assert response.status_code == 200
    assert (response.json["data"]["feedback"], response.json["data"]["status"]) == (
        "useful",
        "SUCCESS",
    )
    cases = client.get("/api/cases")
    assert_documented(cases, "GET", "/api/cases")
    assert [c["runId"] for c in cases.json["data"]["cases"]] == [answered["runId"]]
    one = client.get(f"/api/cases/{answered['runId']}")
    assert_documented(one, "GET", f"/api/cases/{answered['runId']}")
    assert one.json["data"]["answer"] == answered["answer"]


def test_not_useful_later_takes_the_run_out_and_status_never_changes(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    ids = {"sessionId": answered["sessionId"], "runId": answered["runId"]}
    feedback(client, **ids, feedback="useful")
    changed = feedback(client, **ids, feedback="not_useful", comment="wrong service")
    assert changed.status_code == 200 and changed.json["data"]["status"] == "SUCCESS"
    assert changed.json["data"]["feedbackComment"] == "wrong service"
    assert len(client.get("/api/cases").json["data"]["cases"]) == 0
    assert client.get(f"/api/cases/{answered['runId']}").status_code == 404


def test_repeated_feedback_is_a_success_that_changes_nothing(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    ids = {"sessionId": answered["sessionId"], "runId": answered["runId"]}
    first = feedback(client, **ids, feedback="useful", comment="right cause")
    assert first.status_code == 200
    case_before = client.get(f"/api/cases/{answered['runId']}").json["data"]
    again = feedback(client, **ids, feedback="useful", comment="right cause")
    assert again.status_code == 200 and again.json["data"] == first.json["data"]
    assert len(client.get("/api/cases").json["data"]["cases"]) == 1
    assert client.get(f"/api/cases/{answered['runId']}").json["data"] == case_before


@pytest.mark.parametrize("value", ["great", "", "USEFUL", None, 1])
def test_feedback_values_are_validated(
    client: FlaskClient, answered: dict[str, Any], value: Any
) -> None:
    response = feedback(
        client, sessionId=answered["sessionId"], runId=answered["runId"], feedback=value
    )
    assert response.status_code == 400 and "feedback" in response.json["message"]


def test_feedback_on_another_sessions_run_is_404(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    response = feedback(client, sessionId="sess-other", runId=answered["runId"], feedback="useful")
    assert response.status_code == 404
    assert len(client.get("/api/cases").json["data"]["cases"]) == 0
