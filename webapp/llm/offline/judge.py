"""The offline verifier and composer: judge verified claims, then write the answer.

Both read claim statements back through the claim kinds of :mod:`.claims`; a statement no kind
reads is free text (a real model's), judged only on whether its excerpts say what it says. The
answer has one finding per asked service: what moved, and the likely cause and culprit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from diagnosis_graph.workflow.gatekeeper import normalise
from diagnosis_graph.workflow.prose import is_identifier, signal_words
from diagnosis_graph.workflow.render import language_of

from ...analysis.language import states_failure
from ...telemetry.units import spoken_unit
from . import claims as kinds
from .causes import CAUSE_KINDS, Item, innermost, matches
from .claims import ClaimKind, clean
from .question import clock, parse_time

#: The claim kinds that lead a victim to its culprit.
ORIGINS = (kinds.ORIGIN, kinds.ORIGIN_TIMING)
#: At most this many signals are listed in a "degraded" conclusion.
LISTED_SIGNALS = 3

#: What the composer and verifier write, by the question's language.
TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "steady": "No evidence of a problem with {service}: none of its {count} signals moved "
        "significantly from {start} to {end}.",
        "steady_traffic": "No evidence of a problem with {service}: only {moved} changed - a "
        "count of work done, which follows traffic; none of its other {count} signals moved "
        "significantly from {start} to {end}.",
        "unexplained": "No cause found for the reported trouble with {service}: checked its "
        "{count} signals and its logs, and none moved significantly from {start} to {end}"
        "{moved} - the trouble may lie outside them.",
        "unexplained_traffic": "; only {moved} changed, a count of work done",
        "value": "{service} {signal} was {value} at {time}{local}.",
        "degraded": "{service} degraded: {since}{moved}.",
        "since": "since {onset}{local}, ",
        "local": " ({clock} in the question's time zone)",
        "lines": "{level} log lines",
        "message_lines": 'lines of "{message}"',
        "quoted": ' - it logged "{line}"',
        "new_errors": "new error messages",
        "new_lines": " ({count} lines)",
        "depends": "in {culprit} (which {service} depends on)",
        "timed": "in {culprit} (which {service} may depend on: no log line names it, but its "
        "trouble began with {service}'s - the link rests on timing alone)",
        "itself": "in {culprit} itself",
        "cause": "Likely cause {where}: {mechanism}",
        "new_message": 'a new log message, "{line}"',
        "first": "What moved first: {where}",
        "event": "; a change was logged as the trouble began",
        "stop": ".",
        "refuted": "Not supported by its evidence: {statement}",
        "gap": "The logs name {dep}, but no evidence from {dep}'s own signals shows what "
        "happened there.",
        "none": "The verified evidence does not support a conclusion.",
        "no_claim": "No claim was supported.",
        "step": "Check the services named above around the onset time and compare with the last "
        "known good state.",
        "widen": "Widen the time window or name the affected service explicitly, then ask again.",
        "by_hand": "Check the service's error logs and latency dashboards by hand.",
    },
    "zh": {
        "steady": "没有证据表明 {service} 有问题: 其 {count} 个信号从 {start} 到 {end} "
        "均无显著变化。",
        "steady_traffic": "没有证据表明 {service} 有问题: 只有 {moved} 变化 - 这是工作量的计数, "
        "随流量变化; 其余 {count} 个信号从 {start} 到 {end} 均无显著变化。",
        "unexplained": "没有找到 {service} 所报告问题的原因: 已检查其 {count} 个信号和日志, "
        "从 {start} 到 {end} 均无显著变化{moved} - 问题可能在这些之外。",
        "unexplained_traffic": "; 只有 {moved} 变化, 这是工作量的计数",
        "value": "{service} 的 {signal} 在 {time}{local} 为 {value}。",
        "degraded": "{service} 出现异常: {since}{moved}。",
        "since": "自 {onset}{local} 起, ",
        "local": " (问题所用时区 {clock})",
        "lines": "{level} 日志行数",
        "message_lines": '"{message}" 的行数',
        "quoted": ' - 它记录了 "{line}"',
        "new_errors": "出现新的错误消息",
        "new_lines": " ({count} 行)",
        "depends": "在 {culprit} ({service} 依赖它)",
        "timed": "在 {culprit} ({service} 可能依赖它: 没有日志提到它, 但它的问题与 {service} "
        "同时开始 - 这一关联仅基于时间)",
        "itself": "在 {culprit} 本身",
        "cause": "可能的原因{where}: {mechanism}",
        "new_message": '新的日志消息 "{line}"',
        "first": "最先出现变化{where}",
        "event": "; 问题开始时记录了一次变更",
        "stop": "。",
        "refuted": "证据不支持: {statement}",
        "gap": "日志提到了 {dep}, 但没有来自 {dep} 自身信号的证据说明那里发生了什么。",
        "none": "已验证的证据不足以得出结论。",
        "no_claim": "没有得到证据支持的论断。",
        "step": "在异常开始时间前后检查上面提到的服务, 并与最近一次正常状态对比。",
        "widen": "扩大时间范围或明确指出受影响的服务, 然后再问一次。",
        "by_hand": "手动查看该服务的错误日志和延迟仪表盘。",
    },
}


def texts(request: dict[str, Any]) -> dict[str, str]:
    """The sentences of the question's language (else English)."""
    return TEXTS.get(language_of(str(request.get("question", ""))), TEXTS["en"])


