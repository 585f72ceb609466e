"""Structured output helpers: the response_format sent and the JSON read back."""

from __future__ import annotations

import pytest

from webapp.llm.structured import extract_json, response_format_for, schema_instruction

PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}}, "required": ["steps"]}


def test_json_schema_mode_names_the_schema_and_is_not_strict() -> None:
    assert response_format_for("verifier_output", PLAN_SCHEMA, "json_schema") == {
        "type": "json_schema",
        "json_schema": {"name": "verifier_output", "schema": PLAN_SCHEMA, "strict": False},
    }


def test_json_object_mode_is_plain_json_object() -> None:
    assert response_format_for("verifier_output", PLAN_SCHEMA, "json_object") == {
        "type": "json_object"
    }


def test_extract_json_accepts_plain_json_and_one_fenced_block() -> None:
    assert extract_json('  {"steps": [1]}\n') == {"steps": [1]}
    assert extract_json('```json\n{"steps": [1]}\n```') == {"steps": [1]}
    assert extract_json('\n```\n{"steps": []}\n```\n') == {"steps": []}


@pytest.mark.parametrize(
    "content",
    [
        'Here is the plan: {"steps": []}',
        '{"steps": []} Hope this helps!',
        '```json\n{"steps": []}\n```\nHope this helps!',
        '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```',
        '```json\n{"steps": []}',
        "   ",
    ],
    ids=[
        "prose-before",
        "prose-after",
        "prose-after-fence",
        "two-fences",
        "unclosed-fence",
        "blank",
    ],
)
def test_extract_json_rejects_anything_else(content: str) -> None:
    with pytest.raises(ValueError):
        extract_json(content)


def test_schema_instruction_names_the_schema_and_embeds_it() -> None:
    text = schema_instruction("planner_plan", PLAN_SCHEMA)

    assert "`planner_plan`" in text
    assert "only a JSON object" in text
    assert '"required": ["steps"]' in text


def test_response_format_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown response format mode"):
        response_format_for("planner_plan", PLAN_SCHEMA, "xml")
