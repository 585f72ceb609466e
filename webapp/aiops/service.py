"""The AIOps run lifecycle (``agent_flow=AI_OPS``, ``flow=aiops``), mirroring the chat's.

``start`` ensures the session and creates the run PENDING; ``execute`` marks it RUNNING, runs
the supervisor under the run's identity, and saves the report with duration, step and tool
counts and ``{"aiops_rule_evaluation": ...}`` as SUCCESS (``degraded`` for the fallback
report), or FAILED with the error on an unhandled one. ``orchestration_trace`` stays null: the
supervisor is a plain loop, not a StateGraph run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..diagnosis import new_run_id
from ..services.chat import ChatOutcome, RunCounts
from ..services.runs import AI_OPS, SUCCESS, Finish, RunStore, new_session_id
from .supervisor import DEFAULT_REQUEST, AiOpsSupervisor

log = logging.getLogger(__name__)

FLOW = "aiops"


class AiOpsService:
    """Starts and executes AIOps runs; what ``POST /api/ai_ops`` calls."""

    def __init__(self, *, runs: RunStore, supervisor: AiOpsSupervisor, audit: RunCounts) -> None:
        self.runs = runs
        self.supervisor = supervisor
        self.audit = audit

    def start(self, session_id: str | None, user_request: str | None) -> tuple[str, str]:
        """Ensure the session and create the run PENDING; returns ``(session_id, run_id)``."""
        session_id = session_id or new_session_id()
        run_id = new_run_id()
        question = user_request or DEFAULT_REQUEST
        self.runs.ensure_session(session_id, question)
        self.runs.create_run(run_id, session_id, AI_OPS, FLOW, question)
        return session_id, run_id

    def execute(
        self,
        session_id: str,
        run_id: str,
        user_request: str | None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> ChatOutcome:
        """Run a started AIOps run to its end; never raises for the run's failures."""

        def work() -> Finish:
            result = self.supervisor.run(
                user_request, session_id=session_id, run_id=run_id, on_event=on_event
            )
            return Finish(
                SUCCESS, result.answer, result.degraded, self_evaluation=result.self_evaluation
            )

        finish = self.runs.execute(run_id, work, self.audit.counts_for_run)
        return ChatOutcome(
            finish.status == SUCCESS,
            finish.answer,
            finish.error_message,
            session_id,
            run_id,
            FLOW,
            finish.status,
            finish.degraded,
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
