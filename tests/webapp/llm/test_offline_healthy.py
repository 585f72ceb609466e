"""Noise that was there before, or that changes nothing, is not a problem: a healthy service
with a deploy that changed nothing, a flapping low-severity alert and a request count that
rises with traffic is called healthy, and the answer says what moved instead of "none of its
signals moved". Run end to end on a copy of the demo dataset with that noise added."""

from __future__ import annotations

import gzip
import json
import random
import shutil

import pytest

from webapp.demo.backend import DEFAULT_DATA_DIR
from webapp.diagnosis import Diagnoser
from webapp.wiring import offline_diagnoser

SERVICE = "user-service"
CHANGE = 90  # minutes after the data's start (09:00): 10:30


def _series(metric: str, unit: str, values: list[float]) -> dict[str, object]:
    return {
        "service": SERVICE,
        "metric": metric,
        "unit": unit,
        "labels": {"service": SERVICE},
        "points": [
            [f"2026-11-30T{9 + m // 60:02d}:{m % 60:02d}:00Z", v] for m, v in enumerate(values)
        ],
    }


@pytest.fixture(scope="module")
def diagnoser(tmp_path_factory: pytest.TempPathFactory) -> Diagnoser:
    folder = tmp_path_factory.mktemp("noisy") / "data"
    shutil.copytree(DEFAULT_DATA_DIR, folder)
    noise = random.Random(5)
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    metrics["series"] += [
        # a deploy: the build number steps, nothing else follows
        _series("app_build_version", "", [41.0] * CHANGE + [42.0] * (180 - CHANGE)),
        # requests served: up by half with traffic at the same time
        _series(
            "http_requests_total",
            "/s",
            [round(noise.gauss(200 if m < CHANGE else 300, 4), 1) for m in range(180)],
        ),
    ]
    (folder / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    alerts = json.loads((folder / "alerts.json").read_text(encoding="utf-8"))
    alerts["alerts"].append(
        {
            "alert_name": "UserCacheHitRatioLow",
            "severity": "info",
            "service": SERVICE,
            "description": "cache hit ratio below 95% (flaps a few times an hour)",
            "state": "firing",
            "active_at": "2026-11-30T11:57:00Z",
        }
    )
    (folder / "alerts.json").write_text(json.dumps(alerts), encoding="utf-8")
    with gzip.open(folder / "logs.jsonl.gz", "at", encoding="utf-8") as logs:
        line = {
            "timestamp": "2026-11-30T10:30:00.100Z",
            "service": SERVICE,
            "level": "INFO",
            "message": "rolling update complete: build 42 replaces build 41",
            "trace_id": "0",
        }
        logs.write(json.dumps(line) + "\n")
    return offline_diagnoser(folder)


def test_a_deploy_that_changed_nothing_and_traffic_are_not_problems(diagnoser: Diagnoser) -> None:
    answer = diagnoser.diagnose(f"Is {SERVICE} healthy since 10:30?").answer or ""
    headline = answer.splitlines()[0]
    assert headline.startswith(f"**No evidence of a problem with {SERVICE}: only http requests")
    assert "a count of work done, which follows traffic; none of its other" in headline
    assert "degraded" not in answer and "Likely cause" not in answer


def test_a_flapping_low_severity_alert_is_not_a_problem(diagnoser: Diagnoser) -> None:
    answer = diagnoser.diagnose(f"{SERVICE} 从10点30分开始正常吗?").answer or ""
    assert answer.startswith(f"**没有证据表明 {SERVICE} 有问题"), answer[:300]
    assert "出现异常" not in answer
    # Asked about alerts, the answer lists it - and the service is still not called degraded.
    asked = diagnoser.diagnose(f"Is {SERVICE} ok? Any alerts firing since 10:30?").answer or ""
    assert asked.startswith(f"**No evidence of a problem with {SERVICE}"), asked[:300]
    assert f"Alert UserCacheHitRatioLow is firing on {SERVICE} (severity info" in asked
    assert f"{SERVICE} degraded" not in asked


def test_a_stated_failure_with_nothing_found_is_not_called_healthy(diagnoser: Diagnoser) -> None:
    answer = diagnoser.diagnose(f"Why is {SERVICE} failing since 10:30?").answer or ""
    headline = answer.splitlines()[0]
    assert headline.startswith(f"**No cause found for the reported trouble with {SERVICE}")
    assert "only http requests" in headline and "a count of work done" in headline
    assert "No evidence of a problem" not in answer
