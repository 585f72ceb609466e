"""The AIOps report, rendered by the product from each investigation's validated output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import render
from ..gatekeeper import GATEKEEPER_VERSION
from ..limits import FailedRead, RangeNote
from ..prose import cited_chips, first_sentence, shorten
from ..render import language_of, safe_text
from .graph import MAX_ALERTS

Investigation = Mapping[str, Any]

#: The report's own words, in English and Chinese (the request's language).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "headline": "{count} firing alert(s), {done} diagnosed with verified evidence{first}.",
        "first": "; start with {name}",
        "unread_headline": "The firing alerts could not be read, so nothing was investigated.",
        "request": "Request",
        "at": "Firing alerts at {at}.",
        "alerts": "Alerts",
        "columns": "# | alert | severity | service | active since | state | diagnosis",
        "diagnosed": "diagnosed",
        "not_diagnosed": "not diagnosed",
        "skipped": "not investigated (over the alert limit)",
        "since": "active since {at}",
        "cause": "Root cause",
        "undiagnosed": "Not diagnosed",
        "no_cause": "the verified evidence supports no cause",
        "actions": "Actions",
        "overall": "Overall assessment",
        "unread": "The firing alerts could not be read ({error}), so nothing was investigated. "
        "Check the alerting backend, then run the investigation again.",
        "no_alerts": "No firing alerts to investigate.",
        "done": "{done} of {count} alert(s) diagnosed with verified evidence.",
        "critical": "Start with the critical ones: {names}.",
        "link": "{alert} traces to {service}, which raised {other} itself: treat them as one "
        "incident [{ident}].",
        "by_hand": "Not diagnosed, investigate by hand: {names}.",
        "over": "Over the limit of {limit} alerts, not investigated: {names}.",
        "evidence": "Verified evidence",
        "none": "none",
        "comma": ", ",
        "join": " ",
        "footer": "Every evidence id above was verified against this run's recorded tool "
        "outputs ({version}).",
    },
    "zh": {
        "headline": "{count} 个告警正在触发，{done} 个已用经过验证的证据完成诊断{first}。",
        "first": "；请先处理 {name}",
        "unread_headline": "无法读取正在触发的告警，因此没有进行任何调查。",
        "request": "请求",
        "at": "{at} 时正在触发的告警。",
        "alerts": "告警",
        "columns": "# | 告警 | 级别 | 服务 | 开始时间 | 状态 | 诊断",
        "diagnosed": "已诊断",
        "not_diagnosed": "未诊断",
        "skipped": "未调查（超出告警数量上限）",
        "since": "自 {at} 起处于活动状态",
        "cause": "根因",
        "undiagnosed": "未诊断",
        "no_cause": "经过验证的证据不支持任何原因",
        "actions": "处理措施",
        "overall": "总体评估",
        "unread": "无法读取正在触发的告警（{error}），因此没有进行任何调查。"
        "请检查告警后端，然后重新运行调查。",
        "no_alerts": "没有正在触发的告警需要调查。",
        "done": "{count} 个告警中有 {done} 个已用经过验证的证据完成诊断。",
        "critical": "请先处理严重级别的告警：{names}。",
        "link": "{alert} 可追溯到 {service}，而它自身也触发了 {other}：请将它们视为同一事件 "
        "[{ident}]。",
        "by_hand": "未能诊断，请人工调查：{names}。",
        "over": "超出 {limit} 个告警的上限，未调查：{names}。",
        "evidence": "已验证的证据",
        "none": "无",
        "comma": "、",
        "join": "",
        "footer": "以上每个证据编号都已对照本次运行记录的工具输出验证（{version}）。",
    },
}


def inert(text: Any) -> str:
    """Text that renders as itself (the chat renderer's rule: no HTML, images or links)."""
    return safe_text("-" if text is None else text)


def verified_ids(investigation: Investigation) -> dict[str, Mapping[str, Any]]:
    """The investigation's verified evidence by its run-wide id."""
    return {str(e["evidence_id"]): e for e in investigation.get("evidence") or []}


def conclusions(investigation: Investigation) -> list[tuple[str, list[str]]]:
    """``(statement, cited ids)`` of the composed conclusions (the composer node validated
    them: each cites verified evidence, telemetry among it)."""
    composer = investigation.get("composer") or {}
    return [
        (str(c["statement"]), list(dict.fromkeys(c["evidence_ids"])))
        for c in composer.get("conclusions") or []
    ]


def recommendations(investigation: Investigation) -> list[tuple[str, list[str]]]:
    """``(text, cited ids)`` of the composed recommendations."""
    composer = investigation.get("composer") or {}
    return [
        (str(r["text"]), list(dict.fromkeys(r["evidence_ids"])))
        for r in composer.get("recommendations") or []
    ]


def diagnosed(investigation: Investigation) -> bool:
    """The composer completed with at least one conclusion."""
    return bool(conclusions(investigation))


def shown_conclusions(investigation: Investigation) -> list[tuple[str, list[str]]]:
    """``conclusions`` with the at most three citations each one shows."""
    evidence = verified_ids(investigation)
    services = {i: e.get("service") for i, e in evidence.items()}
    return [
        (text, cited_chips(text, ids, evidence, services=services))
        for text, ids in conclusions(investigation)
    ]


def cited_ids(investigation: Investigation) -> list[str]:
    """Every evidence id the report cites for this alert, in order of first citation."""
    ids = [i for _, cites in shown_conclusions(investigation) for i in cites]
    ids += [i for _, cites in recommendations(investigation) for i in cites]
    return list(dict.fromkeys(ids))


def _cites(ids: Iterable[str]) -> str:
    return "".join(f"[{i}]" for i in ids)


def _cause(investigation: Investigation, words: Mapping[str, str]) -> str:
    """The alert's paragraph: the summary's first sentence, then each conclusion, cited."""
    found = shown_conclusions(investigation)
    parts = [f"{inert(text)} {_cites(ids)}" for text, ids in found]
    summary = str((investigation.get("composer") or {}).get("summary") or "")
    headline = first_sentence(summary)
    if headline and not any(text.startswith(headline.rstrip(".。")) for text, _ in found):
        parts.insert(0, inert(headline))
    return f"**{words['cause']}:** " + " ".join(parts)


def render_alert_section(investigation: Investigation, language: str = "en") -> list[str]:
    """One alert: what and since when, its cause, failed reads, actions, limitations."""
    words = WORDS[language]
    alert = investigation["alert"]
    lines = [
        f"### {investigation['alert_id']} · {inert(alert.get('alert_name'))} "
        f"({inert(alert.get('severity'))}, {inert(alert.get('service'))})",
        "",
        f"> {inert(shorten(alert.get('description') or ''))} - "
        + words["since"].format(at=inert(alert.get("active_at"))),
        "",
    ]
    if diagnosed(investigation):
        lines += [_cause(investigation, words), ""]
    else:
        why = investigation.get("why_not_composed") or words["no_cause"]
        lines += [f"**{words['undiagnosed']}:** {inert(why)}.", ""]
    failed = [FailedRead(**f) for f in investigation.get("failed") or []]
    lines += render.limit_lines(RangeNote(), failed, language)
    actions = recommendations(investigation) if diagnosed(investigation) else []
    if actions:
        advice = [(text, _cites(ids)) for text, ids in actions]
        lines += [f"**{words['actions']}:**", "", *render.advice_lines(advice, language), ""]
    limits = (investigation.get("composer") or {}).get("limitations") or []
    if limits:
        heading = render.LABELS[language]["limitations"]
        lines += [f"**{heading}:**", "", *(f"- {inert(x)}" for x in limits), ""]
    return lines


def alert_table(
    investigations: Sequence[Investigation], skipped: Sequence[Any], language: str = "en"
) -> list[str]:
    """The alert list: id, name, severity, service, active since, state, diagnosis."""
    words = WORDS[language]
    lines = [f"| {words['columns']} |", "| --- " * (words["columns"].count("|") + 1) + "|"]
    rows = [
        (i["alert_id"], i["alert"], words["diagnosed" if diagnosed(i) else "not_diagnosed"])
        for i in investigations
    ]
    rows += [("-", a, words["skipped"]) for a in skipped]
    for alert_id, alert, status in rows:
        cells = [alert.get(k) for k in ("alert_name", "severity", "service", "active_at", "state")]
        text = " | ".join(inert(c).replace("|", "\\|") for c in cells)
        lines.append(f"| {alert_id} | {text} | {status} |")
    return lines


def _links(investigations: Sequence[Investigation], words: Mapping[str, str]) -> list[str]:
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
                words["link"].format(
                    alert=inert(inv["alert"].get("alert_name")),
                    service=inert(service),
                    other=inert(other["alert"].get("alert_name")),
                    ident=ident,
                )
            )
    return lines


