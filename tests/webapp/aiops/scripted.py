"""A scripted ChatModel for the AIOps tests: scripted replies for chosen requests, the offline
model for everything else, and a record of every request.

A request's script keys, most specific first: ``<schema>:<alert name>`` (the alert the nested
diagnosis is about, read from its question ``Why is <service> firing <alert> ...``), then
``<schema>``. A reply may be a function of the request and the offline model's own answer, so a
test can alter what the offline model would have said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webapp.aiops import AiOpsRunner
from webapp.diagnosis import DiagnosisResult
from webapp.llm.offline import OfflineChatModel
from webapp.llm.types import ChatResult, LLMError, Message

Offline = Callable[[], ChatResult]
#: A reply: a ChatResult, an LLMError to raise, or ``f(messages, offline) -> ChatResult``.
Reply = ChatResult | LLMError | Callable[[Sequence[Message], Offline], ChatResult]

_ALERT = re.compile(r"\bfiring (?P<alert>\S+?)(?: since|\?)")


def payload_of(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON payload of a recorded request's user message."""
    user = next(m for m in request["messages"] if m.get("role") == "user")
    data: dict[str, Any] = json.loads(user["content"])
    return data


def alert_of(messages: Sequence[Message]) -> str | None:
    """The alert a nested diagnosis request is about (from its question)."""
    user = next((m for m in messages if m.get("role") == "user"), {})
    try:
        question = str(json.loads(str(user.get("content") or "{}")).get("question") or "")
    except (json.JSONDecodeError, AttributeError):
        return None
    found = _ALERT.search(question)
    return found.group("alert") if found else None


def route_of(messages: Sequence[Message], response_format: dict[str, Any] | None) -> list[str]:
    """Script keys for a request, most specific first: ``schema:alert`` then ``schema``."""
    schema = str(((response_format or {}).get("json_schema") or {}).get("name", "text"))
    alert = alert_of(messages)
    return [f"{schema}:{alert}", schema] if alert else [schema]


@dataclass
class Scripted:
    """Replays ``script[key]`` replies in order; unscripted requests go to ``inner``."""

    script: dict[str, list[Reply]] = field(default_factory=dict)
    inner: Any = field(default_factory=OfflineChatModel)
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
        keys = route_of(messages, response_format)
        self.requests.append(
            {"keys": keys, "messages": list(messages), "response_format": response_format}
        )

        def offline() -> ChatResult:
            result: ChatResult = self.inner.complete(
                messages, tools=tools, response_format=response_format, tool_choice=tool_choice
            )
            return result

        for key in keys:
            if self.script.get(key):
                reply = self.script[key].pop(0)
                if isinstance(reply, LLMError):
                    raise reply
                return reply(messages, offline) if callable(reply) else reply
        return offline()

    def sent(self, key: str) -> list[dict[str, Any]]:
        """Requests whose most specific or generic key is ``key``."""
        return [r for r in self.requests if key in r["keys"]]


@dataclass(frozen=True)
class Ran(DiagnosisResult):
    """An AIOps result with the progress events its run told the listener."""

    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def investigations(self) -> list[dict[str, Any]]:
        """One summary per investigated alert."""
        return list(self.run.state.get("investigations") or [])


def run_listening(runner: AiOpsRunner, session_id: str, run_id: str) -> Ran:
    """Run ``runner`` on the firing alerts, keeping the progress events."""
    events: list[dict[str, Any]] = []
    result = runner.run(None, session_id=session_id, run_id=run_id, on_event=events.append)
    return Ran(result.session_id, result.run_id, result.run, result.self_evaluation, events)
