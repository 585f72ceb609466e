"""``LLM_MAX_TOKENS``, ``LLM_TEMPERATURE``, ``RUN_DEADLINE_SECONDS`` and the format settings."""

from __future__ import annotations

import pytest

from webapp.config import Settings, SettingsError
from webapp.llm.tokens import max_tokens_for


def test_defaults_are_per_schema_with_a_default_for_plain_rounds() -> None:
    assert Settings.from_env({}).llm_max_tokens is None
    assert max_tokens_for("executor_evidence_v2") == 2048
    assert max_tokens_for("planner_plan") == 1024
    assert max_tokens_for(None) == max_tokens_for("unknown") == 1024


def test_one_number_applies_to_every_agent() -> None:
    limit = Settings.from_env({"LLM_MAX_TOKENS": "512"}).llm_max_tokens
    assert {max_tokens_for(name, limit) for name in ("planner_plan", "composer_output", None)} == {
        512
    }


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LLM_MAX_TOKENS", "-1"),
        ("LLM_MAX_TOKENS", "planner_plan"),
        ("LLM_TEMPERATURE", "3"),
        ("RUN_DEADLINE_SECONDS", "0"),
        ("LLM_RESPONSE_FORMAT", "xml"),
    ],
)
def test_unusable_values_stop_the_app_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: value})


def test_auto_is_the_default_format_and_explicit_modes_are_accepted() -> None:
    assert Settings.from_env({}).llm_response_format == "auto"
    for mode in ("json_schema", "json_object_schema", "json_object", "prompt"):
        assert Settings.from_env({"LLM_RESPONSE_FORMAT": mode}).llm_response_format == mode
