"""Model calls wrapped by the step hook, and the bounded ReAct loop.

Calls beyond the :class:`Budget`, unknown tools and arguments that fail the tool's schema are
BLOCKED (the model is told why); once the budget is spent the model is asked for its final
output with tools disabled; ``max_blocked`` blocked calls end the execution with TOOL_BLOCKED.
A model whose endpoint ignores native tools speaks the JSON actions of :mod:`webapp.llm.actions`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import BLOCKED, SUCCESS

from ..persistence.audit import Audit, StepEnd, StepStart
from ..tools.registry import ToolBox, ToolCallResult
from . import actions, tokens
from .compact import project, summary_message, without_series
from .types import ChatModel, ChatResult, LLMError, Message, ToolCall, cause_of

FINAL_ANSWER_NOW = (
    "The tool budget for this step is spent. Do not call tools any more: answer now with the "
    "final JSON object, using only the evidence you already have."
)
FINAL_ACTION_NOW = FINAL_ANSWER_NOW + ' Reply with {"action": "final", "output": {...}}.'

#: Returns the first validation error of a final output, or None when it is valid.
Validator = Callable[[str | None], str | None]


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
    hook: Audit,
    agent: str,
    messages: Sequence[Message],
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    response_format: dict[str, Any] | None = None,
    validate: Validator | None = None,
    read_calls: Callable[[ChatResult], list[ToolCall]] | None = None,
) -> tuple[ChatResult, int]:
    """One logical model call recorded as one ``agent_step``; returns the result and step id.
    A reply without calls (``read_calls``, default ``tool_calls``) is checked by ``validate``."""
    model_input = {
        "messages": list(messages),
        "tools": [t["function"]["name"] for t in tools or []],
        "response_format": response_format,
        "tool_choice": tool_choice,
    }
    ledger = tokens.current_ledger()
    need = tokens.estimate(messages, tools, response_format)
    ticket = hook.before_model(StepStart(agent, model.model_name, model_input))
    started = time.perf_counter()
    try:
        ledger.admit(need)
        result = model.complete(
            messages, tools=tools, response_format=response_format, tool_choice=tool_choice
        )
    except LLMError as exc:
        cause = cause_of(exc)
        output = {"error": str(exc), "kind": exc.kind}
        end = StepEnd(output, False, 0, 0, exc.attempts, _ms(started), "FAILED", cause)
        hook.after_model(ticket, end)
        raise
    if not result.prompt_tokens:  # a server that reports no usage: the estimate stands in
        result = replace(result, prompt_tokens=need)
    ledger.charge(result.prompt_tokens)
    calls = read_calls(result) if read_calls else result.tool_calls
    problem = validate(result.content) if validate and not calls else None
    caps = getattr(model, "capabilities", None)
    if problem and caps is not None:  # the endpoint answered, but not usably: /readyz says so
        caps.record_call("failed", kind="invalid_output", detail=f"invalid output: {problem}")
    step_id = hook.after_model(
        ticket,
        StepEnd(
            _recorded_output(result),
            bool(calls),
            result.prompt_tokens,
            result.completion_tokens,
            result.attempts,
            _ms(started),
            "FAILED" if problem else "SUCCESS",
            f"invalid output: {problem}" if problem else None,
        ),
    )
    return result, step_id


def _recorded_output(result: ChatResult) -> dict[str, Any]:
    output = result.as_message()
    if result.response_mode is not None:
        output["response_mode"] = result.response_mode
    if result.downgrades:
        output["response_format_downgrades"] = list(result.downgrades)
    if result.finish_reason is not None:
        output["finish_reason"] = result.finish_reason
    return output


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _action_calls(round_no: int, result: ChatResult) -> list[ToolCall]:
    """The native calls of a reply, else the call its JSON action asks for."""
    if result.tool_calls:
        return result.tool_calls
    action = actions.parse(result.content)
    if action.kind != actions.CALL:
        return []
    return [ToolCall(f"action_{round_no}", action.tool, action.arguments)]


def run_react(
    model: ChatModel,
    hook: Audit,
    agent: str,
    messages: Sequence[Message],
    toolbox: ToolBox,
    *,
    response_format: dict[str, Any] | None = None,
    budget: Budget | None = None,
    validate: Validator | None = None,
) -> AgentRun:
    """Let the model call tools within ``budget``, then return its final content."""
    caps = getattr(model, "capabilities", None)  # None (the offline model): tools are native
    native = caps is None or caps.native_tools
    loop = _Loop(budget or Budget(), toolbox, native, list(messages))
    definitions = toolbox.definitions()
    if not loop.native:
        response_format = loop.use_actions(messages, definitions, response_format)
    for round_no in range(loop.budget.max_rounds + 1):
        spent = loop.spent(round_no)
        if spent and round_no > 0:
            nudge = FINAL_ANSWER_NOW if loop.native else FINAL_ACTION_NOW
            loop.conversation.append({"role": "user", "content": nudge})
        read = partial(_action_calls, round_no)
        loop.fit(definitions if loop.native else None, response_format)
        try:
            result, step_id = call_model(
                model,
                hook,
                agent,
                loop.conversation,
                tools=definitions if loop.native else None,
                tool_choice="none" if spent and loop.native else None,
                response_format=response_format,
                validate=_final_validator(validate),
                read_calls=read,
            )
        except LLMError as exc:
            if round_no == 0 and loop.native and exc.kind == "tools_unsupported":
                # The server refuses tool requests: go on with the JSON action protocol.
                response_format = loop.use_actions(messages, definitions, response_format)
                continue
            return loop.ended(exc.outcome, detail=cause_of(exc))
        requested = read(result)
        if not requested and round_no == 0 and _ignored_tools(model, loop, result, validate):
            # The server answered a tool request without calls and the output is not valid:
            # it ignores tools. Go on with the JSON action protocol.
            response_format = loop.use_actions(messages, definitions, response_format)
            continue
        if not requested:
            return loop.ended(Outcome.COMPLETED, actions.parse(result.content).content)
        stopped = loop.run_calls(result, requested, step_id, spent)
        if stopped is not None or spent:
            return stopped or loop.kept_calling()
    return loop.kept_calling()


class _Loop:
    """The state of one ReAct execution: conversation, counters, and how tool calls run."""

    def __init__(
        self, budget: Budget, toolbox: ToolBox, native: bool, conversation: list[Message]
    ) -> None:
        self.budget, self.toolbox, self.native = budget, toolbox, native
        self.conversation = conversation
        self.calls = self.blocked = 0
        #: Successful tool results, oldest first, with how far each is shortened.
        self.results: list[_Result] = []

    def use_actions(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        response_format: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """Speak the JSON action protocol from the first ``messages`` on; the format to ask."""
        self.native = False
        self.conversation = actions.with_instruction(messages, tools)
        return actions.response_format(response_format, tools)

    def add_result(self, call: ToolCall, outcome: ToolCallResult) -> None:
        """Append what the model reads of a tool result: a projection of a successful output."""
        if outcome.status != SUCCESS:
            self.conversation.append(_tool_turn(call, outcome.content, self.native))
            return
        result = _Result(
            len(self.conversation), call, outcome.invocation_id, project(outcome.output)
        )
        self.results.append(result)
        self.conversation.append(_tool_turn(call, result.content(), self.native))

    def fit(
        self, tools: Sequence[dict[str, Any]] | None, response_format: dict[str, Any] | None
    ) -> None:
        """Summarise tool results, oldest first, until the prompt fits."""
        room = tokens.current_ledger().room()
        need = tokens.estimate(self.conversation, tools, response_format)
        for level in (1, 2):
            for result in self.results:
                if need <= room:
                    return
                need += self.shorten(result, level)

    def shorten(self, result: _Result, level: int) -> int:
        """Show ``result`` at ``level`` (if it is not shorter already); the tokens this adds."""
        if result.level >= level:
            return 0
        result.level = level
        before = tokens.estimate_message(self.conversation[result.position])
        self.conversation[result.position] = _tool_turn(result.call, result.content(), self.native)
        return tokens.estimate_message(self.conversation[result.position]) - before

    def spent(self, round_no: int) -> bool:
        return round_no == self.budget.max_rounds or self.calls >= self.budget.max_tool_calls

    def ended(
        self, outcome: Outcome, content: str | None = None, *, detail: str | None = None
    ) -> AgentRun:
        return AgentRun(outcome, content, detail, tool_calls=self.calls, blocked=self.blocked)

    def kept_calling(self) -> AgentRun:
        return self.ended(
            Outcome.TOOL_BLOCKED, detail="the model kept calling tools after its budget"
        )

    def run_calls(
        self, result: ChatResult, requested: list[ToolCall], step_id: int, spent: bool
    ) -> AgentRun | None:
        """Run (or block) each requested call; an AgentRun when too many were blocked. Earlier
        rounds' results become summaries (``read_output`` brings back any part)."""
        for earlier in self.results:
            self.shorten(earlier, 2)
        self.conversation.append(_assistant_turn(result, requested, self.native))
        for call in requested:
            if spent or self.calls >= self.budget.max_tool_calls:
                reason = f"tool budget spent ({self.budget.max_tool_calls} calls)"
                outcome = self.toolbox.block(call.name, call.arguments, reason, step_id)
            else:
                self.calls += 1
                outcome = self.toolbox.call(call.name, call.arguments, step_id)
            self.blocked += outcome.status == BLOCKED
            self.add_result(call, outcome)
            if self.blocked >= self.budget.max_blocked:
                detail = f"{self.blocked} tool calls were blocked"
                return self.ended(Outcome.TOOL_BLOCKED, detail=detail)
        return None


