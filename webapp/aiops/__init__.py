"""The AIOps flow's adapters: the supervisor graph of :mod:`diagnosis_graph.workflow.aiops` on
the real agents, tools and stores, and the AIOps run lifecycle.

The graph itself (topology, nodes, report, trace, evaluation) lives in the workflow package;
this package only wires its ports (:mod:`.alerts`, :mod:`.runner`) and persists runs
(:mod:`.service`).
"""

from __future__ import annotations

from diagnosis_graph.workflow.aiops import DEFAULT_REQUEST, MAX_ALERTS, MAX_ROUNDS

from .alerts import SUPERVISOR, RecordedAlerts
from .runner import AiOpsResult, AiOpsRunner
from .service import FLOW, AiOpsService

__all__ = [
    "DEFAULT_REQUEST",
    "FLOW",
    "MAX_ALERTS",
    "MAX_ROUNDS",
    "SUPERVISOR",
    "AiOpsResult",
    "AiOpsRunner",
    "AiOpsService",
    "RecordedAlerts",
]
