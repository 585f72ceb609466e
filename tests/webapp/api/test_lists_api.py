"""Runs, sessions and cases from the server, and paged traces, on every database backend.

Rows are inserted with the models (many runs share a ``started_at`` to the millisecond, so the
tie-break is exercised); keyset pages are walked to the end and compared with the full order.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore
from webapp.persistence.models import (
    AgentStep,
    AlertRecord,
    AlertRun,
    CaseLibrary,
    ChatSession,
    DiagnosisRun,
    ToolInvocation,
)

from .conftest import make_app
from .openapi_check import assert_documented
from .test_alerts_api import AUTH, TOKEN, post, real_payload, wait_finished

T0 = datetime(2026, 11, 30, 10, 0, 0, 123000)


def walk(client: FlaskClient, path: str, key: str, limit: int) -> list[dict[str, Any]]:
    """Every row of a keyset-paged list, page by page; checks each page's size."""
    rows: list[dict[str, Any]] = []
    cursor = None
    separator = "&" if "?" in path else "?"
    for _ in range(1000):
        url = f"{path}{separator}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        response = client.get(url)
        assert response.status_code == 200, response.json
        data = response.json["data"]
        cursor = data["nextCursor"]
        assert len(data[key]) == limit or cursor is None
        rows += data[key]
        if cursor is None:
            return rows
    raise AssertionError("the cursor never ran out")


@pytest.fixture
def runs(database: Database) -> list[dict[str, Any]]:
    """23 runs in 3 sessions; groups of 4 share a started_at to the millisecond."""
    made: list[dict[str, Any]] = []
    with database.connection_context():
        for s in range(3):
            ChatSession.create(
                session_id=f"sess-{s}",
                title=f"Session {s} about {'Checkout' if s == 1 else 'billing'}",
                updated_at=T0 + timedelta(minutes=s),
            )
        for n in range(23):
            row = {
                "run_id": f"run-{(n * 7) % 23:02d}",  # ids not in time order
                "session_id": f"sess-{n % 3}",
                "agent_flow": "AI_OPS" if n % 5 == 0 else "CHAT",
                "flow": "aiops" if n % 5 == 0 else ("simple" if n % 4 == 0 else "complex"),
                "status": "FAILED" if n % 6 == 0 else "SUCCESS",
                "question": f"Why is svc-{n % 2} slow? number {n}",
                "answer": "The CACHE is cold" if n % 3 == 0 else "A deployment broke it",
                "degraded": n % 7 == 0,
                "feedback": "useful" if n % 4 == 1 else None,
                "started_at": T0 + timedelta(seconds=n // 4),
                "self_evaluation": {"big": "x" * 100},
            }
            DiagnosisRun.create(**row)
            made.append(row)
    return made


def newest_first(rows: list[dict[str, Any]]) -> list[str]:
    ordered = sorted(rows, key=lambda r: (r["started_at"], r["run_id"]), reverse=True)
    return [r["run_id"] for r in ordered]


def test_runs_pages_cover_every_run_once_in_a_stable_order_across_ties(
    client: FlaskClient, runs: list[dict[str, Any]]
) -> None:
    first = client.get("/api/runs?limit=5")
    assert_documented(first, "GET", "/api/runs")
    for limit in (1, 4, 5, 200):
        listed = walk(client, "/api/runs", "runs", limit)
        assert [r["runId"] for r in listed] == newest_first(runs), limit
    row = first.json["data"]["runs"][0]
    assert row["startedAt"].endswith("Z") and "selfEvaluation" not in row


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("status=FAILED", lambda r: r["status"] == "FAILED"),
        ("flow=simple", lambda r: r["flow"] == "simple"),
        ("degraded=true", lambda r: r["degraded"]),
        ("degraded=false", lambda r: not r["degraded"]),
        ("feedback=useful", lambda r: r["feedback"] == "useful"),
        ("feedback=none", lambda r: r["feedback"] is None),
        ("text=cache", lambda r: "CACHE" in r["answer"]),
        ("text=SVC-1", lambda r: "svc-1" in r["question"]),
        ("sessionId=sess-2", lambda r: r["session_id"] == "sess-2"),
        (
            "since=2026-11-30T10:00:02.123Z&until=2026-11-30T18:00:04.123%2B08:00",
            lambda r: T0 + timedelta(seconds=2) <= r["started_at"] < T0 + timedelta(seconds=4),
        ),
        (
            "status=SUCCESS&flow=complex&text=deployment",
            lambda r: (
                r["status"] == "SUCCESS" and r["flow"] == "complex" and "deployment" in r["answer"]
            ),
        ),
    ],
)
def test_runs_filters_select_exactly_the_matching_runs_on_every_page(
    client: FlaskClient, runs: list[dict[str, Any]], query: str, keep: Any
) -> None:
    expected = newest_first([r for r in runs if keep(r)])
    assert expected, "the filter must match something"
    listed = walk(client, f"/api/runs?{query}", "runs", 3)
    assert [r["runId"] for r in listed] == expected


