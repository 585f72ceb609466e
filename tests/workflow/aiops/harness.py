"""Fakes behind the AIOps ports: an alert source, the run's invocations, a scripted chat graph.

The nested graph is the real chat diagnosis graph (``build_diagnosis_graph``) over a scripted
agent invoker, so each alert's investigation goes through the real gatekeeper, projection and
citation checks; only the agents' answers are scripted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from diagnosis_graph.workflow.aiops.graph import AiOpsPorts, AlertsRead
from diagnosis_graph.workflow.aiops.supervisor import run_aiops
from diagnosis_graph.workflow.factory import DiagnosisRun, build_diagnosis_graph
from diagnosis_graph.workflow.ports import DiagnosisPorts

from ..fakes import LOGS, PLAN, MemoryInvocations, ScriptedInvoker

RUN = "run-1"
#: Tool roles and the service catalog, for a ``DiagnosisPorts`` that declares them.
ROLES = {"query_logs": "telemetry", "query_metrics": "telemetry", "lookup_knowledge": "reference"}
SERVICES = ("payment-service",)
EXCERPT = "connection pool exhausted (50/50 active, 12 waiting)"
NOW = "2026-11-30T12:00:00Z"


def alert(name: str, severity: str = "critical", state: str = "firing", **extra: Any) -> dict:
    """An alert as ``query_alerts`` returns it."""
    return {
        "alert_name": name,
        "severity": severity,
        "service": extra.pop("service", "payment-service"),
        "description": extra.pop("description", f"{name} is firing"),
        "state": state,
        "active_at": extra.pop("active_at", "2026-11-30T10:03:00Z"),
        **extra,
    }


@dataclass
class FakeAlerts:
    """AlertSource fake: the alerts it was given (or a failure), and who asked."""

    alerts: Sequence[Mapping[str, Any]] = ()
    ok: bool = True
    asked: list[tuple[str, str]] = field(default_factory=list)

    def firing_alerts(self, session_id: str, run_id: str) -> AlertsRead:
        self.asked.append((session_id, run_id))
        if not self.ok:
            return AlertsRead(False, (), "inv-alerts", "alertmanager unreachable")
        return AlertsRead(True, list(self.alerts), "inv-alerts")


def executor_output(invocation_id: str = "inv-logs", excerpt: str = EXCERPT) -> dict[str, Any]:
    """One claim bound to the pool-exhaustion log line (no number in its statement)."""
    return {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "C1",
                "statement": "The connection pool of the service is exhausted.",
                "critical": True,
                "bindings": [
                    {
                        "source_invocation_id": invocation_id,
                        "raw_path": "$.records[0].message",
                        "evidence_excerpt": excerpt,
                    }
                ],
            }
        ],
        "summary": "pool exhausted",
    }


def verifier_output(gaps: int = 0) -> dict[str, Any]:
    """C1 supported; ``gaps`` critical gaps (LOW_CONFID when there are any)."""
    return {
        "verdict": "LOW_CONFID" if gaps else "PASS",
        "claim_assessments": [{"claim_id": "C1", "supported": True, "reason": "the log says so"}],
        "critical_gaps": [
            {"description": f"gap {n}", "suggested_tool": "query_logs"} for n in range(gaps)
        ],
    }


def composer_output(
    *evidence_ids: str, statement: str = "The connection pool is exhausted."
) -> dict:
    """A conclusion citing ``evidence_ids`` (valid for composer_output v1 and v2)."""
    return {
        "answer_markdown": "## Model prose that the report must not show [E7]",
        "summary": "The connection pool is exhausted.",
        "conclusions": [
            {"statement": statement, "claim_ids": ["C1"], "evidence_ids": list(evidence_ids)}
        ],
        "limitations": [],
        "recommendations": [],
    }


def healthy_script(gaps: int = 0) -> dict[str, list[Any]]:
    """Every alert: plan, one verified claim, PASS, a conclusion citing E1."""
    return {
        "planner": [PLAN],
        "executor": [executor_output()],
        "verifier": [verifier_output(gaps)],
        "composer": [composer_output("E1")],
    }


@dataclass
class Harness:
    """The ports of one supervisor run, and what it saw."""

    alerts: FakeAlerts
    invoker: ScriptedInvoker
    invocations: MemoryInvocations
    events: list[dict[str, Any]] = field(default_factory=list)

    def ports(self) -> AiOpsPorts:
        declared = {f.name for f in fields(DiagnosisPorts)}
        extra: dict[str, Any] = {}
        if "tool_roles" in declared:
            extra["tool_roles"] = lambda: ROLES
        if "service_catalog" in declared:
            extra["service_catalog"] = lambda: SERVICES
        chat = build_diagnosis_graph(DiagnosisPorts(self.invoker, self.invocations, **extra))
        return AiOpsPorts(self.alerts, self.invocations, chat, lambda: NOW, self.events.append)

    def run(self, request: str | None = None, **options: Any) -> DiagnosisRun:
        return run_aiops(self.ports(), request, session_id="s1", run_id=RUN, **options)


def harness(
    alerts: Sequence[Mapping[str, Any]] = (), script: dict[str, list[Any]] | None = None, **kw: Any
) -> Harness:
    """A harness whose run has the pool-exhaustion log recorded as ``inv-logs``."""
    invocations = MemoryInvocations()
    invocations.add("inv-logs", LOGS, run_id=RUN)
    invoker = ScriptedInvoker(script if script is not None else healthy_script())
    return Harness(FakeAlerts(alerts, **kw), invoker, invocations)
