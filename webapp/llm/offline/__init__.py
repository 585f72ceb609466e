"""The offline provider: a deterministic, rule-based model behind the chat-completions interface.

The embedded default when no ``OPENAI_API_KEY`` is set: it receives what a real model receives
and reasons only from the request and the tool results in the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...analysis.timeexpr import DEFAULT_TIMEZONE
from ..tokens import count_text
from ..types import ChatResult, Message, ToolCall
from . import alerts, simple, window
from .conversation import Catalog, payload, schema_name, tool_results, tool_rounds
from .executor import MAX_FOLLOW_UP_ROUNDS, Investigation, final_evidence, first_round
from .judge import compose, verify
from .planner import plan

MODEL_NAME = "offline-rule-based-v1"


class OfflineChatModel:
    """Rule-based planner, executor, verifier and composer in one ``ChatModel``
    (``default_timezone``: the zone of a time the question writes without one)."""

    model_name = MODEL_NAME  # the name shown in traces: says it is rule-based

    def __init__(self, default_timezone: str = DEFAULT_TIMEZONE) -> None:
        self.default_timezone = default_timezone

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResult:
        """Answer like a model would: tool calls, or the JSON the schema asks for (reporting no
        prompt tokens: it has no tokenizer)."""
        name = schema_name(response_format)
        request = payload(messages)
        catalog = Catalog(tools if tools else request.get("tools"))
        if name == "planner_plan":
            return self._json(plan(request, catalog, self.default_timezone))
        if name == "executor_evidence_v2":
            return self._execute(request, catalog, messages, tool_choice)
        if name == "verifier_output":
            return self._json(verify(request))
        if name == "composer_output":
            return self._json(alerts.compose(request, compose))
        step = simple.next_step(messages, catalog)
        if isinstance(step, dict) and tool_choice != "none":
            return self._calls([step], tool_rounds(messages))
        return self._text(step if isinstance(step, str) else simple.HELP)

    def _execute(
        self,
        request: dict[str, Any],
        catalog: Catalog,
        messages: Sequence[Message],
        tool_choice: str | None,
    ) -> ChatResult:
        done = tool_results(messages)
        rounds = tool_rounds(messages)
        calls: list[dict[str, Any]] = []
        if tool_choice != "none" and rounds == 0:
            calls = first_round((request.get("plan") or {}).get("queries", []), catalog)
        elif tool_choice != "none" and rounds <= MAX_FOLLOW_UP_ROUNDS:
            calls = Investigation(request, catalog, done).follow_ups()
            calls += window.follow_ups(request, catalog, done)
        if calls:
            return self._calls(calls, rounds)
        evidence = final_evidence(request, catalog, done)
        return self._json(alerts.add_claims(evidence, request, done))

    def _calls(self, queries: list[dict[str, Any]], rounds: int) -> ChatResult:
        calls = [
            ToolCall(f"call_{rounds}_{n}", q["tool"], json.dumps(q.get("arguments", {})))
            for n, q in enumerate(queries)
        ]
        return ChatResult(None, calls, MODEL_NAME, 0, 20 * len(calls), finish_reason="tool_calls")

    def _json(self, document: dict[str, Any]) -> ChatResult:
        return self._text(json.dumps(document, ensure_ascii=False))

    def _text(self, text: str) -> ChatResult:
        return ChatResult(text, [], MODEL_NAME, 0, count_text(text), finish_reason="stop")