def test_the_service_filter_follows_tool_calls_and_alerts(
    client: FlaskClient, database: Database, runs: list[dict[str, Any]]
) -> None:
    with database.connection_context():
        ToolInvocation.create(
            invocation_id="inv-1",
            run_id="run-03",
            session_id="sess-x",
            agent_name="executor",
            tool_name="query_metrics",
            arguments={"service": "check_out", "metric": "latency"},
            status="SUCCESS",
        )
        ToolInvocation.create(
            invocation_id="inv-2",
            run_id="run-04",
            session_id="sess-x",
            agent_name="executor",
            tool_name="query_metrics",
            arguments={"service": "checkXout"},  # "_" must not act as a wildcard
            status="SUCCESS",
        )
        alert = AlertRecord.create(
            fingerprint="f1",
            alert_name="High",
            status="firing",
            service="check_out",
            labels={},
            group_key="g",
        )
        AlertRun.create(alert=alert.id, run_id="run-10", session_id="sess-y")
    listed = walk(client, "/api/runs?service=check_out", "runs", 1)
    assert sorted(r["runId"] for r in listed) == ["run-03", "run-10"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("cursor=not-a-cursor", "cursor is not a cursor"),
        (
            "cursor="
            + base64.urlsafe_b64encode(b'["sessions","2026-01-01T00:00:00","s"]')
            .decode()
            .rstrip("="),
            "cursor is not a cursor of the runs list",
        ),
        (
            "cursor=" + base64.urlsafe_b64encode(b'["runs",1,2]').decode().rstrip("="),
            "cursor is not a cursor of the runs list",
        ),
        ("cursor=abc%24", "cursor string should match pattern"),
        ("status=DONE", "status must be one of"),
        ("flow=fast", "flow must be one of"),
        ("degraded=maybe", "degraded"),
        ("feedback=great", "feedback must be one of"),
        ("since=yesterday", "since"),
        ("since=2026-11-30T11:00:00Z&until=2026-11-30T10:00:00Z", "until must be after since"),
        ("limit=0", "limit must be at least 1"),
        ("limit=201", "limit must be at most 200"),
        ("text=" + "x" * 201, "text is too long"),
        ("service=a%22b", "service string should match pattern"),
        ("sessionId=bad%0A", "sessionId must be 1-64 characters"),
    ],
)
def test_bad_cursors_and_filters_are_400_with_a_reason(
    client: FlaskClient, query: str, message: str
) -> None:
    response = client.get(f"/api/runs?{query}")
    assert response.status_code == 400, response.json
    assert message in response.json["message"]


def test_sessions_are_listed_by_last_activity_with_their_run_counts(
    client: FlaskClient, runs: list[dict[str, Any]]
) -> None:
    first = client.get("/api/sessions?limit=2")
    assert_documented(first, "GET", "/api/sessions")
    listed = walk(client, "/api/sessions", "sessions", 2)
    assert [s["sessionId"] for s in listed] == ["sess-2", "sess-1", "sess-0"]
    assert [s["runCount"] for s in listed] == [7, 8, 8]
    found = walk(client, "/api/sessions?text=checkout", "sessions", 5)
    assert [s["sessionId"] for s in found] == ["sess-1"]
    recent = walk(client, "/api/sessions?since=2026-11-30T10:01:00.123Z", "sessions", 5)
    assert [s["sessionId"] for s in recent] == ["sess-2", "sess-1"]
    runs_cursor = client.get("/api/runs?limit=1").json["data"]["nextCursor"]
    wrong = client.get(f"/api/sessions?cursor={runs_cursor}")
    assert wrong.status_code == 400 and "sessions list" in wrong.json["message"]


def test_a_sessions_runs_page_by_cursor(client: FlaskClient, runs: list[dict[str, Any]]) -> None:
    expected = newest_first([r for r in runs if r["session_id"] == "sess-1"])
    listed = walk(client, "/api/diagnosis/sess-1/runs", "runs", 3)
    assert [r["runId"] for r in listed] == expected
    assert client.get("/api/diagnosis/sess-9/runs").status_code == 404


