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
    # is drawn from the points it recorded, with the windows the finding states.
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
        assert chart["points"] == finding["points"] and len(chart["points"]) > 20
        assert "points" not in chart["finding"] and chart["finding"]["onset"] == finding["onset"]
        windows = chart["windows"]
        assert windows["onset"] == finding["onset"]
        assert windows["baselineStart"] == finding["baseline"]["start"]
        # the analyser cites the finding (its signal): the onset point is marked
        assert chart["cited"]
        for cite in chart["cited"]:
            assert cite["index"] is not None and cite["point"] == chart["points"][cite["index"]]
            assert cite["point"][0] <= finding["onset"] < chart["points"][cite["index"] + 1][0]
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


def test_analysis_outputs_give_windows_log_tables_and_finding_charts(
    app: Flask, client: FlaskClient
) -> None:
    services = app.extensions["diagnosis"]
    seeded = seed_analysis_run(
        services, "payment-service", "为什么 payment-service 从10点开始变慢？"
    )
    data = evidence(client, seeded["sessionId"], seeded["runId"]).json["data"]
    assert data["window"]["kind"] == "since" and data["window"]["start"].endswith("T10:00:00Z")
    anomalies = seeded["outputs"]["detect_anomalies"]
    series = [c for c in data["charts"] if c["kind"] == "series"]
    assert len(series) == 1
    chart = series[0]
    recorded = seeded["outputs"]["query_metrics"]["raw"]["series"][0]["points"]
    assert chart["points"] == recorded and chart["metric"] == seeded["metric"]
    finding = next(f for f in anomalies["raw"]["findings"] if f["signal"] == seeded["metric"])
    windows = chart["windows"]
    assert (windows["baselineStart"], windows["baselineEnd"], windows["onset"]) == (
        finding["baseline"]["start"],
        finding["baseline"]["end"],
        finding["onset"],
    )
    assert windows["incidentEnd"] == anomalies["raw"]["window"]["end"]
    cited = {c["evidenceId"]: c for c in chart["cited"]}
    assert cited["E1"]["index"] == 2 and cited["E1"]["point"] == recorded[2]
    assert cited["E2"]["point"][1] == max(v for _, v in recorded)
    # the cited onset of the same metric's finding is cited on this chart, at its onset point
    assert cited["E3"]["rawPath"].endswith(".onset")
    assert cited["E3"]["point"] == recorded[cited["E3"]["index"]]
    assert cited["E3"]["point"][0] == finding["onset"]
    # the cited log finding has no query_metrics series: drawn from the points it recorded,
    # its cited peak marked
    findings = [c for c in data["charts"] if c["kind"] == "finding"]
    assert all(c["invocationId"] == anomalies["invocationId"] for c in findings)
    for chart in findings:
        own = anomalies["raw"]["findings"][chart["seriesIndex"]]
        assert chart["points"] == own["points"] and chart["finding"]["onset"] == own["onset"]
        assert chart["windows"]["onset"] == own["onset"]
        (peak,) = [c for c in chart["cited"] if c["rawPath"].endswith(".incident.peak")]
        assert peak["point"] == [own["incident"]["peak_at"], own["incident"]["peak"]]
        assert peak["point"] == chart["points"][peak["index"]]
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


def test_a_series_the_run_did_not_analyse_is_drawn_without_windows() -> None:
    """Windows come from the run's own analysis: a step in a series no ``detect_anomalies``
    call of the run analysed is drawn, but no onset is computed for it here."""
    points = [[f"2026-11-30T10:{n:02d}:00Z", 5.0 if n < 20 else 80.0] for n in range(40)]
    row = {
        "invocation_id": "inv-c",
        "tool_name": "query_metrics",
        "status": "SUCCESS",
        "arguments": {"service": "s", "metric": "m"},
        "raw_output": {"series": [{"metric": "m", "points": points}], "summary": {"unit": "ms"}},
        "evidence_refs": [
            {"evidence_id": "E1", "raw_path": "$.summary.last", "evidence_excerpt": "80.0"}
        ],
    }
    run = {"run_id": "r", "session_id": "s", "question": "q", "self_evaluation": {}}
    (chart,) = evidence_view(run, [row])["charts"]
    assert chart["windows"] is None and chart["unit"] == "ms"
    assert chart["cited"] == [
        {"evidence_id": "E1", "index": 39, "raw_path": "$.summary.last", "point": points[39]}
    ]


