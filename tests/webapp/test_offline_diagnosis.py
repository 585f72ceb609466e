"""End to end through the offline provider: every demo scenario, in both dataset variants.

The renamed variant has other service names, other times and reworded log lines for the same
failure mechanisms; getting the same diagnoses there shows the offline model reasons from what
the tools return, not from knowledge of the dataset.
"""

from __future__ import annotations

import ast
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from demo.generate import generate
from demo.scenarios import TEMPLATES, scenario_records
from diagnosis_graph.workflow.prose import first_sentence
from diagnosis_graph.workflow.render import safe_text
from eval.scoring import categories
from webapp.diagnosis import Diagnoser, DiagnosisResult
from webapp.wiring import offline_diagnoser

OFFLINE_DIR = Path(__file__).resolve().parents[2] / "webapp" / "llm" / "offline"


@pytest.fixture(scope="module")
def diagnosers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Diagnoser]:
    renamed = tmp_path_factory.mktemp("renamed")
    generate(renamed, variant="renamed")
    return {"default": offline_diagnoser(), "renamed": offline_diagnoser(renamed)}


CASES = [
    (variant, record) for variant in ("default", "renamed") for record in scenario_records(variant)
]


@pytest.fixture(scope="module")
def results(diagnosers: dict[str, Diagnoser]) -> dict[tuple[str, str], DiagnosisResult]:
    return {
        (variant, record["id"]): diagnosers[variant].diagnose(
            record["question"], session_id=f"s-{variant}"
        )
        for variant, record in CASES
    }


def _ids(case: tuple[str, dict[str, Any]]) -> str:
    return f"{case[0]}-{case[1]['id']}-{case[1]['failure_type']}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_each_scenario_is_diagnosed_correctly(
    case: tuple[str, dict[str, Any]], results: dict[tuple[str, str], DiagnosisResult]
) -> None:
    variant, record = case
    result = results[(variant, record["id"])]
    assert result.run.status == "SUCCESS" and not result.run.degraded, result.answer
    assert result.orchestration_trace["termination_reason"] == "composer_completed"
    summary = result.run.state["composer_output"]["summary"]
    conclusions = [c["statement"] for c in result.run.state["composer_output"]["conclusions"]]
    assert (result.answer or "").startswith(f"**{first_sentence(safe_text(summary))}**\n")
    if record["failure_type"] == "healthy":
        assert summary.startswith(f"No evidence of a problem with {record['service']}:")
    else:
        assert conclusions[0].startswith(f"{record['service']} degraded: ")
        # Complete: when it started (within 5 minutes of the truth) and how much it moved.
        stated = re.search(r"since (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", conclusions[0])
        assert stated is not None, conclusions[0]
        onset = datetime.strptime(stated.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)
        truth = datetime.fromisoformat(record["onset"].replace("Z", "+00:00"))
        assert abs(onset - truth) <= timedelta(minutes=5), (onset, truth)
        assert re.search(r"\d → \d", conclusions[0]), conclusions[0]
        # The cause kind comes from the evidence, named in words any write-up of it uses.
        assert summary.startswith(f"Likely cause in {record['cause_service']}")
        assert record["failure_type"] in categories(summary), summary


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_every_claim_is_bound_to_exact_excerpts_that_pass_the_gatekeeper(
    case: tuple[str, dict[str, Any]], results: dict[tuple[str, str], DiagnosisResult]
) -> None:
    variant, record = case
    result = results[(variant, record["id"])]
    rules = result.self_evaluation["rule_evaluation"]
    gate = rules["gatekeeper"]
    assert gate["verdict"] == "PASS" and gate["gatekeeper_version"] == "gatekeeper-v2"
    assert gate["verified_binding_count"] == gate["binding_count"] > 0
    grounding = rules["grounding"]
    assert grounding["ungrounded"] == [] and grounding["groundedness"] == 1.0
    assert gate["claim_count"] == gate["verified_claim_count"] > 0
    assert all(c["verified"] for c in gate["claims"])
    assert rules["all_cited_evidence_verified"] and rules["cited_evidence_ids"]
    assert rules["tool_status_counts"] == {"SUCCESS": rules["tool_invocation_count"]}
    conclusions = result.run.state["composer_output"]["conclusions"]
    assert conclusions and all(c["evidence_ids"] for c in conclusions)
    roles = {e["evidence_id"]: e["role"] for e in result.run.state["verified_evidence"]}
    assert all(any(roles[e] == "telemetry" for e in c["evidence_ids"]) for c in conclusions)
    verifier = result.self_evaluation["verifier_evaluation"]
    assert verifier["effective_verdict"] == "PASS" and not verifier["unsupported_claim_ids"]


