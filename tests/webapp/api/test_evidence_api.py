"""``GET /api/diagnosis/<sessionId>/evidence``: what the pages draw, from the recorded outputs."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from webapp.services.evidence_view import evidence_view

from ..evidence_seed import seed_analysis_run
from .openapi_check import assert_documented


def evidence(client: FlaskClient, session_id: str, run_id: str) -> Any:
    path = f"/api/diagnosis/{session_id}/evidence?runId={run_id}"
    response = client.get(path)
    assert_documented(response, "GET", path)
    return response


def trace_of(client: FlaskClient, run: dict[str, Any]) -> dict[str, Any]:
    path = f"/api/diagnosis/{run['sessionId']}/trace?runId={run['runId']}"
    return client.get(path).json["data"]  # type: ignore[no-any-return]


def test_every_cited_series_comes_with_its_recorded_points_and_windows(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    response = evidence(client, answered["sessionId"], answered["runId"])
    assert response.status_code == 200
    data = response.json["data"]
    trace = trace_of(client, answered)
    outputs = {i["invocationId"]: i for i in trace["toolInvocations"]}
    # The offline analyser cites detect_anomalies findings (not raw series): each cited finding
    # is drawn from the finding, with the windows the finding states.
    cited_findings = {
        (i["invocationId"], int(m.group(1)))
        for i in trace["toolInvocations"]
        if i["toolName"] == "detect_anomalies"
        for ref in i["evidenceRefs"] or []
        if (m := re.match(r"^\$\.findings\[(\d+)\]", ref["raw_path"]))
    }
    drawn = {(c["invocationId"], c["seriesIndex"]) for c in data["charts"]}
    assert cited_findings and drawn == cited_findings
    for chart in data["charts"]:
        finding = outputs[chart["invocationId"]]["rawOutput"]["findings"][chart["seriesIndex"]]
        assert chart["kind"] == "finding" and chart["metric"] == finding["signal"]
        assert chart["points"] == [] and chart["cited"]
        windows = chart["windows"]
        assert windows["source"] == "detect_anomalies"
        assert windows["onset"] == finding["onset"]
        assert windows["baselineStart"] == finding["baseline"]["start"]
    # every evidence id of the answer is described, with its source
    ids = set(re.findall(r"\*\*(E\d+)\*\*", answered["answer"]))
    items = {e["evidenceId"]: e for e in data["evidence"]}
    assert ids <= set(items)
    for item in items.values():
        assert item["invocationId"] in outputs and item["excerpt"]
        assert item["tool"] == outputs[item["invocationId"]]["toolName"]
    # the question's window, resolved when the run started ("since 10:00")
    window = data["window"]
    assert window["found"] is True and window["kind"] == "since"
    assert window["start"].endswith("T10:00:00Z") and window["zone"] == "UTC"
    assert data["language"] == "en"


def test_analysis_outputs_give_windows_log_tables_and_finding_charts(
    app: Flask, client: FlaskClient
) -> None:
    services = app.extensions["diagnosis"]
    seeded = seed_analysis_run(
        services, "payment-service", "为什么 payment-service 从10点开始变慢？"
    )
    data = evidence(client, seeded["sessionId"], seeded["runId"]).json["data"]
    assert data["language"] == "zh"
    assert data["window"]["kind"] == "since" and data["window"]["start"].endswith("T10:00:00Z")
    anomalies = seeded["outputs"]["detect_anomalies"]
    series = [c for c in data["charts"] if c["kind"] == "series"]
    assert len(series) == 1
    chart = series[0]
    recorded = seeded["outputs"]["query_metrics"]["raw"]["series"][0]["points"]
    assert chart["points"] == recorded and chart["metric"] == seeded["metric"]
    finding = next(f for f in anomalies["raw"]["findings"] if f["signal"] == seeded["metric"])
    windows = chart["windows"]
    assert windows["source"] == "detect_anomalies"
    assert windows["sourceInvocationId"] == anomalies["invocationId"]
    assert (windows["baselineStart"], windows["baselineEnd"], windows["onset"]) == (
        finding["baseline"]["start"],
        finding["baseline"]["end"],
        finding["onset"],
    )
    assert windows["incidentEnd"] == anomalies["raw"]["window"]["end"]
    cited = {c["evidenceId"]: c for c in chart["cited"]}
    assert cited["E1"]["index"] == 2 and cited["E1"]["point"] == recorded[2]
    assert cited["E2"]["point"][1] == max(v for _, v in recorded)
    # the cited onset of the same metric's finding is cited on this chart, at no one point
    assert cited["E3"]["rawPath"].endswith(".onset") and cited["E3"]["index"] is None
    # the cited log finding has no recorded series: drawn from the finding itself
    findings = [c for c in data["charts"] if c["kind"] == "finding"]
    assert all(c["invocationId"] == anomalies["invocationId"] for c in findings)
    assert all(
        c["points"] == [] and c["finding"]["onset"] == c["windows"]["onset"] for c in findings
    )
    # the log_patterns output as rows, the cited templates marked
    (table,) = data["logTables"]
    patterns = seeded["outputs"]["log_patterns"]["raw"]["patterns"]
    assert table["invocationId"] == seeded["outputs"]["log_patterns"]["invocationId"]
    assert [
        (r["template"], r["countBefore"], r["countAfter"], r["new"]) for r in table["patterns"]
    ] == [(p["template"], p["count_before"], p["count_after"], p["new"]) for p in patterns]
    marked = [r["index"] for r in table["patterns"] if r["evidenceIds"]]
    assert marked == seeded["patternRows"]


def test_the_evidence_of_another_sessions_run_is_not_found(
    client: FlaskClient, answered: dict[str, Any]
) -> None:
    other = client.post("/api/chat", json={"Question": "hello"}).json["data"]["sessionId"]
    assert evidence(client, other, answered["runId"]).status_code == 404
    missing = client.get(f"/api/diagnosis/{answered['sessionId']}/evidence")
    assert missing.status_code == 400 and missing.json["message"] == "runId is required"


def test_failed_invocations_and_uncited_outputs_draw_nothing() -> None:
    run = {"run_id": "run-1", "session_id": "sess-1", "question": "why?", "self_evaluation": None}
    ref = {"evidence_id": "E1", "raw_path": "$.series[0].points[0]", "evidence_excerpt": "x"}
    series = {"series": [{"metric": "m", "labels": {}, "points": [["2026-11-30T10:00:00Z", 1.0]]}]}
    rows = [
        {
            "invocation_id": "inv-a",
            "tool_name": "query_metrics",
            "status": "ERROR",
            "arguments": {"service": "s"},
            "raw_output": series,
            "evidence_refs": [ref],
        },
        {
            "invocation_id": "inv-b",
            "tool_name": "query_metrics",
            "status": "SUCCESS",
            "arguments": {"service": "s"},
            "raw_output": series,
            "evidence_refs": [{**ref, "cited": False}],
        },
    ]
    view = evidence_view(run, rows)
    assert view["charts"] == view["evidence"] == view["log_tables"] == []
    assert view["window"] is None


def test_a_short_flat_series_is_drawn_without_windows() -> None:
    points = [[f"2026-11-30T10:0{n}:00Z", 5.0] for n in range(4)]
    row = {
        "invocation_id": "inv-c",
        "tool_name": "query_metrics",
        "status": "SUCCESS",
        "arguments": {"service": "s", "metric": "m"},
        "raw_output": {"series": [{"metric": "m", "points": points}], "summary": {"unit": "ms"}},
        "evidence_refs": [
            {"evidence_id": "E1", "raw_path": "$.summary.last", "evidence_excerpt": "5.0"}
        ],
    }
    run = {"run_id": "r", "session_id": "s", "question": "q", "self_evaluation": {}}
    (chart,) = evidence_view(run, [row])["charts"]
    assert chart["windows"] is None and chart["unit"] == "ms"
    assert chart["cited"] == [
        {"evidence_id": "E1", "index": 3, "raw_path": "$.summary.last", "point": points[3]}
    ]
