"""The supervisor's contracts with a scripted model: outcomes, retries, fallbacks, citations.

Requests that a test does not script are answered by the offline model, so each test changes
exactly one agent's behaviour and checks what the rest of the run makes of it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.aiops import AiOpsResult, AiOpsSupervisor
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.types import ChatResult, LLMError, Message
from webapp.stores.memory import MemoryAudit
from webapp.tools.knowledge import KnowledgeIndex
from webapp.wiring import knowledge_for

from ..llm.fake_model import answer, calls
from .scripted import Reply, Scripted, payload_of

SHIPPING = "ShippingErrorRateHigh"
PAYMENT = "PaymentLatencyHigh"


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


@pytest.fixture(scope="module")
def knowledge(backend: DemoTelemetryBackend) -> KnowledgeIndex:
    return knowledge_for(backend)


Run = Any  # the fixture below: (script, **options) -> (result, model, audit)


@pytest.fixture
def run(backend: DemoTelemetryBackend, knowledge: KnowledgeIndex) -> Run:
    def go(
        script: dict[str, list[Reply]] | None = None,
        backend_: Any = None,
        **options: Any,
    ) -> tuple[AiOpsResult, Scripted, MemoryAudit]:
        model, audit = Scripted(script or {}), MemoryAudit()
        supervisor = AiOpsSupervisor(
            model=model,
            audit=audit,
            backend=backend_ or backend,
            knowledge=knowledge,
            **options,
        )
        return supervisor.run(None, session_id="s1", run_id="run-1"), model, audit

    return go


def failure(outcome: Outcome = Outcome.RETRYABLE_FAILED) -> LLMError:
    kind = "timeout" if outcome is Outcome.RETRYABLE_FAILED else "auth"
    return LLMError(f"LLM call failed ({kind})", outcome=outcome, kind=kind)


def events_of(result: AiOpsResult, node: str, alert: str | None = None) -> list[tuple[Any, ...]]:
    return [
        (e["outcome"], e["reason_code"], e["attempt"])
        for e in result.events
        if e["node"] == node and e.get("alert") == alert
    ]


def rules(result: AiOpsResult) -> dict[str, Any]:
    evaluation: dict[str, Any] = result.self_evaluation["aiops_rule_evaluation"]
    return evaluation


def bad_report(evidence_id: str = "A1-E999") -> ChatResult:
    return answer(
        {
            "alerts": [
                {
                    "alert_name": PAYMENT,
                    "service": "payment-service",
                    "severity": "critical",
                    "root_cause": "The database is slow.",
                    "evidence_ids": [evidence_id],
                    "actions": ["Restart it."],
                }
            ],
            "overall_assessment": "Fix the database.",
        }
    )


def test_a_report_citing_unverified_evidence_is_retried_then_replaced_by_the_fallback(
    run: Run,
) -> None:
    result, model, _ = run({"aiops_report": [bad_report(), bad_report("E1")]})
    assert events_of(result, "aiops_reporter") == [
        ("INVALID_OUTPUT", "invalid_output", 1),
        ("INVALID_OUTPUT", "retry_exhausted", 2),
    ]
    assert result.events[-1]["node"] == "aiops_fallback"
    first, second = model.sent("aiops_report")
    assert "previous_attempt_error" not in payload_of(first)
    assert "A1-E999" in payload_of(second)["previous_attempt_error"]
    assert result.degraded and result.report is None
    evaluation = rules(result)
    assert evaluation["report_source"] == "fallback" and evaluation["alerts_covered"] == 0
    assert evaluation["reporter_outcome"] == "INVALID_OUTPUT"
    assert evaluation["all_citations_verified"] and evaluation["citations_total"] > 0
    assert "A1-E999" not in result.answer and "**Root cause:**" not in result.answer
    assert result.answer.count("**Not diagnosed:**") == 5
    assert "**A1-E1**" in result.answer  # the verified evidence is still listed
    assert "| A1 | PaymentLatencyHigh | critical" in result.answer


def test_a_report_corrected_on_its_retry_is_used(run: Run) -> None:
    result, _, _ = run({"aiops_report": [bad_report()]})
    assert events_of(result, "aiops_reporter") == [
        ("INVALID_OUTPUT", "invalid_output", 1),
        ("COMPLETED", "completed", 2),
    ]
    assert not result.degraded and rules(result)["alerts_covered"] == 5


def test_a_report_that_marks_an_alert_diagnosed_without_evidence_is_invalid(run: Run) -> None:
    report = json.loads(bad_report().content or "{}")
    report["alerts"][0]["evidence_ids"] = []
    result, model, _ = run({"aiops_report": [answer(report)]})
    [_, retry] = model.sent("aiops_report")
    assert "must cite verified evidence" in payload_of(retry)["previous_attempt_error"]
    assert not result.degraded


def test_an_executor_failure_leaves_one_alert_undiagnosed_while_the_others_proceed(
    run: Run,
) -> None:
    script: dict[str, list[Reply]] = {
        f"executor_evidence_v2:{SHIPPING}": [failure(Outcome.NON_RETRYABLE_FAILED)]
    }
    result, _, audit = run(script)
    assert events_of(result, "aiops_executor", SHIPPING) == [
        ("NON_RETRYABLE_FAILED", "non_retryable_failed", 1)
    ]
    assert not events_of(result, "aiops_gatekeeper", SHIPPING)
    evaluation = rules(result)
    assert evaluation["alerts_covered"] == 4 and evaluation["alerts_not_covered"] == [SHIPPING]
    assert not result.degraded and evaluation["all_citations_verified"]
    assert result.report is not None
    entry = next(e for e in result.report["alerts"] if e["alert_name"] == SHIPPING)
    assert not entry["diagnosed"] and "NON_RETRYABLE_FAILED" in entry["root_cause"]
    assert "| A2 | ShippingErrorRateHigh | critical | shipping-service" in result.answer
    assert "not diagnosed |" in result.answer and "- none verified" in result.answer
    failed = [s for s in audit.steps if s["status"] == "FAILED"]
    assert len(failed) == 1 and failed[0]["agent_name"] == "aiops_executor"


def test_a_transient_executor_failure_is_retried_once(run: Run) -> None:
    result, _, _ = run({f"executor_evidence_v2:{SHIPPING}": [failure()]})
    assert events_of(result, "aiops_executor", SHIPPING) == [
        ("RETRYABLE_FAILED", "retryable_failed", 1),
        ("COMPLETED", "completed", 2),
    ]
    assert rules(result)["alerts_covered"] == 5


def test_an_executor_failing_twice_is_not_diagnosed(run: Run) -> None:
    result, _, _ = run({f"executor_evidence_v2:{SHIPPING}": [failure(), failure()]})
    assert events_of(result, "aiops_executor", SHIPPING)[-1] == (
        "RETRYABLE_FAILED",
        "retry_exhausted",
        2,
    )
    assert rules(result)["alerts_not_covered"] == [SHIPPING]


def test_a_planner_that_keeps_failing_ends_in_the_fallback_report(run: Run) -> None:
    result, model, audit = run({"aiops_plan": [failure(), failure()]})
    assert events_of(result, "aiops_planner") == [
        ("RETRYABLE_FAILED", "retryable_failed", 1),
        ("RETRYABLE_FAILED", "retry_exhausted", 2),
    ]
    assert [e["node"] for e in result.events] == [
        "aiops_alerts",
        "aiops_planner",
        "aiops_planner",
        "aiops_fallback",
    ]
    assert result.degraded and len(model.requests) == 2
    assert {s["agent_name"] for s in audit.steps} == {"aiops_planner"}
    assert result.answer.count("**Not diagnosed:** not investigated: the planner failed") == 5
    assert rules(result)["planner_outcome"] == "RETRYABLE_FAILED"


def test_a_non_retryable_planner_error_is_not_retried(run: Run) -> None:
    result, model, _ = run({"aiops_plan": [failure(Outcome.NON_RETRYABLE_FAILED)]})
    assert events_of(result, "aiops_planner") == [
        ("NON_RETRYABLE_FAILED", "non_retryable_failed", 1)
    ]
    assert result.degraded and len(model.requests) == 1


def test_a_plan_naming_an_alert_that_is_not_firing_is_invalid_output(run: Run) -> None:
    plan = {
        "alerts": [
            {
                "alert_name": "GatewayErrorRateHigh",  # pending, not firing
                "service": "api-gateway",
                "question": "Why?",
                "queries": [{"tool": "query_logs", "arguments": {"service": "api-gateway"}}],
            }
        ]
    }
    result, model, _ = run({"aiops_plan": [answer(plan)]})
    assert events_of(result, "aiops_planner")[:2] == [
        ("INVALID_OUTPUT", "invalid_output", 1),
        ("COMPLETED", "completed", 2),
    ]
    assert (
        "GatewayErrorRateHigh" in payload_of(model.sent("aiops_plan")[1])["previous_attempt_error"]
    )
    assert rules(result)["alerts_covered"] == 5


def test_a_reporter_model_error_falls_back_without_a_retry(run: Run) -> None:
    result, model, _ = run({"aiops_report": [failure(Outcome.NON_RETRYABLE_FAILED)]})
    assert events_of(result, "aiops_reporter") == [
        ("NON_RETRYABLE_FAILED", "non_retryable_failed", 1)
    ]
    assert len(model.sent("aiops_report")) == 1 and result.degraded
    assert "the reporter failed (NON_RETRYABLE_FAILED" in result.answer


def _evidence_from_last_tool(messages: Sequence[Message]) -> ChatResult:
    tool = json.loads([m for m in messages if m["role"] == "tool"][-1]["content"])
    invocation, total = tool["invocation_id"], tool["result"]["total"]

    def claim(claim_id: str, source: str, excerpt: str) -> dict[str, Any]:
        binding = {
            "source_invocation_id": source,
            "raw_path": "$.total",
            "evidence_excerpt": excerpt,
        }
        return {
            "claim_id": claim_id,
            "statement": f"{excerpt} errors",
            "critical": True,
            "bindings": [binding],
        }

    return answer(
        {
            "version": "executor_evidence_v2",
            "claims": [
                claim("C1", invocation, str(total)),
                claim("C2", invocation, "987654321"),  # not what the tool returned
                claim("C3", "inv-0000000000000000", "1"),  # not an invocation of this run
            ],
            "summary": "errors rose",
        }
    )


def test_a_fully_scripted_run_goes_through_the_gatekeeper(run: Run) -> None:
    arguments = {"service": "payment-service", "level": "ERROR", "start": "2026-11-30T09:48:00Z"}
    plan = {
        "summary": "one alert",
        "alerts": [
            {
                "alert_name": PAYMENT,
                "service": "payment-service",
                "question": "Why is payment-service slow since 09:48?",
                "queries": [{"tool": "query_logs", "arguments": arguments}],
            }
        ],
    }
    report = json.loads(bad_report("A1-E1").content or "{}")
    report["report_markdown"] = "Payment errors [A1-E1]."
    script: dict[str, list[Reply]] = {
        "aiops_plan": [answer(plan)],
        "executor_evidence_v2": [calls(("query_logs", arguments)), _evidence_from_last_tool],
        "aiops_report": [answer(report)],
    }
    result, model, audit = run(script)
    assert [r["response_format"]["json_schema"]["name"] for r in model.requests] == [
        "aiops_plan",
        "executor_evidence_v2",
        "executor_evidence_v2",
        "aiops_report",
    ]
    evaluation = rules(result)
    assert evaluation["alerts"][0]["gatekeeper_verdicts"] == ["LOW_CONFID"]
    assert evaluation["rejection_reasons"] == {"excerpt_mismatch": 1, "invocation_not_found": 1}
    assert (evaluation["claim_count"], evaluation["verified_claim_count"]) == (3, 1)
    assert evaluation["alerts_covered"] == 1 and evaluation["cited_evidence_ids"] == ["A1-E1"]
    assert "planner planned no investigation" in result.answer
    assert (
        "| A1 | PaymentLatencyHigh | critical | payment-service | 2026-11-30T10:03:00Z | "
        "firing | diagnosed |" in result.answer
    )
    [reporter] = model.sent("aiops_report")
    [alert] = [a for a in payload_of(reporter)["alerts"] if a["alert_name"] == PAYMENT]
    assert [c["claim_id"] for c in alert["claims"]] == ["A1-C1"]  # unverified claims never reach it
    steps, invocations = audit.steps, audit.invocations
    assert [s["agent_name"] for s in steps] == [
        "aiops_planner",
        "aiops_executor",
        "aiops_executor",
        "aiops_reporter",
    ]
    assert [i["tool_name"] for i in invocations] == ["query_alerts", "query_logs"]
    assert invocations[1]["step_id"] == steps[1]["id"] and steps[1]["has_tool_call"]


def test_json_object_mode_sends_the_schema_in_the_system_message(run: Run) -> None:
    result, model, _ = run(response_mode="json_object")
    assert {json.dumps(r["response_format"]) for r in model.requests} == {'{"type": "json_object"}'}
    planner = model.requests[0]["messages"][0]["content"]
    assert "JSON schema `aiops_plan`" in planner
    reporter = model.requests[-1]["messages"][0]["content"]
    assert "JSON schema `aiops_report`" in reporter
    assert rules(result)["alerts_covered"] == 5


class NoFiringAlerts(DemoTelemetryBackend):
    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        return {
            "alerts": [
                a for a in super().query_alerts(state="all")["alerts"] if a["state"] != "firing"
            ]
            if state != "firing"
            else []
        }


class BrokenAlerts(DemoTelemetryBackend):
    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        raise ConnectionError("alertmanager unreachable")


def test_no_firing_alert_means_no_model_call_and_a_short_report(run: Run) -> None:
    result, model, _ = run(backend_=NoFiringAlerts())
    assert model.requests == [] and not result.degraded
    assert "No firing alerts to investigate." in result.answer
    assert rules(result)["alerts_firing"] == 0 and rules(result)["report_source"] == "none"


def test_alerts_that_cannot_be_read_give_a_degraded_fallback(run: Run) -> None:
    result, model, audit = run(backend_=BrokenAlerts())
    assert events_of(result, "aiops_alerts") == [("FAILED", "alerts_unavailable", 1)]
    assert model.requests == [] and result.degraded
    assert audit.invocations[0]["status"] == "ERROR"
    assert "the firing alerts could not be read" in result.answer


def test_alerts_over_the_bound_are_listed_but_not_investigated(run: Run) -> None:
    result, _, _ = run(max_alerts=2)
    assert [c.name for c in result.cases] == [PAYMENT, SHIPPING]
    evaluation = rules(result)
    assert evaluation["alerts_firing"] == 5 and len(evaluation["alerts_skipped"]) == 3
    assert evaluation["max_alerts"] == 2 and evaluation["max_rounds_per_alert"] == 2
    assert result.answer.count("not investigated (over the alert limit)") == 3


def test_one_round_per_alert_when_the_bound_says_so(run: Run) -> None:
    result, _, _ = run(max_rounds=1)
    assert {c.rounds for c in result.cases} == {1}
    assert not any(e["reason_code"] == "evidence_gap" for e in result.events)
