"""What limits an answer is said in the answer itself, end to end on the offline analyser: a
metric backend that is down (a real connection to a closed port), a window before the data,
and a runbook step that wraps onto a second line (quoted whole, never cut mid-sentence)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.webapp.demo_export import write_log_dir
from tests.webapp.telemetry.servers import free_port
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.diagnosis import Diagnoser
from webapp.llm.offline import OfflineChatModel
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry.composite import CompositeBackend, Signals, data_ranges
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.logfiles import LogFileBackend
from webapp.telemetry.prometheus import PrometheusBackend
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.wiring import knowledge_for, offline_diagnoser

DEMO = DemoTelemetryBackend()


def head(answer: str) -> str:
    """The answer above its conclusions: headline, limits, summary, question, window."""
    return answer.split("### Conclusions")[0]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("logs")
    write_log_dir(DEFAULT_DATA_DIR, out)
    return out / "logs"


def test_a_metric_backend_that_is_down_is_named_in_the_answer(logs: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    prometheus = PrometheusBackend(
        HttpSource("Prometheus", HttpOptions(url, timeout_seconds=2, attempts=1)),
        clock=DEMO.reference_time,
    )
    files = LogFileBackend(logs, clock=DEMO.reference_time)
    diagnoser = Diagnoser(
        model=OfflineChatModel(),
        backend=CompositeBackend(Signals(metrics=prometheus, logs=files)),
        knowledge=knowledge_for(DEMO),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )
    result = diagnoser.diagnose("Why is payment-service slow since 10:00?")
    answer = result.answer or ""
    assert result.run.status == "SUCCESS"
    block = head(answer).split("**Could not be read:**", 1)[1]
    assert f"Prometheus at {url} is unreachable" in block


def test_a_window_before_the_data_is_said_and_not_answered_silently() -> None:
    answer = offline_diagnoser().diagnose("Why was payment-service slow since yesterday 10:00?")
    text = head(answer.answer or "")
    assert re.search(
        r"\*\*Data:\*\* the metrics and logs cover 2026-11-30T09:00:00Z to "
        r"2026-11-30T12:00:00Z; nothing before 2026-11-30T09:00:00Z \(the window starts "
        r"2026-11-29T\d\d:00:00Z\)\.",
        text,
    ), text


def test_a_window_wholly_outside_the_data_is_not_enough_evidence() -> None:
    result = offline_diagnoser().diagnose("支付服务在 06:00 到 08:00 之间正常吗?")
    answer = result.answer or ""
    assert answer.startswith("**证据不足：所问的时间窗口不在数据范围之内。**"), answer[:300]
    assert "**数据范围:** 指标和日志覆盖 2026-11-30T09:00:00Z 至 2026-11-30T12:00:00Z" in answer


def test_a_runbook_step_wrapped_onto_two_lines_is_recommended_whole() -> None:
    answer = offline_diagnoser().diagnose("Why is order-service returning errors since 10:45?")
    steps = (answer.answer or "").split("### Recommended next steps", 1)[1]
    assert "fix the memory leak behind the GC pressure. [E" in steps
    assert not re.search(r"behind the \[E", steps)


def test_the_data_range_of_each_backend_and_of_their_composite(logs: Path) -> None:
    ranges = data_ranges(DEMO)
    assert ranges["metrics"] == ("2026-11-30T09:00:00Z", "2026-11-30T12:00:00Z")
    first, last = ranges["logs"]
    assert "2026-11-30T09:00:00Z" <= first < "2026-11-30T09:01:00Z"
    assert "2026-11-30T11:59:00Z" < last <= "2026-11-30T12:00:00Z"
    files = LogFileBackend(logs)  # the same records, exported one file per service
    assert data_ranges(files) == {"logs": (first, last)}
    prometheus = PrometheusBackend(HttpSource("Prometheus", HttpOptions("http://127.0.0.1:1")))
    composite = CompositeBackend(Signals(metrics=prometheus, logs=files))
    assert composite.data_range() == {"metrics": None, "logs": (first, last)}
    assert data_ranges(LogFileBackend(logs / "missing")) == {}


def test_a_question_about_a_moment_before_the_data_says_so_and_concludes_nothing() -> None:
    for question in (
        "Was payment-service ok at 3:00 this morning?",
        "支付服务昨天下午2点有异常吗?",
    ):
        answer = offline_diagnoser().diagnose(question).answer or ""
        headline = answer.splitlines()[0]
        assert headline in (
            "**Not enough evidence: the window asked about lies outside the data.**",
            "**证据不足：所问的时间窗口不在数据范围之内。**",
        ), answer[:300]
        assert "degraded" not in answer and "出现异常" not in answer
        assert "No evidence of a problem" not in answer and "没有证据表明" not in answer
        # nor does it list what other times' data showed, or act on it
        assert "### Evidence" not in answer and "### Recommended" not in answer
        assert "### 证据" not in answer and "### 建议" not in answer


def test_the_onset_is_stated_in_utc_and_in_the_zone_the_question_used() -> None:
    result = offline_diagnoser().diagnose("Why is payment-service slow since 11:00 CET?")
    assert "since 2026-11-30 10:00 UTC (11:00 in the question's time zone)" in (result.answer or "")
    zh = offline_diagnoser().diagnose("支付服务从北京时间18点开始变慢, 为什么?").answer or ""
    assert "2026-11-30 10:00 UTC (问题所用时区 18:00)" in zh, zh[:600]
