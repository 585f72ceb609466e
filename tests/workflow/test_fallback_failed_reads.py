"""A fallback answer names the telemetry the run could not read, and why."""

from __future__ import annotations

from diagnosis_graph.workflow.factory import build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.nodes import MAX_FAILED_READS, failed_reads
from diagnosis_graph.workflow.ports import DiagnosisPorts, InvocationRecord

from .fakes import ROLES, SERVICES, MemoryInvocations, ScriptedInvoker

DOWN = {"error": "Loki at http://loki:3100 failed with HTTP 503: upstream unavailable"}


def fallback_of(question: str, store: MemoryInvocations) -> str:
    invoker = ScriptedInvoker({"planner": ["not json", "still not json"]})
    ports = DiagnosisPorts(
        invoker, store, service_catalog=lambda: SERVICES, tool_roles=lambda: ROLES
    )
    result = run_diagnosis(build_diagnosis_graph(ports), question, session_id="s", run_id="run-1")
    assert result.degraded
    return result.answer or ""


def test_the_fallback_lists_each_failed_read_once_with_its_error() -> None:
    store = MemoryInvocations()
    store.add("inv-1", DOWN, status="ERROR")
    store.add("inv-2", DOWN, status="ERROR")  # the same failure twice is one line
    store.add("inv-3", {"records": []})  # a successful read is not listed
    store.records[0] = InvocationRecord(
        "inv-1", "run-1", "query_logs", "ERROR", DOWN, {"service": "payment-service"}
    )
    answer = fallback_of("Why is payment-service slow?", store)
    section = answer.split("### Telemetry that could not be read\n\n", 1)[1].split("\n\n")[0]
    assert section.splitlines() == [
        "- `query_logs` (payment-service): Loki at http://loki:3100 failed with HTTP 503: "
        "upstream unavailable",
        "- `query_logs`: Loki at http://loki:3100 failed with HTTP 503: upstream unavailable",
    ]


def test_a_run_without_failed_reads_has_no_such_section_and_chinese_gets_its_label() -> None:
    assert "could not be read" not in fallback_of(
        "Why is payment-service slow?", MemoryInvocations()
    )
    store = MemoryInvocations()
    store.add("inv-1", DOWN, status="ERROR")
    assert "### 未能读取的遥测数据" in fallback_of("payment-service 为什么变慢?", store)


def test_failed_reads_are_capped_and_errors_cut() -> None:
    records = [
        InvocationRecord(
            f"i{n}", "r", "query_metrics", "ERROR", {"error": "x" * 500}, {"service": f"s{n}"}
        )
        for n in range(9)
    ]
    reads = failed_reads(records)
    assert len(reads) == MAX_FAILED_READS and reads[0].target == "s0"
    store = MemoryInvocations(
        records=[InvocationRecord("i", "run-1", "query_logs", "ERROR", {"error": "y" * 500})]
    )
    answer = fallback_of("Why is payment-service slow?", store)
    assert "y" * 200 + "..." in answer and "y" * 201 not in answer
