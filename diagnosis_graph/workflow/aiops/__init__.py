"""AIOps on the engine: a supervisor StateGraph over per-alert investigations.

``load_alerts -> select_alerts -> investigate (once per alert) -> report``. Each alert is
investigated by running the chat flow's compiled diagnosis graph as a nested graph, with a
question derived from the alert, so the planner, executor, gatekeeper, verified projection,
verifier, composer and fallback - and their retry budgets - are the chat's own.

Rounds: an alert's second round is the chat graph's evidence retry (the verifier names a
critical gap - such as a dependency the evidence points at with no telemetry of its own - and
the planner runs again for the gaps only). That is the rule the hand-written supervisor used to
apply itself, so there is no extra AIOps round on top: ``rounds = 1 + evidence_retry_count``,
at most :data:`MAX_ROUNDS` (2) because the chat graph allows one evidence retry per run.

The report is rendered by the product from each investigation's validated output
(:mod:`.report`), citing only verified evidence.
"""

from __future__ import annotations

from .evaluation import aiops_rule_evaluation
from .factory import DEFAULT_REQUEST, AiOpsRun, aiops_config, build_aiops_graph, run_aiops
from .investigation import alert_question, priority
from .ports import AiOpsPorts, AlertSource, AlertsRead, Listener
from .report import cited_ids, diagnosed, render_alert_section, render_report
from .state import MAX_ALERTS, MAX_ROUNDS, NODE_NAMES, aiops_schema
from .topology import ROUTES, aiops_mermaid, build_aiops_topology
from .trace import AIOPS_TRACE_VERSION, build_aiops_trace

__all__ = [
    "AIOPS_TRACE_VERSION",
    "DEFAULT_REQUEST",
    "MAX_ALERTS",
    "MAX_ROUNDS",
    "NODE_NAMES",
    "ROUTES",
    "AiOpsPorts",
    "AiOpsRun",
    "AlertSource",
    "AlertsRead",
    "Listener",
    "aiops_config",
    "aiops_mermaid",
    "aiops_rule_evaluation",
    "aiops_schema",
    "alert_question",
    "build_aiops_graph",
    "build_aiops_topology",
    "build_aiops_trace",
    "cited_ids",
    "diagnosed",
    "priority",
    "render_alert_section",
    "render_report",
    "run_aiops",
]
