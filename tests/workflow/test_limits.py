"""An answer says what limited it: the reads that failed (with the backend's own words) and a
window that reaches past the data the backend holds - in the fallback and the composed answer."""

from __future__ import annotations

from typing import Any

from diagnosis_graph.workflow.factory import build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.limits import (
    MAX_FAILED_READS,
    FailedRead,
    failed_reads,
    range_note,
)
from diagnosis_graph.workflow.ports import DiagnosisPorts, InvocationRecord
from diagnosis_graph.workflow.render import render_answer

from .fakes import ROLES, SERVICES, MemoryInvocations, ScriptedInvoker

DOWN = {"error": "Loki at http://loki:3100 failed with HTTP 503: upstream unavailable"}
RANGE = ("2026-11-30T09:00:00Z", "2026-11-30T11:59:58.5Z")
DEMO = {"metrics": RANGE, "logs": RANGE}


def fallback_of(question: str, store: MemoryInvocations, ranges: Any = None) -> str:
    invoker = ScriptedInvoker({"planner": ["not json", "still not json"]})
    ports = DiagnosisPorts(
        invoker,
        store,
        service_catalog=lambda: SERVICES,
        tool_roles=lambda: ROLES,
        data_range=lambda: ranges or {},
    )
    result = run_diagnosis(build_diagnosis_graph(ports), question, session_id="s", run_id="run-1")
    assert result.degraded
    return result.answer or ""


def test_the_fallback_names_each_failed_backend_once_with_the_reads_it_hit() -> None:
    store = MemoryInvocations()
    store.add("inv-1", DOWN, status="ERROR")
    store.add("inv-2", DOWN, status="ERROR")  # the same failure twice is one read
    store.add("inv-3", {"records": []})  # a successful read is not listed
    store.records[0] = InvocationRecord(
        "inv-1", "run-1", "query_logs", "ERROR", DOWN, {"service": "payment-service"}
    )
    answer = fallback_of("Why is payment-service slow?", store)
    assert answer.startswith("**Diagnosis incomplete: part of the telemetry could not be read")
    block = answer.split("**Could not be read:**\n\n", 1)[1].split("\n\n")[0]
    assert block.splitlines() == [
        "- Loki at http://loki:3100 failed with HTTP 503: upstream unavailable "
        "(query\\_logs payment-service, query\\_logs)"
    ]


def test_a_run_without_failed_reads_says_not_enough_evidence_and_chinese_gets_its_labels() -> None:
    answer = fallback_of("Why is payment-service slow?", MemoryInvocations())
    assert answer.startswith("**Diagnosis incomplete: not enough verified evidence")
    assert "could not be read" not in answer
    store = MemoryInvocations()
    store.add("inv-1", DOWN, status="ERROR")
    chinese = fallback_of("payment-service 为什么变慢?", store)
    assert chinese.startswith("**诊断未完成：部分遥测数据无法读取") and "**未能读取:**" in chinese


def test_a_signal_without_a_backend_is_named_like_a_failed_read() -> None:
    missing = {"records": [], "not_configured": True, "message": "no logs backend is configured"}
    records = [InvocationRecord("i", "r", "query_logs", "SUCCESS", missing, {"service": "a"})]
    assert failed_reads(records) == [FailedRead("query_logs", "a", "no logs backend is configured")]


def test_failed_reads_are_capped_and_errors_cut_at_a_word_end() -> None:
    records = [
        InvocationRecord(
            f"i{n}", "r", "query_metrics", "ERROR", {"error": "x" * 500}, {"service": f"s{n}"}
        )
        for n in range(9)
    ]
    reads = failed_reads(records)
    assert len(reads) == MAX_FAILED_READS and reads[0].target == "s0"
    words = " ".join(["timeout"] * 60)
    store = MemoryInvocations(
        records=[InvocationRecord("i", "run-1", "query_logs", "ERROR", {"error": words})]
    )
    line = next(
        line for line in fallback_of("Why is x slow?", store).splitlines() if "timeout" in line
    )
    assert line.startswith("- timeout timeout") and "timeout …" in line and "timeou …" not in line


