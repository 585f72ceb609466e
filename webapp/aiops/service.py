"""The AIOps run lifecycle (``agent_flow=AI_OPS``, ``flow=aiops``), mirroring the chat's.

``start`` ensures the session and creates the run PENDING; ``execute`` marks it RUNNING, runs
the supervisor graph under the run's identity, and saves the report with duration, step and
tool counts, ``{"aiops_rule_evaluation": ...}`` and the ``aiops-stategraph-v1`` orchestration
trace as SUCCESS (``degraded`` when part of the report is a fallback), or FAILED with the error
and the partial trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from diagnosis_graph.workflow.aiops import DEFAULT_REQUEST, build_aiops_trace
from diagnosis_graph.workflow.trace import TERMINATION_ERROR

from ..diagnosis import new_run_id
from ..persistence.audit import Audit
from ..persistence.context import RunContext
from ..persistence.runs import AI_OPS, SUCCESS, Finish, RunStore, new_session_id
from ..services.alert_inbox import alerts_of_run
from ..services.chat import ChatOutcome
from ..services.lifecycle import RunLifecycle
from .runner import AiOpsRunner

log = logging.getLogger(__name__)

FLOW = "aiops"


class AiOpsService:
    """Starts and executes AIOps runs; what ``POST /api/ai_ops`` calls."""

    def __init__(self, *, runs: RunStore, runner: AiOpsRunner, audit: Audit) -> None:
        self.runs = runs
        self.runner = runner
        self.audit = audit
        self.lifecycle = RunLifecycle(runs, audit)

    def start(self, session_id: str | None, user_request: str | None) -> tuple[str, str]:
        """Ensure the session and create the run PENDING; returns ``(session_id, run_id)``."""
        new = not session_id
        session_id = session_id or new_session_id()
        run_id = new_run_id()
        question = user_request or DEFAULT_REQUEST
        self.runs.open_run(run_id, session_id, AI_OPS, FLOW, question, new_session=new)
        return session_id, run_id

    def execute(
        self,
        session_id: str,
        run_id: str,
        user_request: str | None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> ChatOutcome:
        """Run a started AIOps run to its end; never raises for the run's failures."""

        def work(context: RunContext) -> Finish:
            result = self.runner.run(
                user_request,
                session_id=context.session_id,
                run_id=context.run_id,
                on_event=on_event,
                scope=alerts_of_run(self.runs.database, context.run_id),
            )
            run = result.run
            return Finish(
                run.status,
                run.answer,
                run.degraded,
                run.error,
                result.self_evaluation,
                run.orchestration_trace,
            )

        failed_trace = build_aiops_trace([], [], stopped_by=TERMINATION_ERROR)
        finish = self.lifecycle.execute(session_id, run_id, work, failed_trace=failed_trace)
        return ChatOutcome(
            finish.status == SUCCESS,
            finish.answer,
            finish.error_message,
            session_id,
            run_id,
            FLOW,
            finish.status,
            finish.degraded,
            finish.replayed,
        )

    def investigate(
        self,
        user_request: str | None = None,
        *,
        session_id: str | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> ChatOutcome:
        """``start`` then ``execute``, synchronously."""
        session_id, run_id = self.start(session_id, user_request)
        return self.execute(session_id, run_id, user_request, on_event)
