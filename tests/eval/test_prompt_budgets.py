"""Every agent's recorded prompt stays within the default prompt budget, on the demo questions
and on generated worlds' questions (every incident family), with no call refused; the simple
flow's assistant on knowledge questions. A demo diagnosis's whole prompt (every call's
messages, tool definitions and response schema, as its steps record them) stays under
``DIAGNOSIS_TOKENS`` at the median."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from demo.scenarios import scenario_records
from eval.questions import world_cases
from eval.world import World
from webapp.llm.tokens import DEFAULT_PROMPT_TOKENS
from webapp.services.simple import SimpleChat
from webapp.wiring import offline_diagnoser

AGENTS = ("planner", "executor", "verifier", "composer", "assistant")
#: Questions the simple flow's assistant answers from the runbooks.
SIMPLE = ("How do I fix database connection pool exhaustion?", "数据库连接池耗尽怎么处理？")
#: The median prompt tokens of a demo diagnosis, all its calls together, may not exceed this.
DIAGNOSIS_TOKENS = 30_000
#: Questions asked per generated world (its incidents' direct, time and Chinese questions first).
PER_WORLD = 12


@pytest.fixture(scope="module")
def prompts(worlds: list[tuple[World, Path]]) -> dict[str, list[int]]:
    """Recorded prompt tokens of every step, by agent, over every diagnosis asked."""
    asked: list[tuple[Path | None, str]] = [(None, r["question"]) for r in scenario_records()]
    for world, folder in worlds:
        cases = world_cases(world, [], PER_WORLD)[:PER_WORLD]
        asked += [(folder, case.turns[-1]) for case in cases]
    found: dict[str, list[int]] = defaultdict(list)
    diagnosers = {where: offline_diagnoser(where) for where in {f for f, _ in asked}}
    for where, question in asked:
        diagnoser = diagnosers[where]
        result = diagnoser.diagnose(question)
        for step in diagnoser.audit.steps:  # type: ignore[attr-defined]
            if step["run_id"] == result.run_id:
                assert step["status"] == "SUCCESS", (question, step["error"])
                found[step["agent_name"]].append(step["prompt_tokens"])
    demo = diagnosers[None]
    simple = SimpleChat(demo.model, demo.audit, lambda: demo.tools)
    for n, question in enumerate(SIMPLE):
        simple.answer(question, [], session_id="budget", run_id=f"run-simple-{n}")
    steps = demo.audit.steps  # type: ignore[attr-defined]
    found["assistant"] += [s["prompt_tokens"] for s in steps if s["agent_name"] == "assistant"]
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_every_prompt_of_the_agent_is_within_the_default_budget(
    prompts: dict[str, list[int]], agent: str
) -> None:
    assert prompts[agent], f"no {agent} step recorded"
    assert max(prompts[agent]) <= DEFAULT_PROMPT_TOKENS


def test_a_demo_diagnosis_sends_a_bounded_prompt_in_all() -> None:
    diagnoser = offline_diagnoser()
    totals = []
    for record in scenario_records():
        result = diagnoser.diagnose(record["question"])
        steps = [s for s in diagnoser.audit.steps if s["run_id"] == result.run_id]  # type: ignore[attr-defined]
        assert {s["agent_name"] for s in steps} >= {"planner", "executor", "composer"}
        assert max(s["prompt_tokens"] for s in steps) <= DEFAULT_PROMPT_TOKENS
        totals.append(sum(s["prompt_tokens"] for s in steps))
    assert statistics.median(totals) <= DIAGNOSIS_TOKENS, totals
