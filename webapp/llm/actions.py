"""The JSON action protocol: tool calling in plain content, for servers without native tools.

The model answers every round with ``{"action": "call", "tool": ..., "arguments": {...}}`` or
``{"action": "final", "output": ...}``; content that is neither is the final output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis_graph.workflow.contracts import extract_json

from .formats import append_text
from .types import Message

CALL, FINAL = "call", "final"


@dataclass(frozen=True)
class Action:
    """What one reply asked for: a tool call (``tool``, ``arguments`` as JSON) or the final."""

    kind: str
    tool: str = ""
    arguments: str = "{}"
    content: str | None = None


def instruction(tools: Sequence[dict[str, Any]]) -> str:
    """The protocol and the tool list, sent once with the first user message."""
    lines = [
        "Tool calling works through JSON replies here. Reply with exactly one JSON object:",
        '- to call a tool: {"action": "call", "tool": "<tool name>", "arguments": {...}}',
        '- when you are done: {"action": "final", "output": <the final answer: the JSON object '
        "asked for, or text when none is asked for>}",
        "Call one tool per reply; its result comes back in the next message.",
        "Tools (name: description; arguments as a JSON schema):",
    ]
    for tool in tools:
        function = tool.get("function", tool)
        parameters = json.dumps(function.get("parameters") or {}, separators=(",", ":"))
        lines.append(f"- {function.get('name')}: {function.get('description', '')} {parameters}")
    return "\n".join(lines)


def with_instruction(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> list[Message]:
    """``messages`` with :func:`instruction` appended to the first user message."""
    result = [dict(m) for m in messages]
    text = instruction(tools)
    if not append_text(result, "user", text):
        result.append({"role": "user", "content": text})
    return result


def response_format(
    asked: dict[str, Any] | None, tools: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    """The union of a call and a final with the agent's output schema, as ``json_schema``."""
    if not asked or asked.get("type") != "json_schema":
        return asked
    spec = asked.get("json_schema") or {}
    names = [str(t.get("function", t).get("name")) for t in tools]
    call = {
        "type": "object",
        "properties": {
            "action": {"const": CALL},
            "tool": {"enum": names},
            "arguments": {"type": "object"},
        },
        "required": ["action", "tool", "arguments"],
    }
    final = {
        "type": "object",
        "properties": {"action": {"const": FINAL}, "output": spec.get("schema") or {}},
        "required": ["action", "output"],
    }
    schema = {"anyOf": [call, final]}
    return {"type": "json_schema", "json_schema": {**spec, "schema": schema, "strict": False}}


def parse(content: str | None) -> Action:
    """Read one reply; anything that is not a call is the final output (validated later)."""
    try:
        data = extract_json(content)
    except ValueError:
        return Action(FINAL, content=content)
    if not isinstance(data, dict) or data.get("action") not in (CALL, FINAL):
        return Action(FINAL, content=content)
    if data["action"] == FINAL:
        output = data.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return Action(FINAL, content=text)
    arguments = data.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return Action(CALL, tool=str(data.get("tool") or ""), arguments=arguments)


def result_message(tool: str, content: str) -> Message:
    """The tool's result as the user message the next round reads."""
    return {"role": "user", "content": f"Result of the tool call {tool}:\n{content}"}