#: How a cause conclusion begins, in any language (the summary lists causes first).
_CAUSE_OPENINGS = tuple(
    words[key].split("{")[0] for words in TEXTS.values() for key in ("cause", "first")
)


@dataclass(frozen=True)
class Read:
    """A claim of the payload with its kind and fields (kind None: free text)."""

    claim: dict[str, Any]
    kind: ClaimKind | None
    fields: dict[str, str]

    @property
    def service(self) -> str:
        return self.fields.get("service") or self.fields.get("culprit") or ""


def read_all(claims: Sequence[dict[str, Any]]) -> list[Read]:
    """Every claim with its kind and fields."""
    return [Read(c, *(kinds.read(str(c.get("statement", ""))) or (None, {}))) for c in claims]


_QUOTED = {"example", "excerpt", "message", "title", "step"}


def _supported(item: Read, evidence: dict[str, dict[str, Any]]) -> tuple[bool, str]:
    """Whether the claim's excerpts show what it states: a quoted field must be one of them;
    free text must contain one."""
    excerpts = [
        str(evidence[e]["evidence_excerpt"])
        for e in item.claim.get("evidence_ids", [])
        if e in evidence
    ]
    if not excerpts:
        return False, "no verified evidence"
    statement = normalise(str(item.claim.get("statement", "")))
    shown = [x for x in excerpts if normalise(clean(x)) in statement]
    if item.kind is None:
        if not shown:
            return False, "the excerpts do not show what the statement says"
        return True, f"{len(shown)} of {len(excerpts)} excerpts state it directly"
    quoted = [item.fields[f] for f in item.kind.fields if f in _QUOTED]
    if quoted and not any(normalise(q) in {normalise(clean(x)) for x in excerpts} for q in quoted):
        return False, "the quoted text is not one of its excerpts"
    return True, f"a {item.kind.name} claim; {len(shown)} of {len(excerpts)} excerpts quoted"


def verify(request: dict[str, Any]) -> dict[str, Any]:
    """``verifier_output`` over the verified projection."""
    evidence = {e["evidence_id"]: e for e in request.get("evidence") or []}
    items = read_all(request.get("claims") or [])
    judged = [(item, *_supported(item, evidence)) for item in items]
    assessments = [
        {"claim_id": i.claim["claim_id"], "supported": ok, "reason": why} for i, ok, why in judged
    ]
    supported = [i for i, ok, _ in judged if ok]
    gaps = dependency_gaps(supported, texts(request))
    critical_missing = any(i.claim.get("critical") and not ok for i, ok, _ in judged)
    verdict = "FAIL" if not supported else "LOW_CONFID" if gaps or critical_missing else "PASS"
    return {"verdict": verdict, "claim_assessments": assessments, "critical_gaps": gaps}


