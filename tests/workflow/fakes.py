"""Fakes of the workflow ports: a scripted agent invoker and an in-memory invocation store."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from diagnosis_graph import RunConfig
from diagnosis_graph.workflow.outcomes import Outcome
from diagnosis_graph.workflow.ports import AgentCall, AgentReply, InvocationRecord

Reply = AgentReply | dict[str, Any] | str | Callable[[AgentCall], Any]


@dataclass
class ScriptedInvoker:
    """Replays scripted replies per agent; records every call and the config it came with."""

    script: dict[str, list[Reply]] = field(default_factory=dict)
    calls: list[AgentCall] = field(default_factory=list)
    configs: list[RunConfig] = field(default_factory=list)

    def invoke(self, call: AgentCall, config: RunConfig) -> AgentReply:
        self.calls.append(call)
        self.configs.append(config)
        queue = self.script.get(call.agent) or []
        if not queue:
            raise AssertionError(f"no scripted reply left for {call.agent}")
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(reply):
            reply = reply(call)
        if isinstance(reply, AgentReply):
            return reply
        content = reply if isinstance(reply, str) else json.dumps(reply)
        return AgentReply(Outcome.COMPLETED, content)

    def payloads(self, agent: str) -> list[dict[str, Any]]:
        return [dict(c.payload) for c in self.calls if c.agent == agent]


@dataclass
class MemoryInvocations:
    """InvocationStore fake: records added by the test."""

    records: list[InvocationRecord] = field(default_factory=list)

    def add(
        self,
        invocation_id: str,
        raw_output: Any,
        *,
        run_id: str = "run-1",
        tool: str = "query_logs",
        status: str = "SUCCESS",
    ) -> str:
        self.records.append(InvocationRecord(invocation_id, run_id, tool, status, raw_output))
        return invocation_id

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        return [r for r in self.records if r.run_id == run_id]


LOGS = {
    "records": [
        {
            "timestamp": "2026-11-30T10:02:00Z",
            "service": "payment-service",
            "level": "ERROR",
            "message": "connection pool exhausted (50/50 active, 12 waiting)",
            "trace_id": "ab12",
        },
        {
            "timestamp": "2026-11-30T10:01:00Z",
            "service": "payment-service",
            "level": "WARN",
            "message": "slow request   POST /payments took 4210 ms",
            "trace_id": "cd34",
        },
    ],
    "total": 2,
    "truncated": False,
}
METRICS = {
    "series": [
        {
            "metric": "latency_p95_ms",
            "labels": {"service": "payment-service"},
            "points": [["2026-11-30T09:55:00Z", 118.2], ["2026-11-30T10:05:00Z", 3812.5]],
        }
    ],
    "summary": {"min": 118.2, "max": 3812.5, "avg": 1965.35, "last": 3812.5, "unit": "ms"},
}


def claim(claim_id: str, *bindings: tuple[str, str, str], critical: bool = True) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "statement": f"statement {claim_id}",
        "critical": critical,
        "bindings": [
            {"source_invocation_id": i, "raw_path": p, "evidence_excerpt": e}
            for i, p, e in bindings
        ],
    }


def evidence(*claims: dict[str, Any]) -> dict[str, Any]:
    return {"version": "executor_evidence_v2", "claims": list(claims), "summary": "s"}


PLAN = {
    "summary": "look",
    "hypotheses": ["pool"],
    "queries": [{"tool": "query_logs", "arguments": {"service": "payment-service"}}],
}
VERIFIED_PASS = {
    "verdict": "PASS",
    "claim_assessments": [{"claim_id": "C1", "supported": True, "reason": "excerpt shows it"}],
    "critical_gaps": [],
}
ANSWER = {
    "summary": "The connection pool is exhausted.",
    "conclusions": [
        {
            "statement": "The connection pool is exhausted",
            "claim_ids": ["C1"],
            "evidence_ids": ["E1"],
        }
    ],
    "limitations": [],
    "recommendations": [{"text": "raise the pool size", "evidence_ids": []}],
}
#: Tool roles and the service catalog the workflow tests run with.
ROLES = {"query_logs": "telemetry", "query_metrics": "telemetry", "lookup_knowledge": "reference"}
SERVICES = ("payment-service", "mysql-primary")
