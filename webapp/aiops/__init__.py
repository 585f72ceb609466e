"""The AIOps flow: a bounded supervisor investigates every firing alert and writes a report.

Citations in the report pass the same evidence gatekeeper as the diagnosis; see
:mod:`webapp.aiops.supervisor` for the loop and its bounds.
"""

from __future__ import annotations

from .contracts import AIOPS_PLAN, AIOPS_REPORT, MAX_ALERTS, AiOpsPlan, AiOpsReport
from .service import FLOW, AiOpsService
from .supervisor import DEFAULT_REQUEST, MAX_ROUNDS, AiOpsResult, AiOpsSupervisor

__all__ = [
    "AIOPS_PLAN",
    "AIOPS_REPORT",
    "DEFAULT_REQUEST",
    "FLOW",
    "MAX_ALERTS",
    "MAX_ROUNDS",
    "AiOpsPlan",
    "AiOpsReport",
    "AiOpsResult",
    "AiOpsService",
    "AiOpsSupervisor",
]
