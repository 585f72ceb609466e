"""``flask --app webapp ask|trace|graph|init-db|export-telemetry`` through Flask's CLI runner."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask

from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend

pytestmark = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


def test_ask_prints_a_progress_line_per_node_then_the_answer_and_ids(app: Flask) -> None:
    result = app.test_cli_runner().invoke(
        args=["ask", "Why is shipping-service failing since 10:20?"]
    )
    assert result.exit_code == 0, result.output
    progress = re.findall(r"-> (\w+)\s+COMPLETED", result.output)
    assert progress == [
        "planner",
        "executor",
        "gatekeeper",
        "verified_input",
        "verifier",
        "composer",
    ]
    assert "\n**Likely cause in shipping-service itself: a bad deploy" in result.output
    assert re.search(
        r"session: sess-\w+  run: run-\w+  flow: complex  status: SUCCESS", result.output
    )


def test_trace_and_graph_read_the_run_back(app: Flask) -> None:
    runner = app.test_cli_runner()
    asked = runner.invoke(args=["ask", "Why is payment-service slow since 10:00?"])
    session_id, run_id = re.search(r"session: (\S+)  run: (\S+)", asked.output).groups()  # type: ignore[union-attr]
    trace = runner.invoke(args=["trace", session_id, run_id])
    assert trace.exit_code == 0
    assert "route (composer_completed):" in trace.output and "executor" in trace.output
    assert re.search(r"E1 \(cited\) \$\.", trace.output) and "answer:" in trace.output
    plain = runner.invoke(args=["graph"])
    assert plain.output.startswith("flowchart TD") and "linkStyle" not in plain.output


def test_trace_of_an_unknown_or_foreign_run_fails_cleanly(app: Flask) -> None:
    result = app.test_cli_runner().invoke(args=["trace", "sess-x", "run-y"])
    assert result.exit_code == 1 and "not found" in result.output


def test_init_db_is_idempotent(app: Flask) -> None:
    first = app.test_cli_runner().invoke(args=["init-db"])
    assert first.exit_code == 0 and "schema already up to date" in first.output


def test_export_telemetry_writes_a_folder_the_settings_accept(app: Flask, tmp_path: Path) -> None:
    out = tmp_path / "incident"
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=["export-telemetry", "--out", str(out), "--start", "2026-11-30T10:00:00Z"]
    )
    assert result.exit_code == 0, result.output
    assert re.match(r"\S+: 9 services, \d+ series, \d+ log records, \d+ alerts", result.output)
    folder = DemoTelemetryBackend(out)
    assert folder.reference_time() == DemoTelemetryBackend().reference_time()
    assert Settings.from_env({"TELEMETRY_BACKEND": "live", "TELEMETRY_DIR": str(out)})
    bad = runner.invoke(args=["export-telemetry", "--out", str(out), "--start", "10am"])
    assert bad.exit_code == 2 and "ISO-8601" in bad.output