def anomalies_row(finding: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    return {
        "invocation_id": "inv-d",
        "tool_name": "detect_anomalies",
        "status": "SUCCESS",
        "arguments": {"service": "s"},
        "raw_output": {
            "window": {"start": "2026-11-30T09:00:00Z", "end": "2026-11-30T10:30:00Z"},
            "findings": [finding],
            "healthy_signals": 0,
        },
        "evidence_refs": [
            {"evidence_id": f"E{n}", "raw_path": p, "evidence_excerpt": "x"}
            for n, p in enumerate(paths, 1)
        ],
    }


FINDING = {
    "signal": "queue_depth",
    "kind": "metric",
    "onset": "2026-11-30T10:00:00Z",
    "baseline": {
        "start": "2026-11-30T09:00:00Z",
        "end": "2026-11-30T09:50:00Z",
        "median": 3.0,
        "spread": 1.0,
    },
    "incident": {"median": 40.0, "peak": 55.0, "peak_at": "2026-11-30T10:20:00Z"},
    "change": "x13.3",
    "significance": 37.0,
    "direction": "up",
}


def test_a_cited_point_of_a_finding_is_marked_on_its_curve() -> None:
    points = [[f"2026-11-30T{9 + m // 60:02d}:{m % 60:02d}:00Z", 3.0] for m in range(0, 60, 10)]
    points += [["2026-11-30T10:00:00Z", 38.0], ["2026-11-30T10:10:00Z", 41.0]]
    points += [["2026-11-30T10:20:00Z", 55.0], ["2026-11-30T10:30:00Z", 40.0]]
    finding = {**FINDING, "points": points, "downsampled": True}
    paths = [
        "$.findings[0].points[7]",
        "$.findings[0].incident.peak_at",
        "$.findings[0].baseline.end",
        "$.findings[0].change",
        "$.findings[0].points[99]",
    ]
    run = {"run_id": "r", "session_id": "s", "question": "q", "self_evaluation": {}}
    view = evidence_view(run, [anomalies_row(finding, paths)])
    (chart,) = view["charts"]
    assert chart["kind"] == "finding" and chart["points"] == points
    assert chart["finding"]["downsampled"] is True and "points" not in chart["finding"]
    marked = [(c["evidence_id"], c["index"], c["point"]) for c in chart["cited"]]
    assert marked == [
        ("E1", 7, points[7]),
        ("E2", 8, points[8]),
        ("E3", 5, points[5]),
        ("E4", 6, points[6]),  # the finding as a whole: its onset
        ("E5", None, None),
    ]
    assert view["evidence"][0]["timestamp"] == points[7][0]  # the cited point's time
    assert view["evidence"][1]["timestamp"] == FINDING["onset"]


def test_a_finding_recorded_before_findings_carried_points_draws_as_before() -> None:
    run = {"run_id": "r", "session_id": "s", "question": "q", "self_evaluation": {}}
    row = anomalies_row(dict(FINDING), ["$.findings[0].signal", "$.findings[0].incident.peak"])
    (chart,) = evidence_view(run, [row])["charts"]
    assert chart["points"] == [] and chart["finding"] == FINDING
    assert [(c["index"], c["point"]) for c in chart["cited"]] == [(None, None), (None, None)]
    assert chart["windows"]["onset"] == FINDING["onset"] and chart["windows"]["peak"] == 55.0
    # a malformed list draws nothing rather than points at the wrong index
    bad = anomalies_row({**FINDING, "points": [["2026-11-30T10:00:00Z", 1.0], None]}, [])
    bad["evidence_refs"] = row["evidence_refs"]
    (chart,) = evidence_view(run, [bad])["charts"]
    assert chart["points"] == []
