"""The offline AIOps planner and reporter (``aiops_plan``, ``aiops_report``).

The planner reads only the alert list and the tool schemas: per alert, the window starts 15
minutes before ``active_at`` (an alert waits for its threshold to hold, so it becomes active
some minutes after the onset) and the queries are the diagnosis planner's. The AIOps executor
needs nothing new: its requests are ``executor_evidence_v2`` requests with a plan and a
question, answered by :mod:`.executor`. The reporter reads only the verified projection per
alert and reuses the offline verifier and composer to judge claims and phrase the cause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from .conversation import Catalog
from .judge import compose, verify
from .planner import gap_plan, service_queries
from .question import Window, iso, mentioned_services, parse_time, question_window

ONSET_LEAD = timedelta(minutes=15)
_CAUSE = re.compile(r"^Likely cause: (?P<title>.+?)(?:;|\.(?: |$))")
_TRAIL = re.compile(r"the trail leads to (?P<services>.+?)(?:;|\.(?: |$))")
_RECOMMENDS = re.compile(r"^The runbook recommends: (?P<step>.+)$")
_HEALTHY = "No evidence of a problem"
_BY_HAND = "Check the service's error logs and dashboards around the alert's onset by hand."


def _now(reference_time: Any) -> datetime:
    found = parse_time(str(reference_time or ""))
    return found or datetime.now(timezone.utc).replace(microsecond=0)


def _alert_plan(alert: dict[str, Any], now: datetime, catalog: Catalog) -> dict[str, Any]:
    name, service = str(alert.get("alert_name", "")), str(alert.get("service", ""))
    active = parse_time(str(alert.get("active_at") or "")) or now - timedelta(hours=1)
    onset = min(active - ONSET_LEAD, now - timedelta(minutes=1))
    if service in catalog.services:
        services = [service]
    else:
        services = mentioned_services(str(alert.get("description", "")), catalog.services)[:1]
    queries = [q for s in services for q in service_queries(catalog, s, Window(onset, now))]
    if not queries:
        queries = [
            {
                "tool": "lookup_knowledge",
                "arguments": {"query": f"{name} {alert.get('description', '')}"[:300]},
                "purpose": "the alert names no service the tools know: look for a runbook",
            }
        ]
    return {
        "alert_name": name,
        "service": service,
        "question": f"Why is {service} firing {name} since {iso(onset)}?",
        "queries": queries[:12],
    }


def plan(request: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """An ``aiops_plan``: one investigation per alert, or the queries closing one alert's gaps."""
    alerts = [a for a in request.get("alerts") or [] if isinstance(a, dict)]
    if request.get("mode") == "EVIDENCE_GAP_ONLY" and alerts:
        question = str(request.get("question") or "")
        found = gap_plan(request, catalog, question_window(question, request.get("reference_time")))
        entry = {
            "alert_name": alerts[0].get("alert_name"),
            "service": alerts[0].get("service"),
            "question": question,
            "queries": found["queries"],
        }
        return {"mode": "EVIDENCE_GAP_ONLY", "summary": found["summary"], "alerts": [entry]}
    now = _now(request.get("reference_time"))
    entries = [_alert_plan(alert, now, catalog) for alert in alerts]
    return {
        "mode": "FULL",
        "summary": f"Investigate {len(entries)} firing alert(s): compare each service's logs and "
        "metrics from shortly before the alert became active with the hour before.",
        "alerts": entries,
    }


def _not_diagnosed(alert: dict[str, Any], why: str, ids: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "alert_name": alert.get("alert_name"),
        "service": alert.get("service"),
        "severity": alert.get("severity") or "",
        "diagnosed": False,
        "root_cause": why,
        "evidence_ids": list(ids),
        "actions": [_BY_HAND],
    }


def _actions(claims: Sequence[dict[str, Any]]) -> list[str]:
    steps = []
    for claim in claims:
        if match := _RECOMMENDS.match(str(claim.get("statement", ""))):
            cites = "".join(f"[{e}]" for e in claim.get("evidence_ids", []))
            steps.append(f"{match.group('step')} {cites}".strip())
    return steps[:5]


