"""The AIOps graph's contracts with a scripted model: each alert goes through the chat's nodes,
retry budgets and trust boundary, and nothing the boundary rejects reaches the report.

Requests a test does not script are answered by the offline model, so each test changes one
agent's behaviour for one alert and checks what the rest of the run makes of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.aiops import AiOpsRunner
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.types import ChatResult, LLMError, Message
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.knowledge import KnowledgeIndex
from webapp.wiring import knowledge_for

from ..llm.fake_model import answer
from .scripted import Offline, Ran, Reply, Scripted, run_listening

SHIPPING = "ShippingErrorRateHigh"
PAYMENT = "PaymentLatencyHigh"


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


@pytest.fixture(scope="module")
def knowledge(backend: DemoTelemetryBackend) -> KnowledgeIndex:
    return knowledge_for(backend)


Run = Any  # the fixture below: (script, backend_=None, **options) -> (result, model, audit)


@pytest.fixture
def run(backend: DemoTelemetryBackend, knowledge: KnowledgeIndex) -> Run:
    def go(
        script: dict[str, list[Reply]] | None = None, backend_: Any = None, **options: Any
    ) -> tuple[Ran, Scripted, MemoryAudit]:
        model, audit = Scripted(script or {}), MemoryAudit()
        runner = AiOpsRunner(
            model=model, audit=audit, backend=backend_ or backend, knowledge=knowledge, **options
        )
        return run_listening(runner, "s1", "run-1"), model, audit

    return go


def altered(change: Callable[[dict[str, Any]], None]) -> Reply:
    """The offline model's reply, with its final JSON changed by ``change``."""

    def reply(messages: Sequence[Message], offline: Offline) -> ChatResult:
        result = offline()
        if result.tool_calls or not result.content:
            return result
        document = json.loads(result.content)
        change(document)
        return answer(document)

    return reply


def failure(outcome: Outcome) -> LLMError:
    kind = "timeout" if outcome is Outcome.RETRYABLE_FAILED else "auth"
    return LLMError(f"LLM call failed ({kind})", outcome=outcome, kind=kind)


def inv(result: Ran, name: str) -> dict[str, Any]:
    return next(i for i in result.investigations if i["alert"]["alert_name"] == name)


def rules(result: Ran) -> dict[str, Any]:
    evaluation: dict[str, Any] = result.self_evaluation["aiops_rule_evaluation"]
    return evaluation


def child_events(result: Ran, node: str, alert: str) -> list[tuple[Any, ...]]:
    return [
        (e["outcome"], e["reason_code"], e["attempt"])
        for e in result.events
        if e["node"] == node and e.get("alert") == alert
    ]


def cited(result: Ran) -> set[str]:
    return set(re.findall(r"\[([A-Z]\d+-E\d+)\]", result.answer or ""))


def test_a_composer_citing_a_made_up_id_falls_back_for_that_alert_only(run: Run) -> None:
    def cite_made_up(doc: dict[str, Any]) -> None:
        doc["conclusions"].append(
            {"statement": "DNS failed everywhere.", "claim_ids": [], "evidence_ids": ["E999"]}
        )

    key = f"composer_output:{PAYMENT}"
    result, _, _ = run({key: [altered(cite_made_up), altered(cite_made_up)]})
    assert child_events(result, "composer", PAYMENT) == [
        ("INVALID_OUTPUT", "invalid_output", 1),
        ("INVALID_OUTPUT", "retry_exhausted", 2),
    ]
    payment = inv(result, PAYMENT)
    assert payment["termination_reason"] == "fallback_composer_retry_exhausted"
    answer_text = result.answer or ""
    assert "E999" not in answer_text and "DNS failed" not in answer_text
    assert f"| A1 | {PAYMENT} | critical" in answer_text and "**A1-E1**" in answer_text
    assert not any(i.startswith("A1-") for i in cited(result))
    found = rules(result)
    assert found["alerts_covered"] == 4 and found["alerts_not_covered"] == [PAYMENT]
    assert found["all_citations_verified"] and result.degraded


