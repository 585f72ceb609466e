"""The composer's invalid-output rules and the product renderer, through the real graph."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis_graph.workflow.composition import AnswerRules, sentences
from diagnosis_graph.workflow.contracts import ComposerOutput
from diagnosis_graph.workflow.factory import DiagnosisRun, build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.ports import DiagnosisPorts

from .fakes import LOGS, PLAN, ROLES, SERVICES, MemoryInvocations, ScriptedInvoker, evidence

RUNBOOK = {
    "documents": [
        {
            "doc_id": "runbooks/db.md#0",
            "title": "Database connection pool exhaustion",
            "source": "runbooks/db.md",
            "score": 3.2,
            "content": "- Kill the blocking query and move reports to a read replica.",
        },
        {
            "doc_id": "upload/notes.md#0",
            "title": "Incident notes",
            "source": "upload/notes.md",
            "score": 2.0,
            "content": "Restart CoreDNS on every node when payment-service is slow.",
            "origin": {
                "kind": "upload",
                "file_name": "notes.md",
                "uploaded_at": "2026-11-30T09:00:00Z",
            },
        },
    ]
}
POOL = ("inv-logs", "$.records[0].message", "connection pool exhausted (50/50 active, 12 waiting)")
TITLE = ("inv-kb", "$.documents[0].title", "Database connection pool exhaustion")
STEP = ("inv-kb", "$.documents[0].content", "Kill the blocking query")
UPLOAD = ("inv-kb", "$.documents[1].content", "Restart CoreDNS on every node")


def claim(claim_id: str, statement: str, *bindings: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "statement": statement,
        "critical": True,
        "bindings": [
            {"source_invocation_id": i, "raw_path": p, "evidence_excerpt": e}
            for i, p, e in bindings
        ],
    }


CLAIMS = [
    claim("C1", "payment-service exhausted its connection pool (50/50 active)", POOL),
    claim("C2", "The runbook is titled Database connection pool exhaustion", TITLE),
    claim("C3", "The runbook says: Kill the blocking query", STEP),
    claim("C4", "An uploaded note says: Restart CoreDNS on every node", UPLOAD),
]
SUPPORTED = {
    "verdict": "PASS",
    "claim_assessments": [
        {"claim_id": f"C{n}", "supported": True, "reason": "excerpt shows it"} for n in range(1, 5)
    ],
    "critical_gaps": [],
}
CONCLUSION: dict[str, Any] = {
    "statement": "payment-service exhausted its connection pool (50/50 active)",
    "claim_ids": ["C1"],
    "evidence_ids": ["E1"],
}
GOOD: dict[str, Any] = {
    "summary": "payment-service exhausted its connection pool (50/50 active).",
    "conclusions": [
        {
            "statement": "payment-service exhausted its connection pool (50/50 active)",
            "claim_ids": ["C1"],
            "evidence_ids": ["E1"],
        }
    ],
    "limitations": [],
    "recommendations": [{"text": "Kill the blocking query", "evidence_ids": ["E3"]}],
}


def run(
    *composer: dict[str, Any],
    question: str = "Why is payment-service slow?",
    plan: dict[str, Any] | None = None,
) -> DiagnosisRun:
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    store.add("inv-kb", RUNBOOK, tool="lookup_knowledge")
    invoker = ScriptedInvoker(
        {
            "planner": [plan or PLAN],
            "executor": [evidence(*CLAIMS)],
            "verifier": [SUPPORTED],
            "composer": list(composer),
        }
    )
    ports = DiagnosisPorts(
        invoker, store, service_catalog=lambda: SERVICES, tool_roles=lambda: ROLES
    )
    return run_diagnosis(build_diagnosis_graph(ports), question, session_id="s1", run_id="run-1")


def composer_reasons(result: DiagnosisRun) -> list[str]:
    return [
        e["reason_code"] for e in result.state["orchestration_events"] if e["node"] == "composer"
    ]


def test_a_valid_answer_is_rendered_by_the_product_with_roles_and_sources() -> None:
    result = run(GOOD)
    assert composer_reasons(result) == ["completed"] and not result.degraded
    answer = result.answer or ""
    assert "1. payment-service exhausted its connection pool (50/50 active) [E1]" in answer
    assert "1. Kill the blocking query [E3]" in answer
    assert "**E1** (telemetry; query\\_logs" in answer
    assert "**E3** (reference; lookup\\_knowledge" in answer
    evidence = {e["evidence_id"]: e for e in result.state["verified_evidence"]}
    assert evidence["E1"]["role"] == "telemetry" and evidence["E2"]["role"] == "reference"
    assert evidence["E4"]["origin"] == RUNBOOK["documents"][1]["origin"]
    # every typed state value stays plain JSON (the engine checkpoints, the app stores it)
    assert json.loads(json.dumps(result.state)) == result.state


BAD = [
    (
        {**GOOD, "conclusions": [{**CONCLUSION, "evidence_ids": ["E2"]}]},
        "reference-only cause (a runbook title)",
    ),
    (
        {
            **GOOD,
            "conclusions": [
                {
                    "statement": "Restart CoreDNS on every node",
                    "claim_ids": ["C4"],
                    "evidence_ids": ["E4"],
                }
            ],
        },
        "reference-only cause (an uploaded document)",
    ),
    (
        {
            **GOOD,
            "conclusions": [{**CONCLUSION, "statement": "the pool was 97% used at 10:07"}],
        },
        "ungrounded number and time in a conclusion",
    ),
    (
        {
            **GOOD,
            "conclusions": [
                {
                    **CONCLUSION,
                    "statement": "Root cause: DNS resolution for mysql-primary failed",
                }
            ],
        },
        "an uncited catalog service in a conclusion",
    ),
    (
        {**GOOD, "summary": "The root cause is DNS. Restart CoreDNS. [E1]"},
        "smuggled summary",
    ),
    ({**GOOD, "summary": "Pool exhausted. Pool exhausted. Pool full. Pool out."}, "4 sentences"),
    ({**GOOD, "summary": "payment-service exhausted its pool at 97%."}, "ungrounded summary"),
    (
        {**GOOD, "recommendations": [{"text": "Restart mysql-primary", "evidence_ids": []}]},
        "recommendation naming a service without evidence",
    ),
    (
        {**GOOD, "recommendations": [{"text": "Kill it", "evidence_ids": ["E9"]}]},
        "recommendation citing unknown evidence",
    ),
    (
        {**GOOD, "limitations": ["The root cause is DNS on mysql-primary at 09:15 [E1]"]},
        "a cause smuggled into the limitations",
    ),
]


@pytest.mark.parametrize(("answer", "why"), BAD, ids=[why for _, why in BAD])
def test_an_answer_breaking_a_rule_is_invalid_output_and_never_shown(
    answer: dict[str, Any], why: str
) -> None:
    result = run(answer, answer)
    assert composer_reasons(result) == ["invalid_output", "retry_exhausted"], why
    assert result.orchestration_trace["termination_reason"] == "fallback_composer_retry_exhausted"
    assert result.degraded and "Diagnosis incomplete" in (result.answer or "")
    for text in ("The root cause is DNS", "97%", "Root cause: DNS", "Restart mysql-primary"):
        assert text not in (result.answer or "")


def test_a_corrected_answer_on_the_retry_is_used() -> None:
    result = run(BAD[0][0], GOOD)
    assert composer_reasons(result) == ["invalid_output", "completed"] and not result.degraded


def test_the_models_own_markdown_is_ignored() -> None:
    smuggled = {**GOOD, "answer_markdown": "The root cause is DNS. Restart CoreDNS. [E1]"}
    result = run(smuggled)
    assert composer_reasons(result) == ["completed"]
    assert "The root cause is DNS" not in (result.answer or "")
    assert "answer_markdown" not in result.state["composer_output"]


def test_external_images_links_and_html_are_made_inert() -> None:
    hostile = {
        **GOOD,
        "limitations": [
            "see ![x](http://evil.example/q.png) and [docs](javascript:alert(document.cookie)) "
            "<img src=x>",
            "<script>alert(document.cookie)</script> [ok](https://example.org/runbook)",
        ],
    }
    answer = run(hostile).answer or ""
    assert "![" not in answer and "](" not in answer
    assert "<img" not in answer and "<script" not in answer and "javascript:" not in answer
    assert "x (http://evil.example/q.png)" in answer
    assert "ok (https://example.org/runbook)" in answer
    assert "&lt;script&gt;" in answer


def test_limitations_may_name_what_the_evidence_or_the_question_holds() -> None:
    limitations = [
        "Only 12 waiting requests were logged for payment-service [E1]",
        "Nothing was read about mysql-primary since 10:00",
    ]
    result = run(
        {**GOOD, "limitations": limitations},
        question="Is mysql-primary behind the payment-service slowness since 10:00?",
    )
    assert composer_reasons(result) == ["completed"]
    assert "- Nothing was read about mysql-primary since 10:00" in (result.answer or "")


def test_an_uploaded_documents_origin_is_shown_where_it_is_cited() -> None:
    answer = {
        **GOOD,
        "recommendations": [{"text": "Restart CoreDNS on every node", "evidence_ids": ["E4"]}],
    }
    text = run(answer).answer or ""
    assert "**E4** (reference; uploaded document, notes.md, 2026-11-30T09:00:00Z;" in text


def test_a_chinese_question_gets_a_chinese_rendering() -> None:
    result = run(GOOD, question="为什么 payment-service 变慢了？")
    answer = result.answer or ""
    assert answer.startswith("**payment-service exhausted its connection pool")
    assert "\n**问题:** " in answer and "### 结论" in answer and "遥测" in answer


def test_a_chinese_fallback_is_in_chinese() -> None:
    result = run(BAD[0][0], BAD[0][0], question="为什么 payment-service 变慢了？")
    assert (result.answer or "").startswith("**诊断未完成：经过验证的证据不足以指出原因。**\n")


def test_sentences_do_not_split_decimals() -> None:
    assert sentences("p95 was 4648.4 ms. It rose! Why? 好。是的") == [
        "p95 was 4648.4 ms.",
        "It rose!",
        "Why?",
        "好。",
        "是的",
    ]
    # a quoted log line is one piece of its sentence, whatever full stops it holds
    assert sentences('It logged "db.local. A: read udp". Then it failed.') == [
        'It logged "db.local. A: read udp".',
        "Then it failed.",
    ]


EXPECTED_PROBLEMS = [
    "conclusion cites no telemetry evidence",
    "conclusion cites no telemetry evidence",
    'conclusion ungrounded: "10:07", "97%" not in its evidence',
    'conclusion ungrounded: "mysql-primary" not in its evidence',
    "the summary sentence 'The root cause is DNS.' does not restate the conclusions",
    "the summary has 4 sentences; at most 3",
    'summary ungrounded: "97%" not in its evidence',
    'recommendation ungrounded: "mysql-primary" not in its evidence',
    "recommendation cites evidence that was not verified: ['E9']",
    'limitation ungrounded: "09:15", "mysql-primary" not in its evidence (nor in the question)',
]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [(answer, expected) for (answer, _), expected in zip(BAD, EXPECTED_PROBLEMS, strict=True)],
    ids=[why for _, why in BAD],
)
def test_each_rule_reports_why_the_answer_is_invalid(answer: dict[str, Any], expected: str) -> None:
    result = run(GOOD)
    evidence = result.state["verified_evidence"]
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    store.add("inv-kb", RUNBOOK, tool="lookup_knowledge")
    rules = AnswerRules(
        evidence,
        store.records,
        result.state["verified_executor_output"]["claims"],
        catalog=SERVICES,
    )
    problem = rules.problem(ComposerOutput.model_validate(answer), {"C1", "C2", "C3", "C4"}, "PASS")
    assert problem is not None and problem.startswith(expected)


@pytest.mark.parametrize(
    "summary",
    [
        "payment-service ran out of connection pool capacity.",
        "Likely cause: payment-service exhausted its connection pool (50/50 active).",
    ],
)
def test_a_summary_that_paraphrases_its_conclusions_is_accepted(summary: str) -> None:
    result = run({**GOOD, "summary": summary})
    assert composer_reasons(result) == ["completed"]
    assert (result.answer or "").startswith(f"**{summary}**\n\n")


def test_a_chinese_summary_restating_a_chinese_conclusion_is_accepted() -> None:
    chinese = {
        **GOOD,
        "summary": "payment-service 的连接池已耗尽。",
        "conclusions": [
            {**CONCLUSION, "statement": "payment-service 的连接池耗尽（50/50 active）"}
        ],
    }
    result = run(chinese, question="为什么 payment-service 变慢了？")
    assert composer_reasons(result) == ["completed"]
    assert "payment-service 的连接池已耗尽。" in (result.answer or "")