def _names(items: Iterable[Mapping[str, Any]], words: Mapping[str, str]) -> str:
    return words["comma"].join(inert(a.get("alert_name")) for a in items)


def overall_assessment(
    investigations: Sequence[Investigation],
    skipped: Sequence[Any],
    alerts_error: str | None,
    language: str = "en",
) -> str:
    """What was found, what to do first, what belongs together, what is left to a human."""
    words = WORDS[language]
    if alerts_error is not None:
        return words["unread"].format(error=inert(alerts_error))
    if not investigations:
        return words["no_alerts"]
    done = [i for i in investigations if diagnosed(i)]
    lines = [words["done"].format(done=len(done), count=len(investigations))]
    critical = [
        i["alert"] for i in done if str(i["alert"].get("severity") or "").lower() == "critical"
    ]
    if critical:
        lines.append(words["critical"].format(names=_names(critical, words)))
    lines += _links(investigations, words)
    missing = [i["alert"] for i in investigations if not diagnosed(i)]
    if missing:
        lines.append(words["by_hand"].format(names=_names(missing, words)))
    if skipped:
        lines.append(words["over"].format(limit=MAX_ALERTS, names=_names(skipped, words)))
    return words["join"].join(lines)


def headline(
    investigations: Sequence[Investigation],
    skipped: Sequence[Any],
    alerts_error: str | None,
    language: str = "en",
) -> str:
    """The report's first line: how many alerts fire, how many are diagnosed, which first."""
    words = WORDS[language]
    if alerts_error is not None:
        return f"**{words['unread_headline']}**"
    count = len(investigations) + len(skipped)
    if not count:
        return f"**{words['no_alerts']}**"
    done = [i for i in investigations if diagnosed(i)]
    first = words["first"].format(name=inert(done[0]["alert"].get("alert_name"))) if done else ""
    return f"**{words['headline'].format(count=count, done=len(done), first=first)}**"