def _answer(ranges: Any, window: dict[str, Any], question: str = "Why is x slow?") -> str:
    output = {
        "summary": "x ran out of connections. More.",
        "conclusions": [{"statement": "x ran out of connections.", "evidence_ids": ["E1"]}],
        "recommendations": [],
        "limitations": [],
    }
    evidence = [
        {
            "evidence_id": "E1",
            "source_invocation_id": "inv-1",
            "raw_path": "$.records[0].message",
            "evidence_excerpt": "pool exhausted",
            "tool": "query_logs",
            "role": "telemetry",
        }
    ]
    return render_answer(question, output, evidence, window=window, ranges=ranges)  # type: ignore[arg-type]


def test_a_window_reaching_before_the_data_is_said_under_the_headline() -> None:
    window = {"start": "2026-11-29T10:00:00Z", "end": "2026-11-30T12:00:00Z", "text": "x"}
    lines = _answer(DEMO, window).splitlines()
    assert lines[0] == "**x ran out of connections.**"
    assert lines[2] == (
        "**Data:** the metrics and logs cover 2026-11-30T09:00:00Z to 2026-11-30T12:00:00Z; "
        "nothing before 2026-11-30T09:00:00Z (the window starts 2026-11-29T10:00:00Z)."
    )


def test_a_window_inside_the_data_or_a_backend_that_cannot_say_adds_nothing() -> None:
    inside = {"start": "2026-11-30T10:00:00Z", "end": "2026-11-30T12:00:00Z"}
    assert "**Data:**" not in _answer(DEMO, inside)
    before = {"start": "2026-11-29T10:00:00Z", "end": "2026-11-30T12:00:00Z"}
    assert "**Data:**" not in _answer({"metrics": None}, before)
    assert "**Data:**" not in _answer(DEMO, {"start": None, "end": "2026-11-30T12:00:00Z"})


def test_a_window_outside_every_range_makes_the_headline_not_enough_evidence() -> None:
    window = {"start": "2026-11-30T06:00:00Z", "end": "2026-11-30T08:00:00Z"}
    answer = _answer(DEMO, window)
    assert answer.startswith("**Not enough evidence: the window asked about lies outside")
    assert "the window 2026-11-30T06:00:00Z to 2026-11-30T08:00:00Z lies outside" in answer
    # A signal whose backend cannot say may hold the window: the headline stays.
    partial = _answer({"metrics": None, "logs": RANGE}, window)
    assert partial.startswith("**x ran out of connections.**")
    assert "**Data:** the logs cover" in partial


def test_a_window_past_the_end_of_the_data_and_chinese() -> None:
    note = range_note(
        {"start": "2026-11-30T11:00:00Z", "end": "2026-11-30T14:00:00Z"}, {"logs": RANGE}, "zh"
    )
    assert note.lines == (
        "**数据范围:** 日志覆盖 2026-11-30T09:00:00Z 至 2026-11-30T12:00:00Z；"
        "2026-11-30T12:00:00Z 之后没有数据（时间窗口到 2026-11-30T14:00:00Z 结束）。",
    )
    assert not note.outside


def test_a_moment_outside_the_data_concludes_nothing_though_its_window_reaches_now() -> None:
    # "What happened yesterday at 14:00?": the window runs from that moment to now and so
    # overlaps today's data, but the moment asked about has none.
    window = {
        "start": "2026-11-29T14:00:00Z",
        "end": "2026-11-30T12:00:00Z",
        "onset": "2026-11-29T14:00:00Z",
        "kind": "at",
    }
    answer = _answer(DEMO, window)
    assert answer.startswith("**Not enough evidence: the window asked about lies outside")
    assert "2026-11-29T14:00:00Z lies outside that range, so nothing at that time" in answer
    assert "ran out of connections" not in answer  # today's finding is not the answer
    assert "### Recommended next steps" not in answer
    # The same moment inside the data answers as before.
    inside = {**window, "start": "2026-11-30T10:00:00Z", "onset": "2026-11-30T10:00:00Z"}
    assert _answer(DEMO, inside).startswith("**x ran out of connections.**")
    zh = range_note(window, DEMO, "zh")
    assert zh.outside and "2026-11-29T14:00:00Z 在此范围之外" in zh.lines[0]
