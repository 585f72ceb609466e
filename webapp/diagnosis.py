"""One diagnosis run, in process: the graph, its agents and tools, and what it leaves behind."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from diagnosis_graph.checkpoint import Checkpointer
from diagnosis_graph.workflow.evaluation import build_self_evaluation
from diagnosis_graph.workflow.factory import DiagnosisRun, build_diagnosis_graph, run_diagnosis
from diagnosis_graph.workflow.ports import DiagnosisPorts
from diagnosis_graph.workflow.projection import evidence_refs

from .analysis.timeexpr import DEFAULT_TIMEZONE, resolve_window
from .llm.agents import LLMAgentInvoker
from .llm.prompts import prompt_version
from .llm.types import ChatModel
from .persistence.audit import Audit
from .persistence.context import run_scope
from .telemetry import TelemetryBackend
from .telemetry.composite import data_ranges, unreadable
from .tools.catalog import DocFilter, KnowledgeSearch, diagnosis_tools
from .tools.registry import ToolSpec, tool_roles


class ExternalTools(Protocol):
    """Tools served elsewhere (the MCP servers of ``MCP_SERVERS``), offered next to ours."""

    def specs(self) -> list[ToolSpec]:
        """The tools that could be listed."""
        ...

    def errors(self) -> list[str]:
        """Why each source of tools that could not be listed was not."""
        ...


@dataclass(frozen=True)
class DiagnosisResult:
    """A finished run: the workflow's result plus what the run is persisted with."""

    session_id: str
    run_id: str
    run: DiagnosisRun
    self_evaluation: dict[str, Any]

    @property
    def answer(self) -> str | None:
        """The final answer (None when the run FAILED)."""
        return self.run.answer

    @property
    def degraded(self) -> bool:
        """Part of the answer is a fallback."""
        return self.run.degraded

    @property
    def orchestration_trace(self) -> dict[str, Any]:
        """The route the graph took."""
        return self.run.orchestration_trace


log = logging.getLogger(__name__)


def new_run_id() -> str:
    """``run-`` plus 24 random hex characters."""
    return f"run-{uuid.uuid4().hex[:24]}"


class Diagnoser:
    """Runs the diagnosis graph with LLM agents, telemetry tools and an audit store."""

    def __init__(
        self,
        *,
        model: ChatModel,
        backend: TelemetryBackend,
        knowledge: KnowledgeSearch,
        audit: Audit,
        tracker: Any = None,
        default_timezone: str = DEFAULT_TIMEZONE,
        external: ExternalTools | None = None,
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self.model = model
        self.default_timezone = default_timezone
        self.backend = backend
        self.audit = audit
        self.tracker: DocFilter | None = tracker
        self.tools = diagnosis_tools(backend, knowledge, tracker)
        self.external = external
        self.invoker = LLMAgentInvoker(model, audit, self.all_tools)
        ports = DiagnosisPorts(
            self.invoker,
            audit,
            self.invoker.tool_definitions,
            service_catalog=backend.services,
            tool_roles=lambda: tool_roles(self.all_tools()),
            data_range=lambda: data_ranges(backend),
            unreadable=lambda: [*unreadable(backend), *(external.errors() if external else [])],
        )
        self.graph = build_diagnosis_graph(ports, checkpointer)

    def all_tools(self) -> list[ToolSpec]:
        """Our tools, then those of the external tool servers (MCP) that could be listed."""
        return [*self.tools, *(self.external.specs() if self.external else [])]

    def diagnose(
        self,
        question: str,
        *,
        session_id: str = "local",
        run_id: str | None = None,
        history: Sequence[Mapping[str, Any]] = (),
        on_event: Callable[[dict[str, Any]], None] | None = None,
        resume: bool = False,
    ) -> DiagnosisResult:
        """Diagnose ``question``; never raises for model, tool or node failures.

        ``resume``: continue the run ``run_id`` after its latest checkpoint (a graph built
        with a checkpointer), executing none of its completed nodes again.
        """
        run_id = run_id or new_run_id()
        now = self.backend.reference_time()
        with run_scope(session_id, run_id):
            try:
                run = run_diagnosis(
                    self.graph,
                    question,
                    session_id=session_id,
                    run_id=run_id,
                    reference_time=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    history=history,
                    on_event=on_event,
                    resume=resume,
                )
            finally:
                if self.tracker is not None and hasattr(self.tracker, "clear"):
                    self.tracker.clear(f"{session_id}:{run_id}")
            # inside the run: the invocations come from its journal, not from the database
            evaluation = self._evaluate(run, run_id)
            # The question's window: the one the planner worked with, else read here.
            understanding = (evaluation.get("rule_evaluation") or {}).get("understanding") or {}
            planned = understanding.get("window")
            evaluation["question_window"] = (
                {**planned, "found": planned.get("kind") not in (None, "none")}
                if planned
                else resolve_window(question, now, self.default_timezone).as_dict()
            )
            attach_evidence(self.audit, run_id, run.state)
        return DiagnosisResult(session_id, run_id, run, evaluation)

    def _evaluate(self, run: DiagnosisRun, run_id: str) -> dict[str, Any]:
        """The self evaluation; if the audit rows cannot be read, say so instead of failing."""
        try:
            invocations = self.audit.invocations_for_run(run_id)
        except Exception as exc:
            log.exception("could not read the invocations of run %s", run_id)
            return {
                "rule_evaluation": {
                    "error": f"{type(exc).__name__}: {exc}",
                    "prompt_version": prompt_version(),
                },
                "verifier_evaluation": None,
            }
        return build_self_evaluation(run.state, invocations, prompt_version())


def attach_evidence(audit: Audit, run_id: str, state: Mapping[str, Any]) -> None:
    """Record on the invocations what the answer cited from them (best effort)."""
    try:
        audit.attach_evidence(evidence_refs(state))
    except Exception:
        log.exception("could not store the evidence refs of run %s", run_id)
