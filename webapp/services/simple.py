"""The simple chat flow: one ReAct agent with the tools and the session history, no gatekeeper."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from diagnosis_graph.workflow.outcomes import Outcome

from ..llm import tokens
from ..llm.compact import read_output_tool
from ..llm.prompts import prompt_version, system_prompt
from ..llm.react import Budget, run_react
from ..llm.types import ChatModel, Message
from ..persistence.audit import Audit
from ..persistence.context import run_scope
from ..persistence.history import HistoryMessage
from ..tools.registry import ToolBox, ToolSpec

AGENT = "assistant"


@dataclass(frozen=True)
class SimpleAnswer:
    """The outcome of a simple turn."""

    outcome: Outcome
    answer: str | None
    detail: str | None
    prompt_version: str


class SimpleChat:
    """Answers small talk and knowledge questions with one tool-using agent."""

    def __init__(
        self, model: ChatModel, audit: Audit, tools: Callable[[], Sequence[ToolSpec]]
    ) -> None:
        self.model = model
        self.audit = audit
        self.tools = tools
        self.budget = Budget(max_rounds=3, max_tool_calls=4, max_blocked=3)
        self.token_budget = tokens.TokenBudget()

    def answer(
        self, question: str, history: Sequence[HistoryMessage], *, session_id: str, run_id: str
    ) -> SimpleAnswer:
        """Run the agent over the history and the question."""
        messages: list[Message] = [{"role": "system", "content": system_prompt(AGENT)}]
        messages += [{"role": m.role, "content": m.content} for m in history]
        messages.append({"role": "user", "content": question})
        specs = [*self.tools(), read_output_tool(self.audit)]
        with run_scope(session_id, run_id), tokens.run_ledger(tokens.Ledger(self.token_budget)):
            run = run_react(
                self.model,
                self.audit,
                AGENT,
                messages,
                ToolBox(specs, self.audit, AGENT),
                budget=self.budget,
            )
        content = run.content if run.outcome is Outcome.COMPLETED else None
        if run.outcome is Outcome.COMPLETED and not (content or "").strip():
            return SimpleAnswer(
                Outcome.INVALID_OUTPUT, None, "the model returned no answer", prompt_version()
            )
        return SimpleAnswer(run.outcome, content, run.detail, prompt_version())
