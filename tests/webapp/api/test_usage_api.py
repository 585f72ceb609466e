"""A run records its prompt and completion tokens and, with a price table, its cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask.testing import FlaskClient
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.offline import MODEL_NAME
from webapp.persistence.history import HistoryStore

from .conftest import make_app
from .openapi_check import assert_documented

PRICES = f'{{"{MODEL_NAME}": [2, 8]}}'  # dollars per million prompt / completion tokens


def ask(client: FlaskClient) -> tuple[str, str]:
    response = client.post("/api/chat", json={"Question": "Why is order-service failing?"})
    assert response.status_code == 200, response.json
    data = response.json["data"]
    return data["sessionId"], data["runId"]


def test_the_runs_list_and_the_trace_show_tokens_and_cost(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> None:
    client = make_app(database, demo_backend, history, tmp_path, llm_prices=PRICES).test_client()
    session_id, run_id = ask(client)
    path = f"/api/diagnosis/{session_id}/trace?runId={run_id}"
    trace = client.get(path)
    assert_documented(trace, "GET", path)
    run, steps = trace.json["data"]["run"], trace.json["data"]["steps"]
    prompt = sum(s["promptTokens"] for s in steps)
    completion = sum(s["completionTokens"] for s in steps)
    assert prompt > 0 and completion > 0
    assert (run["promptTokens"], run["completionTokens"]) == (prompt, completion)
    assert run["costUsd"] == pytest.approx((prompt * 2 + completion * 8) / 1e6, abs=1e-6)
    listed = client.get("/api/runs?limit=5")
    assert_documented(listed, "GET", "/api/runs?limit=5")
    [row] = [r for r in listed.json["data"]["runs"] if r["runId"] == run_id]
    assert (row["promptTokens"], row["completionTokens"]) == (prompt, completion)
    assert row["costUsd"] == run["costUsd"]


def test_without_a_price_table_tokens_are_recorded_and_cost_is_null(
    client: FlaskClient,
) -> None:
    session_id, run_id = ask(client)
    runs = client.get(f"/api/diagnosis/{session_id}/runs").json["data"]["runs"]
    [run] = [r for r in runs if r["runId"] == run_id]
    assert run["promptTokens"] > 0 and run["completionTokens"] > 0
    assert run["costUsd"] is None
