"""The diagnosis workflow built on the engine: topology, routing and trace."""

from __future__ import annotations

from .outcomes import Outcome, StepResult, Verdict
from .routing import Decision, route_by_reason
from .state import NODE_NAMES, RECURSION_LIMIT, diagnosis_schema
from .topology import build_topology
from .trace import build_orchestration_trace

__all__ = [
    "NODE_NAMES",
    "RECURSION_LIMIT",
    "Decision",
    "Outcome",
    "StepResult",
    "Verdict",
    "build_orchestration_trace",
    "build_topology",
    "diagnosis_schema",
    "route_by_reason",
]
