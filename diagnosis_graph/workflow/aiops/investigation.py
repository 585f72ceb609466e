"""One alert's investigation: the chat diagnosis graph run nested, and its JSON summary."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from ...config import RunConfig
from ..evaluation import build_self_evaluation
from ..factory import DiagnosisRun, run_diagnosis
from ..limits import failed_reads, parse_utc, read_services
from ..nodes import run_id_of
from ..ports import InvocationRecord
from ..render import why_fallback
from ..topology import RECURSION_LIMIT as DIAGNOSIS_RECURSION_LIMIT
from .graph import AiOpsPorts

#: An alert fires after its condition held for a while (``for:``), so the investigation window
#: opens this long before the alert became active.
ONSET_LEAD = timedelta(minutes=15)
COMPOSED = "composer_completed"
_SEVERITY_RANK = {"critical": 0, "error": 1, "major": 1, "warning": 2, "minor": 3, "info": 4}
_BRIEF_KEYS = ("alert_name", "severity", "service", "description", "state", "active_at")


def priority(alert: Mapping[str, Any]) -> tuple[int, str]:
    """Sort key: the most severe first, then the one that fired earliest."""
    severity = str(alert.get("severity", "")).lower()
    return _SEVERITY_RANK.get(severity, 5), str(alert.get("active_at", ""))


def brief(alert: Mapping[str, Any]) -> dict[str, Any]:
    """The alert fields the investigation and the report use."""
    return {key: alert.get(key) for key in _BRIEF_KEYS}


_QUESTION = {
    "en": ("Why is {service} firing {name}{since}?", " since {at}", " The alert says: {text}"),
    "zh": ("为什么 {service}{since}触发 {name}？", " 从 {at} 开始", " 告警内容：{text}"),
}


def alert_question(
    alert: Mapping[str, Any], reference_time: str | None, language: str = "en"
) -> str:
    """The question the chat graph answers for ``alert``, in ``language``."""
    ask, since_words, says = _QUESTION.get(language, _QUESTION["en"])
    name = str(alert.get("alert_name") or "the alert")
    service = str(alert.get("service") or "the service")
    active = parse_utc(alert.get("active_at"))
    now = parse_utc(reference_time)
    since = ""
    if active is not None:
        onset = active - ONSET_LEAD
        if now is not None:
            onset = min(onset, now - timedelta(minutes=1))
        since = since_words.format(at=onset.strftime("%Y-%m-%dT%H:%M:%SZ"))
    question = ask.format(service=service, name=name, since=since)
    description = " ".join(str(alert.get("description") or "").split())
    return question + says.format(text=description[:300]) if description else question


def investigate(
    ports: AiOpsPorts,
    item: Mapping[str, Any],
    config: RunConfig,
    reference_time: str | None,
    language: str = "en",
) -> dict[str, Any]:
    """Run the chat diagnosis graph for one queued alert."""
    alert_id, alert = str(item["alert_id"]), dict(item["alert"])
    question = alert_question(alert, reference_time, language)
    run_id = run_id_of(config)
    seen = len(ports.invocations.invocations_for_run(run_id))  # the run's invocations so far
    session_id = str(config.metadata.get("session_id") or "")

    def forward(event: dict[str, Any]) -> None:
        ports.listener({**event, "alert": alert.get("alert_name"), "alert_id": alert_id})

    run = run_diagnosis(
        ports.diagnosis,
        question,
        session_id=session_id,
        run_id=run_id,
        reference_time=reference_time,
        on_event=forward,
        config=config.child(recursion_limit=DIAGNOSIS_RECURSION_LIMIT),
    )
    records = ports.invocations.invocations_for_run(run_id)
    summary = summarise(alert_id, alert, run, records, records[seen:])
    summary["failed"] = [asdict(read) for read in failed_reads(records[seen:], ports.unreadable())]
    return summary


def _prefixed(prefix: str, ids: Sequence[Any]) -> list[str]:
    return [f"{prefix}-{i}" for i in ids]


_INLINE_REF = re.compile(r"\s*\[(?:[A-Za-z]\d+-)?[EC]\d+\]")


def _clean(text: Any) -> str:
    return _INLINE_REF.sub("", str(text)).strip()


def composed_output(prefix: str, composer: Mapping[str, Any]) -> dict[str, Any]:
    """What the report renders of the validated ``composer_output``: its text without inline
    citations, its evidence ids prefixed."""
    return {
        "summary": _clean(composer["summary"]),
        "conclusions": [
            {
                "statement": _clean(c["statement"]),
                "evidence_ids": _prefixed(prefix, c["evidence_ids"]),
            }
            for c in composer["conclusions"]
        ],
        "limitations": [_clean(x) for x in composer["limitations"]],
        "recommendations": [
            {"text": _clean(r["text"]), "evidence_ids": _prefixed(prefix, r["evidence_ids"])}
            for r in composer["recommendations"]
        ],
    }


def _evidence(
    prefix: str, evidence: Sequence[Mapping[str, Any]], records: Sequence[InvocationRecord]
) -> list[dict[str, Any]]:
    """The evidence with run-wide ids and the service its read was about (if one)."""
    services = read_services(records)
    return [
        {
            **item,
            "evidence_id": f"{prefix}-{item['evidence_id']}",
            "claim_id": f"{prefix}-{item.get('claim_id')}",
            "service": services.get(str(item.get("source_invocation_id"))),
        }
        for item in evidence
    ]


def summarise(
    alert_id: str,
    alert: Mapping[str, Any],
    run: DiagnosisRun,
    records: Sequence[InvocationRecord],
    own: Sequence[InvocationRecord],
) -> dict[str, Any]:
    """The JSON summary of one alert's child run (what the supervisor's state keeps)."""
    state, trace = run.state, run.orchestration_trace
    composed = trace.get("termination_reason") == COMPOSED and run.status == "SUCCESS"
    projected = state.get("verified_executor_output") or {}
    # what the evidence each claim verified was cited for (the invocations' evidence refs)
    claims = [
        {"claim_id": f"{alert_id}-{c['claim_id']}", "statement": c["statement"]}
        for c in projected.get("claims") or []
    ]
    evaluation = build_self_evaluation(state, own, None)
    return {
        "alert_id": alert_id,
        "alert": brief(alert),
        "status": run.status,
        "degraded": not composed,
        "termination_reason": trace.get("termination_reason"),
        "why_not_composed": None if composed else _why(run, evaluation["rule_evaluation"]),
        "rounds": 1 + int(state.get("evidence_retry_count") or 0),
        "rule_evaluation": evaluation["rule_evaluation"],
        "verifier_evaluation": evaluation["verifier_evaluation"],
        "verified_claims": claims,
        "evidence": _evidence(alert_id, state.get("verified_evidence") or [], records),
        "composer": composed_output(alert_id, state["composer_output"]) if composed else None,
        "trace": trace,
    }


def _why(run: DiagnosisRun, rule_evaluation: Mapping[str, Any]) -> str:
    """Why the investigation has no answer, in the language its question was asked in."""
    language = rule_evaluation["understanding"]["language"]
    if run.status != "SUCCESS":
        error = run.error or "unknown error"
        return f"调查失败（{error}）" if language == "zh" else f"the investigation failed ({error})"
    return why_fallback(run.state.get("orchestration_events") or [], language)
