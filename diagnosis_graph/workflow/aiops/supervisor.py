"""The supervisor's four nodes, and how an AIOps run is built and run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...config import RunConfig
from ...runtime import CompiledGraph
from ..factory import DiagnosisRun, diagnosis_config, execute
from ..nodes import run_id_of
from ..outcomes import Outcome, StepResult
from ..render import language_of
from .graph import (
    MAX_ALERTS,
    NODE_NAMES,
    RECURSION_LIMIT,
    AiOpsPorts,
    State,
    build_aiops_topology,
    build_aiops_trace,
)
from .investigation import brief, investigate, priority
from .report import render_report

DEFAULT_REQUEST = "Investigate the firing alerts"


def build_aiops_graph(ports: AiOpsPorts) -> CompiledGraph:
    """The compiled supervisor StateGraph with its nodes bound to ``ports``."""
    return build_aiops_topology(AiOpsNodes(ports).nodes()).compile()


def _trace_of(state: Mapping[str, Any], stopped_by: str | None) -> dict[str, Any]:
    events = state.get("orchestration_events", [])
    return build_aiops_trace(events, state.get("investigations", []), stopped_by=stopped_by)


def run_aiops(
    ports: AiOpsPorts,
    request: str | None,
    *,
    session_id: str,
    run_id: str,
    scope: Sequence[Mapping[str, str]] = (),
) -> DiagnosisRun:
    """Run the supervisor graph once; ``scope`` limits it to the firing alerts it names."""
    start = {
        "aiops_context": {
            "request": request or DEFAULT_REQUEST,
            "reference_time": ports.reference_time(),
            "scope": [
                {"alert_name": str(a.get("alert_name", "")), "service": str(a.get("service", ""))}
                for a in scope
            ],
        }
    }
    config = diagnosis_config(session_id, run_id, RECURSION_LIMIT)
    return execute(build_aiops_graph(ports), start, config, ports.listener, _trace_of)


def in_scope(alert: Mapping[str, Any], scope: Any) -> bool:
    """Whether ``alert`` is one of the alerts a scoped run was started for (no scope: all)."""
    if not scope:
        return True
    name, service = str(alert.get("alert_name") or ""), str(alert.get("service") or "")
    return any(
        entry.get("alert_name") == name and entry.get("service", "") in ("", service)
        for entry in scope
    )


class AiOpsNodes:
    """Node functions bound to their ports; ``nodes()`` hands them to the topology."""

    def __init__(self, ports: AiOpsPorts) -> None:
        self.ports = ports

    def nodes(self) -> dict[str, Any]:
        """The four supervisor nodes by name."""
        return {name: getattr(self, name) for name in NODE_NAMES}

    def load_alerts(self, state: State, config: RunConfig) -> StepResult:
        """Read the alerts once; FAILED (routed to the report) when they cannot be read."""
        session_id = str(config.metadata.get("session_id") or "")
        run_id = run_id_of(config)
        read = self.ports.alerts.firing_alerts(session_id, run_id)
        alerts = [dict(a) for a in read.alerts if isinstance(a, Mapping)] if read.ok else []
        document = {
            "ok": read.ok,
            "alerts": alerts,
            "invocation_id": read.invocation_id,
            "detail": read.detail,
        }
        outcome = Outcome.COMPLETED if read.ok else Outcome.FAILED
        return StepResult(outcome, {"alerts_read": document}, detail=read.detail)

    def select_alerts(self, state: State, config: RunConfig) -> StepResult:
        """Firing alerts of the scope (if any), most severe first; over MAX_ALERTS: skipped."""
        alerts = (state.get("alerts_read") or {}).get("alerts") or []
        scope = (state.get("aiops_context") or {}).get("scope")
        firing = sorted(
            (a for a in alerts if a.get("state") == "firing" and in_scope(a, scope)), key=priority
        )
        queue = [
            {"alert_id": f"A{n}", "alert": brief(a)} for n, a in enumerate(firing[:MAX_ALERTS], 1)
        ]
        skipped = [brief(a) for a in firing[MAX_ALERTS:]]
        return StepResult(Outcome.COMPLETED, {"queue": queue, "skipped": skipped})

    def investigate(self, state: State, config: RunConfig) -> StepResult:
        """Investigate the first queued alert with the nested chat diagnosis graph."""
        queue = list(state.get("queue") or [])
        reference_time = (state.get("aiops_context") or {}).get("reference_time")
        language = language_of(str((state.get("aiops_context") or {}).get("request") or ""))
        summary = investigate(self.ports, queue[0], config, reference_time, language)
        return StepResult(Outcome.COMPLETED, {"queue": queue[1:], "investigations": [summary]})

    def report(self, state: State, config: RunConfig) -> StepResult:
        """Render the report from the investigations (deterministic, no model)."""
        context = state.get("aiops_context") or {}
        read = state.get("alerts_read") or {}
        answer = render_report(
            request=str(context.get("request") or ""),
            reference_time=context.get("reference_time"),
            investigations=state.get("investigations") or [],
            skipped=state.get("skipped") or [],
            alerts_error=None if read.get("ok") else str(read.get("detail") or "unknown error"),
        )
        return StepResult(Outcome.COMPLETED, {"final_answer": answer})
