"""The offline planner's reading of a question: window, names, unknowns, alerts, follow-ups."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webapp.analysis.names import resolve_services
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.offline.conversation import Catalog
from webapp.llm.offline.planner import plan
from webapp.llm.offline.question import (
    question_window,
    request_window,
    understand,
)
from webapp.tools.catalog import diagnosis_tools
from webapp.tools.knowledge import KnowledgeIndex

from ..analysis.synthetic import world

NOW = "2026-11-30T12:00:00Z"
SERVICES = DemoTelemetryBackend().services()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    tools = diagnosis_tools(DemoTelemetryBackend(), KnowledgeIndex(":memory:"), None)
    return Catalog([t.definition() for t in tools])


def planned(catalog: Catalog, question: str, **extra: Any) -> dict[str, Any]:
    return plan({"question": question, "reference_time": NOW, "mode": "FULL", **extra}, catalog)


@pytest.mark.parametrize(
    ("question", "split"),
    [
        ("why is payment-service slow since 10:00?", "2026-11-30T10:00:00Z"),
        ("since 11:00 CET", "2026-11-30T10:00:00Z"),
        ("payment-service 为什么从10点开始变慢?", "2026-11-30T10:00:00Z"),
        ("in the last 30 minutes", "2026-11-30T11:30:00Z"),
        ("p95 is 1.30 s", "2026-11-30T11:00:00Z"),  # not a time: the default split
        ("payment-service", "2026-11-30T11:00:00Z"),
    ],
)
def test_the_window_keeps_the_executors_shape(question: str, split: str) -> None:
    window = question_window(question, NOW)
    assert window.split.strftime("%Y-%m-%dT%H:%M:%SZ") == split
    assert window.resolved is not None


def test_names_are_resolved_through_the_library() -> None:
    assert resolve_services("why is paymnt-service slow?", SERVICES).services == ["payment-service"]
    assert resolve_services(
        "订单服务报错了", SERVICES, {"order-service": ["订单服务"]}
    ).services == ["order-service"]


def test_a_question_without_a_time_looks_for_onsets_over_the_recent_range(
    catalog: Catalog,
) -> None:
    result = planned(catalog, "payment-service")
    first = result["queries"][0]
    assert first == {
        "tool": "detect_anomalies",
        "arguments": {"service": "payment-service"},
        "purpose": "no time given: onsets of every signal of payment-service over the recent range",
    }
    assert len(result["queries"]) <= 12


def test_a_question_with_a_time_analyses_from_an_hour_before_it(catalog: Catalog) -> None:
    result = planned(catalog, "Why is payment-service slow since 10:00?")
    tools = [q["tool"] for q in result["queries"]]
    assert tools == ["detect_anomalies", "log_patterns"]
    assert result["queries"][0]["arguments"]["start"] == "2026-11-30T09:00:00Z"
    assert "since 10:00" in result["summary"]


def test_a_misspelt_service_is_planned_under_its_real_name(catalog: Catalog) -> None:
    result = planned(catalog, "why is paymnt-service slow since 10:00?")
    assert {q["arguments"].get("service") for q in result["queries"]} == {"payment-service"}


def test_an_unknown_service_is_said_to_be_unknown(catalog: Catalog) -> None:
    result = planned(catalog, "is search-service down?")
    assert "search-service is not a service this system has telemetry for" in result["summary"]
    assert any("search-service" in h for h in result["hypotheses"])
    assert all(q["arguments"].get("service") is None for q in result["queries"])


def test_alert_questions_query_the_firing_alerts(catalog: Catalog) -> None:
    result = planned(catalog, "What alerts are firing right now?")
    assert result["queries"][0] == {
        "tool": "query_alerts",
        "arguments": {"state": "firing"},
        "purpose": "the question asks about alerts: which are firing now",
    }
    assert planned(catalog, "有哪些告警?")["queries"][0]["tool"] == "query_alerts"


def test_several_services_get_one_trail_each(catalog: Catalog) -> None:
    result = planned(
        catalog, "why are order-service, shipping-service and redis-cache failing since 10:20?"
    )
    services = [q["arguments"].get("service") for q in result["queries"]]
    assert services == [
        s for s in ("order-service", "shipping-service", "redis-cache") for _ in "ab"
    ]
    assert [h.split(" ")[0] for h in result["hypotheses"]] == [
        "order-service",
        "shipping-service",
        "redis-cache",
    ]


def test_a_follow_up_is_about_the_previous_turns_service(catalog: Catalog) -> None:
    history = [
        {"role": "user", "content": "why is payment-service slow since 10:00?"},
        {"role": "assistant", "content": "## payment-service: Database connection pool exhaustion"},
    ]
    for question in ("and what about its errors?", "它为什么变慢?", "why is it slow?"):
        result = planned(catalog, question, history=history)
        services = {q["arguments"].get("service") for q in result["queries"]}
        assert services == {"payment-service"}, question
    seen = understand("why is it slow?", NOW, SERVICES, history=history)
    assert seen.follow_up
    assert not understand("hello", NOW, SERVICES, history=history).follow_up


def test_aliases_declared_by_any_backend_reach_the_planner() -> None:
    backend = world()
    tools = diagnosis_tools(backend, KnowledgeIndex(":memory:"), None)
    catalog = Catalog(json.loads(json.dumps([t.definition() for t in tools])))
    assert catalog.aliases == {"ledger-writer": ["账本服务"]}
    result = plan({"question": "账本服务报错了", "reference_time": NOW}, catalog)
    assert result["queries"][0]["arguments"]["service"] == "ledger-writer"


def test_the_plan_records_its_window_and_later_agents_read_it_back(catalog: Catalog) -> None:
    result = planned(catalog, "why is payment-service slow since 11:00 CET?")
    assert result["window"]["start"] == "2026-11-30T10:00:00Z"
    assert result["window"]["text"] == "since 11:00 CET"
    # The executor's request carries the plan, not the history: the window comes from it.
    window = request_window({"question": "why is it slow?", "reference_time": NOW, "plan": result})
    assert window.split.strftime("%H:%M") == "10:00"


def test_its_database_is_the_dependency_the_previous_answer_found_not_a_guess() -> None:
    services = ["ledger-api", "ledger-db", "pg-main"]
    history = [
        {"role": "user", "content": "ledger-api is slow since 10:00"},
        {
            "role": "assistant",
            "content": "## Diagnosis\n\n**Question:** ledger-api is slow\n\nledger-api degraded; "
            "the trail leads to pg-main.\n\n### Evidence\n\n- ledger-db mentioned in a log",
        },
    ]
    seen = understand("and what about its database?", NOW, services, history=history)
    assert seen.follow_up and seen.services == ["ledger-api"]
    # pg-main is what the data showed; ledger-db only looks like a database by its name.
    assert seen.dependencies == ["pg-main"]
    assert seen.window.resolved is not None and seen.window.resolved.text == "since 10:00"
    alone = understand("and what about its database?", NOW, services, history=history[:1])
    assert alone.dependencies == [] and alone.services == ["ledger-api"]


def test_what_about_another_service_keeps_the_previous_window() -> None:
    history = [{"role": "user", "content": "why is payment-service slow since 10:00?"}]
    seen = understand("and what about shipping-service?", NOW, SERVICES, history=history)
    assert seen.services == ["shipping-service"] and not seen.follow_up
    assert seen.window.split.strftime("%H:%M") == "10:00"
    fresh = understand("why is shipping-service failing?", NOW, SERVICES, history=history)
    assert fresh.window.resolved is not None and not fresh.window.resolved.found


CATALOG = ["core-booking", "mysql-booking-01", "quote_jobs", "search_jobs", "cx-wallet"]


@pytest.mark.parametrize(
    ("question", "service"),
    [
        # Read word by word, each part names another service (core / booking, quote / jobs).
        ("why is core-boking throwing errors since 08:34", "core-booking"),
        ("why is quoote_jobs lagging behind", "quote_jobs"),
        ("why is cx-wlalet failing requests", "cx-wallet"),
    ],
)
def test_a_misspelt_compound_name_names_one_service(question: str, service: str) -> None:
    resolution = resolve_services(question, CATALOG)
    assert resolution.services == [service] and not resolution.unknown


def test_a_compound_name_as_close_to_two_services_is_asked_about_not_guessed() -> None:
    resolution = resolve_services("why is pay-ap slow?", ["pay-api", "pay-app"])
    assert resolution.services == []
    assert [(u.text, sorted(u.suggestions)) for u in resolution.unknown] == [
        ("pay-ap", ["pay-api", "pay-app"])
    ]


def test_exact_and_partial_names_are_unchanged() -> None:
    assert resolve_services("is core-booking or quote_jobs slow?", CATALOG).services == [
        "core-booking",
        "quote_jobs",
    ]
    assert resolve_services("why are jobs lagging?", CATALOG).services == [
        "quote_jobs",
        "search_jobs",
    ]


def test_a_name_written_against_chinese_words_is_a_whole_name() -> None:
    catalog = ["reportd", "mysql-report-01"]
    # Read as parts, "reportd" would also name mysql-report-01 (a near spelling of "report").
    assert resolve_services("reportd报错了,帮我看看", catalog).services == ["reportd"]
    assert resolve_services("为什么mysql-report-01变慢了", catalog).services == ["mysql-report-01"]
    aliases = {"reportd": ["报表app"]}
    assert resolve_services("报表app报错了", catalog, aliases).services == ["reportd"]