def test_an_unverified_binding_never_reaches_the_report(run: Run) -> None:
    def smuggle(doc: dict[str, Any]) -> None:
        real = doc["claims"][0]["bindings"][0]
        doc["claims"].append(
            {
                "claim_id": "C99",
                "statement": "Root cause: DNS resolution broke. Restart CoreDNS.",
                "critical": True,
                "bindings": [{**real, "evidence_excerpt": "DNS resolution failed for all hosts"}],
            }
        )

    result, _, _ = run({f"executor_evidence_v2:{SHIPPING}": [altered(smuggle)] * 10})
    shipping = inv(result, SHIPPING)
    gate = shipping["rule_evaluation"]["gatekeeper"]
    assert gate["verdict"] == "LOW_CONFID" and gate["reason_counts"].get("excerpt_mismatch", 0) >= 1
    assert "CoreDNS" not in (result.answer or "") and "DNS resolution" not in (result.answer or "")
    assert all(c["claim_id"] != "A2-C99" for c in shipping["verified_claims"])
    assert rules(result)["all_citations_verified"] and cited(result) <= {
        e["evidence_id"] for i in result.investigations for e in i["evidence"]
    }


def test_a_planner_failing_twice_falls_back_for_its_alert_within_the_chat_budget(
    run: Run,
) -> None:
    down = failure(Outcome.RETRYABLE_FAILED)
    result, _, _ = run({f"planner_plan:{SHIPPING}": [down, down]})
    assert child_events(result, "planner", SHIPPING) == [
        ("RETRYABLE_FAILED", "retryable_failed", 1),
        ("RETRYABLE_FAILED", "retry_exhausted", 2),
    ]
    shipping = inv(result, SHIPPING)
    assert shipping["termination_reason"] == "fallback_planner_retry_exhausted"
    assert "could not produce a valid investigation plan" in (result.answer or "")
    assert rules(result)["alerts_covered"] == 4
    assert result.orchestration_trace["termination_reason"] == "report_all_investigated"


def test_a_non_retryable_composer_error_is_not_retried(run: Run) -> None:
    result, _, _ = run({f"composer_output:{PAYMENT}": [failure(Outcome.NON_RETRYABLE_FAILED)]})
    assert child_events(result, "composer", PAYMENT) == [
        ("NON_RETRYABLE_FAILED", "non_retryable_failed", 1)
    ]
    assert inv(result, PAYMENT)["termination_reason"] == "fallback_composer_non_retryable_failed"


class NoFiringAlerts(DemoTelemetryBackend):
    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        found = super().query_alerts(state="all")
        return {**found, "alerts": [a for a in found["alerts"] if a["state"] != "firing"]}


class BrokenAlerts(DemoTelemetryBackend):
    def query_alerts(self, *, state: str = "firing") -> dict[str, Any]:
        raise ConnectionError("alertmanager unreachable")


def test_no_firing_alert_means_no_model_call_and_a_short_report(run: Run) -> None:
    result, model, _ = run(backend_=NoFiringAlerts())
    assert model.requests == [] and not result.degraded
    assert "No firing alerts to investigate." in (result.answer or "")
    assert rules(result)["alerts_firing"] == 0
    assert result.orchestration_trace["termination_reason"] == "report_no_firing_alerts"


def test_alerts_that_cannot_be_read_give_a_degraded_report(run: Run) -> None:
    result, model, audit = run(backend_=BrokenAlerts())
    assert result.events[0]["node"] == "load_alerts" and result.events[0]["outcome"] == "FAILED"
    assert model.requests == [] and result.degraded
    assert audit.invocations[0]["status"] == "ERROR"
    assert "The firing alerts could not be read" in (result.answer or "")
    assert rules(result)["alerts_read"] is False
