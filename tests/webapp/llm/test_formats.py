"""Adapting a json_schema request to the structured-output mode an endpoint supports."""

from __future__ import annotations

from webapp.llm import formats
from webapp.llm.formats import response_format_for, schema_instruction

SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": 2000},
        "items": {"type": "array", "items": {"type": "string", "pattern": "^a"}, "maxItems": 9},
        "pattern": {"type": "string", "enum": ["x"]},
    },
    "required": ["summary"],
}
ASKED = response_format_for("planner_plan", SCHEMA)
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "{}"}]
PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array"}}, "required": ["steps"]}


def test_agents_ask_for_a_named_json_schema_that_is_not_strict() -> None:
    assert response_format_for("verifier_output", PLAN_SCHEMA) == {
        "type": "json_schema",
        "json_schema": {"name": "verifier_output", "schema": PLAN_SCHEMA, "strict": False},
    }


def test_schema_instruction_names_the_schema_and_embeds_it() -> None:
    text = schema_instruction("planner_plan", PLAN_SCHEMA)

    assert "`planner_plan`" in text
    assert "only a JSON object" in text
    assert '"required": ["steps"]' in text


def test_json_schema_mode_sends_the_request_unchanged() -> None:
    messages, wire = formats.adapt(MESSAGES, ASKED, formats.JSON_SCHEMA)
    assert wire == ASKED and messages == MESSAGES


def test_json_object_schema_mode_sends_a_grammar_friendly_schema_and_the_instruction() -> None:
    messages, wire = formats.adapt(MESSAGES, ASKED, formats.JSON_OBJECT_SCHEMA)
    assert wire is not None and wire["type"] == "json_object"
    properties = wire["schema"]["properties"]
    assert properties["summary"] == {"type": "string"}
    assert properties["items"] == {"type": "array", "items": {"type": "string"}}
    assert properties["pattern"] == {"type": "string", "enum": ["x"]}  # a field, not a keyword
    assert "JSON schema `planner_plan`" in messages[-1]["content"]
    assert messages[-1]["content"].startswith("{}")
    assert "last user message" in messages[0]["content"]
    assert MESSAGES[1]["content"] == "{}"  # the caller's messages are not modified


def test_lower_modes_drop_the_schema_then_the_format() -> None:
    assert formats.adapt(MESSAGES, ASKED, formats.JSON_OBJECT)[1] == {"type": "json_object"}
    messages, wire = formats.adapt(MESSAGES, ASKED, formats.PROMPT)
    assert wire is None and "JSON schema `planner_plan`" in messages[-1]["content"]


def test_plain_requests_are_never_adapted() -> None:
    assert formats.adapt(MESSAGES, None, formats.PROMPT) == (MESSAGES, None)


def test_the_ladder_ends_at_prompt() -> None:
    assert [formats.next_mode(m) for m in formats.LADDER] == [
        formats.JSON_OBJECT_SCHEMA,
        formats.JSON_OBJECT,
        formats.PROMPT,
        None,
    ]
