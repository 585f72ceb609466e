"""The AIOps report: citation checks on the reporter's output and the Markdown answer.

The answer is rendered here, deterministically, from the reporter's structured entries and the
verified evidence, so its shape (alert table, per alert evidence, root cause and actions, then
the overall assessment) and its evidence lines never depend on the model. The fallback report
uses the same renderer with no model text at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from diagnosis_graph.workflow.gatekeeper import GATEKEEPER_VERSION
from diagnosis_graph.workflow.projection import evidence_refs

from .cases import AlertCase
from .contracts import AiOpsReport, AlertReport

#: ``[A1-E3]`` (and a bare ``[E3]``, which names no alert and so can never be verified).
EVIDENCE_REF = re.compile(r"\[((?:[A-Za-z]\d+-)?E\d+)\]")


def cited_ids(report: AiOpsReport) -> list[str]:
    """Every evidence id the report cites, in order of first citation."""
    texts = [report.overall_assessment, report.report_markdown]
    found: list[str] = []
    for entry in report.alerts:
        found += entry.evidence_ids
        texts += [entry.root_cause, *entry.actions]
    for text in texts:
        found += EVIDENCE_REF.findall(text)
    return list(dict.fromkeys(found))


def report_problem(report: AiOpsReport, cases: Sequence[AlertCase]) -> str | None:
    """Why the reporter's output is invalid (INVALID_OUTPUT), or None."""
    names = [entry.alert_name for entry in report.alerts]
    known = {case.name for case in cases}
    unknown = sorted(set(names) - known)
    if unknown:
        return f"the report names alerts that are not under investigation: {unknown}"
    if len(set(names)) != len(names):
        return "the report has more than one entry for an alert"
    verified = {e["evidence_id"] for case in cases for e in case.evidence}
    unverified = [e for e in cited_ids(report) if e not in verified]
    if unverified:
        return f"the report cites evidence that was not verified: {unverified}"
    empty = [e.alert_name for e in report.alerts if e.diagnosed and not e.evidence_ids]
    if empty:
        return f"entries marked diagnosed must cite verified evidence: {empty}"
    return None


def _cell(value: Any) -> str:
    return " ".join(str(value if value is not None else "-").split()).replace("|", "\\|")


def _cites(ids: Iterable[str]) -> str:
    return "".join(f"[{i}]" for i in ids)


def _short(text: str, width: int = 240) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def alert_table(
    cases: Sequence[AlertCase], skipped: Sequence[dict[str, Any]], diagnosed: set[str]
) -> list[str]:
    """The alert table: name, severity, service, active since, state, diagnosis."""
    lines = [
        "| # | alert | severity | service | active since | state | diagnosis |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = [
        (c.alert_id, c.alert, "diagnosed" if c.name in diagnosed else "not diagnosed")
        for c in cases
    ]
    rows += [("-", a, "not investigated (over the alert limit)") for a in skipped]
    for alert_id, alert, status in rows:
        lines.append(
            f"| {alert_id} | {_cell(alert.get('alert_name'))} | {_cell(alert.get('severity'))} "
            f"| {_cell(alert.get('service'))} | {_cell(alert.get('active_at'))} "
            f"| {_cell(alert.get('state'))} | {status} |"
        )
    return lines


def evidence_lines(case: AlertCase) -> list[str]:
    """One line per verified evidence item of ``case``, with its id, tool, path and excerpt."""
    return [
        f"- **{e['evidence_id']}** `{e.get('tool') or 'tool'}` `{e['source_invocation_id']}` "
        f"`{e['raw_path']}`: {_short(e['evidence_excerpt'])}"
        for e in case.evidence
    ]


def _section(case: AlertCase, entry: AlertReport | None, missing: str) -> list[str]:
    alert = case.alert
    lines = [
        f"### {case.alert_id} · {case.name} ({alert.get('severity')}, {case.service})",
        "",
        f"> {_short(str(alert.get('description') or ''))} - active since {alert.get('active_at')}",
        "",
    ]
    if entry is not None and entry.diagnosed:
        cites = "" if EVIDENCE_REF.search(entry.root_cause) else " " + _cites(entry.evidence_ids)
        lines += [f"**Root cause:** {entry.root_cause}{cites}", ""]
    else:
        why = entry.root_cause if entry is not None else case.note or missing
        lines += [f"**Not diagnosed:** {why}", ""]
    if entry is not None and entry.actions:
        lines += ["**Actions:**", ""]
        lines += [f"{n}. {action}" for n, action in enumerate(entry.actions, 1)] + [""]
    lines += ["**Verified evidence:**", ""]
    lines += evidence_lines(case) or ["- none verified"]
    return [*lines, ""]


def render_report(
    request: str,
    reference_time: str,
    cases: Sequence[AlertCase],
    skipped: Sequence[dict[str, Any]],
    report: AiOpsReport | None,
    fallback_reason: str | None = None,
) -> str:
    """The report answer in Markdown (the fallback report when ``report`` is None)."""
    entries = {e.alert_name: e for e in report.alerts} if report else {}
    diagnosed = {name for name, e in entries.items() if e.diagnosed and e.evidence_ids}
    lines = [
        "## AIOps alert report",
        "",
        f"**Request:** {request}",
        "",
        f"{len(cases) + len(skipped)} firing alert(s) at {reference_time}; "
        f"{len(diagnosed)} diagnosed with verified evidence.",
        "",
    ]
    if report is not None and report.report_markdown.strip():
        lines += [report.report_markdown.strip(), ""]
    if fallback_reason:
        lines += [f"**The report could not be completed:** {fallback_reason}.", ""]
    if cases or skipped:
        lines += ["### Alerts", "", *alert_table(cases, skipped, diagnosed), ""]
    missing = (
        "no root cause was written because the report could not be completed; "
        "the evidence below verified"
        if report is None
        else "the reporter gave no conclusion for this alert"
    )
    for case in cases:
        lines += _section(case, entries.get(case.name), missing)
    lines += ["### Overall assessment", "", _assessment(cases, report, fallback_reason), ""]
    lines.append(
        f"_Every evidence id above was verified against this run's recorded tool outputs "
        f"({GATEKEEPER_VERSION})._"
    )
    return "\n".join(lines) + "\n"


def _assessment(
    cases: Sequence[AlertCase], report: AiOpsReport | None, fallback_reason: str | None
) -> str:
    if report is not None:
        return report.overall_assessment
    if not cases:
        return (
            "No firing alerts to investigate."
            if not fallback_reason
            else "No alert could be investigated. Check the alerting backend and the model "
            "endpoint, then run the investigation again."
        )
    with_evidence = [c.name for c in cases if c.evidence]
    return (
        f"No root cause is stated for any alert because {fallback_reason or 'the report failed'}. "
        f"{len(with_evidence)} of {len(cases)} alert(s) have verified evidence listed above; "
        "read it, start with the critical alerts, and check each service's error logs and "
        "latency dashboards around the time its alert became active."
    )


def run_evidence_refs(
    cases: Sequence[AlertCase], cited: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Verified evidence per invocation id, with whether the report cites it (``evidence_refs``)."""
    claims = [c for case in cases for c in case.projection()[0]]
    evidence = [e for case in cases for e in case.projection()[1]]
    state = {
        "verified_executor_output": {"claims": claims},
        "verified_evidence": evidence,
        "composer_output": {"conclusions": [{"evidence_ids": list(cited)}]},
    }
    return evidence_refs(state)
