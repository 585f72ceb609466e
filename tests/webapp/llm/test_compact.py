"""What a model reads of tool outputs: projections, read_output, and conversation compaction."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from diagnosis_graph.workflow.gatekeeper import check_binding, locate
from diagnosis_graph.workflow.outcomes import Outcome
from webapp.llm import tokens
from webapp.llm.compact import CUT_MARK, LIST_ITEMS, project, read_output_tool, shown_items
from webapp.llm.react import run_react
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.registry import ToolBox, ToolOutput, ToolSpec
from webapp.wiring import offline_diagnoser

from .fake_model import ScriptedModel, answer, calls

SERIES = [[f"2026-01-01T10:{m:02d}:00Z", 10.0 + (m % 3) * 0.1] for m in range(60)]
for _m in range(30, 60):
    SERIES[_m][1] = 90.0 + _m
RECORDS = [
    {"timestamp": f"2026-01-01T10:{n % 60:02d}:00Z", "trace_id": f"{n:04x}aa77ff0011", **line}
    for n, line in enumerate(
        [{"message": f"pool exhausted (active={n}/50)"} for n in range(80)]
        + [{"message": "write rejected by db-01: disk full"}]
        + [{"message": "write rejected by db-02: disk full"}]
    )
]
NOTE = "word " * 400
OUTPUT: dict[str, Any] = {
    "findings": [{"signal": "latency", "onset": "2026-01-01T10:30:00Z", "points": SERIES}],
    "records": RECORDS,
    "note": NOTE,
}


def test_a_long_series_shows_its_onset_and_peak_under_their_recorded_index() -> None:
    shown = project(OUTPUT)["findings"][0]["points"]
    assert shown["length"] == 60
    indices = [index for index, _ in shown_items(shown)]
    assert {29, 30, 59} <= set(indices) and len(indices) <= 4  # before/after the step, peak
    for index, point in shown_items(shown):
        assert locate(OUTPUT, f"$.findings[0].points[{index}]")[0] == point


def test_log_lines_are_shown_one_per_template_and_names_with_digits_stay_apart() -> None:
    records = project(OUTPUT)["records"]
    messages = [record["message"] for _, record in shown_items(records)]
    assert messages == [
        "pool exhausted (active=0/50)",
        "write rejected by db-01: disk full",
        "write rejected by db-02: disk full",
    ]
    for index, record in shown_items(records):
        assert locate(OUTPUT, f"$.records[{index}].message")[0] == record["message"]


def test_short_lists_stay_lists_and_long_text_is_cut_at_a_word() -> None:
    short = list(range(LIST_ITEMS))
    assert project({"xs": short}) == {"xs": short}
    note = project(OUTPUT)["note"]
    assert note.endswith(CUT_MARK) and len(note) <= 1000 + len(CUT_MARK)
    assert NOTE.startswith(note.removesuffix(CUT_MARK))


def test_the_projection_is_a_fraction_of_the_output() -> None:
    raw = json.dumps(OUTPUT)
    assert len(json.dumps(project(OUTPUT))) < len(raw) / 4


def recorded(audit: MemoryAudit) -> str:
    box = ToolBox([big_tool()], audit, "executor")
    return box.call("big", "{}", None).invocation_id


def big_tool() -> ToolSpec:
    return ToolSpec(
        "big", "A large output.", {"type": "object"}, lambda _: ToolOutput(OUTPUT), "telemetry"
    )


def test_read_output_returns_any_part_of_a_recorded_output_by_path() -> None:
    audit = MemoryAudit()
    with run_scope("s1", "run-r"):
        invocation = recorded(audit)
        box = ToolBox([read_output_tool(audit)], audit, "executor")
        args = {"invocation_id": invocation, "path": "$.findings[0].points", "offset": 30}
        page = json.loads(box.call("read_output", json.dumps({**args, "limit": 5}), None).content)
        leaf = box.call(
            "read_output", json.dumps({"invocation_id": invocation, "path": "$.records[81]"}), None
        )
        missing = box.call("read_output", json.dumps({"invocation_id": "inv-nope"}), None)
        bad = box.call("read_output", json.dumps({"invocation_id": invocation, "path": "x"}), None)
    result = page["result"]
    assert result["length"] == 60 and list(result["shown"]) == ["30", "31", "32", "33", "34"]
    assert result["shown"]["30"] == SERIES[30]
    assert json.loads(leaf.content)["result"]["value"] == RECORDS[81]
    assert missing.status == "ERROR" and "no invocation" in json.loads(missing.content)["error"]
    assert bad.status == "ERROR"


def conversation_run(audit: MemoryAudit, rounds: int, budget: tokens.TokenBudget) -> Any:
    # A server that reports no usage: the run is charged (and its steps record) the estimate.
    script = [replace(calls(("big", {})), prompt_tokens=0) for _ in range(rounds)]
    model = ScriptedModel([*script, replace(answer({"done": True}), prompt_tokens=0)])
    with run_scope("s1", "run-c"), tokens.run_ledger(tokens.Ledger(budget)):
        run = run_react(
            model,
            audit,
            "executor",
            [{"role": "user", "content": "go"}],
            ToolBox([big_tool()], audit, "executor"),
        )
    return run, model


def test_compaction_keeps_every_invocation_citable_and_the_prompt_within_budget() -> None:
    audit = MemoryAudit()
    budget = tokens.TokenBudget(per_call=1400, per_run=100_000)
    run, model = conversation_run(audit, 5, budget)
    assert run.outcome is Outcome.COMPLETED
    final = model.requests[-1]
    assert tokens.estimate(final["messages"], final["tools"], None) <= 1400
    bodies = [json.loads(m["content"]) for m in final["messages"] if m["role"] == "tool"]
    assert "result_shape" in bodies[0] and "result" in bodies[-1]  # oldest summarised first
    records = {r.invocation_id: r for r in audit.invocations_for_run("run-c")}
    for body in bodies:  # every result the model saw can be cited against the recorded output
        binding = {
            "source_invocation_id": body["invocation_id"],
            "raw_path": "$.records[81].message",
            "evidence_excerpt": "write rejected by db-02",
        }
        assert check_binding(binding, records).reason is None
    assert all(s["prompt_tokens"] <= 1400 for s in audit.steps if s["status"] == "SUCCESS")


def test_results_of_earlier_rounds_reach_the_model_as_summaries_that_keep_their_ids() -> None:
    audit = MemoryAudit()
    run, model = conversation_run(audit, 3, tokens.TokenBudget())
    assert run.outcome is Outcome.COMPLETED
    final = model.requests[-1]["messages"]
    bodies = [json.loads(m["content"]) for m in final if m["role"] == "tool"]
    assert ["result_shape" in body for body in bodies] == [True, True, False]
    recorded = {r.invocation_id for r in audit.invocations_for_run("run-c")}
    assert {body["invocation_id"] for body in bodies} == recorded and len(recorded) == 3


def test_a_prompt_that_cannot_fit_is_not_sent_and_says_why() -> None:
    audit = MemoryAudit()
    run, model = conversation_run(audit, 1, tokens.TokenBudget(per_call=50, per_run=1000))
    assert run.outcome is Outcome.NON_RETRYABLE_FAILED
    assert "LLM_PROMPT_TOKEN_BUDGET" in (run.detail or "")
    assert len(model.requests) == 1  # the first call fit; the one with the result could not
    first, refused = audit.steps
    assert first["status"] == "SUCCESS" and first["prompt_tokens"] <= 50
    assert refused["status"] == "FAILED" and "LLM_PROMPT_TOKEN_BUDGET" in refused["error"]


@pytest.mark.parametrize("per_run", [1500, 2400])
def test_a_run_budget_stops_the_loop_before_the_call_that_would_pass_it(per_run: int) -> None:
    audit = MemoryAudit()
    run, _ = conversation_run(audit, 5, tokens.TokenBudget(per_call=1400, per_run=per_run))
    assert run.outcome is Outcome.NON_RETRYABLE_FAILED
    assert "LLM_RUN_TOKEN_BUDGET" in (run.detail or "")
    sent = sum(s["prompt_tokens"] for s in audit.steps if s["status"] == "SUCCESS")
    assert sent <= per_run


def test_under_a_tight_budget_every_invocation_the_answer_cites_resolves() -> None:
    diagnoser = offline_diagnoser()
    diagnoser.invoker.token_budget = tokens.TokenBudget(per_call=7_000, per_run=150_000)
    result = diagnoser.diagnose("Why is payment-service slow since 10:00?")
    steps = [s for s in diagnoser.audit.steps if s["run_id"] == result.run_id]  # type: ignore[attr-defined]
    assert max(s["prompt_tokens"] for s in steps) <= 7_000
    tool_messages = [
        json.loads(m["content"])
        for s in steps
        if s["agent_name"] == "executor"
        for m in s["model_input"]["messages"]
        if m["role"] == "tool"
    ]
    assert any("result_shape" in body for body in tool_messages)  # compaction happened
    recorded = {r.invocation_id: r for r in diagnoser.audit.invocations_for_run(result.run_id)}
    cited = set(re.findall(r"inv-[0-9a-f]{16}", result.answer or ""))
    assert cited and cited <= set(recorded)
    evaluation = result.self_evaluation["rule_evaluation"]
    assert evaluation["all_cited_evidence_verified"] is True
