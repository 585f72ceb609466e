"""The answer an on-call engineer reads: the headline first, at most three citations per
sentence (the closest evidence; the rest stays listed), text shortened only at a sentence,
clause or word end, and signal names written as words."""

from __future__ import annotations

import re
from typing import Any

from diagnosis_graph.workflow.prose import (
    MAX_CHIPS,
    cited_chips,
    first_sentence,
    shorten,
    signal_words,
)
from diagnosis_graph.workflow.render import headline_of, render_answer, render_fallback


def item(n: int, excerpt: str, role: str = "telemetry", path: str = "$.a") -> dict[str, Any]:
    return {
        "evidence_id": f"E{n}",
        "source_invocation_id": f"inv-{n:04d}",
        "raw_path": path,
        "evidence_excerpt": excerpt,
        "tool": "detect_anomalies" if role == "telemetry" else "lookup_knowledge",
        "role": role,
    }


EVIDENCE = [
    item(1, "checkout-service", path="$.service"),
    item(2, "latency_p99_ms", path="$.findings[0].signal"),
    item(3, "2026-11-30T10:00:00Z", path="$.findings[0].onset"),
    item(4, "181.2", path="$.findings[0].baseline.median"),
    item(5, "4312.0", path="$.findings[0].incident.peak"),
    item(6, "connection pool exhausted (50/50)", path="$.patterns[0].example"),
    item(7, "Database connection pool exhaustion", role="reference"),
]
STATEMENT = "checkout-service p99 latency rose from 181.2 ms to 4312.0 ms from 10:00 UTC."


def output(**changes: Any) -> dict[str, Any]:
    base = {
        "summary": "db-main ran out of connections: slow queries held them. Checkout queued.",
        "conclusions": [
            {"statement": STATEMENT, "evidence_ids": [f"E{n}" for n in range(1, 8)]},
            {"statement": "The pool log says so.", "evidence_ids": ["E6"]},
        ],
        "limitations": [],
        "recommendations": [],
    }
    return {**base, **changes}


def test_the_answer_opens_with_the_summarys_first_sentence_as_its_headline() -> None:
    answer = render_answer("why is checkout slow?", output(), EVIDENCE)  # type: ignore[arg-type]
    lines = answer.splitlines()
    assert lines[0] == "**db-main ran out of connections: slow queries held them.**"
    assert lines[2] == "Checkout queued."
    assert headline_of(answer) == "db-main ran out of connections: slow queries held them."


def test_a_full_stop_inside_a_quoted_log_line_ends_no_sentence() -> None:
    summary = 'dns failed: it logged "errors: 2 db.svc.local. A: read udp :53: i/o timeout". More.'
    assert first_sentence(summary) == (
        'dns failed: it logged "errors: 2 db.svc.local. A: read udp :53: i/o timeout".'
    )
    assert first_sentence("它记录了 “a. b” 之后。其余。") == "它记录了 “a. b” 之后。"


def test_a_sentence_shows_at_most_three_chips_the_closest_to_it() -> None:
    answer = render_answer("why is checkout slow?", output(), EVIDENCE)  # type: ignore[arg-type]
    for line in answer.split("### Evidence")[0].splitlines():
        assert len(re.findall(r"\[E\d+\]", line)) <= MAX_CHIPS, line
    first = next(line for line in answer.splitlines() if line.startswith("1. "))
    # The onset time, baseline and peak it states win over the service name and signal.
    assert first.endswith("[E3][E4][E5]")
    # Every cited item stays in the evidence list.
    listed = re.findall(r"^- \*\*(E\d+)\*\*", answer, re.MULTILINE)
    assert listed == [f"E{n}" for n in range(1, 8)]


def test_a_conclusion_keeps_a_telemetry_chip_when_reference_evidence_reads_closer() -> None:
    evidence = {e["evidence_id"]: e for e in EVIDENCE}
    ids = ["E7", "E1", "E2", "E6"]
    text = "Database connection pool exhaustion on checkout-service"
    chips = cited_chips(text, ids, evidence)
    assert len(chips) == MAX_CHIPS and "E7" not in chips
    as_telemetry = {**evidence, "E7": {**evidence["E7"], "role": "telemetry"}}
    assert cited_chips(text, ids, as_telemetry)[0] == "E7"


def test_a_long_excerpt_is_cut_at_a_clause_or_word_end_never_inside_a_word() -> None:
    text = "Restart or scale out the slow dependency; raise its heap or fix the memory leak " * 5
    cut = shorten(text, 130)
    assert cut.endswith(" …") and len(cut) <= 132
    assert cut[:-2].endswith("dependency")  # the clause end, the ";" dropped
    words = "alpha " * 60
    assert shorten(words, 100)[:-2].split()[-1] == "alpha"
    assert shorten("short enough.", 100) == "short enough."


def test_a_recommendation_is_rendered_whole_and_unsourced_advice_is_marked() -> None:
    step = (
        "Restart or scale out the slow dependency; raise its heap or fix the memory leak behind "
        "the GC pauses, then watch the p99 latency of its callers for the next 30 minutes "
        "before closing the incident, and write down what changed. " * 2
    ).strip()
    rendered = render_answer(
        "why?",
        output(
            recommendations=[
                {"text": step, "evidence_ids": ["E7"]},
                {"text": "Look.", "evidence_ids": []},
            ]
        ),
        EVIDENCE,  # type: ignore[arg-type]
    )
    assert f"1. {step} [E7]" in rendered.replace("\\", "")
    assert "2. Look. _(general advice, no cited evidence)_" in rendered


def test_signal_names_are_written_as_words_in_the_evidence_list() -> None:
    answer = render_answer("why is checkout slow?", output(), EVIDENCE)  # type: ignore[arg-type]
    assert "$.findings\\[0\\].signal): latency p99 (ms) (`latency_p99_ms`)" in answer
    assert signal_words("error_rate") == "error rate"
    assert signal_words("mysql_slow_queries_per_sec") == "mysql slow queries per second"
    assert signal_words("http_requests_total") == "http requests"


def test_no_conclusion_and_unknown_service_headlines_say_so_plainly() -> None:
    none = render_answer("why?", output(conclusions=[]), EVIDENCE)  # type: ignore[arg-type]
    assert none.startswith("**Not enough evidence: the verified evidence does not support")
    unknown = render_answer(
        "why is search slow?",
        output(conclusions=[]),
        [],
        unknown=[{"name": "search", "suggestions": ["checkout-service"]}],
    )
    assert headline_of(unknown) == (
        "Unknown service: search is not a known service: this system has no telemetry for it. "
        "Did you mean checkout-service?"
    )
    chinese = render_fallback("为什么 search 变慢?", "原因", [])
    assert headline_of(chinese) == "诊断未完成：经过验证的证据不足以指出原因。"


def test_the_headline_of_model_prose_and_of_nothing() -> None:
    assert headline_of("\n\n## The pool \\_is\\_ full &amp; slow\n\nmore") == (
        "The pool _is_ full & slow"
    )
    assert headline_of("") is None and headline_of(None) is None
