"""A scripted ChatModel: replays assistant replies and records every request it was sent."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from webapp.llm.types import ChatResult, LLMError, Message, ToolCall


def calls(*specs: tuple[str, dict[str, Any] | str]) -> ChatResult:
    """An assistant turn asking for tools: ``(name, arguments)`` pairs."""
    return ChatResult(
        None,
        [
            ToolCall(f"c{n}", name, args if isinstance(args, str) else json.dumps(args))
            for n, (name, args) in enumerate(specs)
        ],
        "scripted",
        10,
        5,
    )


def answer(content: Any) -> ChatResult:
    """A final assistant turn with JSON (or text) content."""
    text = content if isinstance(content, str) else json.dumps(content)
    return ChatResult(text, [], "scripted", 10, 5)


@dataclass
class ScriptedModel:
    """Replies in order; an LLMError in the script is raised instead of returned."""

    replies: list[ChatResult | LLMError]
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return "scripted-model"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        self.requests.append(
            {
                "messages": list(messages),
                "tools": tools,
                "response_format": response_format,
                "tool_choice": tool_choice,
            }
        )
        reply = self.replies.pop(0)
        if isinstance(reply, LLMError):
            raise reply
        return reply
