"""``flask --app webapp runs|cases|alerts``: the lists in the terminal, on SQLite."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_runs_lists_filters_and_pages_with_utc_times(app: Flask) -> None:
    runner = app.test_cli_runner()
    first = ask(app, "Why is payment-service slow since 10:00?")
    second = ask(app, "Why is shipping-service failing since 10:20?")
    listed = runner.invoke(args=["runs"])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert second[1] in lines[0] and first[1] in lines[1]  # newest first
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC  SUCCESS complex ", lines[0])
    shipping = runner.invoke(args=["runs", "--service", "shipping-service"]).output
    assert second[1] in shipping and first[1] not in shipping
    assert "no runs" in runner.invoke(args=["runs", "--status", "FAILED"]).output
    page = runner.invoke(args=["runs", "--limit", "1"]).output
    cursor = re.search(r"more: --cursor (\S+)", page)
    assert cursor is not None and second[1] in page
    rest = runner.invoke(args=["runs", "--limit", "1", "--cursor", cursor.group(1)]).output
    assert first[1] in rest and "more:" not in rest
    bad = runner.invoke(args=["runs", "--cursor", "nonsense"])
    assert bad.exit_code == 2 and "cursor is not a cursor" in bad.output
    assert runner.invoke(args=["runs", "--status", "DONE"]).exit_code == 2


def test_cases_lists_the_runs_marked_useful(app: Flask) -> None:
    runner = app.test_cli_runner()
    assert "no cases" in runner.invoke(args=["cases"]).output
    session_id, run_id = ask(app, "Why is payment-service slow since 10:00?")
    client = app.test_client()
    body = {"sessionId": session_id, "runId": run_id, "feedback": "useful"}
    assert client.post("/api/feedback", json=body).status_code == 200
    listed = runner.invoke(args=["cases", "--text", "PAYMENT"]).output
    assert run_id in listed and "UTC" in listed
    assert "no cases" in runner.invoke(args=["cases", "--text", "nothing like it"]).output


def test_alerts_lists_groups_with_their_runs(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> None:
    app = make_app(database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN)
    received = post(app.test_client(), real_payload()).json["data"]
    wait_finished(database, received["runId"])
    output = app.test_cli_runner().invoke(args=["alerts", "--state", "firing"]).output
    assert re.match(r"^group \S", output) and "more:" not in output
    assert "firing   AlwaysFiring (checkout)  since 2026-12-01 07:54:50 UTC" in output
    assert f"run {received['runId']}  SUCCESS" in output
    resolved = app.test_cli_runner().invoke(args=["alerts", "--state", "resolved"]).output
    assert resolved == "no resolved alerts\n"
    bad = app.test_cli_runner().invoke(args=["alerts", "--cursor", "nonsense"])
    assert bad.exit_code == 2 and "cursor is not a cursor" in bad.output
