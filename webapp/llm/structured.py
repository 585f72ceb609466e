"""Structured output: the ``response_format`` to send and the JSON to read back.

Two modes (``LLM_RESPONSE_FORMAT``): ``json_schema`` sends the schema with its name, for
servers that support schema-guided output; ``json_object`` asks only for "some JSON object",
for servers without schema support, and the schema goes into the system message as text
(:func:`schema_instruction`). Either way the caller parses with :func:`extract_json` and
validates with pydantic; whatever fails there is the node's INVALID_OUTPUT.
"""

from __future__ import annotations

import json
from typing import Any

from diagnosis_graph.workflow.contracts import extract_json

__all__ = [
    "JSON_OBJECT",
    "JSON_SCHEMA",
    "extract_json",
    "response_format_for",
    "schema_instruction",
]

JSON_SCHEMA = "json_schema"
JSON_OBJECT = "json_object"
MODES = (JSON_SCHEMA, JSON_OBJECT)


def untitled(schema: Any) -> Any:
    """``schema`` without the ``title`` annotations pydantic gives every field and model (they
    repeat the names beside them) and without each model's docstring (written for the code's
    readers): the schema is sent with every call of the agent."""
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


def response_format_for(name: str, schema: dict[str, Any], mode: str) -> dict[str, Any]:
    """The ``response_format`` request field for ``mode`` (``json_schema`` or ``json_object``)."""
    if mode == JSON_SCHEMA:
        # strict=False: strict mode demands every property be required and every object closed,
        # which pydantic's schemas (optional fields, defaults) do not satisfy.
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": untitled(schema), "strict": False},
        }
    if mode == JSON_OBJECT:
        return {"type": "json_object"}
    raise ValueError(f"unknown response format mode {mode!r}; expected one of {MODES}")


def schema_instruction(name: str, schema: dict[str, Any]) -> str:
    """The system-message text that carries the schema in ``json_object`` mode."""
    return (
        f"Reply with only a JSON object that matches the JSON schema `{name}` below: "
        "no prose before or after it, no code fences.\n"
        f"JSON schema `{name}`:\n{json.dumps(untitled(schema), ensure_ascii=False)}"
    )
