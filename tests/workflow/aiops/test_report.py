"""The AIOps report cites only verified evidence; model prose and made-up ids never reach it."""

from __future__ import annotations

import re
from typing import Any

from diagnosis_graph.workflow.aiops.evaluation import aiops_rule_evaluation
from diagnosis_graph.workflow.aiops.report import inert, render_alert_section
from diagnosis_graph.workflow.render import evidence_lines, safe_text

from .harness import EXCERPT, alert, composer_output, executor_output, harness, healthy_script


def cited(answer: str) -> set[str]:
    return set(re.findall(r"\[([A-Z]\d+-E\d+)\]", answer))


def test_the_report_renders_validated_conclusions_not_the_composers_markdown() -> None:
    script = healthy_script()
    script["composer"] = [composer_output("E1", statement="The pool is exhausted [E7].")]
    run = harness([alert("PoolA")], script=script).run()
    answer = run.answer or ""
    assert (
        "**Root cause:** The connection pool is exhausted. The pool is exhausted. [A1-E1]"
    ) in answer
    assert answer.startswith("**1 firing alert(s), 1 diagnosed with verified evidence; start")
    assert "Model prose" not in answer and "E7" not in answer
    assert cited(answer) == {"A1-E1"}
    assert (
        "- **A1-E1** (telemetry; query\\_logs inv-logs $.records\\[0\\].message): "
        + safe_text(EXCERPT)
    ) in answer


def test_a_claim_bound_to_a_made_up_invocation_never_reaches_the_report() -> None:
    made_up = executor_output("inv-does-not-exist", "DNS resolution failed for every host")
    made_up["claims"][0].update(claim_id="C2", statement="Root cause: DNS. Restart CoreDNS.")
    output = executor_output()
    output["claims"].append(made_up["claims"][0])
    script = healthy_script()
    script["executor"] = [output]
    run = harness([alert("PoolA")], script=script).run()
    answer = run.answer or ""
    assert "CoreDNS" not in answer and "DNS resolution" not in answer
    [investigation] = run.state["investigations"]
    assert [e["evidence_id"] for e in investigation["evidence"]] == ["A1-E1"]
    assert investigation["rule_evaluation"]["gatekeeper"]["verdict"] == "LOW_CONFID"
    assert cited(answer) == {"A1-E1"}


def test_a_composer_citing_an_unverified_id_falls_back_and_the_id_is_not_cited() -> None:
    script = healthy_script()
    script["composer"] = [composer_output("E1", "E99")]  # both attempts cite E99
    run = harness([alert("PoolA")], script=script).run()
    [investigation] = run.state["investigations"]
    assert investigation["termination_reason"] == "fallback_composer_retry_exhausted"
    answer = run.answer or ""
    assert "E99" not in answer and "**Root cause:**" not in answer
    assert "**Not diagnosed:**" in answer and "**A1-E1**" in answer  # evidence still listed
    assert cited(answer) == set()
    rules = aiops_rule_evaluation(run.state, [], None)
    assert rules["alerts_covered"] == 0 and rules["alerts_not_covered"] == ["PoolA"]
    assert rules["citations_total"] == 0 and rules["all_citations_verified"]


def _investigation(**composer: Any) -> dict[str, Any]:
    return {
        "alert_id": "A1",
        "alert": alert("PoolA"),
        "why_not_composed": None,
        "evidence": [
            {
                "evidence_id": "A1-E1",
                "tool": "query_logs",
                "role": "telemetry",
                "source_invocation_id": "inv-logs",
                "raw_path": "$.records[0].message",
                "evidence_excerpt": EXCERPT,
            },
            {
                "evidence_id": "A1-E2",
                "tool": "lookup_knowledge",
                "role": "reference",
                "source_invocation_id": "inv-doc",
                "raw_path": "$.documents[0].title",
                "evidence_excerpt": "Database connection pool exhaustion",
            },
        ],
        "composer": {"summary": None, "limitations": [], "recommendations": [], **composer},
    }


def test_a_section_whose_composer_concluded_nothing_is_not_diagnosed() -> None:
    investigation = _investigation(conclusions=[])
    text = "\n".join(render_alert_section(investigation))
    assert "**Not diagnosed:** the verified evidence supports no cause." in text


def test_text_is_inert_html_and_images_do_not_render() -> None:
    assert inert("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert inert("see ![x](http://evil/q.png)") == "see x (http://evil/q.png)"
    assert inert("a [link](http://evil/) here") == "a link (http://evil/) here"
    assert inert("run `KILL <id>` now <b>") == "run \\`KILL &lt;id&gt;\\` now &lt;b&gt;"
    assert inert("two\nlines") == "two lines"


def test_evidence_that_carries_its_origin_shows_it() -> None:
    investigation = _investigation(conclusions=[])
    investigation["evidence"][1]["origin"] = {"kind": "upload", "file_name": "notes.md"}
    text = "\n".join(evidence_lines(investigation["evidence"], "en"))
    assert "(reference; uploaded document, notes.md; lookup\\_knowledge inv-doc" in text
    assert "$.documents\\[0\\].title): Database connection" in text


def test_a_chinese_request_gets_a_chinese_report_and_chinese_alert_questions() -> None:
    h = harness([alert("PoolA")])
    run = h.run("调查正在触发的告警")
    answer = run.answer or ""
    assert answer.startswith(
        "**1 个告警正在触发，1 个已用经过验证的证据完成诊断；请先处理 PoolA。**"
    )
    assert "**根因:**" in answer and "### 总体评估" in answer and "### 已验证的证据" in answer
    assert "| # | 告警 | 级别 | 服务 | 开始时间 | 状态 | 诊断 |" in answer
    [question] = [p["question"] for p in h.invoker.payloads("planner")]
    assert question.startswith("为什么 payment-service 从 2026-11-30T09:48:00Z 开始触发 PoolA？")


def test_an_alert_paragraph_shows_at_most_three_chips_and_all_evidence_stays_listed() -> None:
    investigation = _investigation(
        conclusions=[
            {"statement": "Pool exhausted (50/50 active).", "evidence_ids": ["A1-E1"] * 1},
        ]
    )
    for n in range(3, 9):
        investigation["evidence"].append(
            {**investigation["evidence"][0], "evidence_id": f"A1-E{n}"}
        )
    investigation["composer"]["conclusions"][0]["evidence_ids"] = [
        f"A1-E{n}" for n in (1, 3, 4, 5, 6, 7, 8)
    ]
    [paragraph] = [x for x in render_alert_section(investigation) if x.startswith("**Root")]
    assert len(cited(paragraph)) == 3
    assert len(evidence_lines(investigation["evidence"], "en")) == 8


def test_a_failed_read_of_an_alert_is_named_in_its_section() -> None:
    investigation = _investigation(conclusions=[])
    investigation["failed"] = [
        {
            "tool": "query_metrics",
            "target": "payment-service",
            "error": "Prometheus at http://prom:9090 is unreachable (ConnectError: refused)",
        }
    ]
    text = "\n".join(render_alert_section(investigation))
    assert (
        "**Could not be read:**\n\n- Prometheus at http://prom:9090 is unreachable "
        "(ConnectError: refused) (query\\_metrics payment-service)"
    ) in text


def test_an_action_without_reference_evidence_is_marked_general_advice() -> None:
    investigation = _investigation(
        conclusions=[{"statement": "Pool exhausted.", "evidence_ids": ["A1-E1"]}],
        recommendations=[{"text": "Look at the pool.", "evidence_ids": []}],
    )
    text = "\n".join(render_alert_section(investigation))
    assert "1. Look at the pool. _(general advice, no cited evidence)_" in text