def _ignored_tools(
    model: ChatModel, loop: _Loop, result: ChatResult, validate: Validator | None
) -> bool:
    """True when an endpoint whose tool support is unknown just ignored the tools offered."""
    caps = getattr(model, "capabilities", None)
    if not loop.native or caps is None or caps.tool_calls is not None:
        return False
    check = _final_validator(validate)
    if check is None or check(result.content) is None:
        return False
    caps.saw_tools(False)
    return True


def _final_validator(validate: Validator | None) -> Validator | None:
    if validate is None:
        return None
    return lambda content: validate(actions.parse(content).content)


def _assistant_turn(result: ChatResult, requested: list[ToolCall], native: bool) -> Message:
    if not native:
        return {"role": "assistant", "content": result.content}
    # Native conversations pair every call with a tool message by id, including a JSON action
    # the model wrote in its content.
    return ChatResult(content=result.content, tool_calls=requested).as_message()


@dataclass
class _Result:
    """A successful tool result in the conversation: 0 projected, 1 without series, 2 summary."""

    position: int
    call: ToolCall
    invocation_id: str
    shown: Any  # the projection of the output
    level: int = 0

    def content(self) -> str:
        body: dict[str, Any] = {"invocation_id": self.invocation_id, "tool": self.call.name}
        if self.level == 2:
            return _dumps(summary_message({**body, "result": self.shown}))
        shown = self.shown if self.level == 0 else without_series(self.shown)
        return _dumps({**body, "result": shown})


def _dumps(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _tool_turn(call: ToolCall, content: str, native: bool) -> Message:
    if native:
        return {"role": "tool", "tool_call_id": call.id, "content": content}
    return actions.result_message(call.name, content)
