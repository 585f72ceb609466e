"""The chat-model port shared by the OpenAI-compatible client and the offline provider."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from diagnosis_graph.workflow.outcomes import Outcome

Message = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatResult:
    """One logical model call: the assistant message plus usage and transport attempts."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    finish_reason: str | None = None
    #: The structured-output mode the request went out in (None: not a structured request).
    response_mode: str | None = None
    #: Mode downgrades made during this call (``"json_schema -> json_object_schema"``).
    downgrades: tuple[str, ...] = ()

    def as_message(self) -> Message:
        """The assistant message to append to the conversation."""
        message: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class LLMError(Exception):
    """A model call that failed after the client's own retries, classified into an outcome;
    ``attempts`` counts transport attempts made."""

    def __init__(
        self,
        message: str,
        *,
        outcome: Outcome,
        attempts: int = 1,
        status_code: int | None = None,
        kind: str = "error",
    ) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.attempts = attempts
        self.status_code = status_code
        self.kind = kind


_CAUSES = {
    "timeout": "the model did not answer in time (timeout)",
    "connection": "the model endpoint could not be reached (connection error)",
    "rate_limited": "the model endpoint is rate limiting requests (HTTP 429)",
    "server_error": "the model server kept failing (server error)",
    "malformed_response": "the model server's response was not a chat completion",
    "auth": "the model endpoint rejected the credentials (authentication error)",
    "bad_request": "the model endpoint rejected the request (bad request)",
    "not_found": "the model endpoint or model was not found",
    "client_error": "the model endpoint rejected the request",
    "format_unsupported": "the model server does not support the structured-output format",
    "tools_unsupported": "the model server does not support tool calling",
    "refusal": "the model refused to answer",
    "deadline": "the run's deadline was reached",
    "token_budget": "the token budget was reached",
}


def cause_of(error: LLMError) -> str:
    """The failure's real cause in words (by its ``kind``), then the classified message."""
    cause = _CAUSES.get(error.kind, "the model call failed")
    return f"{cause}: {error}"


class ChatModel(Protocol):
    """Anything that answers a chat-completions request with one assistant message."""

    @property
    def model_name(self) -> str:
        """The model name shown in traces (the offline provider says it is rule-based)."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        """Return the assistant's reply or raise :class:`LLMError`."""
        ...
