"""One AIOps run in process: the supervisor graph on the real adapters, and what it leaves behind.

:class:`AiOpsRunner` wires the ports of :mod:`diagnosis_graph.workflow.aiops`: the recorded
``query_alerts`` read, the run's audit store, and the chat flow's diagnosis graph - built by a
:class:`~webapp.diagnosis.Diagnoser` with the same agents and tools as the chat, so every alert
goes through the chat's planner, executor, gatekeeper, verifier, composer and fallback. That
diagnoser has no retrieval de-duplication: every alert's executor is a fresh conversation that
needs the runbook text in its own context, even if another alert already read it.

Bounds: at most 8 alerts (most severe first), at most 2 rounds each (the chat graph's evidence
retry), the chat graph's retry budgets per alert, each executor within its ReAct ``Budget``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from diagnosis_graph.workflow.aiops import (
    MAX_ALERTS,
    AiOpsPorts,
    AiOpsRun,
    aiops_rule_evaluation,
    cited_ids,
    run_aiops,
)
from diagnosis_graph.workflow.projection import evidence_refs

from ..diagnosis import Audit, Diagnoser, ExternalTools
from ..llm.prompts import prompt_version
from ..llm.react import Budget
from ..llm.types import ChatModel
from ..persistence.context import run_scope
from ..telemetry import TelemetryBackend
from ..telemetry.composite import unreadable
from ..tools.catalog import KnowledgeSearch
from .alerts import RecordedAlerts

log = logging.getLogger(__name__)

OnEvent = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class AiOpsResult:
    """A finished AIOps run: the graph's result plus what the run is persisted with."""

    session_id: str
    run_id: str
    run: AiOpsRun
    self_evaluation: dict[str, Any]
    events: list[dict[str, Any]]

    @property
    def answer(self) -> str | None:
        """The report (None when the run FAILED)."""
        return self.run.answer

    @property
    def degraded(self) -> bool:
        """Part of the report is a fallback."""
        return self.run.degraded

    @property
    def investigations(self) -> list[dict[str, Any]]:
        """One summary per investigated alert."""
        return list(self.run.state.get("investigations") or [])

    @property
    def orchestration_trace(self) -> dict[str, Any]:
        """The ``aiops-stategraph-v1`` trace."""
        return self.run.orchestration_trace


class AiOpsRunner:
    """Runs the AIOps supervisor graph with LLM agents, telemetry tools and an audit store."""

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
        external: ExternalTools | None = None,
    ) -> None:
        self.audit = audit
        self.backend = backend
        self.max_alerts = max_alerts
        self.diagnoser = Diagnoser(
            model=model,
            backend=backend,
            knowledge=knowledge,
            audit=audit,
            tracker=None,
            response_mode=response_mode,
            budget=budget,
            external=external,
        )
        self.alerts = RecordedAlerts(backend, audit)

    def _reference_time(self) -> str:
        return self.backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ")

    def run(
        self,
        request: str | None,
        *,
        session_id: str,
        run_id: str,
        on_event: OnEvent | None = None,
        scope: Sequence[Mapping[str, str]] = (),
    ) -> AiOpsResult:
        """Investigate the firing alerts (of ``scope``, if given) and render the report.

        Model failures never raise.
        """
        events: list[dict[str, Any]] = []

        def listen(event: dict[str, Any]) -> None:
            events.append(event)
            if on_event is not None:
                try:
                    on_event(event)
                except Exception:  # the listener's failure is not the run's
                    log.exception("progress listener of run %s failed", run_id)

        ports = AiOpsPorts(
            alerts=self.alerts,
            invocations=self.audit,
            diagnosis=self.diagnoser.graph,
            reference_time=self._reference_time,
            listener=listen,
            unreadable=lambda: unreadable(self.backend),
        )
        with run_scope(session_id, run_id):
            run = run_aiops(
                ports,
                request,
                session_id=session_id,
                run_id=run_id,
                max_alerts=self.max_alerts,
                scope=scope,
            )
            # inside the run: the invocations come from its journal, not from the database
            evaluation = self._evaluate(run, run_id)
            self._attach_evidence(run_id, run.state.get("investigations") or [])
        return AiOpsResult(session_id, run_id, run, evaluation, events)

    def _evaluate(self, run: AiOpsRun, run_id: str) -> dict[str, Any]:
        """``{"aiops_rule_evaluation": ...}``; an unreadable audit store is reported, not raised."""
        try:
            invocations = self.audit.invocations_for_run(run_id)
        except Exception as exc:
            log.exception("could not read the invocations of run %s", run_id)
            return {"aiops_rule_evaluation": {"error": f"{type(exc).__name__}: {exc}"}}
        return {
            "aiops_rule_evaluation": aiops_rule_evaluation(run.state, invocations, prompt_version())
        }

    def _attach_evidence(self, run_id: str, investigations: Sequence[dict[str, Any]]) -> None:
        """Record on each invocation the verified evidence drawn from it (best effort)."""
        cited = [i for inv in investigations for i in cited_ids(inv)]
        state = {
            "verified_executor_output": {
                "claims": [c for inv in investigations for c in inv.get("verified_claims") or []]
            },
            "verified_evidence": [e for inv in investigations for e in inv.get("evidence") or []],
            "composer_output": {"conclusions": [{"evidence_ids": cited}]},
        }
        try:
            self.audit.attach_evidence(evidence_refs(state))
        except Exception:
            log.exception("could not store the evidence refs of run %s", run_id)
