"""The worked example of the evidence contract (v2), run as written in docs/evidence.md.

If this test fails, docs/evidence.md no longer describes what the gatekeeper and grounding do:
fix the page together with the code.
"""

from __future__ import annotations

from typing import Any

from diagnosis_graph.workflow.evaluation import grounding_evaluation
from diagnosis_graph.workflow.gatekeeper import run_gatekeeper
from diagnosis_graph.workflow.ports import InvocationRecord
from diagnosis_graph.workflow.projection import project_verified

from .fakes import ROLES, SERVICES

LOGS_ID, METRICS_ID = "inv-7f3a", "inv-91c2"
LOGS_ARGS = {"service": "payment-service", "level": "ERROR", "start": "2026-11-30T10:00:00Z"}
LOGS_OUTPUT = {
    "records": [
        {
            "timestamp": "2026-11-30T10:02:00Z",
            "service": "payment-service",
            "level": "ERROR",
            "message": "connection pool exhausted (50/50 active, 12 waiting)",
        }
    ],
    "total": 1,
}
METRICS_OUTPUT = {"summary": {"min": 121.0, "max": 4648.4, "unit": "ms"}}
RECORDS = [
    InvocationRecord(LOGS_ID, "run-1", "query_logs", "SUCCESS", LOGS_OUTPUT, LOGS_ARGS),
    InvocationRecord(METRICS_ID, "run-1", "query_metrics", "SUCCESS", METRICS_OUTPUT),
]
MESSAGE = "$.records[0].message"
FIRST_EXCERPT = "connection pool exhausted (50/50 active"


def check(*claims: tuple[str, str, str, str]) -> Any:
    output = {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": f"C{n}",
                "statement": statement,
                "critical": True,
                "bindings": [
                    {"source_invocation_id": i, "raw_path": p, "evidence_excerpt": excerpt}
                ],
            }
            for n, (statement, i, p, excerpt) in enumerate(claims, 1)
        ],
        "summary": "s",
    }
    gate = run_gatekeeper(output, RECORDS, "run-1", roles=ROLES, catalog=SERVICES)
    return output, gate


def test_the_binding_table() -> None:
    _, gate = check(
        ("pool exhausted", LOGS_ID, MESSAGE, FIRST_EXCERPT),
        ("pool exhausted", LOGS_ID, MESSAGE, "ool exh"),
        ("pool exhausted", LOGS_ID, MESSAGE, "onnection pool exhausted"),
        ("pool exhausted", LOGS_ID, "$.records", "connection pool exhausted"),
        ("pool exhausted", LOGS_ID, "$", "connection pool exhausted"),
        ("pool exhausted", METRICS_ID, "$.summary", "connection pool exhausted"),
        ("p95 peaked", METRICS_ID, "$.summary.max", "4"),
        ("p95 peaked", METRICS_ID, "$.summary.max", "4648"),
        ("p95 peaked", METRICS_ID, "$.summary.max", "4648.4"),
    )
    assert len(FIRST_EXCERPT) == 39
    assert [c["bindings"][0]["reason"] for c in gate["claims"]] == [
        None,
        "excerpt_too_short",
        "excerpt_mismatch",
        "raw_path_not_leaf",
        "raw_path_not_leaf",
        "raw_path_not_leaf",
        "excerpt_mismatch",
        "excerpt_mismatch",
        None,
    ]


def test_the_grounded_and_the_ungrounded_claim() -> None:
    output, gate = check(
        (
            "payment-service ran out of pool connections at 10:02 (50/50 active, 12 waiting)",
            LOGS_ID,
            MESSAGE,
            FIRST_EXCERPT,
        ),
        ("97% of payment-service requests failed from 10:02", LOGS_ID, MESSAGE, FIRST_EXCERPT),
    )
    grounded, ungrounded = gate["claims"]
    assert grounded["verified"] and grounded["ungrounded_tokens"] == []
    assert ungrounded["bindings"][0]["status"] == "VERIFIED" and not ungrounded["verified"]
    assert ungrounded["grounding_reason"] == 'ungrounded: "97%" not in its evidence'
    projected, evidence = project_verified(output, gate)
    assert [c["claim_id"] for c in projected["claims"]] == ["C1"]  # C2 reaches no later agent
    assert [e["role"] for e in evidence] == ["telemetry"]
    assert grounding_evaluation(gate)["groundedness"] == 0.5
