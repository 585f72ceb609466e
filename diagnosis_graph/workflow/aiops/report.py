"""The AIOps report, rendered by the product from each investigation's validated output.

No model writes any of it. Per alert it shows the composer's *validated* conclusions (never its
free Markdown) with citations filtered to the investigation's verified evidence - an id that is
not in that list is dropped, and an id written inline in a statement is removed - then the
recommendations, limitations and the verified evidence itself. Alert fields come from the
recorded alert query. Text is made inert: HTML is escaped and images become plain links.

``render_alert_section`` takes one investigation summary (see
:func:`~diagnosis_graph.workflow.aiops.investigation.summarise`), so a shared answer renderer
can replace it without touching the supervisor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import render
from ..gatekeeper import GATEKEEPER_VERSION
from ..render import safe_text, shorten
from .state import MAX_ALERTS

Investigation = Mapping[str, Any]


def inert(text: Any) -> str:
    """Text that renders as itself (the chat renderer's rule: no HTML, images or links)."""
    return safe_text("-" if text is None else text)


def _short(text: Any, width: int = 240) -> str:
    return inert(shorten(str(text if text is not None else "-"), width))


def verified_ids(investigation: Investigation) -> dict[str, Mapping[str, Any]]:
    """The investigation's verified evidence by its run-wide id."""
    return {str(e["evidence_id"]): e for e in investigation.get("evidence") or []}


def _valid(ids: Iterable[Any], evidence: Mapping[str, Any]) -> list[str]:
    return [str(i) for i in dict.fromkeys(ids) if str(i) in evidence]


def conclusions(investigation: Investigation) -> list[tuple[str, list[str]]]:
    """``(statement, cited ids)`` of every conclusion citing verified telemetry evidence."""
    composer = investigation.get("composer") or {}
    evidence = verified_ids(investigation)
    found = []
    for conclusion in composer.get("conclusions") or []:
        ids = _valid(conclusion.get("evidence_ids") or [], evidence)
        if any(evidence[i].get("role", "telemetry") == "telemetry" for i in ids):
            found.append((str(conclusion["statement"]), ids))
    return found


def recommendations(investigation: Investigation) -> list[tuple[str, list[str]]]:
    """``(text, cited ids)`` of the composer's recommendations (citations filtered)."""
    composer = investigation.get("composer") or {}
    evidence = verified_ids(investigation)
    return [
        (str(r["text"]), _valid(r.get("evidence_ids") or [], evidence))
        for r in composer.get("recommendations") or []
        if str(r.get("text") or "").strip()
    ]


def diagnosed(investigation: Investigation) -> bool:
    """The composer completed and at least one conclusion cites verified telemetry evidence."""
    return bool(conclusions(investigation))


def cited_ids(investigation: Investigation) -> list[str]:
    """Every evidence id the report cites for this alert, in order of first citation."""
    ids = [i for _, cites in conclusions(investigation) for i in cites]
    ids += [i for _, cites in recommendations(investigation) for i in cites]
    return list(dict.fromkeys(ids))


def _cites(ids: Iterable[str]) -> str:
    return "".join(f"[{i}]" for i in ids)


def evidence_lines(investigation: Investigation) -> list[str]:
    """One line per verified evidence item, as the chat answer shows it."""
    return render.evidence_lines(investigation.get("evidence") or [], "en")


def render_alert_section(investigation: Investigation) -> list[str]:
    """One alert: the alert, its root cause or why none, actions, limitations, evidence."""
    alert = investigation["alert"]
    lines = [
        f"### {investigation['alert_id']} · {inert(alert.get('alert_name'))} "
        f"({inert(alert.get('severity'))}, {inert(alert.get('service'))})",
        "",
        f"> {_short(alert.get('description') or '')} - active since "
        f"{inert(alert.get('active_at'))}",
        "",
    ]
    found = conclusions(investigation)
    summary = (investigation.get("composer") or {}).get("summary")
    if found:
        cause = " ".join(f"{inert(text)} {_cites(ids)}" for text, ids in found)
        lines += [f"**Summary:** {inert(summary)}", ""] if summary else []
        lines += [f"**Root cause:** {cause}", ""]
    else:
        why = investigation.get("why_not_composed") or "the verified evidence supports no cause"
        lines += [f"**Not diagnosed:** {inert(why)}.", ""]
    actions = recommendations(investigation) if found else []
    if actions:
        lines += ["**Actions:**", ""]
        lines += [
            f"{n}. {inert(t)} {_cites(ids)}".rstrip() for n, (t, ids) in enumerate(actions, 1)
        ]
        lines.append("")
    limits = (investigation.get("composer") or {}).get("limitations") or []
    if limits:
        lines += ["**Limitations:**", "", *(f"- {inert(x)}" for x in limits), ""]
    lines += ["**Verified evidence:**", "", *(evidence_lines(investigation) or ["- none"]), ""]
    return lines


def alert_table(investigations: Sequence[Investigation], skipped: Sequence[Any]) -> list[str]:
    """The alert list: id, name, severity, service, active since, state, diagnosis."""
    lines = [
        "| # | alert | severity | service | active since | state | diagnosis |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rows = [
        (i["alert_id"], i["alert"], "diagnosed" if diagnosed(i) else "not diagnosed")
        for i in investigations
    ]
    rows += [("-", a, "not investigated (over the alert limit)") for a in skipped]
    for alert_id, alert, status in rows:
        cells = [alert.get(k) for k in ("alert_name", "severity", "service", "active_at", "state")]
        text = " | ".join(inert(c).replace("|", "\\|") for c in cells)
        lines.append(f"| {alert_id} | {text} | {status} |")
    return lines


def _links(investigations: Sequence[Investigation]) -> list[str]:
    """Alerts whose cited evidence comes from the service of another firing alert."""
    by_service = {str(i["alert"].get("service")): i for i in investigations}
    lines = []
    for inv in investigations:
        evidence, own = verified_ids(inv), str(inv["alert"].get("service"))
        seen: set[str] = set()
        for ident in cited_ids(inv):
            service = str(evidence[ident].get("service") or "")
            other = by_service.get(service)
            if service in seen or service == own or other is None:
                continue
            seen.add(service)
            lines.append(
                f"{inert(inv['alert'].get('alert_name'))} traces to {inert(service)}, which raised "
                f"{inert(other['alert'].get('alert_name'))} itself: treat them as one incident "
                f"[{ident}]."
            )
    return lines


def overall_assessment(
    investigations: Sequence[Investigation], skipped: Sequence[Any], alerts_error: str | None
) -> str:
    """What was found, what to do first, what belongs together, what is left to a human."""
    if alerts_error is not None:
        return (
            f"The firing alerts could not be read ({inert(alerts_error)}), so nothing was "
            "investigated. Check the alerting backend, then run the investigation again."
        )
    if not investigations:
        return "No firing alerts to investigate."
    done = [i for i in investigations if diagnosed(i)]
    lines = [f"{len(done)} of {len(investigations)} alert(s) diagnosed with verified evidence."]
    critical = [inert(i["alert"].get("alert_name")) for i in done if _critical(i)]
    if critical:
        lines.append(f"Start with the critical ones: {', '.join(critical)}.")
    lines += _links(investigations)
    missing = [inert(i["alert"].get("alert_name")) for i in investigations if not diagnosed(i)]
    if missing:
        lines.append(f"Not diagnosed, investigate by hand: {', '.join(missing)}.")
    if skipped:
        names = ", ".join(inert(a.get("alert_name")) for a in skipped)
        lines.append(f"Over the limit of {MAX_ALERTS} alerts, not investigated: {names}.")
    return " ".join(lines)


def _critical(investigation: Investigation) -> bool:
    return str(investigation["alert"].get("severity") or "").lower() == "critical"


def render_report(
    *,
    request: str,
    reference_time: str | None,
    investigations: Sequence[Investigation],
    skipped: Sequence[Any],
    alerts_error: str | None = None,
) -> str:
    """The report in Markdown: alert list, per alert evidence and cause, overall assessment."""
    count = len(investigations) + len(skipped)
    done = sum(1 for i in investigations if diagnosed(i))
    lines = ["## AIOps alert report", "", f"**Request:** {inert(request)}", ""]
    if alerts_error is None:
        lines += [
            f"{count} firing alert(s) at {inert(reference_time)}; "
            f"{done} diagnosed with verified evidence.",
            "",
        ]
    if investigations or skipped:
        lines += ["### Alerts", "", *alert_table(investigations, skipped), ""]
    for investigation in investigations:
        lines += render_alert_section(investigation)
    lines += [
        "### Overall assessment",
        "",
        overall_assessment(investigations, skipped, alerts_error),
    ]
    lines += [
        "",
        f"_Every evidence id above was verified against this run's recorded tool outputs "
        f"({GATEKEEPER_VERSION})._",
    ]
    return "\n".join(lines) + "\n"
