"""With the webhook and no other alert source, the alerts Alertmanager posted are the alerts.

``TELEMETRY_BACKEND=live`` with only ``LOG_DIR`` and ``ALERT_WEBHOOK_TOKEN``: the webhook's
AIOps run reads the received firing alerts through its recorded ``query_alerts`` call (rather
than "not configured") and investigates them; a resolving notification takes them out again;
``/readyz`` reports the received alerts as the alert backend.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient
from peewee import Database

from webapp import create_app
from webapp.config import Settings
from webapp.persistence.models import DiagnosisRun
from webapp.wiring import build_services

from .test_alerts_api import AUTH, HOOK, TOKEN, real_payload
from .test_alerts_api import wait_finished as finished


def client_for(database: Database, tmp_path: Path) -> FlaskClient:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "checkout.log").write_text("2026-12-01T07:54:00Z ERROR payment provider timed out\n")
    environ = {"TELEMETRY_BACKEND": "live", "LOG_DIR": str(logs), "ALERT_WEBHOOK_TOKEN": TOKEN}
    settings = Settings.from_env(environ, overrides={"knowledge_db": str(tmp_path / "k.db")})
    services = build_services(settings, database=database)
    return create_app(services=services).test_client()


def alerts_read(client: FlaskClient, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The alerts the run's supervisor read (its one recorded ``query_alerts`` call)."""
    trace = client.get(f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}").json
    calls = [
        c
        for c in trace["data"]["toolInvocations"]
        if c["toolName"] == "query_alerts" and c["agentName"] == "aiops_supervisor"
    ]
    assert len(calls) == 1 and calls[0]["status"] == "SUCCESS", calls
    found: list[dict[str, Any]] = calls[0]["rawOutput"]["alerts"]
    return found


def test_the_webhook_run_investigates_the_alerts_it_received(
    database: Database, tmp_path: Path
) -> None:
    client = client_for(database, tmp_path)
    data = client.post(HOOK, json=real_payload(), headers=AUTH).json["data"]
    run = finished(database, data["runId"])
    assert run.status == "SUCCESS", run.error_message
    assert alerts_read(client, data) == [
        {
            "alert_name": "AlwaysFiring",
            "severity": "critical",
            "service": "checkout",
            "description": "demo alert",
            "state": "firing",
            "active_at": "2026-12-01T07:54:50Z",
        }
    ]
    assert "1 firing alert(s)" in (run.answer or "") and "AlwaysFiring" in (run.answer or "")
    ready = client.get("/readyz").json["data"]["telemetry"]
    entry = next(e for e in ready if e["backend"] == "alert_webhook")
    assert entry["signals"] == ["alerts"] and entry["reachable"] is True

    resolved = real_payload()
    resolved["status"] = resolved["alerts"][0]["status"] = "resolved"
    resolved["alerts"][0]["endsAt"] = "2026-12-01T08:10:00.000Z"
    assert client.post(HOOK, json=resolved, headers=AUTH).status_code == 202
    ops = client.post("/api/ai_ops", json={"userRequest": "what is firing?"})
    first = json.loads(ops.get_data(as_text=True).split("data: ", 1)[1].split("\n", 1)[0])
    later = first["data"]
    finished(database, later["runId"])
    assert alerts_read(client, later) == []


def investigated(run: DiagnosisRun) -> list[tuple[str, str]]:
    alerts = run.self_evaluation["aiops_rule_evaluation"]["alerts"]
    return [(a["alert_name"], a["service"]) for a in alerts]


def test_a_groups_run_and_an_investigate_now_run_keep_to_their_own_alerts(
    database: Database, tmp_path: Path
) -> None:
    client = client_for(database, tmp_path)
    first = client.post(HOOK, json=real_payload(), headers=AUTH).json["data"]
    assert investigated(finished(database, first["runId"])) == [("AlwaysFiring", "checkout")]

    other = real_payload()
    other["groupKey"] = '{}:{alertname="QueueBacklog"}'
    other["alerts"][0]["fingerprint"] = "0123456789abcdef"
    other["alerts"][0]["labels"] = {
        **other["alerts"][0]["labels"],
        "alertname": "QueueBacklog",
        "service": "billing",
    }
    second = client.post(HOOK, json=other, headers=AUTH).json["data"]
    assert second["runId"] != first["runId"]
    run = finished(database, second["runId"])
    assert len(alerts_read(client, second)) == 2  # both fire in the alert source ...
    assert investigated(run) == [("QueueBacklog", "billing")]  # ... its group's is investigated

    fingerprint = real_payload()["alerts"][0]["fingerprint"]
    now = client.post(f"/api/alerts/{fingerprint}/investigate", headers=AUTH)
    assert now.status_code in (200, 201, 202), now.get_data(as_text=True)
    asked = finished(database, now.json["data"]["runId"])
    assert investigated(asked) == [("AlwaysFiring", "checkout")]
