"""A question that asks for a value gets the number: the metric's value at the time asked, with
its unit and the point it was read from cited - in English and Chinese, by exact name or by the
words of the name."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.offline.conversation import Catalog
from webapp.llm.offline.values import asked
from webapp.tools.catalog import diagnosis_tools
from webapp.tools.knowledge import KnowledgeIndex
from webapp.wiring import offline_diagnoser

DEMO = DemoTelemetryBackend()
AT = datetime(2026, 11, 30, 10, 30, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    tools = diagnosis_tools(DEMO, KnowledgeIndex(":memory:"), None)
    return Catalog([t.definition() for t in tools])


def value_at(service: str, metric: str) -> float:
    points = DEMO.query_metrics(service=service, metric=metric, start=AT, end=AT)
    return float(points["series"][0]["points"][0][1])


def test_the_metric_asked_for_is_found_by_name_or_by_its_words(catalog: Catalog) -> None:
    services = ["payment-service"]
    assert asked("What was latency_p99_ms of payment-service at 10:30?", catalog, services) == [
        ("payment-service", "latency_p99_ms")
    ]
    assert asked("what was the p99 latency of payment-service at 10:30", catalog, services) == [
        ("payment-service", "latency_p99_ms")
    ]
    assert asked("payment-service的error_rate在10点30分是多少?", catalog, services) == [
        ("payment-service", "error_rate")
    ]
    # Not a question about a value, or no metric named: nothing is read.
    assert asked("What is eating the CPU on payment-service?", catalog, services) == []
    assert asked("Why is payment-service slow since 10:00?", catalog, services) == []


def test_the_answer_states_the_value_at_the_time_asked_with_its_unit() -> None:
    diagnoser = offline_diagnoser()
    answer = diagnoser.diagnose("What was latency_p99_ms of payment-service at 10:30?").answer
    expected = value_at("payment-service", "latency_p99_ms")
    headline = (answer or "").splitlines()[0]
    assert headline.startswith("**payment-service latency p99 ")
    assert f"was {expected:.4g} ms at 2026-11-30 10:30 UTC" in headline.replace(",", "")
    assert "$.series\\[0\\].points" in (answer or "")  # the point is cited


def test_a_chinese_value_question_in_the_questions_zone() -> None:
    question = "payment-service的error_rate在北京时间18点30分是多少?"
    answer = offline_diagnoser().diagnose(question).answer or ""
    expected = value_at("payment-service", "error_rate")
    headline = answer.splitlines()[0]
    assert headline.startswith("**payment-service 的 error rate 在 2026-11-30 10:30 UTC")
    assert "(问题所用时区 18:30)" in headline
    assert f"为 {expected:.4g}" in headline


def test_a_moved_signal_is_written_with_the_unit_its_backend_declares() -> None:
    answer = offline_diagnoser().diagnose("Why is payment-service slow since 10:00?").answer or ""
    assert re.search(r"latency p99 [\d.]+ → [\d.]+ ms", answer), answer[:600]
    assert "latency p99 (ms)" not in answer.split("### Evidence")[0]


def test_a_metric_only_one_service_has_names_that_service() -> None:
    answer = offline_diagnoser().diagnose("What was mysql_slow_queries_per_sec at 10:30?").answer
    expected = value_at("mysql-primary", "mysql_slow_queries_per_sec")
    assert (answer or "").startswith(
        f"**mysql-primary mysql slow queries per second was {expected:.4g} "
    ), (answer or "")[:300]
