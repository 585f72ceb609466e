"""What the planner understood of the question - its window and the names it could not
resolve - is recorded in the plan and shown by the product with the answer (and the fallback),
in the question's language; unknown names are checked against the service catalog first."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_graph.workflow.contracts import ContractError, PlannerPlan, parse_agent_output
from diagnosis_graph.workflow.evaluation import build_self_evaluation
from diagnosis_graph.workflow.factory import DiagnosisRun
from diagnosis_graph.workflow.nodes import offset_of
from diagnosis_graph.workflow.render import render_answer, unknown_services, window_line

from . import test_composition
from .fakes import PLAN, SERVICES
from .test_composition import GOOD

WINDOW: dict[str, Any] = {
    "start": "2026-11-30T10:00:00Z",
    "end": "2026-11-30T12:00:00Z",
    "onset": "2026-11-30T10:00:00Z",
    "text": "since 11:00 CET",
    "zone": "CET",
    "kind": "since",
    "utc_offset_minutes": 60,
}
UNKNOWN = [
    {"name": "search-service", "suggestions": ["payment-service", "made-up-service"]},
    {"name": "mysql-primary", "suggestions": []},  # known after all: not shown as unknown
]


def run(
    plan: dict[str, Any], question: str = "Why is payment-service slow since 11:00 CET?", **kw: Any
) -> DiagnosisRun:
    return test_composition.run(*kw.get("composer", [GOOD]), question=question, plan=plan)


def test_the_plan_records_the_window_and_the_answer_shows_it() -> None:
    result = run({**PLAN, "window": WINDOW, "unknown_services": UNKNOWN})
    assert result.state["planner_plan"]["window"] == WINDOW
    answer = result.answer or ""
    assert (
        "**Window:** 2026-11-30T10:00:00Z to 2026-11-30T12:00:00Z "
        '(read from "since 11:00 CET", in CET)' in answer
    )
    assert (
        "**Unknown service:** search-service is not a known service: this system has no "
        "telemetry for it. Did you mean payment-service?" in answer
    )
    assert "mysql-primary is not a known service" not in answer
    assert "made-up-service" not in answer


def test_a_chinese_question_gets_chinese_window_and_unknown_lines() -> None:
    window: dict[str, Any] = {**WINDOW, "text": None, "kind": "none"}
    plan: dict[str, Any] = {**PLAN, "window": window, "unknown_services": UNKNOWN}
    result = run(plan, question="search-service 为什么变慢?")
    answer = result.answer or ""
    understood = build_self_evaluation(result.state, [], None)["rule_evaluation"]["understanding"]
    assert understood["language"] == "zh"
    assert "**时间范围:** 问题未给出时间：查看了截至 2026-11-30T12:00:00Z 的近期范围" in answer
    assert "**未知服务:** search-service 不是已知的服务" in answer


def test_the_fallback_shows_them_too() -> None:
    result = run({**PLAN, "window": WINDOW, "unknown_services": UNKNOWN}, composer=[{}, {}, {}])
    answer = result.answer or ""
    assert answer.startswith("**Diagnosis incomplete: not enough verified evidence")
    assert "**Window:**" in answer and "**Unknown service:** search-service" in answer


def test_a_plan_without_them_renders_as_before() -> None:
    answer = run(PLAN).answer or ""
    assert "**Window:**" not in answer and "Unknown service" not in answer


def test_the_plan_contract_bounds_the_new_fields() -> None:
    too_many = [{"name": f"svc-{n}"} for n in range(6)]
    with pytest.raises(ContractError, match="unknown_services"):
        parse_agent_output(PlannerPlan, json.dumps({**PLAN, "unknown_services": too_many}))
    plan = parse_agent_output(PlannerPlan, json.dumps({**PLAN, "window": WINDOW}))
    assert plan.window is not None and plan.window.text == "since 11:00 CET"


def test_unknown_names_and_windows_are_checked_before_they_are_shown() -> None:
    assert unknown_services({"unknown_services": UNKNOWN}, SERVICES) == [
        {"name": "search-service", "suggestions": ["payment-service"]}
    ]
    assert window_line(None, "en") is None
    assert window_line({"end": "2026-11-30T12:00:00Z", "text": "x<b>", "start": None}, "en") == (
        '**Window:** until 2026-11-30T12:00:00Z (read from "x&lt;b&gt;", in UTC)'
    )


def test_an_unknown_service_answer_lists_no_uncited_evidence() -> None:
    evidence: list[Any] = [
        {
            "evidence_id": "E1",
            "role": "reference",
            "source_tool": "lookup_knowledge",
            "source_invocation_id": "inv-1",
            "raw_path": "$.documents[0].title",
            "evidence_excerpt": "Connection pool exhaustion",
        }
    ]
    output = {"summary": "none", "conclusions": [], "limitations": [], "recommendations": []}
    unknown = [{"name": "search-service", "suggestions": ["payment-service"]}]
    about_unknown = render_answer("why is search-service slow?", output, evidence, unknown=unknown)
    assert "search-service is not a known service" in about_unknown
    assert "Connection pool exhaustion" not in about_unknown and "### Evidence" not in about_unknown
    # A question about known services still shows what was verified.
    assert "Connection pool exhaustion" in render_answer("why is x slow?", output, evidence)


def test_the_questions_utc_offset_comes_from_the_plans_window() -> None:
    # The composer and grounding read times in the question's zone from it.
    assert offset_of({"planner_plan": {"window": WINDOW}}) == 60
    assert offset_of({"planner_plan": {"window": None}}) == 0
    assert offset_of({}) == 0
