"""The chat run: session and run rows, history, and the complex or simple flow.

:meth:`ChatService.start` creates the session (if new) and the PENDING run;
:meth:`ChatService.execute` runs the flow under :class:`~.lifecycle.RunLifecycle`, which
claims, saves and fails it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from diagnosis_graph.workflow.evaluation import tool_statistics
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.trace import TERMINATION_ERROR, build_orchestration_trace

from ..diagnosis import Diagnoser, new_run_id
from ..persistence.audit import Audit
from ..persistence.context import RunContext
from ..persistence.history import HistoryLoad, HistoryMessage, HistoryStore
from ..persistence.runs import CHAT, FAILED, SUCCESS, Finish, RunStore, new_session_id
from .lifecycle import RunLifecycle
from .routing import COMPLEX, FlowRouter
from .simple import SimpleChat

log = logging.getLogger(__name__)
#: How often at most a complex run saves its partial trace (what an interrupted run keeps).
PARTIAL_TRACE_SECONDS = 1.0


@dataclass(frozen=True)
class ChatOutcome:
    """What ``POST /api/chat`` answers."""

    success: bool
    answer: str | None
    error_message: str | None
    session_id: str
    run_id: str
    flow: str
    status: str
    degraded: bool
    #: The run was not PENDING (a redelivered job): nothing was executed, this is its record.
    replayed: bool = False

    @classmethod
    def of(cls, finish: Finish, session_id: str, run_id: str, flow: str) -> ChatOutcome:
        """The outcome of a run that finished as ``finish``."""
        return cls(
            finish.status == SUCCESS,
            finish.answer,
            finish.error_message,
            session_id,
            run_id,
            flow,
            finish.status,
            finish.degraded,
            finish.replayed,
        )

    @classmethod
    def of_row(cls, row: Any) -> ChatOutcome:
        """The outcome a finished run's row records."""
        finish = Finish(row.status, row.answer, bool(row.degraded), row.error_message)
        return cls.of(finish, row.session_id, row.run_id, row.flow)


@dataclass(kw_only=True, eq=False)
class ChatService:
    """Runs chat turns: session, run rows, history, and the complex or simple flow."""

    runs: RunStore
    diagnoser: Diagnoser
    simple: SimpleChat
    history: HistoryStore
    router: FlowRouter
    audit: Audit

    def __post_init__(self) -> None:
        self.lifecycle = RunLifecycle(self.runs, self.audit)

    def start(self, question: str, session_id: str | None, mode: str) -> tuple[str, str, str]:
        """Steps 1-2: session and run rows; returns ``(session_id, run_id, flow)``."""
        new = not session_id
        session_id = session_id or new_session_id()
        run_id = new_run_id()
        flow = self.router.route(question, mode)
        self.runs.open_run(run_id, session_id, CHAT, flow, question, new_session=new)
        return session_id, run_id, flow

    def chat(
        self,
        question: str,
        *,
        session_id: str | None = None,
        mode: str = "auto",
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> ChatOutcome:
        """Run one chat turn synchronously."""
        session_id, run_id, flow = self.start(question, session_id, mode)
        return self.execute(question, session_id, run_id, flow, on_event=on_event)

    def execute(
        self,
        question: str,
        session_id: str,
        run_id: str,
        flow: str,
        *,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> ChatOutcome:
        """Steps 3-9 for a run created by :meth:`start`; never raises for the run's failures."""

        def work(run: RunContext) -> Finish:
            history = self.history.load(run.session_id)
            if flow == COMPLEX:
                events = self._tracing(run.run_id, on_event)
                return self._complex(question, run, history, events)
            return self._simple(question, run, history)

        failed_trace = (
            build_orchestration_trace([], 0, stopped_by=TERMINATION_ERROR)
            if flow == COMPLEX
            else None
        )
        finish = self.lifecycle.execute(session_id, run_id, work, failed_trace=failed_trace)
        if finish.status == SUCCESS and finish.answer and not finish.replayed:
            self._remember(session_id, run_id, question, finish.answer)
        return ChatOutcome.of(finish, session_id, run_id, flow)

    def _tracing(
        self, run_id: str, on_event: Callable[[dict[str, Any]], None] | None
    ) -> Callable[[dict[str, Any]], None]:
        """``on_event`` that also saves the trace so far on the run (an interrupted run's), at most
        every :data:`PARTIAL_TRACE_SECONDS` from the run's start."""
        seen: list[dict[str, Any]] = []
        saved = [time.monotonic()]

        def forward(event: dict[str, Any]) -> None:
            seen.append(event)
            now = time.monotonic()
            if now - saved[0] >= PARTIAL_TRACE_SECONDS:
                saved[0] = now
                try:
                    trace = build_orchestration_trace(seen, 0, stopped_by=TERMINATION_ERROR)
                    self.runs.save_partial_trace(run_id, trace)
                except Exception as exc:  # the final trace is written anyway: insurance
                    log.warning("partial trace of run %s not saved: %s", run_id, exc)
            if on_event is not None:
                on_event(event)

        return forward

    def _complex(
        self,
        question: str,
        run: RunContext,
        history: HistoryLoad,
        on_event: Callable[[dict[str, Any]], None] | None,
    ) -> Finish:
        result = self.diagnoser.diagnose(
            question,
            session_id=run.session_id,
            run_id=run.run_id,
            history=[m.to_dict() for m in history.messages],
            on_event=on_event,
            resume=run.journal.resumed,
        )
        evaluation = dict(result.self_evaluation)
        rules = {**evaluation["rule_evaluation"], "history": _history_note(history)}
        evaluation["rule_evaluation"] = rules
        done = result.run
        trace = done.orchestration_trace
        return Finish(done.status, done.answer, done.degraded, done.error, evaluation, trace)

    def _simple(self, question: str, run: RunContext, history: HistoryLoad) -> Finish:
        reply = self.simple.answer(
            question, history.messages, session_id=run.session_id, run_id=run.run_id
        )
        evaluation = {
            "rule_evaluation": {
                **tool_statistics(self.audit.invocations_for_run(run.run_id)),
                "outcome": reply.outcome.value,
                "prompt_version": reply.prompt_version,
                "history": _history_note(history),
            }
        }
        if reply.outcome is Outcome.COMPLETED:
            return Finish(SUCCESS, reply.answer, self_evaluation=evaluation)
        return Finish(
            FAILED,
            None,
            error_message=reply.detail or reply.outcome.value,
            self_evaluation=evaluation,
        )

    def _remember(self, session_id: str, run_id: str, question: str, answer: str) -> None:
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        written = self.history.append(
            session_id,
            [
                HistoryMessage("user", question, run_id, now),
                HistoryMessage("assistant", answer, run_id, now),
            ],
        )
        if not written.ok:
            log.warning("history of session %s not written: %s", session_id, written.error)


def _history_note(history: HistoryLoad) -> dict[str, Any]:
    return {
        "available": history.available,
        "messages": len(history.messages),
        "error": history.error,
    }
