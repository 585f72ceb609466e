"""The AgentInvoker adapter: prompts + structured output + the ReAct loop over a ChatModel.

Each run has a deadline started by its first agent, and each diagnosis of a run (its question)
a token :class:`~webapp.llm.tokens.Ledger` that carries it; the ledger is current for every model
call of its agents.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.contracts import CONTRACTS, ContractError, parse_agent_output
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentCall, AgentReply

from ..persistence.audit import Audit, AuditWriteError
from ..persistence.context import current_run_or_none, run_scope
from ..tools.registry import ToolBox, ToolSpec
from . import tokens
from .compact import read_output_tool
from .formats import response_format_for
from .prompts import system_prompt
from .react import Validator, call_model, run_react
from .types import ChatModel, LLMError, Message, cause_of

log = logging.getLogger(__name__)
#: Runs whose start time is remembered for the deadline (oldest forgotten first).
_TRACKED_RUNS = 1024


class LLMAgentInvoker:
    """Runs the diagnosis agents on any :class:`ChatModel` (OpenAI-compatible or offline)."""

    def __init__(
        self, model: ChatModel, audit: Audit, tools: Callable[[], Sequence[ToolSpec]]
    ) -> None:
        self.model = model
        #: Records the model steps and the tool invocations.
        self.audit = audit
        self.tools = tools
        self.run_deadline_seconds = tokens.DEFAULT_RUN_DEADLINE_SECONDS
        self.token_budget = tokens.TokenBudget()
        #: Per run: when its first agent started, and the token ledger of each of its questions.
        self._runs: OrderedDict[str, tuple[float, dict[str, tokens.Ledger]]] = OrderedDict()
        self._lock = threading.Lock()

    def messages(self, call: AgentCall) -> list[Message]:
        """System prompt and the payload as compact JSON."""
        payload = json.dumps(call.payload, ensure_ascii=False, default=str, separators=(",", ":"))
        return [
            {"role": "system", "content": system_prompt(call.agent)},
            {"role": "user", "content": payload},
        ]

    def invoke(self, call: AgentCall, config: RunConfig) -> AgentReply:
        """Run ``call`` inside the identity carried by ``config`` and report its outcome."""
        # The run is the current RunContext; the engine's config metadata is read only when
        # the invoker is driven outside one (the engine on its own, in tests and benchmarks).
        run = current_run_or_none()
        session_id = run.session_id if run else str(config.metadata.get("session_id", ""))
        run_id = run.run_id if run else str(config.metadata.get("run_id") or config.thread_id or "")
        ledger = self._ledger(run_id, str(call.payload.get("question") or ""))
        if ledger.deadline is not None and time.monotonic() >= ledger.deadline:
            limit = f"RUN_DEADLINE_SECONDS={self.run_deadline_seconds:g}"
            detail = (
                f"the run's deadline was reached: {limit} passed before the {call.agent} "
                "step could start"
            )
            return AgentReply(Outcome.NON_RETRYABLE_FAILED, None, detail)
        try:
            with run_scope(session_id, run_id), tokens.run_ledger(ledger):
                try:
                    return self._run(call)
                finally:  # the node's invocations, in one write
                    self.audit.flush()
        except LLMError as exc:
            return AgentReply(exc.outcome, None, cause_of(exc))
        except AuditWriteError:  # not the agent's failure: the run must stop, FAILED
            raise
        except Exception as exc:  # an adapter bug must degrade the run, not crash it
            log.exception("agent %s failed", call.agent)
            return AgentReply(Outcome.FAILED, None, f"{type(exc).__name__}: {exc}")

    def _run(self, call: AgentCall) -> AgentReply:
        response_format = response_format_for(call.schema_name, dict(call.output_schema))
        validate = self._validator(call.schema_name)
        if call.tools:
            specs = [*self.tools(), read_output_tool(self.audit)]
            # Each ReAct round sends the definitions again: the tools' catalog detail went to
            # the planner once, and the tools' errors say what they accept.
            toolbox = ToolBox(specs, self.audit, call.agent, detail=False)
            run = run_react(
                self.model,
                self.audit,
                call.agent,
                self.messages(call),
                toolbox,
                response_format=response_format,
                validate=validate,
            )
            return AgentReply(run.outcome, run.content, run.detail)
        result, _ = call_model(
            self.model,
            self.audit,
            call.agent,
            self.messages(call),
            response_format=response_format,
            validate=validate,
        )
        return AgentReply(Outcome.COMPLETED, result.content)

    def _validator(self, schema_name: str) -> Validator | None:
        contract = CONTRACTS.get(schema_name)
        if contract is None:
            return None

        def validate(content: str | None) -> str | None:
            try:
                parse_agent_output(contract, content)
            except ContractError as exc:
                return str(exc)
            return None

        return validate

    def _ledger(self, run_id: str, question: str) -> tokens.Ledger:
        """The token ledger of the run's diagnosis of ``question``, with the run's deadline."""
        now = time.monotonic()
        if not run_id:
            return tokens.Ledger(self.token_budget, now + self.run_deadline_seconds)
        with self._lock:
            started, ledgers = self._runs.setdefault(run_id, (now, {}))
            deadline = started + self.run_deadline_seconds
            ledger = ledgers.setdefault(question, tokens.Ledger(self.token_budget, deadline))
            self._runs.move_to_end(run_id)
            while len(self._runs) > _TRACKED_RUNS:
                self._runs.popitem(last=False)
        return ledger

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools the executor may call, for the planner's payload."""
        return [spec.definition() for spec in self.tools()]
