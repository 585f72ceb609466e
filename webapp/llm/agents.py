"""The AgentInvoker adapter: prompts + structured output + the ReAct loop over a ChatModel."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentCall, AgentReply

from ..audit import AuditWriteError, InvocationRecorder, StepHook
from ..context import run_scope
from ..tools.registry import ToolBox, ToolSpec
from .prompts import prompt_version, system_prompt
from .react import Budget, call_model, run_react
from .structured import response_format_for, schema_instruction
from .types import ChatModel, LLMError, Message

log = logging.getLogger(__name__)


class LLMAgentInvoker:
    """Runs the diagnosis agents on any :class:`ChatModel` (OpenAI-compatible or offline)."""

    def __init__(
        self,
        model: ChatModel,
        hook: StepHook,
        recorder: InvocationRecorder,
        tools: Callable[[], Sequence[ToolSpec]],
        *,
        response_mode: str = "json_schema",
        budget: Budget | None = None,
    ) -> None:
        self.model = model
        self.hook = hook
        self.recorder = recorder
        self.tools = tools
        self.response_mode = response_mode
        self.budget = budget or Budget()

    def messages(self, call: AgentCall) -> list[Message]:
        """System prompt (plus the schema in json_object mode) and the payload as JSON."""
        system = system_prompt(call.agent)
        if self.response_mode == "json_object":
            system += "\n\n" + schema_instruction(call.schema_name, dict(call.output_schema))
        payload = json.dumps(call.payload, ensure_ascii=False, default=str)
        return [{"role": "system", "content": system}, {"role": "user", "content": payload}]

    def invoke(self, call: AgentCall, config: RunConfig) -> AgentReply:
        """Run ``call`` inside the identity carried by ``config`` and report its outcome."""
        version = prompt_version()
        session_id = str(config.metadata.get("session_id", ""))
        run_id = str(config.metadata.get("run_id") or config.thread_id or "")
        response_format = response_format_for(
            call.schema_name, dict(call.output_schema), self.response_mode
        )
        try:
            with run_scope(session_id, run_id):
                if call.tools:
                    toolbox = ToolBox(self.tools(), self.recorder, call.agent)
                    run = run_react(
                        self.model,
                        self.hook,
                        call.agent,
                        self.messages(call),
                        toolbox,
                        response_format=response_format,
                        budget=self.budget,
                    )
                    return AgentReply(run.outcome, run.content, run.detail, version)
                result, _ = call_model(
                    self.model,
                    self.hook,
                    call.agent,
                    self.messages(call),
                    response_format=response_format,
                )
                return AgentReply(Outcome.COMPLETED, result.content, None, version)
        except LLMError as exc:
            return AgentReply(exc.outcome, None, str(exc), version)
        except AuditWriteError:  # not the agent's failure: the run must stop, FAILED
            raise
        except Exception as exc:  # an adapter bug must degrade the run, not crash it
            log.exception("agent %s failed", call.agent)
            return AgentReply(Outcome.FAILED, None, f"{type(exc).__name__}: {exc}", version)

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools the executor may call, for the planner's payload."""
        return [spec.definition() for spec in self.tools()]