def test_the_case_library_pages_by_cursor_filters_by_text_and_keeps_offset(
    client: FlaskClient, database: Database
) -> None:
    with database.connection_context():
        for n in range(9):
            CaseLibrary.create(
                run_id=f"case-{n}",
                session_id="s",
                question=f"q{n}",
                answer="Disk FULL" if n % 2 else "cold cache",
                created_at=T0 + timedelta(seconds=n // 3),
            )
    expected = [
        f"case-{n}" for n in sorted(range(9), key=lambda n: (n // 3, f"case-{n}"), reverse=True)
    ]
    response = client.get("/api/cases?limit=4")
    assert_documented(response, "GET", "/api/cases")
    assert [c["runId"] for c in walk(client, "/api/cases", "cases", 4)] == expected
    by_offset = client.get("/api/cases?limit=3&offset=3").json["data"]
    assert [c["runId"] for c in by_offset["cases"]] == expected[3:6]
    full = walk(client, "/api/cases?text=disk%20full", "cases", 2)
    assert [c["runId"] for c in full] == [c for c in expected if int(c[-1]) % 2]
    assert client.get("/api/cases?cursor=zzz").status_code == 400


def test_alerts_page_by_cursor_in_each_state_with_their_runs(
    client: FlaskClient, database: Database, runs: list[dict[str, Any]]
) -> None:
    with database.connection_context():
        for n in range(11):  # groups of 3 share an updated_at to the millisecond
            AlertRecord.create(
                fingerprint=f"fp-{n:02d}",
                alert_name=f"Alert{n}",
                status="resolved" if n % 3 == 0 else "firing",
                service=f"svc-{n % 2}",
                labels={"alertname": f"Alert{n}"},
                group_key=f"group-{n % 4}",
                updated_at=T0 + timedelta(seconds=n // 3),
            )
        AlertRun.create(alert=AlertRecord.get(fingerprint="fp-04"), run_id="run-05", session_id="s")
    by_key = sorted(range(11), key=lambda n: (n // 3, n), reverse=True)  # (updatedAt, id) desc
    expected = {
        "all": [f"fp-{n:02d}" for n in by_key],
        "firing": [f"fp-{n:02d}" for n in by_key if n % 3],
        "resolved": [f"fp-{n:02d}" for n in by_key if n % 3 == 0],
    }
    response = client.get("/api/alerts?limit=2")
    assert_documented(response, "GET", "/api/alerts")
    assert "total" not in response.json["data"]
    for state, fingerprints in expected.items():
        for limit in (1, 4):
            listed = walk(client, f"/api/alerts?state={state}", "alerts", limit)
            assert [a["fingerprint"] for a in listed] == fingerprints, (state, limit)
    linked = walk(client, "/api/alerts?state=firing", "alerts", 3)
    assert next(a["runs"] for a in linked if a["fingerprint"] == "fp-04")[0]["runId"] == "run-05"
    assert all(a["runs"] == [] for a in linked if a["fingerprint"] != "fp-04")
    runs_cursor = client.get("/api/runs?limit=1").json["data"]["nextCursor"]
    alerts_cursor = client.get("/api/alerts?limit=1").json["data"]["nextCursor"]
    for url in (
        f"/api/alerts?cursor={runs_cursor}",
        "/api/alerts?cursor=zzz",
        f"/api/alerts?cursor={_forged('alerts', 'yesterday', 1)}",
        f"/api/runs?cursor={alerts_cursor}",
    ):
        wrong = client.get(url)
        assert_documented(wrong, "GET", url.split("?")[0])
        assert wrong.status_code == 400 and "cursor" in wrong.json["message"], url


def _forged(*key: Any) -> str:
    text = json.dumps(list(key)).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


@pytest.fixture
def long_run(database: Database) -> dict[str, Any]:
    """A run with 7 steps and 11 invocations (every other one without a step)."""
    with database.connection_context():
        ChatSession.create(session_id="sess-t", title="t")
        ChatSession.create(session_id="sess-other", title="o")
        DiagnosisRun.create(
            run_id="run-t",
            session_id="sess-t",
            agent_flow="CHAT",
            flow="complex",
            status="SUCCESS",
            question="q",
            orchestration_trace={"version": "v", "k": [1]},
        )
        steps = [
            AgentStep.create(
                run_id="run-t",
                session_id="sess-t",
                step_index=i,
                agent_name="executor",
                model="m",
                model_input={"messages": [{"content": f"step {i} ünï"}]},
                model_output=None if i == 3 else {"text": i},
                status="SUCCESS",
            )
            for i in range(7)
        ]
        for i in range(11):
            ToolInvocation.create(
                invocation_id=f"inv-t{i}",
                run_id="run-t",
                session_id="sess-t",
                step=steps[i % 7].id if i % 2 == 0 else None,
                agent_name="executor",
                tool_name="query_logs",
                arguments={"n": i},
                raw_output={"rows": [i] * i},
                status="SUCCESS",
            )
    return {"sessionId": "sess-t", "runId": "run-t"}


def test_a_trace_carries_every_step_and_invocation_and_a_step_is_read_alone(
    client: FlaskClient, long_run: dict[str, Any]
) -> None:
    trace = client.get("/api/diagnosis/sess-t/trace?runId=run-t")
    assert_documented(trace, "GET", "/api/diagnosis/<sessionId>/trace")
    data = json.loads(trace.get_data())["data"]
    steps, invocations = data["steps"], data["toolInvocations"]
    assert [s["stepIndex"] for s in steps] == list(range(7))
    assert steps[1]["modelInput"] == {"messages": [{"content": "step 1 ünï"}]}
    assert steps[3]["modelOutput"] is None
    assert [i["invocationId"] for i in invocations] == [f"inv-t{i}" for i in range(11)]
    assert invocations[5]["rawOutput"] == {"rows": [5] * 5} and invocations[5]["stepId"] is None
    assert data["run"]["orchestrationTrace"] == {"version": "v", "k": [1]}
    assert data["session"]["sessionId"] == "sess-t"
    bare = client.get("/api/diagnosis/sess-t/trace?runId=run-t&inputs=none").json["data"]
    assert [s["modelInput"] for s in bare["steps"]] == [None] * 7
    assert [{**s, "modelInput": None} for s in steps] == bare["steps"]
    one = client.get("/api/diagnosis/sess-t/runs/run-t/steps/1")
    assert_documented(one, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/steps/<stepIndex>")
    assert one.json["data"] == steps[1]


def test_a_trace_or_step_of_another_session_or_a_missing_step_is_404(
    client: FlaskClient, long_run: dict[str, Any]
) -> None:
    assert client.get("/api/diagnosis/sess-other/runs/run-t/steps/1").status_code == 404
    assert client.get("/api/diagnosis/sess-other/trace?runId=run-t").status_code == 404
    assert client.get("/api/diagnosis/sess-t/runs/run-t/steps/7").status_code == 404


def test_an_empty_trace_is_valid_json(client: FlaskClient, database: Database) -> None:
    with database.connection_context():
        ChatSession.create(session_id="sess-e", title="e")
        DiagnosisRun.create(
            run_id="run-e",
            session_id="sess-e",
            agent_flow="CHAT",
            flow="simple",
            status="RUNNING",
            question="q",
        )
    data = json.loads(client.get("/api/diagnosis/sess-e/trace?runId=run-e").get_data())["data"]
    assert data["steps"] == [] and data["toolInvocations"] == []


@pytest.fixture
def hook_app(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> Flask:
    return make_app(database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN)


def test_investigate_now_starts_a_linked_aiops_run_for_the_alert(
    hook_app: Flask, database: Database
) -> None:
    client = hook_app.test_client()
    received = post(client, real_payload()).json["data"]
    wait_finished(database, received["runId"])
    response = client.post("/api/alerts/6b157f79b26a43ad/investigate")
    assert_documented(response, "POST", "/api/alerts/<fingerprint>/investigate")
    assert response.status_code == 202
    started = response.json["data"]
    assert started["fingerprint"] == "6b157f79b26a43ad" and started["runId"] != received["runId"]
    run = wait_finished(database, started["runId"])
    assert run.agent_flow == "AI_OPS" and "AlwaysFiring (checkout)" in run.question
    alert = client.get("/api/alerts").json["data"]["alerts"][0]
    assert [r["runId"] for r in alert["runs"]] == [started["runId"], received["runId"]]
    assert walk(client, "/api/runs?service=checkout", "runs", 1)[0]["runId"] == started["runId"]
    missing = client.post("/api/alerts/no-such-alert/investigate")
    assert missing.status_code == 404 and "not found" in missing.json["message"]
    bad = client.post("/api/alerts/bad%0A/investigate", headers=AUTH)
    assert bad.status_code == 400