def dependency_gaps(supported: Sequence[Read], words: dict[str, str]) -> list[dict[str, Any]]:
    """A gap per dependency named by the logs but without evidence from its own telemetry."""
    about = {i.service for i in supported if i.kind in (kinds.MOVED, kinds.STEADY)}
    gaps = []
    for item in supported:
        dep = item.fields.get("dependency") if item.kind is kinds.NAMES else None
        if dep and dep not in about:
            about.add(dep)
            tool = {"suggested_tool": "detect_anomalies", "suggested_arguments": {"service": dep}}
            gaps.append({"description": words["gap"].format(dep=dep), **tool})
    return gaps


@dataclass
class Finding:
    """One asked service's part of the answer."""

    service: str
    moved: list[Read] = field(default_factory=list)
    logs: list[Read] = field(default_factory=list)
    steady: list[Read] = field(default_factory=list)
    traffic: list[Read] = field(default_factory=list)
    origin: Read | None = None


#: The ``Finding`` list each claim kind goes to.
_SLOTS = {"moved": "moved", "steady": "steady", "traffic": "traffic", "new_logs": "logs"}


def findings(items: Sequence[Read]) -> list[Finding]:
    """The asked services (first claimed first), each with its claims; a service an
    ``origin`` claim names as the culprit is not an asked one."""
    culprits = {i.fields["culprit"]: i for i in items if i.kind in ORIGINS}
    victims = {i.fields["victim"] for i in items if i.kind in ORIGINS}
    found: dict[str, Finding] = {}
    for item in items:
        slot = _SLOTS.get(item.kind.name) if item.kind else None
        service = item.service
        if slot is None or (service in culprits and service not in victims | found.keys()):
            continue
        getattr(found.setdefault(service, Finding(service)), slot).append(item)
    for item in items:
        if item.kind in ORIGINS and item.fields["victim"] in found:
            found[item.fields["victim"]].origin = item
    return list(found.values())


def _eid(evidence_id: str) -> int:
    return int(evidence_id[1:]) if evidence_id[1:].isdigit() else 0


def _conclusion(statement: str, items: Sequence[Read]) -> dict[str, Any]:
    return {
        "statement": statement,
        "claim_ids": [str(i.claim["claim_id"]) for i in items],
        "evidence_ids": sorted({e for i in items for e in i.claim["evidence_ids"]}, key=_eid),
    }


def _finding_conclusions(
    finding: Finding,
    items: Sequence[Read],
    words: dict[str, str],
    offset: int,
    failing: bool,
) -> list[dict[str, Any]]:
    """The finding's conclusions. When nothing moved the service is healthy, unless the
    question says it is ``failing``: then no cause was found."""
    if not finding.moved and not finding.logs:
        if not finding.steady:
            return []
        traffic = ", ".join(_quantity(i, words) for i in finding.traffic[:LISTED_SIGNALS])
        if failing:
            moved = words["unexplained_traffic"].format(moved=traffic) if traffic else ""
            sentence = words["unexplained"]
        else:
            moved, sentence = traffic, words["steady_traffic" if traffic else "steady"]
        statement = sentence.format(**finding.steady[0].fields, moved=moved)
        return [_conclusion(statement, finding.steady + finding.traffic)]
    culprit = finding.origin.fields["culprit"] if finding.origin else finding.service
    shown = finding.moved[:LISTED_SIGNALS]
    moved = ", ".join(_quantity(i, words) for i in shown)
    if shown:
        since = _since(min(i.fields["onset"] for i in shown), words, offset)
    else:  # only new messages: since the first was first seen, how many lines of them
        seen = [t for i in finding.logs if (t := parse_time(i.fields["first_seen"])) is not None]
        since = _since(clock(min(seen)), words, offset) if seen else ""
        count = sum(int(i.fields["count"]) for i in finding.logs if i.fields["count"].isdigit())
        moved = words["new_errors"] + (words["new_lines"].format(count=count) if count else "")
    degraded = words["degraded"].format(service=finding.service, since=since, moved=moved)
    out = [_conclusion(degraded, finding.moved + finding.logs)]
    cause = next((i for i in items if i.kind is kinds.CAUSE and i.service == culprit), None)
    behind = [i for i in items if i.service == culprit and i.kind in (kinds.MOVED, kinds.NEW_LOGS)]
    events = [i for i in items if i.kind is kinds.EVENT and i.service == culprit]
    links = [i for i in items if i.kind is kinds.NAMES]
    # the culprit's own words: its first new message, else (or when it shows the cause
    # better) a line logged at its onset
    said = next((i for i in items if i.kind is kinds.NEW_LOGS and i.service == culprit), None)
    if events and (said is None or (cause and _shows_cause(events[0], cause, said))):
        said = events[0]
    support = [i for i in (cause, finding.origin, said) if i is not None]
    support += behind + links + events if culprit != finding.service else events
    timed = finding.origin is not None and finding.origin.kind is kinds.ORIGIN_TIMING
    side = "itself" if culprit == finding.service else "timed" if timed else "depends"
    where = words[side].format(culprit=culprit, service=finding.service)
    if not support:
        return out
    line = quote(said.fields.get("example") or said.fields.get("message", "")) if said else ""
    if cause or line:
        mechanism = cause.fields["mechanism"] if cause else words["new_message"].format(line=line)
        what = words["cause"].format(where=where, mechanism=mechanism)
        what += words["quoted"].format(line=line) if cause and line else ""
    else:
        what = words["first"].format(where=where)
    when = words["event"] if events and said not in events else ""
    unique = [i for n, i in enumerate(support) if all(i is not j for j in support[:n])]
    out.append(_conclusion(f"{what}{when}{words['stop']}", unique))
    return out


