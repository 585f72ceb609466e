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
    assert extract_json('```JSON {"steps": [2]}```') == {"steps": [2]}


@pytest.mark.parametrize(
    "content",
    [
        'Here is the result:\n```json\n{"steps": [3]}\n```',
        '```json\n{"steps": [3]}\n```\nHope this helps!',
        'Sure.\n\n```\n{"steps": [3]}\n```\n\nLet me know if you need more.',
    ],
    ids=["prose-before-fence", "prose-after-fence", "prose-around-untagged-fence"],
)
def test_extract_json_accepts_exactly_one_fenced_block_with_prose_around_it(
    content: str,
) -> None:
    assert extract_json(content) == {"steps": [3]}


def test_a_json_string_holding_backticks_is_plain_json_not_a_fence() -> None:
    assert extract_json('{"quote": "run ```ls```"}') == {"quote": "run ```ls```"}


@pytest.mark.parametrize(
    "content",
    [
        'Here is the plan: {"steps": []}',
        '{"steps": []} Hope this helps!',
        '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```',
        'Option A:\n```json\n{"a": 1}\n```\nor B:\n```\n{"b": 2}\n```',
        '```json\n{"steps": []}',
        'Here:\n```json\n{"steps": []}\n```\nand a stray ```',
        '```python\n{"steps": []}\n```',
        '```json\n{"steps": [}\n```',
        "   ",
    ],
    ids=[
        "prose-before",
        "prose-after",
        "two-fences",
        "two-fences-with-prose",
        "unclosed-fence",
        "stray-fence",
        "other-language",
        "fenced-body-not-json",
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
