"""``flask --app webapp runs|cases|alerts``: the lists in the terminal, as the API's JSON, on SQLite."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore

from .conftest import make_app
from .test_alerts_api import TOKEN, post, real_payload, wait_finished

pytestmark = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


def ask(app: Flask, question: str) -> tuple[str, str]:
    result = app.test_cli_runner().invoke(args=["ask", question])
    found = re.search(r"session: (\S+)  run: (\S+)", result.output)
    assert found is not None, result.output
    return found.group(1), found.group(2)


def listed(app: Flask, *args: str) -> dict[str, Any]:
    result = app.test_cli_runner().invoke(args=list(args))
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


def test_runs_lists_filters_and_pages_as_the_api_does(app: Flask) -> None:
    runner = app.test_cli_runner()
    first = ask(app, "Why is payment-service slow since 10:00?")
    second = ask(app, "Why is shipping-service failing since 10:20?")
    runs = listed(app, "runs")["runs"]
    assert [r["runId"] for r in runs] == [second[1], first[1]]  # newest first
    assert runs[0]["status"] == "SUCCESS" and runs[0]["flow"] == "complex"
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", runs[0]["startedAt"])
    assert runs == app.test_client().get("/api/runs").json["data"]["runs"]
    shipping = listed(app, "runs", "--service", "shipping-service")["runs"]
    assert [r["runId"] for r in shipping] == [second[1]]
    assert listed(app, "runs", "--status", "FAILED")["runs"] == []
    page = listed(app, "runs", "--limit", "1")
    assert [r["runId"] for r in page["runs"]] == [second[1]] and page["nextCursor"]
    rest = listed(app, "runs", "--limit", "1", "--cursor", page["nextCursor"])
    assert [r["runId"] for r in rest["runs"]] == [first[1]] and rest["nextCursor"] is None
    bad = runner.invoke(args=["runs", "--cursor", "nonsense"])
    assert bad.exit_code == 2 and "cursor is not a cursor" in bad.output
    assert runner.invoke(args=["runs", "--status", "DONE"]).exit_code == 2


def test_cases_lists_the_runs_marked_useful(app: Flask) -> None:
    assert listed(app, "cases")["cases"] == []
    session_id, run_id = ask(app, "Why is payment-service slow since 10:00?")
    client = app.test_client()
    body = {"sessionId": session_id, "runId": run_id, "feedback": "useful"}
    assert client.post("/api/feedback", json=body).status_code == 200
    cases = listed(app, "cases", "--text", "PAYMENT")["cases"]
    assert [c["runId"] for c in cases] == [run_id] and cases[0]["createdAt"].endswith("Z")
    assert listed(app, "cases", "--text", "nothing like it")["cases"] == []


def test_alerts_lists_groups_with_their_runs(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> None:
    app = make_app(database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN)
    received = post(app.test_client(), real_payload()).json["data"]
    wait_finished(database, received["runId"])
    page = listed(app, "alerts", "--state", "firing")
    assert page["nextCursor"] is None
    alert = next(a for a in page["alerts"] if a["alertName"] == "AlwaysFiring")
    assert alert["groupKey"] and alert["status"] == "firing" and alert["service"] == "checkout"
    assert alert["startsAt"].startswith("2026-12-01T07:54:50")
    assert [(r["runId"], r["status"]) for r in alert["runs"]] == [(received["runId"], "SUCCESS")]
    assert listed(app, "alerts", "--state", "resolved")["alerts"] == []
    bad = app.test_cli_runner().invoke(args=["alerts", "--cursor", "nonsense"])
    assert bad.exit_code == 2 and "cursor is not a cursor" in bad.output