def _shows_cause(event: Read, cause: Read, message: Read) -> bool:
    """Whether ``event`` is a sign of ``cause``'s kind and ``message`` is not."""
    kind = next((k for k in CAUSE_KINDS if cause.fields["mechanism"] in (k.label, k.zh)), None)
    if kind is None:
        return False
    line = message.fields.get("example", "")
    return matches(kind, Item("event", event.fields.get("message", ""), True)) and not matches(
        kind, Item("log", line, True)
    )


#: A quoted log line is cut to about this many characters (at a word break).
QUOTE_WIDTH = 120


def quote(line: str, width: int = QUOTE_WIDTH) -> str:
    """A log line short enough to quote: one line, from its innermost exception on when long,
    cut at a word break, without a final full stop."""
    flat = " ".join(str(line).split())
    if len(flat) > width:
        flat = " ".join(innermost(str(line), named=True).split())
    if len(flat) <= width:
        return flat.rstrip(".")
    head = flat[:width]
    space = head.rfind(" ")
    return (head[:space] if space > width // 2 else head).rstrip(" ,;:") + " …"


def _number(text: str, significant: int = 3) -> str:
    """A claim's number as a person reads it: whole from 10^(``significant``-1), else that many
    significant digits (rounded half up, as grounding rounds)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if value == 0 or not value.is_finite():
        return "0" if value == 0 else text
    if value.adjusted() >= significant - 1:
        return str(value.quantize(Decimal(1), ROUND_HALF_UP))
    digits = max(0, significant - 1 - value.adjusted())
    rounded = value.quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP)
    return format(rounded, "f").rstrip("0").rstrip(".") if digits else format(rounded, "f")


def _label(name: str, words: dict[str, str], unit: str = "") -> str:
    """A signal as words: ``error rate``, ``ERROR log lines``, ``lines of "<message>"``."""
    if name in ("ERROR", "WARN", "INFO"):
        return words["lines"].format(level=name)
    if is_identifier(name) or " " not in name:
        # a number part stays on its word ("upper-99"): alone it would read as a quantity
        label = re.sub(r"(?<=[A-Za-z]) (?=\d)", "-", signal_words(name))
        return re.sub(r" \([^)]*\)$", "", label) if unit else label
    return words["message_lines"].format(message=quote(name, 60))


def _quantity(item: Read, words: dict[str, str]) -> str:
    """``p99 latency 181 → 4300 ms``: a moved signal from its baseline to its peak."""
    unit = item.fields.get("unit", "")
    label = _label(item.fields["signal"], words, unit)
    change = f"{_number(item.fields['baseline'])} → {_number(item.fields['peak'])}"
    return f"{label} {change} {unit}".rstrip()


def with_units(items: Sequence[Read], evidence: Sequence[dict[str, Any]]) -> list[Read]:
    """Each moved signal with the unit one of its verified excerpts gives (``$...unit``)."""
    units = {
        e["evidence_id"]: spoken_unit(str(e.get("evidence_excerpt") or ""))
        for e in evidence
        if str(e.get("raw_path", "")).endswith(".unit")
    }
    out = []
    for item in items:
        unit = next((units[e] for e in item.claim.get("evidence_ids", []) if units.get(e)), "")
        if item.kind in (kinds.MOVED, kinds.TRAFFIC) and unit:
            item = Read(item.claim, item.kind, {**item.fields, "unit": unit})
        out.append(item)
    return out


#: A value asked for is stated to this many significant digits.
VALUE_DIGITS = 4


def _value(item: Read, words: dict[str, str], offset: int) -> dict[str, Any]:
    """``auth-api token age was 94.62 s at 2027-03-09 10:52 UTC``."""
    number, _, written = item.fields["value"].partition(" ")
    unit = spoken_unit(written)
    shown = {
        "signal": _label(item.fields["signal"], words, unit),
        "value": f"{_number(number, VALUE_DIGITS)} {unit}".strip(),
        "local": _local(item.fields["time"], words, offset),
    }
    return _conclusion(words["value"].format(**{**item.fields, **shown}), [item])


def _since(onset: str, words: dict[str, str], offset: int) -> str:
    """``since 2027-03-09 09:30 UTC (17:30 in the question's time zone), ``."""
    return words["since"].format(onset=onset, local=_local(onset, words, offset))


def _local(clock: str, words: dict[str, str], offset: int) -> str:
    """`` (17:30 in the question's time zone)`` for ``2027-03-09 09:30 UTC`` (nothing at UTC)."""
    moment = parse_time(clock.replace(" UTC", "").replace(" ", "T") + ":00Z")
    if not offset or moment is None:
        return ""
    return words["local"].format(clock=(moment + timedelta(minutes=offset)).strftime("%H:%M"))


def compose(request: dict[str, Any]) -> dict[str, Any]:
    """``composer_output`` v2: a finding per asked service, citing supported claims."""
    verifier = request.get("verifier") or {}
    payload = request.get("claims") or []
    supported = with_units(
        read_all([c for c in payload if c.get("supported")]), request.get("evidence") or []
    )
    unsupported = [c for c in payload if not c.get("supported")]
    roles = {e["evidence_id"]: e.get("role") for e in request.get("evidence") or []}
    words = texts(request)
    offset = int(request.get("utc_offset_minutes") or 0)
    failing = states_failure(str(request.get("question", "")))
    limitations = [words["refuted"].format(statement=c["statement"]) for c in unsupported]
    limitations += [g["description"] for g in verifier.get("critical_gaps") or []]
    if verifier.get("effective_verdict") == "FAIL" or not supported:
        return _no_conclusion(limitations, words)
    asked = [_value(i, words, offset) for i in supported if i.kind is kinds.VALUE]
    conclusions = asked + [
        c
        for finding in findings(supported)
        for c in _finding_conclusions(finding, supported, words, offset, failing)
    ]
    # reference evidence (runbooks) never backs a conclusion on its own
    conclusions = [
        c for c in conclusions if any(roles.get(e) != "reference" for e in c["evidence_ids"])
    ]
    if not conclusions:
        return _no_conclusion(limitations, words)
    steps = [i for i in supported if i.kind is kinds.STEP]
    recommendations = [
        {"text": i.fields["step"], "evidence_ids": list(i.claim["evidence_ids"])} for i in steps
    ] or [{"text": words["step"], "evidence_ids": []}]
    return {
        "summary": _summary(conclusions, len(asked)),
        "conclusions": conclusions,
        "limitations": limitations,
        "recommendations": recommendations,
    }


def _summary(conclusions: Sequence[dict[str, Any]], values: int = 0) -> str:
    """At most three conclusions: the first ``values`` (values asked for), causes, the rest."""
    first = list(conclusions[:values])
    causes = [c for c in conclusions[values:] if c["statement"].startswith(_CAUSE_OPENINGS)]
    rest = [c for c in conclusions[values:] if c not in causes]
    return " ".join(str(c["statement"]) for c in (first + causes + rest)[:3])


def _no_conclusion(limitations: list[str], words: dict[str, str]) -> dict[str, Any]:
    return {
        "summary": words["none"],
        "conclusions": [],
        "limitations": limitations or [words["no_claim"]],
        "recommendations": [
            {"text": words[step], "evidence_ids": []} for step in ("widen", "by_hand")
        ],
    }