def alert_entry(alert: dict[str, Any]) -> dict[str, Any]:
    """The report entry of one alert, from its verified claims and evidence only."""
    claims, evidence = alert.get("claims") or [], alert.get("evidence") or []
    if not claims:
        why = str(alert.get("note") or "no evidence was verified")
        return _not_diagnosed(alert, why[:1].upper() + why[1:].rstrip(".") + ".")
    judged = verify({"claims": claims, "evidence": evidence})
    supported = {a["claim_id"] for a in judged["claim_assessments"] if a["supported"]}
    marked = [{**c, "supported": c["claim_id"] in supported} for c in claims]
    verifier = {"effective_verdict": judged["verdict"], "critical_gaps": judged["critical_gaps"]}
    composed = compose({"claims": marked, "evidence": evidence, "verifier": verifier})
    conclusions = composed["conclusions"]
    if not conclusions:
        return _not_diagnosed(alert, "The verified evidence supports no cause.")
    order = {e["evidence_id"]: n for n, e in enumerate(evidence)}

    def ordered(found: Any) -> list[str]:
        # compose() orders ids by their number; run-wide ids (A1-E9) need the list's order.
        return sorted(set(found), key=lambda e: order[e])

    ids = ordered(e for c in conclusions for e in c["evidence_ids"])
    if conclusions[0]["statement"].startswith(_HEALTHY):
        why = f"{conclusions[0]['statement']} The alert may be a false positive."
        return _not_diagnosed(alert, why, ids)
    root_cause = " ".join(
        c["statement"] + " " + "".join(f"[{e}]" for e in ordered(c["evidence_ids"]))
        for c in conclusions
    )
    entry = _not_diagnosed(alert, root_cause, ids)
    entry.update(diagnosed=True, actions=_actions([c for c in marked if c["supported"]]))
    entry["actions"] = entry["actions"] or composed["recommendations"]
    return entry


def _cause(entry: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The failure mode and the services the trail leads to, from the entry's root cause."""
    title, trail = None, []
    for sentence in re.split(r"(?<=\]) (?=[A-Z])", str(entry["root_cause"])):
        if match := _CAUSE.match(sentence):
            title = match.group("title")
        if match := _TRAIL.search(sentence):
            trail = [s.strip() for s in match.group("services").split(",")]
    return title, trail


def overall(alerts: Sequence[dict[str, Any]], entries: Sequence[dict[str, Any]]) -> str:
    """What to do first, and which alerts share a cause or lead to one another."""
    done = [e for e in entries if e["diagnosed"]]
    lines = [f"{len(done)} of {len(entries)} firing alert(s) diagnosed with verified evidence."]
    critical = [e["alert_name"] for e in done if str(e["severity"]).lower() == "critical"]
    if critical:
        lines.append(f"Start with the critical ones: {', '.join(critical)}.")
    by_service = {str(a.get("service")): str(a.get("alert_name")) for a in alerts}
    modes: dict[str, list[str]] = {}
    for entry in done:
        title, trail = _cause(entry)
        if title:
            modes.setdefault(title, []).append(entry["alert_name"])
        for service in trail:
            if service in by_service and by_service[service] != entry["alert_name"]:
                lines.append(
                    f"{entry['alert_name']} traces to {service}, which raised "
                    f"{by_service[service]} itself: treat them as one incident."
                )
    lines += [
        f"{' and '.join(names)} share one failure mode: {title}."
        for title, names in modes.items()
        if len(names) > 1
    ]
    missing = [e["alert_name"] for e in entries if not e["diagnosed"]]
    if missing:
        lines.append(f"Not diagnosed, investigate by hand: {', '.join(missing)}.")
    return " ".join(lines)


def _summary(entries: Sequence[dict[str, Any]]) -> str:
    lines = []
    for entry in entries:
        title, trail = _cause(entry)
        cites = "".join(f"[{e}]" for e in entry["evidence_ids"][-1:])
        what = title or ("not diagnosed" if not entry["diagnosed"] else "see below")
        where = f", trail to {', '.join(trail)}" if trail else ""
        lines.append(f"- **{entry['alert_name']}** ({entry['service']}): {what}{where} {cites}")
    return "\n".join(line.rstrip() for line in lines)


def report(request: dict[str, Any]) -> dict[str, Any]:
    """An ``aiops_report`` over the verified projection of every alert."""
    alerts = [a for a in request.get("alerts") or [] if isinstance(a, dict)]
    entries = [alert_entry(alert) for alert in alerts]
    return {
        "alerts": entries,
        "overall_assessment": overall(alerts, entries),
        "report_markdown": _summary(entries),
    }
