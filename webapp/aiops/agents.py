"""Calling one AIOps agent: structured output, one technical retry, one progress event per call.

Every call goes through :class:`~webapp.llm.agents.LLMAgentInvoker` - the chat's own adapter -
so each model call is an ``agent_step`` written by the step hook and each tool call a
``tool_invocation`` linked to its step. Outcomes follow SPEC section 2: INVALID_OUTPUT and
RETRYABLE_FAILED get one retry (the second attempt is told what was wrong with the first);
anything else, or a second failure, is final. At most two calls per agent execution.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.contracts import ContractError, parse_agent_output
from diagnosis_graph.workflow.outcomes import TECHNICAL_RETRY, Outcome, orchestration_event
from diagnosis_graph.workflow.ports import AgentCall

from ..llm.agents import LLMAgentInvoker

M = TypeVar("M", bound=BaseModel)
Emit = Callable[[dict[str, Any]], None]
#: Extra validation of a parsed output: a reason it is invalid, or None.
Check = Callable[[Any], "str | None"]

MAX_ATTEMPTS = 2


@dataclass(frozen=True)
class AgentResult:
    """How an agent execution ended: outcome, the validated output, a detail, attempts made."""

    outcome: Outcome
    output: Any = None
    detail: str | None = None
    attempts: int = 1

    @property
    def completed(self) -> bool:
        """True when the output is valid."""
        return self.outcome is Outcome.COMPLETED


def progress(
    node: str, outcome: Outcome, reason_code: str, attempt: int, alert: str | None = None
) -> dict[str, Any]:
    """The progress event: ``{node, outcome, reason_code, attempt}`` plus ``alert`` if any."""
    event = orchestration_event(node, outcome, reason_code, attempt)
    if alert is not None:
        event["alert"] = alert
    return event


def reason_code(outcome: Outcome, attempt: int, retrying: bool) -> str:
    """``completed``, the outcome in lower case, or ``retry_exhausted`` after a second failure."""
    if outcome is Outcome.COMPLETED:
        return "completed"
    if attempt > 1 and outcome in TECHNICAL_RETRY and not retrying:
        return "retry_exhausted"
    return outcome.value.lower()


class AgentRunner:
    """Runs agents for one AIOps run (its identity travels in ``config``)."""

    def __init__(self, invoker: LLMAgentInvoker, config: RunConfig, emit: Emit) -> None:
        self.invoker = invoker
        self.config = config
        self.emit = emit

    def run(
        self,
        agent: str,
        contract: type[M],
        schema: tuple[str, Mapping[str, Any]],
        payload: dict[str, Any],
        *,
        tools: bool = False,
        check: Check | None = None,
        alert: str | None = None,
    ) -> AgentResult:
        """Call ``agent`` (node name = agent name), retrying once on a technical failure."""
        detail: str | None = None
        result = AgentResult(Outcome.FAILED)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            body = payload if detail is None else {**payload, "previous_attempt_error": detail}
            result = self._once(agent, contract, schema, body, tools, check, attempt)
            detail = result.detail
            retrying = attempt < MAX_ATTEMPTS and result.outcome in TECHNICAL_RETRY
            self.emit(
                progress(
                    agent,
                    result.outcome,
                    reason_code(result.outcome, attempt, retrying),
                    attempt,
                    alert,
                )
            )
            if not retrying:
                break
        return result

    def _once(
        self,
        agent: str,
        contract: type[M],
        schema: tuple[str, Mapping[str, Any]],
        payload: dict[str, Any],
        tools: bool,
        check: Check | None,
        attempt: int,
    ) -> AgentResult:
        call = AgentCall(agent, schema[0], schema[1], payload, tools)
        reply = self.invoker.invoke(call, self.config)
        if reply.outcome is not Outcome.COMPLETED:
            return AgentResult(reply.outcome, None, reply.detail, attempt)
        try:
            output = parse_agent_output(contract, reply.content)
        except ContractError as exc:
            return AgentResult(Outcome.INVALID_OUTPUT, None, str(exc), attempt)
        problem = check(output) if check else None
        if problem:
            return AgentResult(Outcome.INVALID_OUTPUT, None, problem, attempt)
        return AgentResult(Outcome.COMPLETED, output, None, attempt)
