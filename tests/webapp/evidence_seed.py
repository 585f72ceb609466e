"""A finished run whose answer cites the analysis tools, written through the product's stores.

The offline model cites ``query_logs`` and ``query_metrics`` outputs; the pages must also draw
what ``detect_anomalies`` and ``log_patterns`` say. :func:`seed_analysis_run` runs those tools
(and ``query_metrics``) for real on the app's backend inside a run's identity scope, records
their invocations through the audit store, cites leaves of their outputs as verified evidence
(excerpts rendered exactly as the gatekeeper matches them), renders the answer with the
product renderer and finishes the run through the run store - the same rows a diagnosis
leaves behind.
"""

from __future__ import annotations

import json
from typing import Any

from diagnosis_graph.workflow.gatekeeper import locate
from diagnosis_graph.workflow.render import render_answer
from webapp.analysis.timeexpr import resolve_window
from webapp.container import Services
from webapp.persistence.audit import InvocationDraft
from webapp.persistence.context import run_scope
from webapp.persistence.runs import Finish


def excerpt(value: Any) -> str:
    """What the gatekeeper matches a whole leaf against."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def seed_analysis_run(
    services: Services,
    service: str,
    question: str,
    session_id: str | None = None,
    *,
    legacy: bool = False,
) -> dict[str, Any]:
    """A finished run citing a metric series, a detect_anomalies finding and log templates.

    ``legacy`` records the detect_anomalies output without its findings' points, as it was
    recorded before findings carried them.
    """
    tools = {spec.name: spec for spec in services.diagnoser.tools}
    audit = services.diagnoser.audit
    session_id, run_id, _flow = services.chat.start(question, session_id, "complex")
    anomalies = tools["detect_anomalies"].handler({"service": service}).raw_output
    metric_finding = next(n for n, f in enumerate(anomalies["findings"]) if f["kind"] == "metric")
    metric = anomalies["findings"][metric_finding]["signal"]
    log_finding = next(
        (n for n, f in enumerate(anomalies["findings"]) if f["kind"] != "metric"), None
    )
    window = anomalies["window"]
    calls = [
        ("detect_anomalies", {"service": service}),
        (
            "query_metrics",
            {"service": service, "metric": metric, "start": window["start"], "end": window["end"]},
        ),
        ("log_patterns", {"service": service}),
    ]
    outputs: dict[str, tuple[str, Any]] = {}
    with run_scope(session_id, run_id):
        for name, arguments in calls:
            raw = tools[name].handler(arguments).raw_output
            if legacy and name == "detect_anomalies":
                raw = {**raw, "findings": [_pointless(f) for f in raw["findings"]]}
            draft = InvocationDraft("executor", name, arguments, raw, "SUCCESS", None, 5)
            outputs[name] = (audit.record(draft), raw)
        audit.flush()  # invocations are written at the end of a node (write-behind)
    pattern_rows = [
        n for n, p in enumerate(outputs["log_patterns"][1]["patterns"]) if p["new"]
    ] or [0]
    cited_paths = [
        ("query_metrics", "$.series[0].points[2]"),
        ("query_metrics", "$.summary.max"),
        ("detect_anomalies", f"$.findings[{metric_finding}].onset"),
        *(
            [("detect_anomalies", f"$.findings[{log_finding}].incident.peak")]
            if log_finding is not None
            else []
        ),
        *(("log_patterns", f"$.patterns[{n}].template") for n in pattern_rows[:2]),
    ]
    evidence: list[dict[str, Any]] = []
    refs: dict[str, list[dict[str, Any]]] = {}
    for n, (tool, path) in enumerate(cited_paths, 1):
        invocation_id, raw = outputs[tool]
        item = {
            "evidence_id": f"E{n}",
            "source_invocation_id": invocation_id,
            "tool": tool,
            "role": "telemetry",
            "raw_path": path,
            "evidence_excerpt": excerpt(locate(raw, path)[0]),
        }
        evidence.append(item)
        refs.setdefault(invocation_id, []).append(
            {
                "evidence_id": item["evidence_id"],
                "claim_id": "C1",
                "statement": f"{service} changed behaviour",
                "raw_path": path,
                "evidence_excerpt": item["evidence_excerpt"],
                "role": "telemetry",
                "cited": True,
            }
        )
    with run_scope(session_id, run_id):
        audit.attach_evidence(refs)
    ids = [e["evidence_id"] for e in evidence]
    composed = {
        "summary": f"{service} changed behaviour.",
        "conclusions": [
            {"statement": f"{service} changed behaviour.", "claim_ids": ["C1"], "evidence_ids": ids}
        ],
        "limitations": [],
        "recommendations": [],
    }
    answer = render_answer(question, composed, evidence)  # type: ignore[arg-type]
    now = services.backend.reference_time()
    evaluation = {"question_window": resolve_window(question, now).as_dict()}
    finish = Finish(
        "SUCCESS", answer, self_evaluation=evaluation, tool_count=len(calls), duration_ms=15
    )
    services.chat.runs.finish(run_id, finish)
    return {
        "sessionId": session_id,
        "runId": run_id,
        "service": service,
        "metric": metric,
        "outputs": {name: {"invocationId": i, "raw": raw} for name, (i, raw) in outputs.items()},
        "evidence": evidence,
        "patternRows": pattern_rows[:2],
    }


def _pointless(finding: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in finding.items() if k not in ("points", "downsampled")}
