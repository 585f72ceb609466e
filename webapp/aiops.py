"""The AIOps flow on the real adapters: the supervisor graph of
:mod:`diagnosis_graph.workflow.aiops`, its recorded alert source, and the AIOps run lifecycle.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from diagnosis_graph.workflow.aiops.evaluation import aiops_rule_evaluation
from diagnosis_graph.workflow.aiops.graph import AiOpsPorts, AlertsRead, build_aiops_trace
from diagnosis_graph.workflow.aiops.report import cited_ids
from diagnosis_graph.workflow.aiops.supervisor import DEFAULT_REQUEST, run_aiops
from diagnosis_graph.workflow.factory import DiagnosisRun
from diagnosis_graph.workflow.ports import SUCCESS
from diagnosis_graph.workflow.trace import TERMINATION_ERROR

from .diagnosis import (
    Audit,
    Diagnoser,
    DiagnosisResult,
    ExternalTools,
    attach_evidence,
    new_run_id,
)
from .llm.prompts import prompt_version
from .llm.types import ChatModel
from .persistence.context import RunContext, run_scope
from .persistence.runs import AI_OPS, Finish, RunStore, new_session_id
from .services.alert_inbox import alerts_of_run
from .services.chat import ChatOutcome
from .services.lifecycle import RunLifecycle
from .telemetry import TelemetryBackend
from .telemetry.composite import unreadable
from .tools.catalog import KnowledgeSearch, telemetry_tools
from .tools.registry import ToolBox

log = logging.getLogger(__name__)

FLOW = "aiops"
SUPERVISOR = "aiops_supervisor"
OnEvent = Callable[[dict[str, Any]], None]


class RecordedAlerts:
    """``AlertSource`` over the backend's ``query_alerts`` tool and the run's recorder."""

    def __init__(self, backend: TelemetryBackend, recorder: Audit) -> None:
        self.tools = [t for t in telemetry_tools(backend) if t.name == "query_alerts"]
        self.recorder = recorder

    def firing_alerts(self, session_id: str, run_id: str) -> AlertsRead:
        """Every firing alert; ``ok=False`` with a detail when the query failed."""
        box = ToolBox(self.tools, self.recorder, SUPERVISOR)
        with run_scope(session_id, run_id):
            call = box.call("query_alerts", json.dumps({"state": "firing"}), None)
        result = call.output if call.status == SUCCESS else None
        alerts = result.get("alerts") if isinstance(result, dict) else None
        if not isinstance(alerts, list):
            detail = result.get("error") if isinstance(result, dict) else None
            return AlertsRead(False, (), call.invocation_id, str(detail or "no alert list"))
        return AlertsRead(True, [a for a in alerts if isinstance(a, dict)], call.invocation_id)


class AiOpsRunner:
    """Runs the AIOps supervisor graph with LLM agents, telemetry tools and an audit store."""

    def __init__(
        self,
        *,
        model: ChatModel,
        audit: Audit,
        backend: TelemetryBackend,
        knowledge: KnowledgeSearch,
        external: ExternalTools | None = None,
    ) -> None:
        self.audit = audit
        self.backend = backend
        self.diagnoser = Diagnoser(
            model=model,
            backend=backend,
            knowledge=knowledge,
            audit=audit,
            tracker=None,
            external=external,
        )
        self.alerts = RecordedAlerts(backend, audit)

    def run(
        self,
        request: str | None,
        *,
        session_id: str,
        run_id: str,
        on_event: OnEvent | None = None,
        scope: Sequence[Mapping[str, str]] = (),
    ) -> DiagnosisResult:
        """Investigate the firing alerts (of ``scope``, if given) and render the report, telling
        ``on_event`` each progress event; model failures never raise."""
        ports = AiOpsPorts(
            alerts=self.alerts,
            invocations=self.audit,
            diagnosis=self.diagnoser.graph,
            reference_time=lambda: self.backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ"),
            listener=on_event or (lambda event: None),
            unreadable=lambda: unreadable(self.backend),
        )
        with run_scope(session_id, run_id):
            run = run_aiops(
                ports,
                request,
                session_id=session_id,
                run_id=run_id,
                scope=scope,
            )
            # inside the run: the invocations come from its journal, not from the database
            evaluation = self._evaluate(run, run_id)
            attach_evidence(self.audit, run_id, _cited_state(run.state.get("investigations") or []))
        return DiagnosisResult(session_id, run_id, run, evaluation)

    def _evaluate(self, run: DiagnosisRun, run_id: str) -> dict[str, Any]:
        """``{"aiops_rule_evaluation": ...}``; an unreadable audit store is reported, not raised."""
        try:
            invocations = self.audit.invocations_for_run(run_id)
        except Exception as exc:
            log.exception("could not read the invocations of run %s", run_id)
            return {"aiops_rule_evaluation": {"error": f"{type(exc).__name__}: {exc}"}}
        return {
            "aiops_rule_evaluation": aiops_rule_evaluation(run.state, invocations, prompt_version())
        }


def _cited_state(investigations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The investigations' verified claims and evidence, and the report's citations, in the
    shape of a chat run's state (what ``attach_evidence`` reads)."""
    return {
        "verified_executor_output": {
            "claims": [c for inv in investigations for c in inv.get("verified_claims") or []]
        },
        "verified_evidence": [e for inv in investigations for e in inv.get("evidence") or []],
        "composer_output": {
            "conclusions": [{"evidence_ids": [i for inv in investigations for i in cited_ids(inv)]}]
        },
    }


class AiOpsService:
    """Starts and executes AIOps runs; what ``POST /api/ai_ops`` calls."""

    def __init__(self, *, runs: RunStore, runner: AiOpsRunner, audit: Audit) -> None:
        self.runs = runs
        self.runner = runner
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
        on_event: OnEvent | None = None,
    ) -> ChatOutcome:
        """Run a started AIOps run to its end; never raises for the run's failures."""

        def work(context: RunContext) -> Finish:
            run = self.runner.run(
                user_request,
                session_id=context.session_id,
                run_id=context.run_id,
                on_event=on_event,
                scope=alerts_of_run(self.runs.database, context.run_id),
            )
            return Finish(
                run.run.status,
                run.answer,
                run.degraded,
                run.run.error,
                run.self_evaluation,
                run.orchestration_trace,
            )

        failed_trace = build_aiops_trace([], [], stopped_by=TERMINATION_ERROR)
        finish = self.lifecycle.execute(session_id, run_id, work, failed_trace=failed_trace)
        return ChatOutcome.of(finish, session_id, run_id, FLOW)