@pytest.mark.parametrize("variant", ["default", "renamed"])
def test_a_named_dependency_is_followed_within_the_same_run(
    variant: str, results: dict[tuple[str, str], DiagnosisResult]
) -> None:
    for record in scenario_records(variant):
        result = results[(variant, record["id"])]
        assert result.orchestration_trace["evidence_retry_count"] == 0, record["id"]
        if record["cause_service"] and record["cause_service"] != record["service"]:
            analysed = {
                i["arguments"].get("service")
                for i in _invocations(result)
                if i["tool_name"] == "detect_anomalies"
            }
            assert {record["service"], record["cause_service"]} <= analysed, record["id"]
            executor_calls = [s for s in _steps(result) if s["agent_name"] == "executor"]
            assert len(executor_calls) >= 3


def _steps(result: DiagnosisResult) -> list[dict[str, Any]]:
    return STEPS[result.run_id]


def _invocations(result: DiagnosisResult) -> list[dict[str, Any]]:
    return INVOCATIONS[result.run_id]


STEPS: dict[str, list[dict[str, Any]]] = {}
INVOCATIONS: dict[str, list[dict[str, Any]]] = {}


@pytest.fixture(scope="module", autouse=True)
def audit_rows(diagnosers: dict[str, Diagnoser], results: dict[tuple[str, str], Any]) -> None:
    for diagnoser in diagnosers.values():
        audit: Any = diagnoser.audit
        for row in audit.steps:
            STEPS.setdefault(row["run_id"], []).append(row)
        for row in audit.invocations:
            INVOCATIONS.setdefault(row["run_id"], []).append(row)


@pytest.mark.parametrize("case", CASES[:5], ids=[_ids(c) for c in CASES[:5]])
def test_steps_and_invocations_are_recorded_and_linked(
    case: tuple[str, dict[str, Any]], results: dict[tuple[str, str], DiagnosisResult]
) -> None:
    result = results[(case[0], case[1]["id"])]
    steps, invocations = STEPS[result.run_id], INVOCATIONS[result.run_id]
    assert [s["step_index"] for s in steps] == list(range(len(steps)))
    assert all(s["status"] == "SUCCESS" and s["duration_ms"] >= 0 for s in steps)
    assert {s["model"] for s in steps} == {"offline-rule-based-v1"}
    by_id = {s["id"]: s for s in steps}
    for invocation in invocations:
        step = by_id[invocation["step_id"]]
        assert step["agent_name"] == "executor" and step["has_tool_call"]
        assert invocation["invocation_id"].startswith("inv-")


def test_the_offline_provider_knows_nothing_about_the_dataset() -> None:
    sources = {p.name: p.read_text() for p in OFFLINE_DIR.glob("*.py")}
    names = {
        name
        for variant in ("default", "renamed")
        for r in scenario_records(variant)
        for name in (r["service"], r["cause_service"])
    }
    titles = {r["runbook_title"] for r in scenario_records("default") if r["runbook_title"]}
    phrases = {
        word
        for pair in TEMPLATES.values()
        for text in pair
        for word in re.findall(r"[A-Za-z][A-Za-z_]{9,}", text)
    }
    for name, text in sources.items():
        for needle in names | titles:
            assert needle not in text, f"{name} mentions {needle!r}"
        literals = " ".join(
            n.value
            for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
        leaked = sorted(w for w in phrases if w in literals and w.lower() not in GENERIC_WORDS)
        assert not leaked, f"{name} string literals use dataset words {leaked}"
        assert "webapp.demo" not in text and "from ...demo" not in text


# Words that also belong to the SRE vocabulary the offline model may legitimately use.
GENERIC_WORDS = {
    "deployment",
    "configuration",
    "transaction",
    "connection",
    "connections",
    "credentials",
    "exception",
    "threshold",
    "restarting",
    "remediation",
}


_CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("variant", ["default", "renamed"])
def test_a_chinese_question_gets_chinese_claims_and_conclusions_that_are_grounded(
    variant: str, diagnosers: dict[str, Diagnoser]
) -> None:
    for record in scenario_records(variant):
        clock = re.search(r"\d{1,2}:\d{2}", record["question"])
        assert clock is not None
        question = f"{record['service']} 从{clock.group(0)}开始有什么问题?"
        result = diagnosers[variant].diagnose(question, session_id=f"zh-{variant}")
        assert result.run.status == "SUCCESS" and not result.run.degraded, result.answer
        rules = result.self_evaluation["rule_evaluation"]
        assert rules["gatekeeper"]["verdict"] == "PASS"
        assert rules["grounding"]["ungrounded"] == [], rules["grounding"]
        claims = [c["statement"] for c in result.run.state["executor_output"]["claims"]]
        composed = result.run.state["composer_output"]
        texts = [c["statement"] for c in composed["conclusions"]] + [composed["summary"]]
        texts += [r["text"] for r in composed["recommendations"] if not r["evidence_ids"]]
        for text in claims + texts:
            assert _CJK.search(text), text
        assert not any(re.search(r"\b(degraded|Likely cause|No evidence)\b", t) for t in texts)
        if record["failure_type"] == "healthy":
            assert composed["summary"].startswith(f"没有证据表明 {record['service']} 有问题")
        else:
            assert composed["summary"].startswith(f"可能的原因在 {record['cause_service']}")
            assert record["failure_type"] in categories(composed["summary"]), composed["summary"]