def render_report(
    *,
    request: str,
    reference_time: str | None,
    investigations: Sequence[Investigation],
    skipped: Sequence[Any],
    alerts_error: str | None = None,
) -> str:
    """The report: headline, alert list, a paragraph per alert, assessment, evidence."""
    language = language_of(request)
    words = WORDS[language]
    lines = [
        headline(investigations, skipped, alerts_error, language),
        "",
        f"**{words['request']}:** {inert(request)}",
        "",
    ]
    if alerts_error is None:
        lines += [words["at"].format(at=inert(reference_time)), ""]
    if investigations or skipped:
        lines += [f"### {words['alerts']}", "", *alert_table(investigations, skipped, language), ""]
    for investigation in investigations:
        lines += render_alert_section(investigation, language)
    lines += [
        f"### {words['overall']}",
        "",
        overall_assessment(investigations, skipped, alerts_error, language),
    ]
    if investigations:
        lines += ["", f"### {words['evidence']}"]
    for investigation in investigations:
        name = inert(investigation["alert"].get("alert_name"))
        lines += ["", f"#### {investigation['alert_id']} · {name}", ""]
        evidence = investigation.get("evidence") or []
        lines += render.evidence_lines(evidence, language) or [f"- {words['none']}"]
    lines += ["", "_" + words["footer"].format(version=GATEKEEPER_VERSION) + "_"]
    return "\n".join(lines) + "\n"
