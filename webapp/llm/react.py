"""Model calls wrapped by the step hook, and the bounded ReAct loop (SPEC section 4).

Budgets: at most ``max_rounds`` model calls may request tools and at most ``max_tool_calls``
tool calls run in one node execution; calls beyond the budget, unknown tools and arguments that
fail the tool's schema are BLOCKED (recorded, and the model is told why); once the budget is
spent the model is asked for its final output with tools disabled; ``max_blocked`` blocked calls
end the execution with TOOL_BLOCKED.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import BLOCKED

from ..audit import StepEnd, StepHook, StepStart
from ..tools.registry import ToolBox
from .types import ChatModel, ChatResult, LLMError, Message

FINAL_ANSWER_NOW = (
    "The tool budget for this step is spent. Do not call tools any more: answer now with the "
    "final JSON object, using only the evidence you already have."
)


@dataclass(frozen=True)
class Budget:
    """Limits of one agent execution."""

    max_rounds: int = 6
    max_tool_calls: int = 12
    max_blocked: int = 3


@dataclass(frozen=True)
class AgentRun:
    """How an agent execution ended."""

    outcome: Outcome
    content: str | None = None
    detail: str | None = None
    tool_calls: int = 0
    blocked: int = 0


def call_model(
    model: ChatModel,
    hook: StepHook,
    agent: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    response_format: dict[str, Any] | None = None,
) -> tuple[ChatResult, int]:
    """One logical model call recorded as one ``agent_step``; returns the result and step id."""
    model_input = {
        "messages": list(messages),
        "tools": [t["function"]["name"] for t in tools or []],
        "response_format": response_format,
        "tool_choice": tool_choice,
    }
    step_id = hook.before_model(StepStart(agent, model.model_name, model_input))
    started = time.perf_counter()
    try:
        result = model.complete(
            messages, tools=tools, response_format=response_format, tool_choice=tool_choice
        )
    except LLMError as exc:
        hook.after_model(
            step_id,
            StepEnd(
                {"error": str(exc), "kind": exc.kind},
                False,
                0,
                0,
                exc.attempts,
                _ms(started),
                "FAILED",
                str(exc),
            ),
        )
        raise
    hook.after_model(
        step_id,
        StepEnd(
            result.as_message(),
            bool(result.tool_calls),
            result.prompt_tokens,
            result.completion_tokens,
            result.attempts,
            _ms(started),
            "SUCCESS",
        ),
    )
    return result, step_id


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def run_react(
    model: ChatModel,
    hook: StepHook,
    agent: str,
    messages: Sequence[Message],
    toolbox: ToolBox,
    *,
    response_format: dict[str, Any] | None = None,
    budget: Budget | None = None,
) -> AgentRun:
    """Let the model call tools within ``budget``, then return its final content."""
    budget = budget or Budget()
    conversation = list(messages)
    calls = blocked = 0
    for round_no in range(budget.max_rounds + 1):
        spent = round_no == budget.max_rounds or calls >= budget.max_tool_calls
        if spent and round_no > 0:
            conversation.append({"role": "user", "content": FINAL_ANSWER_NOW})
        try:
            result, step_id = call_model(
                model,
                hook,
                agent,
                conversation,
                tools=toolbox.definitions(),
                tool_choice="none" if spent else None,
                response_format=response_format,
            )
        except LLMError as exc:
            return AgentRun(exc.outcome, detail=str(exc), tool_calls=calls, blocked=blocked)
        if not result.tool_calls:
            return AgentRun(Outcome.COMPLETED, result.content, tool_calls=calls, blocked=blocked)
        conversation.append(result.as_message())
        for call in result.tool_calls:
            if spent or calls >= budget.max_tool_calls:
                outcome = toolbox.block(
                    call.name,
                    call.arguments,
                    f"tool budget spent ({budget.max_tool_calls} calls)",
                    step_id,
                )
            else:
                calls += 1
                outcome = toolbox.call(call.name, call.arguments, step_id)
            blocked += outcome.status == BLOCKED
            conversation.append(
                {"role": "tool", "tool_call_id": call.id, "content": outcome.content}
            )
            if blocked >= budget.max_blocked:
                return AgentRun(
                    Outcome.TOOL_BLOCKED,
                    detail=f"{blocked} tool calls were blocked",
                    tool_calls=calls,
                    blocked=blocked,
                )
        if spent:
            break
    return AgentRun(
        Outcome.TOOL_BLOCKED,
        detail="the model kept calling tools after its budget",
        tool_calls=calls,
        blocked=blocked,
    )
