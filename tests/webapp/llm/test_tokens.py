"""Token estimates, budgets per call and per run, and the price table."""

from __future__ import annotations

import time

import pytest

from diagnosis_graph.workflow.outcomes import Outcome
from webapp.config import Settings, SettingsError
from webapp.llm.tokens import Ledger, PriceTable, TokenBudget, count_text, estimate
from webapp.llm.types import LLMError, Message
from webapp.wiring import offline_diagnoser


def test_estimate_counts_four_ascii_characters_a_token_and_cjk_one_each() -> None:
    assert count_text("") == 0
    assert count_text("abcd") == 1
    assert count_text("abcde") == 2
    assert count_text("数据库") == 3
    assert count_text("db 数据库") == 4  # "db " is one token, each CJK character one


def test_estimate_covers_messages_tool_calls_tools_and_format() -> None:
    messages: list[Message] = [
        {"role": "user", "content": "x" * 400},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "y" * 40}}],
        },
    ]
    bare = estimate(messages)
    assert bare == (4 + 100) + (4 + 11)
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    assert estimate(messages, tools) > bare
    assert estimate(messages, tools, {"type": "json_object"}) > estimate(messages, tools)
    assert estimate(messages, tools) == estimate(list(messages), list(tools))  # deterministic


def test_a_prompt_over_the_call_budget_is_refused_naming_the_setting() -> None:
    ledger = Ledger(TokenBudget(per_call=100, per_run=1000))
    ledger.admit(100)
    with pytest.raises(LLMError) as caught:
        ledger.admit(101)
    assert caught.value.kind == "token_budget"
    assert caught.value.outcome is Outcome.NON_RETRYABLE_FAILED
    assert caught.value.attempts == 0
    assert "LLM_PROMPT_TOKEN_BUDGET" in str(caught.value)


def test_a_run_is_refused_the_call_that_would_pass_its_budget() -> None:
    ledger = Ledger(TokenBudget(per_call=100, per_run=250))
    ledger.charge(100)
    ledger.charge(100)
    assert ledger.room() == 50
    ledger.admit(50)
    with pytest.raises(LLMError, match="LLM_RUN_TOKEN_BUDGET"):
        ledger.admit(51)


def test_no_call_is_sent_after_the_run_deadline() -> None:
    ledger = Ledger(TokenBudget(), deadline=time.monotonic() - 1)
    with pytest.raises(LLMError) as caught:
        ledger.admit(1)
    assert (caught.value.kind, caught.value.attempts) == ("deadline", 0)
    assert "RUN_DEADLINE_SECONDS" in str(caught.value)


def prices(raw: str) -> PriceTable:
    return Settings.from_env({"LLM_PRICES": raw}).price_table()


def test_price_table_prices_listed_models_and_the_wildcard() -> None:
    table = prices('{"gpt-4o-mini": [0.15, 0.60], "*": [1, 4]}')
    assert table.cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert table.cost("other", 1000, 500) == pytest.approx(0.003)
    assert prices('{"a": [1, 2]}').cost("b", 10, 10) is None
    assert prices("").cost("a", 10, 10) is None


@pytest.mark.parametrize(
    "raw", ['{"gpt": [1]}', '{"gpt": ["a", "b"]}', '{"gpt": [-1, 2]}', "gpt=1/2", '["gpt"]']
)
def test_a_bad_price_table_is_refused_at_start_up(raw: str) -> None:
    with pytest.raises(SettingsError, match="LLM_PRICES"):
        Settings.from_env({"LLM_PRICES": raw})


def test_budgets_are_read_from_the_environment() -> None:
    settings = Settings.from_env(
        {"LLM_PROMPT_TOKEN_BUDGET": "8000", "LLM_RUN_TOKEN_BUDGET": "40000"}
    )
    assert settings.token_budget() == TokenBudget(8000, 40000)
    with pytest.raises(SettingsError, match="LLM_PROMPT_TOKEN_BUDGET"):
        Settings.from_env({"LLM_PROMPT_TOKEN_BUDGET": "0"})


def test_a_diagnosis_past_its_run_budget_falls_back_naming_the_setting() -> None:
    diagnoser = offline_diagnoser()
    diagnoser.invoker.token_budget = TokenBudget(per_call=12_000, per_run=7_000)
    result = diagnoser.diagnose("Why is payment-service slow since 10:00?")
    assert result.run.degraded and result.answer is not None
    assert "token budget was reached" in result.answer and "LLM_RUN_TOKEN_BUDGET" in result.answer
    steps = [s for s in diagnoser.audit.steps if s["run_id"] == result.run_id]  # type: ignore[attr-defined]
    assert sum(s["prompt_tokens"] for s in steps) <= 7_000
    assert steps[-1]["status"] == "FAILED" and "LLM_RUN_TOKEN_BUDGET" in steps[-1]["error"]
