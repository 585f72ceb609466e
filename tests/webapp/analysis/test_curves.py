"""The series each ``detect_anomalies`` finding records: bounded, deterministic, citable."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from diagnosis_graph.workflow.gatekeeper import check_binding
from diagnosis_graph.workflow.grounding import ungrounded_tokens
from diagnosis_graph.workflow.ports import InvocationRecord
from webapp.analysis.anomalies import service_anomalies
from webapp.analysis.curves import BUDGET, MAX_POINTS, MIN_POINTS, curve, lttb, share
from webapp.analysis.onsets import detect_onset
from webapp.analysis.series import parse_stamp
from webapp.telemetry.common import iso

from .synthetic import NOW, world

START = datetime(2031, 3, 14, 6, 0, tzinfo=timezone.utc)


def step_series(count: int, onset: int) -> list[tuple[datetime, float]]:
    """A noisy calm series that steps up at ``onset`` and peaks once, late."""
    values = [
        (100.0 + (i * 7919 % 13) if i < onset else 900.0 + (i * 104729 % 31)) for i in range(count)
    ]
    values[count - 40] = 2000.0
    return [(START + timedelta(minutes=i), v) for i, v in enumerate(values)]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_a_long_series_is_thinned_to_its_limit_keeping_its_onset_baseline_end_and_peak() -> None:
    points = step_series(360, 200)
    finding = detect_onset(points, signal="latency_p95_ms")
    assert finding is not None and iso(finding.onset) == iso(points[200][0])
    recorded, downsampled = curve(points, finding, 60)
    assert downsampled and len(recorded) <= 60
    assert recorded == curve(points, finding, 60)[0]  # deterministic
    stamps = [p[0] for p in recorded]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert stamps[0] == iso(points[0][0]) and stamps[-1] == iso(points[-1][0])
    assert iso(finding.onset) in stamps and iso(finding.baseline.end) in stamps
    assert [iso(finding.incident.peak_at), finding.as_dict()["incident"]["peak"]] in recorded
    # every recorded point is a point of the series (never an average)
    original = {iso(t): v for t, v in points}
    assert all(original[t] == v for t, v in recorded)


def test_a_short_series_is_recorded_whole() -> None:
    points = step_series(90, 50)
    finding = detect_onset(points, signal="m")
    assert finding is not None
    recorded, downsampled = curve(points, finding, MAX_POINTS)
    assert not downsampled and recorded == [[iso(t), v] for t, v in points]


def test_lttb_keeps_the_ends_and_a_lone_spike() -> None:
    points = [(START + timedelta(minutes=i), 1.0) for i in range(500)]
    points[321] = (points[321][0], 50.0)
    chosen = lttb(points, 40)
    assert len(chosen) == 40 and chosen[0] == 0 and chosen[-1] == 499 and 321 in chosen
    assert chosen == sorted(set(chosen))


def test_the_budget_is_shared_by_the_findings_of_one_output() -> None:
    assert share(1) == share(BUDGET // MAX_POINTS) == MAX_POINTS
    assert share(10) == BUDGET // 10
    assert share(100) == MIN_POINTS


def test_each_finding_records_the_series_its_detector_analysed() -> None:
    backend = world()
    out = service_anomalies(backend, "ledger-writer", NOW - timedelta(hours=3), NOW)
    assert out["findings"]
    by_signal = {f["signal"]: f for f in out["findings"]}
    metric = by_signal["disk_used_ratio"]
    recorded = backend.metrics["ledger-writer"]["disk_used_ratio"]
    assert len(recorded) > MAX_POINTS and metric["downsampled"] is True
    assert len(metric["points"]) <= share(len(out["findings"]))
    assert metric["points"][0] == [iso(recorded[0][0]), recorded[0][1]]
    onset = next(p for p in metric["points"] if p[0] == metric["onset"])
    assert onset[1] == 0.97
    for finding in out["findings"]:
        points = finding["points"]
        assert points and all(isinstance(t, str) and isinstance(v, float) for t, v in points)
        assert points[0][0] <= finding["baseline"]["start"] or finding["kind"] != "metric"
        if finding["kind"] != "metric":  # counts per bucket: the onset lies in its bucket
            step = timedelta(seconds=out["window"]["step_seconds"])
            bucket = max(p[0] for p in points if p[0] <= finding["onset"])
            assert parse_stamp(finding["onset"]) - parse_stamp(bucket) < step
    size = len(compact(out))
    plain = len(compact({**out, "findings": [_without_points(f) for f in out["findings"]]}))
    assert size - plain < 40 * BUDGET  # about 31 bytes a point


def _without_points(finding: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in finding.items() if k not in ("points", "downsampled")}


def test_a_recorded_point_is_a_citable_leaf_grounded_by_its_finding() -> None:
    backend = world()
    out = service_anomalies(backend, "ledger-writer", NOW - timedelta(hours=3), NOW)
    index = next(n for n, f in enumerate(out["findings"]) if f["signal"] == "disk_used_ratio")
    finding = out["findings"][index]
    k = next(n for n, p in enumerate(finding["points"]) if p[0] == finding["onset"])
    record = InvocationRecord(
        "inv-1", "run-1", "detect_anomalies", "SUCCESS", out, {"service": "ledger-writer"}
    )
    records = {"inv-1": record}
    path = f"$.findings[{index}].points[{k}]"
    binding = {
        "source_invocation_id": "inv-1",
        "raw_path": path,
        "evidence_excerpt": compact(finding["points"][k]),
    }
    checked = check_binding(binding, records)
    assert checked.reason is None and checked.context is not None
    clock = finding["onset"][11:16]
    statement = f"disk_used_ratio of ledger-writer reached 0.97 at {clock}"
    assert ungrounded_tokens(statement, checked.context, ["ledger-writer"]) == []
    # the list itself is not a leaf; and the points never ground the finding's other fields
    whole = {**binding, "raw_path": f"$.findings[{index}].points", "evidence_excerpt": "x"}
    assert check_binding(whole, records).reason == "raw_path_not_leaf"
    signal = {
        **binding,
        "raw_path": f"$.findings[{index}].signal",
        "evidence_excerpt": "disk_used_ratio",
    }
    other = check_binding(signal, records)
    assert other.reason is None and other.context is not None
    late = finding["points"][-1]
    assert ungrounded_tokens(f"it was {late[1]} at {late[0][11:16]}", other.context) != []
