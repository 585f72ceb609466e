"""The Alertmanager webhook and the alert list on every database backend."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore
from webapp.persistence.models import AlertRecord, AlertRun, DiagnosisRun
from webapp.persistence.runs import AI_OPS, PENDING, RUNNING, RunStore
from webapp.services.alert_inbox import AlertInbox, WebhookPayload

from .conftest import make_app
from .openapi_check import assert_documented

# A copy of shared/fixtures/alertmanager-0.25-webhook-v4.json (recorded from Alertmanager 0.25).
RECORDED = Path(__file__).resolve().parents[1] / "telemetry" / "recorded"
HOOK = "/api/alerts/alertmanager"
TOKEN = "hook-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def real_payload() -> dict[str, Any]:
    """Alertmanager 0.25's recorded webhook body."""
    path = RECORDED / "alertmanager-0.25-webhook-v4.json"
    payload: dict[str, Any] = json.loads(path.read_text())
    return payload


@pytest.fixture
def hook_app(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> Flask:
    return make_app(database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN)


def post(client: FlaskClient, payload: Any, headers: dict[str, str] | None = None) -> Any:
    response = client.post(HOOK, json=payload, headers=AUTH if headers is None else headers)
    assert_documented(response, "POST", HOOK)
    return response


def wait_finished(database: Database, run_id: str) -> DiagnosisRun:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with database.connection_context():
            run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
        if run.status in ("SUCCESS", "FAILED"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish")


def test_a_firing_group_is_stored_and_investigated(hook_app: Flask, database: Database) -> None:
    client = hook_app.test_client()
    response = post(client, real_payload())
    assert response.status_code == 202
    data = response.json["data"]
    assert (data["stored"], data["firing"], data["resolved"]) == (1, 1, 0)
    assert data["runId"] and not data["joinedRunningRun"]
    run = wait_finished(database, data["runId"])
    assert run.agent_flow == AI_OPS and run.status == "SUCCESS"
    assert "AlwaysFiring (checkout)" in run.question
    listing = client.get("/api/alerts?state=firing")
    assert_documented(listing, "GET", "/api/alerts")
    alert = listing.json["data"]["alerts"][0]
    assert alert["fingerprint"] == "6b157f79b26a43ad" and alert["status"] == "firing"
    assert alert["startsAt"] == "2026-12-01T07:54:50.568Z" and alert["endsAt"] is None
    assert [r["runId"] for r in alert["runs"]] == [data["runId"]]
    assert alert["runs"][0]["status"] == "SUCCESS"


def test_the_same_fingerprint_is_updated_and_resolution_is_recorded(
    hook_app: Flask, database: Database
) -> None:
    client = hook_app.test_client()
    first = post(client, real_payload()).json["data"]
    wait_finished(database, first["runId"])
    resolved = real_payload()
    resolved["status"] = resolved["alerts"][0]["status"] = "resolved"
    resolved["alerts"][0]["endsAt"] = "2026-12-01T08:10:00.000Z"
    answer = post(client, resolved).json["data"]
    assert (answer["resolved"], answer["runId"]) == (1, None)
    with database.connection_context():
        rows = list(AlertRecord.select())
    assert len(rows) == 1 and rows[0].status == "resolved" and rows[0].received_count == 2
    page = client.get("/api/alerts?state=resolved").json["data"]
    assert len(page["alerts"]) == 1 and page["alerts"][0]["endsAt"] == "2026-12-01T08:10:00.000Z"
    assert page["nextCursor"] is None and "total" not in page
    assert client.get("/api/alerts?state=firing").json["data"]["alerts"] == []


def _pending_runs(
    database: Database, started: list[str]
) -> Callable[[str], tuple[str, str, Callable[[], None]]]:
    """A ``start_run`` that records PENDING runs ``run-0``, ``run-1``... and launches nothing."""
    runs = RunStore(database, 3600)

    def start_run(text: str) -> tuple[str, str, Callable[[], None]]:
        run_id = f"run-{len(started)}"
        runs.open_run(run_id, "sess-1", AI_OPS, "aiops", text)
        started.append(run_id)
        return "sess-1", run_id, lambda: None

    return start_run


def test_a_group_with_a_running_investigation_joins_it(database: Database) -> None:
    started: list[str] = []
    inbox = AlertInbox(database, _pending_runs(database, started))
    payload = real_payload()
    first = inbox.receive(WebhookPayload.model_validate(payload))
    second = copy.deepcopy(payload)
    second["alerts"][0]["fingerprint"] = "0000aaaabbbbcccc"
    joined = inbox.receive(WebhookPayload.model_validate(second))
    assert started == ["run-0"] and joined.joined_running_run and joined.run_id == first.run_id
    with database.connection_context():
        assert AlertRun.select().where(AlertRun.run_id == "run-0").count() == 2
        assert DiagnosisRun.get(DiagnosisRun.run_id == "run-0").status == PENDING


def test_a_running_investigation_is_joined_only_by_the_alerts_it_already_has(
    database: Database,
) -> None:
    started: list[str] = []
    inbox = AlertInbox(database, _pending_runs(database, started))
    payload = real_payload()
    first = inbox.receive(WebhookPayload.model_validate(payload))
    with database.connection_context():  # the worker has read its alerts and is running
        DiagnosisRun.update(status=RUNNING).where(DiagnosisRun.run_id == first.run_id).execute()
    repeat = inbox.receive(WebhookPayload.model_validate(payload))
    assert repeat.joined_running_run and repeat.run_id == first.run_id
    newer = copy.deepcopy(payload)
    newer["alerts"][0]["fingerprint"] = "0000aaaabbbbcccc"
    fresh = inbox.receive(WebhookPayload.model_validate(newer))
    assert (
        started == ["run-0", "run-1"] and not fresh.joined_running_run and fresh.run_id == "run-1"
    )
    with database.connection_context():
        linked = {link.run_id for link in AlertRun.select()}
    assert linked == {"run-0", "run-1"}


def test_times_without_a_zone_are_utc_and_zone_times_are_stored_in_utc(
    hook_app: Flask, database: Database
) -> None:
    payload = real_payload()
    payload["status"] = payload["alerts"][0]["status"] = "resolved"
    payload["alerts"][0].update(startsAt="2026-12-01T07:54:50", endsAt="2026-12-01T10:10:00+02:00")
    assert post(hook_app.test_client(), payload).status_code == 202
    with database.connection_context():
        (row,) = AlertRecord.select()
    assert row.starts_at == datetime(2026, 12, 1, 7, 54, 50)
    assert row.ends_at == datetime(2026, 12, 1, 8, 10)


def _mutations() -> list[tuple[str, Any]]:
    def change(edit: Any) -> Any:
        payload = real_payload()
        edit(payload)
        return payload

    return [
        ("not-an-object", [1, 2]),
        ("version", change(lambda p: p.update(version="3"))),
        ("no-alerts", change(lambda p: p.update(alerts=[]))),
        ("no-group", change(lambda p: p.pop("groupKey"))),
        ("status", change(lambda p: p["alerts"][0].update(status="maybe"))),
        ("fingerprint", change(lambda p: p["alerts"][0].pop("fingerprint"))),
        ("alertname", change(lambda p: p["alerts"][0]["labels"].pop("alertname"))),
        ("startsAt", change(lambda p: p["alerts"][0].update(startsAt="yesterday"))),
        (
            "startsAt-past-utc",
            change(lambda p: p["alerts"][0].update(startsAt="9999-12-31T23:59:59-14:00")),
        ),
        (
            "endsAt-past-utc",
            change(lambda p: p["alerts"][0].update(endsAt="9999-12-31T23:59:59-14:00")),
        ),
        ("label-type", change(lambda p: p["alerts"][0]["labels"].update(severity=3))),
    ]


@pytest.mark.parametrize(("case", "payload"), _mutations(), ids=[m[0] for m in _mutations()])
def test_bad_payloads_are_400_and_store_nothing(
    hook_app: Flask, database: Database, case: str, payload: Any
) -> None:
    response = post(hook_app.test_client(), payload)
    assert response.status_code == 400, case
    assert response.json["message"]
    with database.connection_context():
        assert AlertRecord.select().count() == 0 and DiagnosisRun.select().count() == 0


def test_the_webhook_needs_its_own_token(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> None:
    locked = make_app(
        database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN, api_key="api-key"
    ).test_client()
    assert post(locked, real_payload(), {}).status_code == 401
    assert post(locked, real_payload(), {"Authorization": "Bearer api-key"}).status_code == 401
    assert locked.get("/api/alerts").status_code == 401  # an ordinary /api route: API_KEY
    assert locked.get("/api/alerts", headers={"Authorization": "Bearer api-key"}).status_code == 200
    disabled = make_app(database, demo_backend, history, tmp_path).test_client()
    response = post(disabled, real_payload())
    assert response.status_code == 503 and "ALERT_WEBHOOK_TOKEN" in response.json["message"]


def test_alert_paging_and_state_are_validated(hook_app: Flask) -> None:
    client = hook_app.test_client()
    for query in ("state=open", "limit=0", "cursor=not%20a%20cursor"):
        response = client.get(f"/api/alerts?{query}")
        assert_documented(response, "GET", "/api/alerts")
        assert response.status_code == 400
