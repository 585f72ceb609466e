"""AIOps agent contracts: ``aiops_plan`` (the planner) and ``aiops_report`` (the reporter).

The executor answers with the diagnosis executor's ``executor_evidence_v2`` (reused from
:mod:`diagnosis_graph.workflow.contracts`), so its claims pass the very same gatekeeper.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from diagnosis_graph.workflow.contracts import PlannedQuery

AIOPS_PLAN = "aiops_plan"
AIOPS_REPORT = "aiops_report"

#: At most this many firing alerts are investigated in one run (critical first).
MAX_ALERTS = 8


class _Contract(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class AlertPlan(_Contract):
    """How to investigate one firing alert: the question to answer and the first queries."""

    alert_name: str = Field(min_length=1, max_length=200)
    service: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=1000)
    queries: list[PlannedQuery] = Field(min_length=1, max_length=12)


class AiOpsPlan(_Contract):
    """``aiops_plan``: one investigation per firing alert (or, in gap mode, for one alert)."""

    mode: Literal["FULL", "EVIDENCE_GAP_ONLY"] = "FULL"
    summary: str = Field(default="", max_length=2000)
    alerts: list[AlertPlan] = Field(min_length=1, max_length=MAX_ALERTS)


class AlertReport(_Contract):
    """The report entry of one alert: root cause and actions, citing verified evidence ids."""

    alert_name: str = Field(min_length=1, max_length=200)
    service: str = Field(min_length=1, max_length=200)
    severity: str = Field(default="", max_length=40)
    diagnosed: bool = True
    root_cause: str = Field(min_length=1, max_length=2000)
    evidence_ids: list[str] = Field(default_factory=list, max_length=60)
    actions: list[str] = Field(default_factory=list, max_length=10)


class AiOpsReport(_Contract):
    """``aiops_report``: per alert entries, an overall assessment and a short Markdown summary."""

    alerts: list[AlertReport] = Field(default_factory=list, max_length=MAX_ALERTS)
    overall_assessment: str = Field(min_length=1, max_length=4000)
    report_markdown: str = Field(default="", max_length=8000)


CONTRACTS: dict[str, type[BaseModel]] = {AIOPS_PLAN: AiOpsPlan, AIOPS_REPORT: AiOpsReport}

_SCHEMAS: dict[str, dict[str, Any]] = {}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON schema of contract ``name`` (cached; do not mutate)."""
    if name not in _SCHEMAS:
        _SCHEMAS[name] = CONTRACTS[name].model_json_schema()
    return _SCHEMAS[name]
