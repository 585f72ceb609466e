"""AIOps on the engine: a supervisor StateGraph over per-alert investigations.

``load_alerts -> select_alerts -> investigate (once per alert) -> report``. Each alert is
investigated by running the chat's compiled diagnosis graph as a nested graph, so its nodes
and retry budgets apply unchanged; an alert's second round is that graph's evidence retry
(``rounds = 1 + evidence_retry_count``, at most :data:`MAX_ROUNDS`). The report is rendered
by the product from each investigation's validated output, citing only verified evidence.
"""

from __future__ import annotations

from .evaluation import aiops_rule_evaluation
from .graph import (
    AIOPS_TRACE_VERSION,
    MAX_ALERTS,
    MAX_ROUNDS,
    ROUTES,
    AiOpsPorts,
    AlertSource,
    AlertsRead,
    aiops_mermaid,
    build_aiops_trace,
)
from .report import cited_ids, diagnosed, render_alert_section
from .supervisor import DEFAULT_REQUEST, AiOpsRun, build_aiops_graph, run_aiops

__all__ = [
    "AIOPS_TRACE_VERSION",
    "DEFAULT_REQUEST",
    "MAX_ALERTS",
    "MAX_ROUNDS",
    "ROUTES",
    "AiOpsPorts",
    "AiOpsRun",
    "AlertSource",
    "AlertsRead",
    "aiops_mermaid",
    "aiops_rule_evaluation",
    "build_aiops_graph",
    "build_aiops_trace",
    "cited_ids",
    "diagnosed",
    "render_alert_section",
    "run_aiops",
]
