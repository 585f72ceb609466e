"""The alert source of the AIOps graph: ``query_alerts``, recorded as a tool invocation.

The supervisor reads the alerts itself (no model step), through the same recorded tool the
agents use, so the read is a ``tool_invocation`` row of the run (agent ``aiops_supervisor``,
no step) and the report's alert list is traceable to it like any evidence.
"""

from __future__ import annotations

import json
import logging

from diagnosis_graph.workflow.aiops import AlertsRead
from diagnosis_graph.workflow.ports import SUCCESS

from ..persistence.audit import Audit
from ..persistence.context import run_scope
from ..telemetry import TelemetryBackend
from ..tools.catalog import telemetry_tools
from ..tools.registry import ToolBox

log = logging.getLogger(__name__)

SUPERVISOR = "aiops_supervisor"


class RecordedAlerts:
    """``AlertSource`` over the backend's ``query_alerts`` tool and the run's recorder."""

    def __init__(self, backend: TelemetryBackend, recorder: Audit) -> None:
        self.tools = [t for t in telemetry_tools(backend) if t.name == "query_alerts"]
        self.recorder = recorder

    def firing_alerts(self, session_id: str, run_id: str) -> AlertsRead:
        """Every firing alert; ``ok=False`` with a detail when the query failed."""
        box = ToolBox(self.tools, self.recorder, SUPERVISOR)
        with run_scope(session_id, run_id):
            call = box.call("query_alerts", json.dumps({"state": "firing"}), None)
        try:
            result = json.loads(call.content).get("result")
        except (ValueError, AttributeError):
            result = None
        alerts = result.get("alerts") if isinstance(result, dict) else None
        if call.status != SUCCESS or not isinstance(alerts, list):
            detail = result.get("error") if isinstance(result, dict) else None
            return AlertsRead(False, (), call.invocation_id, str(detail or "no alert list"))
        return AlertsRead(True, [a for a in alerts if isinstance(a, dict)], call.invocation_id)
