"""The evidence gatekeeper: raw_path grammar, excerpt matching, every reason code, verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis_graph.workflow.gatekeeper import (
    GATEKEEPER_VERSION,
    GatekeeperResult,
    RawPathError,
    locate,
    parse_raw_path,
    run_gatekeeper,
)

from .fakes import LOGS, METRICS, MemoryInvocations, claim, evidence


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("$", []),
        ("$.records[0].message", ["records", 0, "message"]),
        ('$["records"][10]["trace_id"]', ["records", 10, "trace_id"]),
        ('$.a_b-c["we\\"ird key\\u00e9"]', ["a_b-c", 'we"ird key\u00e9']),
        ("$._x.y9", ["_x", "y9"]),
    ],
)
def test_raw_path_grammar_accepts_names_keys_and_indexes(path: str, steps: list[Any]) -> None:
    assert parse_raw_path(path) == tuple(steps)


@pytest.mark.parametrize(
    "path",
    [
        "",
        "records[0]",
        "$.records[*]",
        "$.records[-1]",
        "$.records[01]",
        "$..message",
        "$.records[0:2]",
        "$.9lives",
        "$[?(@.level)]",
        "$['single']",
        '$["unterminated]',
        '$["bad \\x escape"]',
        "$.records[0].",
        " $.records",
    ],
)
def test_raw_path_grammar_rejects_everything_else(path: str) -> None:
    with pytest.raises(RawPathError):
        parse_raw_path(path)


def test_resolve_walks_dicts_and_lists_only() -> None:
    assert locate(LOGS, "$.records[1].level")[0] == "WARN"
    assert locate(METRICS, "$.series[0].points[1]")[0] == ["2026-11-30T10:05:00Z", 3812.5]
    for missing in ("$.records[2]", "$.nope", "$.total[0]", "$.records[0].message.x"):
        with pytest.raises(LookupError):
            locate(LOGS, missing)


def gate(
    *claims: dict[str, Any], store: MemoryInvocations, run_id: str = "run-1"
) -> GatekeeperResult:
    return run_gatekeeper(evidence(*claims), store.invocations_for_run(run_id), run_id)


def reasons(result: GatekeeperResult) -> list[str | None]:
    return [b["reason"] for c in result["claims"] for b in c["bindings"]]


@pytest.fixture
def store() -> MemoryInvocations:
    store = MemoryInvocations()
    store.add("inv-logs", LOGS)
    store.add("inv-metrics", METRICS, tool="query_metrics")
    store.add("inv-failed", {"error": "backend down"}, status="ERROR")
    store.add("inv-blocked", {"error": "budget"}, status="BLOCKED")
    store.add("inv-other-run", LOGS, run_id="run-2")
    return store


def test_exact_excerpts_pass(store: MemoryInvocations) -> None:
    result = gate(
        claim("C1", ("inv-logs", "$.records[0].message", "connection pool exhausted")),
        claim("C2", ("inv-metrics", "$.summary.max", "3812.5")),
        store=store,
    )
    assert result["verdict"] == "PASS" and result["verifier_verdict_ceiling"] == "PASS"
    assert (result["verified_binding_count"], result["verified_claim_count"]) == (2, 2)
    assert result["gatekeeper_version"] == GATEKEEPER_VERSION
    assert result["claims"][1]["bindings"][0]["tool"] == "query_metrics"


def test_whitespace_is_normalised_on_both_sides(store: MemoryInvocations) -> None:
    result = gate(
        claim("C1", ("inv-logs", "$.records[1].message", "  slow request POST\n/payments ")),
        store=store,
    )
    assert reasons(result) == [None]


def test_non_string_values_are_matched_as_compact_json(store: MemoryInvocations) -> None:
    result = gate(
        claim("C1", ("inv-metrics", "$.series[0].points[1]", '["2026-11-30T10:05:00Z",3812.5]')),
        claim("C2", ("inv-logs", "$.total", "2")),
        claim("C3", ("inv-logs", "$.truncated", "false")),
        claim("C4", ("inv-metrics", "$.series[0].points[1]", '["2026-11-30T10:05:00Z", 3812.5]')),
        store=store,
    )
    assert reasons(result) == [None, None, None, "excerpt_mismatch"]


@pytest.mark.parametrize(
    ("binding", "reason"),
    [
        (("inv-nope", "$.records[0].message", "pool"), "invocation_not_found"),
        (("inv-other-run", "$.records[0].message", "pool"), "invocation_not_found"),
        (("inv-failed", "$.error", "backend down"), "invocation_failed"),
        (("inv-blocked", "$.error", "budget"), "invocation_failed"),
        (("inv-logs", "$.records[*].message", "pool"), "raw_path_invalid"),
        (("inv-logs", "$.records[9].message", "pool"), "raw_path_not_found"),
        (("inv-logs", "$", "pool"), "raw_path_not_leaf"),
        (("inv-logs", "$.records", "pool"), "raw_path_not_leaf"),
        (("inv-logs", "$.records[0]", "connection pool exhausted"), "raw_path_not_leaf"),
        (("inv-metrics", "$.summary", "unit"), "raw_path_not_leaf"),
        (("inv-metrics", "$.series[0].points", "3812.5"), "raw_path_not_leaf"),
        (("inv-logs", "$.records[0].message", " \n\t "), "excerpt_empty"),
        (("inv-logs", "$.records[0].message", "a"), "excerpt_too_short"),
        (("inv-logs", "$.records[0].message", "ool exh"), "excerpt_too_short"),
        (("inv-logs", "$.records[0].message", "pool"), "excerpt_too_short"),
        (("inv-logs", "$.records[0].message", "pool exhausted (40/50"), "excerpt_mismatch"),
        (("inv-logs", "$.records[0].message", "Connection pool exhausted"), "excerpt_mismatch"),
        (("inv-logs", "$.records[0].message", "onnection pool exhausted"), "excerpt_mismatch"),
        (("inv-logs", "$.records[0].message", "connection pool exhaust"), "excerpt_mismatch"),
        (("inv-metrics", "$.summary.max", "3"), "excerpt_mismatch"),
        (("inv-metrics", "$.summary.max", "3812"), "excerpt_mismatch"),
        (("inv-metrics", "$.summary.max", "3812.50"), "excerpt_mismatch"),
        (("inv-logs", "$.truncated", "False"), "excerpt_mismatch"),
        (("inv-metrics", "$.series[0].points[1]", "3812.5"), "excerpt_mismatch"),
    ],
)
def test_every_reason_code(
    store: MemoryInvocations, binding: tuple[str, str, str], reason: str
) -> None:
    result = gate(claim("C1", binding), store=store)
    assert reasons(result) == [reason]
    assert result["verdict"] == "REJECT"
    assert result["reason_counts"] == {reason: 1}


def test_reason_codes_are_checked_in_the_spec_order(store: MemoryInvocations) -> None:
    # Each binding fails several checks; the first in SPEC order is the one reported.
    result = gate(
        claim("C1", ("inv-failed", "$[", "")),  # failed invocation, bad path, empty excerpt
        claim("C2", ("inv-logs", "$.records[0", "")),  # bad path, empty excerpt
        claim("C3", ("inv-logs", "$.nope", "")),  # not found, empty excerpt
        claim("C4", ("inv-logs", "$", "")),  # not a leaf, empty excerpt
        claim("C5", ("inv-logs", "$.records[0].message", " ")),  # empty beats too short
        claim("C6", ("inv-logs", "$.records[0].message", "zz")),  # too short beats mismatch
        store=store,
    )
    assert reasons(result) == [
        "invocation_failed",
        "raw_path_invalid",
        "raw_path_not_found",
        "raw_path_not_leaf",
        "excerpt_empty",
        "excerpt_too_short",
    ]


def test_a_short_excerpt_verifies_when_it_is_the_whole_value(store: MemoryInvocations) -> None:
    result = gate(
        claim("C1", ("inv-logs", "$.records[0].level", "ERROR")),
        claim("C2", ("inv-logs", "$.records[0].trace_id", "ab12")),
        claim("C3", ("inv-logs", "$.total", "2")),
        claim("C4", ("inv-metrics", "$.series[0].labels.service", "payment-service")),
        store=store,
    )
    assert reasons(result) == [None, None, None, None]


def test_a_substring_must_start_and_end_on_token_boundaries(store: MemoryInvocations) -> None:
    result = gate(
        claim("C1", ("inv-logs", "$.records[0].message", "(50/50 active, 12 waiting)")),
        claim("C2", ("inv-logs", "$.records[0].message", "pool exhausted")),
        claim("C3", ("inv-logs", "$.records[0].message", "50/50 active")),
        store=store,
    )
    assert reasons(result) == [None, None, None]


def test_excerpts_and_values_are_compared_in_unicode_nfc() -> None:
    store = MemoryInvocations()
    store.add("inv-1", {"message": "caf\u00e9 r\u00e9sum\u00e9 service d\u00e9grad\u00e9"})
    decomposed = "cafe\u0301 re\u0301sume\u0301"
    result = gate(claim("C1", ("inv-1", "$.message", decomposed)), store=store)
    assert reasons(result) == [None]


def test_an_invocation_of_another_run_is_not_found_even_with_a_valid_excerpt(
    store: MemoryInvocations,
) -> None:
    result = gate(
        claim("C1", ("inv-other-run", "$.records[0].message", "connection pool exhausted")),
        store=store,
        run_id="run-1",
    )
    assert reasons(result) == ["invocation_not_found"]
    same = gate(
        claim("C1", ("inv-other-run", "$.records[0].message", "connection pool exhausted")),
        store=store,
        run_id="run-2",
    )
    assert reasons(same) == [None]


def test_some_bindings_verifying_gives_low_confidence(store: MemoryInvocations) -> None:
    result = gate(
        claim(
            "C1",
            ("inv-logs", "$.records[0].message", "pool exhausted"),
            ("inv-logs", "$.records[0].message", "disk full"),
        ),
        claim("C2", ("inv-nope", "$.x", "y")),
        store=store,
    )
    assert result["verdict"] == "LOW_CONFID" and result["verifier_verdict_ceiling"] == "LOW_CONFID"
    assert [c["verified"] for c in result["claims"]] == [True, False]
    assert (result["binding_count"], result["verified_binding_count"]) == (3, 1)


@pytest.mark.parametrize("output", [None, {"claims": "nope"}, {"summary": "no claims"}])
def test_missing_or_invalid_output_is_rejected(store: MemoryInvocations, output: Any) -> None:
    result = run_gatekeeper(output, store.invocations_for_run("run-1"), "run-1")
    assert result["verdict"] == "REJECT" and result["error"]


def test_a_claim_without_bindings_is_unverified_and_lowers_the_verdict(
    store: MemoryInvocations,
) -> None:
    result = gate(claim("C1"), claim("C2", ("inv-logs", "$.total", "2")), store=store)
    assert [c["verified"] for c in result["claims"]] == [False, True]
    assert result["verdict"] == "LOW_CONFID"
