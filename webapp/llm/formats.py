"""Structured output: the request agents make, and how it is adapted to the mode a server supports.

Modes, strongest first: ``json_schema``; ``json_object_schema`` (``{"type": "json_object",
"schema": ...}``, llama-cpp-python); ``json_object``; ``prompt`` (no ``response_format``). Below
``json_schema`` the schema also travels as text in the last user message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .types import Message

AUTO = "auto"
JSON_SCHEMA = "json_schema"
JSON_OBJECT_SCHEMA = "json_object_schema"
JSON_OBJECT = "json_object"
PROMPT = "prompt"
#: Strongest first; ``auto`` walks it downwards.
LADDER = (JSON_SCHEMA, JSON_OBJECT_SCHEMA, JSON_OBJECT, PROMPT)


def untitled(schema: Any) -> Any:
    """``schema`` without pydantic's ``title`` annotations and model docstrings."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    model = "properties" in schema
    return {
        key: {k: untitled(v) for k, v in value.items()}
        if key in ("properties", "$defs") and isinstance(value, dict)
        else untitled(value)
        for key, value in schema.items()
        if not (key == "title" and isinstance(value, str))
        and not (model and key == "description" and isinstance(value, str))
    }


def response_format_for(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``json_schema`` ``response_format`` agents ask for (not ``strict``: pydantic's schemas
    have optional fields, which strict mode forbids)."""
    return {
        "type": JSON_SCHEMA,
        "json_schema": {"name": name, "schema": untitled(schema), "strict": False},
    }


def schema_instruction(name: str, schema: dict[str, Any]) -> str:
    """The text that carries the schema below ``json_schema`` mode."""
    return (
        f"Reply with only a JSON object that matches the JSON schema `{name}` below: "
        "no prose before or after it, no code fences.\n"
        f"JSON schema `{name}`:\n{json.dumps(untitled(schema), ensure_ascii=False)}"
    )


def next_mode(mode: str) -> str | None:
    """The next weaker mode, or None at the bottom of the ladder."""
    index = LADDER.index(mode)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def adapt(
    messages: Sequence[Message], response_format: dict[str, Any] | None, mode: str
) -> tuple[list[Message], dict[str, Any] | None]:
    """The messages and ``response_format`` to send for a ``json_schema`` request in ``mode``
    (anything else is sent unchanged)."""
    if response_format is None or response_format.get("type") != JSON_SCHEMA or mode == JSON_SCHEMA:
        return list(messages), response_format
    spec = response_format.get("json_schema") or {}
    name = str(spec.get("name") or "output")
    schema = grammar_schema(dict(spec.get("schema") or {}))
    adapted = with_schema_instruction(messages, name, schema)
    if mode == JSON_OBJECT_SCHEMA:
        return adapted, {"type": JSON_OBJECT, "schema": schema}
    if mode == JSON_OBJECT:
        return adapted, {"type": JSON_OBJECT}
    return adapted, None


#: Constraints that blow up a grammar built from the schema (llama.cpp) and that the validation
#: after the call enforces anyway.
_GRAMMAR_HEAVY = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "pattern", "format", "uniqueItems"}
)


def grammar_schema(schema: Any) -> Any:
    """``schema`` without length, count and pattern constraints (shorter prompt, usable grammar)."""
    if isinstance(schema, dict):
        return {
            key: value if key in ("enum", "const", "default") else grammar_schema(value)
            for key, value in schema.items()
            if key not in _GRAMMAR_HEAVY or not isinstance(value, (int, str, bool))
        }
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    return schema


def with_schema_instruction(
    messages: Sequence[Message], name: str, schema: dict[str, Any]
) -> list[Message]:
    """``messages`` with the schema instruction in the last user message (and a pointer to it
    in the system message); a new user message carries it when there is no text one."""
    result = [dict(m) for m in messages]
    pointer = f"Reply with only a JSON object that matches the JSON schema `{name}` given in the"
    append_text(result, "system", f"{pointer} last user message.")
    instruction = schema_instruction(name, schema)
    if not append_text(result, "user", instruction, last=True):
        result.append({"role": "user", "content": instruction})
    return result


def append_text(messages: list[Message], role: str, text: str, *, last: bool = False) -> bool:
    """Append ``text`` to the first (``last``: the last) text message of ``role``; False if none."""
    for message in reversed(messages) if last else messages:
        if message.get("role") == role and isinstance(message.get("content"), str):
            message["content"] = f"{message['content']}\n\n{text}"
            return True
    return False
