"""Alert answers of the offline model: which alerts fire, each one a claim bound to its fields.

A question about alerts is planned as a ``query_alerts`` read; ``add_claims`` writes one claim
per firing alert, ``compose`` one conclusion per supported alert claim. For "why is <alert>
firing?", ``services`` and ``onset`` say which service to investigate from when.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from diagnosis_graph.workflow.render import language_of

from ..compact import shown_items
from . import suspects
from .claims import ClaimWriter, next_number
from .conversation import Catalog, Done
from .judge import texts
from .question import parse_time, request_window

TOOL = "query_alerts"
#: An alert fires once its condition has held for a while: the trouble began this long before.
ALERT_LEAD = timedelta(minutes=10)
#: Alerts listed one by one (the executor contract holds at most 30 claims).
MAX_ALERTS = 12

_STATEMENT = re.compile(
    r"^(?:Alert (?P<en>\S+) is firing|No alert is firing"
    r"|告警 (?P<zh>\S+) 正在触发|当前没有正在触发的告警)"
)


def statement(alert: Mapping[str, Any], language: str) -> str:
    """The claim sentence for one firing alert (every value quoted as the output has it)."""
    name, service = alert.get("alert_name"), alert.get("service")
    severity, since = alert.get("severity"), alert.get("active_at")
    description = str(alert.get("description") or "").strip()
    if language == "zh":
        text = f"告警 {name} 正在触发"
        details = [f"服务 {service}" if service else "", f"级别 {severity}" if severity else ""]
        details.append(f"自 {since} 起" if since else "")
        text += "：" + "，".join(d for d in details if d) if any(details) else ""
        return text + (f"。描述：“{description}”" if description else "")
    text = f"Alert {name} is firing" + (f" on {service}" if service else "")
    details = [f"severity {severity}" if severity else "", f"since {since}" if since else ""]
    text += f" ({', '.join(d for d in details if d)})" if any(details) else ""
    return text + (f' - "{description}"' if description else "")


def alert_named(text: str) -> str | None:
    """The alert a statement is about (None for the no-alert statement or another claim)."""
    match = _STATEMENT.match(text)
    return (match.group("en") or match.group("zh")) if match else None


def outputs(done: Sequence[Done]) -> list[Done]:
    """The successful ``query_alerts`` results of the conversation."""
    return [d for d in done if d.tool == TOOL and d.status == "SUCCESS" and d.result]


_FIELDS = ("alert_name", "service", "severity", "active_at", "description")


def add_claims(
    evidence: dict[str, Any], request: Mapping[str, Any], done: Sequence[Done]
) -> dict[str, Any]:
    """``evidence`` with one claim per firing alert of the latest ``query_alerts`` output."""
    found = outputs(done)
    if not found:
        return evidence
    latest = found[-1]
    language = language_of(str(request.get("question", "")))
    claims = list(evidence.get("claims") or [])
    writer = ClaimWriter(first=next_number(claims))
    every = shown_items(latest.output.get("alerts"))
    asked = {id(a) for a in named(request, [latest])}
    # "alerts fired, what is wrong?": the alerts of the suspects triage picked
    relevant = None
    if not asked and suspects.triage_output(done) is not None:
        relevant = suspects.picked_alerts(done, request_window(request).stated_onset)
    # "why is <alert> firing?": that alert, not the whole list.
    alerts = [
        (i, a)
        for i, a in every
        if isinstance(a, Mapping)
        and a.get("alert_name")
        and (not asked or id(a) in asked)
        and (relevant is None or (a.get("alert_name"), a.get("service")) in relevant)
    ]
    room = max(0, min(MAX_ALERTS, 30 - len(claims)))
    for index, alert in alerts[:room]:
        bindings = [
            (latest.invocation_id, f"$.alerts[{index}].{key}", str(alert[key]))
            for key in _FIELDS
            if isinstance(alert.get(key), str) and alert[key].strip()
        ]
        writer.append(statement(alert, language), bindings)
    if not every and len(claims) < 30:
        text = "当前没有正在触发的告警" if language == "zh" else "No alert is firing"
        writer.append(text, [(latest.invocation_id, "$.alerts", "[]")])
    added = writer.claims
    if not added:
        return evidence
    more = len(alerts) - room
    tail = f"; {more} more alerts not listed." if more > 0 else "."
    summary = f"{evidence.get('summary') or ''} {len(added)} alert claims{tail}"
    return {**evidence, "claims": claims + added, "summary": summary.strip()[:4000]}


def named(request: Mapping[str, Any], done: Sequence[Done]) -> list[Mapping[str, Any]]:
    """The alerts of the ``query_alerts`` outputs that the question names (whole names)."""
    question = str(request.get("question", "")).lower()
    found: dict[str, Mapping[str, Any]] = {}
    for read in outputs(done):
        for _, alert in shown_items(read.output.get("alerts")):
            if not isinstance(alert, Mapping):
                continue
            name = str(alert.get("alert_name") or "")
            if name and re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", question):
                found.setdefault(name, alert)
    return list(found.values())


def onset(request: Mapping[str, Any], done: Sequence[Done]) -> datetime | None:
    """For a question naming alerts: ``ALERT_LEAD`` before the first of them became active."""
    starts = [
        moment - ALERT_LEAD
        for alert in named(request, done)
        if (moment := parse_time(str(alert.get("active_at") or ""))) is not None
    ]
    return min(starts, default=None)


def services(request: Mapping[str, Any], catalog: Catalog, done: Sequence[Done]) -> list[str]:
    """The services of the alerts the question names ("why is <alert> firing?")."""
    found = [
        str(alert["service"])
        for alert in named(request, done)
        if alert.get("service") in catalog.services
    ]
    return list(dict.fromkeys(found))


#: "Firing now: a, b." and "No alert is firing." by language.
_FIRING = {
    "en": ("Firing now: ", ", ", ".", "No alert is firing."),
    "zh": ("正在触发的告警：", "、", "。", "当前没有正在触发的告警。"),
}


def compose(
    request: dict[str, Any], diagnosis: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """``composer_output``: the diagnosis composer's answer for the other claims, plus one
    conclusion per supported alert claim, listed in the summary."""
    claims = list(request.get("claims") or [])
    alert_claims = [c for c in claims if _STATEMENT.match(str(c.get("statement", "")))]
    listed = [c for c in alert_claims if c.get("supported") and c.get("evidence_ids")]
    if not listed:
        return diagnosis(request)
    others = [c for c in claims if c not in alert_claims]
    conclusions = [
        {
            "statement": str(c["statement"]),
            "claim_ids": [c["claim_id"]],
            "evidence_ids": list(c["evidence_ids"]),
        }
        for c in listed
    ]
    language = language_of(str(request.get("question", "")))
    base = diagnosis({**request, "claims": others}) if others else None
    if base and base.get("conclusions"):
        return {**base, "conclusions": list(base["conclusions"]) + conclusions}
    names = [n for c in listed if (n := alert_named(str(c["statement"])))]
    firing, separator, stop, none = _FIRING.get(language, _FIRING["en"])
    summary = firing + separator.join(names) + stop if names else none
    limitations = list((base or {}).get("limitations") or [])
    refuted = texts(request)["refuted"]
    limitations += [
        refuted.format(statement=c["statement"]) for c in alert_claims if c not in listed
    ]
    return {
        "summary": summary[:2000],
        "conclusions": conclusions[:20],
        "limitations": limitations[:20],
        "recommendations": [],
    }
