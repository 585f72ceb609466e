"""The AIOps supervisor: a deterministic, bounded loop over planner, executor and reporter agents.

One run: read the firing alerts with ``query_alerts`` (recorded, by the supervisor itself, so
the invocation has no model step); the planner (``aiops_plan``) plans one investigation per
alert; per alert the executor (a ReAct agent with the log, metric and knowledge tools) answers
``executor_evidence_v2`` and the gatekeeper checks every binding against this run's recorded
invocations; the reporter (``aiops_report``) sees only the verified projection and must cite
only verified evidence ids; a deterministic fallback report replaces it when it cannot.

Bounds: at most ``max_alerts`` (8) alerts, most severe first; at most ``max_rounds`` (2)
planner/executor rounds per alert - the second only when the first one's verified evidence
names a known service that no verified evidence comes from yet; every agent execution at most
two attempts (one technical retry); each executor attempt within its ReAct ``Budget`` (6 tool
rounds, so at most 7 model calls, 12 tool calls, 3 blocked calls). With the defaults a run
makes at most 2 + 8 x (14 + 2 + 14) + 2 = 244 model calls and 1 + 8 x 4 x 12 = 385 tool calls.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow import contracts as dc
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import SUCCESS

from ..context import run_scope
from ..diagnosis import Audit
from ..llm.agents import LLMAgentInvoker
from ..llm.prompts import prompt_version
from ..llm.react import Budget
from ..llm.types import ChatModel
from ..tools.backends import TelemetryBackend
from ..tools.catalog import KnowledgeSearch, diagnosis_tools, telemetry_tools
from ..tools.registry import ToolBox, tool_roles
from .agents import AgentRunner, progress
from .cases import AlertCase, priority
from .contracts import AIOPS_PLAN, AIOPS_REPORT, MAX_ALERTS, AiOpsPlan, AiOpsReport, AlertPlan
from .contracts import json_schema as aiops_schema
from .evaluation import ReportState, aiops_rule_evaluation
from .evidence import duplicate_claims, evidence_gaps, snapshot, verify_round
from .report import render_report, report_problem, run_evidence_refs

log = logging.getLogger(__name__)

DEFAULT_REQUEST = "Investigate the firing alerts"
MAX_ROUNDS = 2
SUPERVISOR = "aiops_supervisor"
PLANNER, EXECUTOR, REPORTER = "aiops_planner", "aiops_executor", "aiops_reporter"
ALERTS_NODE, GATEKEEPER_NODE, FALLBACK_NODE = "aiops_alerts", "aiops_gatekeeper", "aiops_fallback"
FULL, GAP_ONLY = "FULL", "EVIDENCE_GAP_ONLY"

OnEvent = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class AiOpsResult:
    """A finished AIOps run: the report answer and everything it is persisted with."""

    session_id: str
    run_id: str
    answer: str
    degraded: bool
    report: dict[str, Any] | None
    cases: list[AlertCase]
    skipped: list[dict[str, Any]]
    events: list[dict[str, Any]]
    self_evaluation: dict[str, Any]


def _unknown(plan: AiOpsPlan, known: set[str]) -> str | None:
    unknown = sorted({a.alert_name for a in plan.alerts} - known)
    return f"the plan names alerts that are not firing: {unknown}" if unknown else None


class AiOpsSupervisor:
    """Investigates the firing alerts with agents, tools and the gatekeeper; thread-safe."""

    def __init__(
        self,
        *,
        model: ChatModel,
        audit: Audit,
        backend: TelemetryBackend,
        knowledge: KnowledgeSearch,
        response_mode: str = "json_schema",
        budget: Budget | None = None,
        max_alerts: int = MAX_ALERTS,
        max_rounds: int = MAX_ROUNDS,
    ) -> None:
        self.audit = audit
        self.backend = backend
        self.max_alerts = max(1, min(max_alerts, MAX_ALERTS))
        self.max_rounds = max(1, min(max_rounds, MAX_ROUNDS))
        self.alert_tools = [t for t in telemetry_tools(backend) if t.name == "query_alerts"]
        # No retrieval de-duplication: every alert's executor is a fresh conversation that
        # needs the runbook text in its own context, even if another alert already read it.
        self.tools = diagnosis_tools(backend, knowledge, None)
        self.invoker = LLMAgentInvoker(
            model, audit, audit, lambda: self.tools, response_mode=response_mode, budget=budget
        )

    def run(
        self,
        request: str | None,
        *,
        session_id: str,
        run_id: str,
        on_event: OnEvent | None = None,
    ) -> AiOpsResult:
        """Investigate every firing alert and write the report; model failures never raise."""
        job = _Job(self, request or DEFAULT_REQUEST, session_id, run_id, on_event)
        with run_scope(session_id, run_id):
            return job.run()


class _Job:
    """The state of one run; lives only while the run executes."""

    def __init__(
        self,
        sup: AiOpsSupervisor,
        request: str,
        session_id: str,
        run_id: str,
        on_event: OnEvent | None,
    ) -> None:
        self.sup = sup
        self.request = request
        self.session_id = session_id
        self.run_id = run_id
        self.on_event = on_event
        self.events: list[dict[str, Any]] = []
        config = RunConfig(thread_id=run_id, metadata={"session_id": session_id, "run_id": run_id})
        self.runner = AgentRunner(sup.invoker, config, self.emit)
        self.reference_time = sup.backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ")
        self.planner_outcome: str | None = None

    def emit(self, event: dict[str, Any]) -> None:
        """Keep the progress event and hand it to the listener (whose failure is not ours)."""
        self.events.append(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                log.exception("progress listener of run %s failed", self.run_id)

    def run(self) -> AiOpsResult:
        """Alerts, plan, investigations, report."""
        alerts = self.read_alerts()
        if alerts is None:
            state = ReportState(None, "fallback", None, None, "the firing alerts could not be read")
            self.emit(progress(FALLBACK_NODE, Outcome.COMPLETED, "completed", 1))
            return self.finish([], [], state)
        ordered = sorted(alerts, key=priority)
        cases = [AlertCase(f"A{n}", a) for n, a in enumerate(ordered[: self.sup.max_alerts], 1)]
        skipped = ordered[self.sup.max_alerts :]
        if not cases:
            return self.finish([], [], ReportState(None, "none", None, None))
        if not self.plan(cases):
            reason = f"the planner failed ({self.planner_outcome})"
            self.emit(progress(FALLBACK_NODE, Outcome.COMPLETED, "completed", 1))
            return self.finish(
                cases, skipped, ReportState(None, "fallback", self.planner_outcome, None, reason)
            )
        for case in cases:
            self.investigate(case)
        return self.report(cases, skipped)

    # -- alerts and plan --------------------------------------------------------------------

    def read_alerts(self) -> list[dict[str, Any]] | None:
        """The firing alerts, read with the recorded ``query_alerts`` tool (None on failure)."""
        box = ToolBox(self.sup.alert_tools, self.sup.audit, SUPERVISOR)
        call = box.call("query_alerts", json.dumps({"state": "firing"}), None)
        result = json.loads(call.content).get("result")
        alerts = result.get("alerts") if isinstance(result, dict) else None
        if call.status != SUCCESS or not isinstance(alerts, list):
            self.emit(progress(ALERTS_NODE, Outcome.FAILED, "alerts_unavailable", 1))
            return None
        self.emit(progress(ALERTS_NODE, Outcome.COMPLETED, "completed", 1))
        return [a for a in alerts if isinstance(a, dict) and a.get("state") == "firing"]

    def _tools(self) -> list[dict[str, Any]]:
        return self.sup.invoker.tool_definitions()

    def plan(self, cases: Sequence[AlertCase]) -> bool:
        """One planner execution for all alerts; False when no plan could be had."""
        payload = {
            "request": self.request,
            "reference_time": self.reference_time,
            "mode": FULL,
            "alerts": [case.brief() for case in cases],
            "tools": self._tools(),
        }
        known = {case.name for case in cases}
        result = self.runner.run(
            PLANNER,
            AiOpsPlan,
            (AIOPS_PLAN, aiops_schema(AIOPS_PLAN)),
            payload,
            check=lambda plan: _unknown(plan, known),
        )
        self.planner_outcome = result.outcome.value
        if not result.completed:
            for case in cases:
                case.note = f"not investigated: the planner failed ({result.detail})"
            return False
        planned: dict[str, AlertPlan] = {}
        for entry in result.output.alerts:
            planned.setdefault(entry.alert_name, entry)
        for case in cases:
            case.plan = planned.get(case.name)
            if case.plan is None:
                case.note = "not investigated: the planner planned no investigation for it"
        return True

    # -- investigation ----------------------------------------------------------------------

    def investigate(self, case: AlertCase) -> None:
        """Up to ``max_rounds`` executor rounds; a later round only closes evidence gaps."""
        plan, mode = case.plan, FULL
        while plan is not None and case.rounds < self.sup.max_rounds:
            case.rounds += 1
            output = self.execute(case, plan, mode)
            if output is None:
                return
            gaps = self.verify(case, output)
            if not gaps:
                return
            plan, mode = self.gap_plan(case, gaps), GAP_ONLY

    def execute(self, case: AlertCase, plan: AlertPlan, mode: str) -> dict[str, Any] | None:
        """The executor's full evidence snapshot for this round, or None when it failed."""
        earlier = case.verified_claims if mode == GAP_ONLY else []
        payload: dict[str, Any] = {
            "question": plan.question,
            "reference_time": self.reference_time,
            "mode": mode,
            "alert": case.brief(),
            "plan": {"mode": mode, "queries": [q.model_dump() for q in plan.queries]},
        }
        if earlier:
            payload["verified_claims"] = earlier
        result = self.runner.run(
            EXECUTOR,
            dc.ExecutorEvidence,
            (dc.EXECUTOR_EVIDENCE, dc.json_schema(dc.EXECUTOR_EVIDENCE)),
            payload,
            tools=True,
            check=duplicate_claims,
            alert=case.name,
        )
        case.executor_outcome = result.outcome.value
        if not result.completed:
            if not case.local_evidence:
                case.note = f"the investigation failed ({result.outcome.value}: {result.detail})"
            return None
        return snapshot(result.output, earlier)

    def verify(self, case: AlertCase, output: dict[str, Any]) -> list[dict[str, Any]]:
        """Gatekeeper over this run's invocations; returns the gaps a next round should close."""
        records = self.sup.audit.invocations_for_run(self.run_id)
        gate, projected, evidence = verify_round(
            output,
            records,
            self.run_id,
            roles=tool_roles(self.sup.tools),
            services=self.sup.backend.services(),
        )
        case.verdicts.append(gate["verdict"])
        if evidence:
            case.gate, case.verified_output, case.local_evidence = gate, projected, evidence
            case.note = None
        elif not case.local_evidence:
            case.gate = gate
            case.note = "no claim of the investigation passed the evidence gatekeeper"
        gaps: list[dict[str, Any]] = []
        if case.local_evidence and case.rounds < self.sup.max_rounds:
            gaps = evidence_gaps(
                case.service, case.local_evidence, records, self.sup.backend.services()
            )
            case.gaps += gaps
        reason = "evidence_gap" if gaps else f"gatekeeper_{gate['verdict'].lower()}"
        self.emit(progress(GATEKEEPER_NODE, Outcome.COMPLETED, reason, 1, case.name))
        return gaps

    def gap_plan(self, case: AlertCase, gaps: list[dict[str, Any]]) -> AlertPlan | None:
        """The planner again, for this alert's gaps only; None when it failed."""
        payload = {
            "request": self.request,
            "reference_time": self.reference_time,
            "mode": GAP_ONLY,
            "alerts": [case.brief()],
            "question": case.plan.question if case.plan else None,
            "previous_plan": case.plan.model_dump() if case.plan else None,
            "evidence_gaps": gaps,
            "verified_claims": [
                {"claim_id": c["claim_id"], "statement": c["statement"]}
                for c in case.verified_claims
            ],
            "tools": self._tools(),
        }
        result = self.runner.run(
            PLANNER,
            AiOpsPlan,
            (AIOPS_PLAN, aiops_schema(AIOPS_PLAN)),
            payload,
            check=lambda plan: _unknown(plan, {case.name}),
            alert=case.name,
        )
        if not result.completed:
            return None
        return next((a for a in result.output.alerts if a.alert_name == case.name), None)

    # -- report -----------------------------------------------------------------------------

    def report(self, cases: list[AlertCase], skipped: list[dict[str, Any]]) -> AiOpsResult:
        """The reporter over the verified projection; the fallback report when it fails."""
        payload = {
            "request": self.request,
            "reference_time": self.reference_time,
            "alerts": [case.reporter_view() for case in cases],
            "not_investigated": [{k: a.get(k) for k in ("alert_name", "service")} for a in skipped],
        }
        result = self.runner.run(
            REPORTER,
            AiOpsReport,
            (AIOPS_REPORT, aiops_schema(AIOPS_REPORT)),
            payload,
            check=lambda report: report_problem(report, cases),
        )
        if result.completed:
            state = ReportState(result.output, "reporter", self.planner_outcome, "COMPLETED")
            return self.finish(cases, skipped, state)
        self.emit(progress(FALLBACK_NODE, Outcome.COMPLETED, "completed", 1))
        reason = f"the reporter failed ({result.outcome.value}: {result.detail})"
        state = ReportState(None, "fallback", self.planner_outcome, result.outcome.value, reason)
        return self.finish(cases, skipped, state)

    def finish(
        self, cases: list[AlertCase], skipped: list[dict[str, Any]], state: ReportState
    ) -> AiOpsResult:
        """Render the answer, evaluate the run, store the evidence refs."""
        answer = render_report(
            self.request, self.reference_time, cases, skipped, state.report, state.fallback_reason
        )
        invocations = self.sup.audit.invocations_for_run(self.run_id)
        bounds = {"max_alerts": self.sup.max_alerts, "max_rounds_per_alert": self.sup.max_rounds}
        evaluation = aiops_rule_evaluation(
            cases, skipped, invocations, state, prompt_version(), bounds
        )
        self._attach_evidence(cases, evaluation["cited_evidence_ids"])
        return AiOpsResult(
            self.session_id,
            self.run_id,
            answer,
            state.source == "fallback",
            state.report.model_dump() if state.report else None,
            cases,
            skipped,
            self.events,
            {"aiops_rule_evaluation": evaluation},
        )

    def _attach_evidence(self, cases: Sequence[AlertCase], cited: list[str]) -> None:
        """Record on each invocation the verified evidence drawn from it (best effort)."""
        try:
            self.sup.audit.attach_evidence(run_evidence_refs(cases, cited))
        except Exception:
            log.exception("could not store the evidence refs of run %s", self.run_id)
