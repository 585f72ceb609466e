"""The one product renderer: the answer Markdown a user reads, from validated structures only."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .gatekeeper import EvidenceItem
from .limits import DataRanges, FailedRead, RangeNote, failed_items, range_note
from .prose import (
    cited_chips,
    first_sentence,
    is_identifier,
    rest_after_first,
    shorten,
    signal_words,
)

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CITATION = re.compile(r"\s*\[(?:[A-Za-z0-9]+-)?E\d+\]")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_MARKDOWN = re.compile(r"([\\`*_\[\]!|~#{}])")
_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))

#: The answer's own words, in English and Chinese (the question's language).
LABELS: dict[str, dict[str, str]] = {
    "en": {
        "question": "Question",
        "conclusions": "Conclusions",
        "none": "Not enough evidence: the verified evidence does not support a conclusion.",
        "outside": "Not enough evidence: the window asked about lies outside the data.",
        "evidence": "Evidence",
        "recommendations": "Recommended next steps",
        "unsourced": "general advice, no cited evidence",
        "limitations": "Limitations",
        "failed": "Could not be read",
        "telemetry": "telemetry",
        "reference": "reference",
        "upload": "uploaded document",
        "footer": "Every conclusion above cites evidence verified against this run's tool "
        "outputs; the text is rendered by the product, not written by the model.",
        "incomplete": "Diagnosis incomplete: not enough verified evidence to name a cause.",
        "incomplete_reads": "Diagnosis incomplete: part of the telemetry could not be read, "
        "and what was read is not enough verified evidence to name a cause.",
        "because": "A verified diagnosis could not be completed because {why}.",
        "no_claim": "This answer makes no claim that is not backed by verified evidence.",
        "did_verify": "Evidence that did verify",
        "nothing": "No evidence was verified in this run.",
        "next": "Next steps",
        "window": "Window",
        "window_range": "{start} to {end}",
        "window_until": "until {end}",
        "window_from": ' (read from "{text}", in {zone})',
        "window_none": "no time given: looked over the recent range up to {end}",
        "unknown": "Unknown service",
        "unknown_line": "{name} is not a known service: this system has no telemetry for it.",
        "suggest": " Did you mean {names}?",
        "or": " or ",
        "comma": ", ",
    },
    "zh": {
        "question": "问题",
        "conclusions": "结论",
        "none": "证据不足：已验证的证据不足以支持任何结论。",
        "outside": "证据不足：所问的时间窗口不在数据范围之内。",
        "evidence": "证据",
        "recommendations": "建议的后续步骤",
        "unsourced": "一般性建议，未引用证据",
        "limitations": "局限",
        "failed": "未能读取",
        "telemetry": "遥测",
        "reference": "参考",
        "upload": "上传的文档",
        "footer": "以上每条结论都引用了已对照本次运行的工具输出验证过的证据；"
        "文本由产品渲染，而非模型撰写。",
        "incomplete": "诊断未完成：经过验证的证据不足以指出原因。",
        "incomplete_reads": "诊断未完成：部分遥测数据无法读取，"
        "已读取的经过验证的证据不足以指出原因。",
        "because": "无法完成经过验证的诊断，原因：{why}。",
        "no_claim": "本回答不包含任何未经验证证据支持的论断。",
        "did_verify": "已通过验证的证据",
        "nothing": "本次运行没有通过验证的证据。",
        "next": "后续步骤",
        "window": "时间范围",
        "window_range": "{start} 至 {end}",
        "window_until": "截至 {end}",
        "window_from": "（依据“{text}”，按 {zone} 解读）",
        "window_none": "问题未给出时间：查看了截至 {end} 的近期范围",
        "unknown": "未知服务",
        "unknown_line": "{name} 不是已知的服务：本系统没有它的遥测数据。",
        "suggest": "您是否指的是 {names}？",
        "or": " 或 ",
        "comma": "、",
    },
}

NEXT_STEPS: dict[str, tuple[str, ...]] = {
    "en": (
        "Open this run's trace to see which step failed and the tool outputs recorded so far.",
        "Check the affected service's error logs and latency/error-rate dashboards for the "
        "time window in the question.",
        "Retry the question; if the model or a telemetry source was unavailable, it may "
        "succeed now.",
    ),
    "zh": (
        "打开本次运行的追踪页面，查看失败的步骤以及已记录的工具输出。",
        "检查受影响服务在问题时间窗口内的错误日志和延迟/错误率仪表盘。",
        "重试该问题；如果模型或遥测数据源当时不可用，现在可能会成功。",
    ),
}


def language_of(question: str) -> str:
    """``zh`` when the question contains CJK characters, else ``en``."""
    return "zh" if _CJK.search(question or "") else "en"


def window_line(window: Mapping[str, Any] | None, language: str) -> str | None:
    """``**Window:** <start> to <end> (read from "<text>", in <zone>)``; None without a window."""
    if not window or not window.get("end"):
        return None
    words = LABELS[language]
    end = safe_text(window["end"])
    if not window.get("text"):
        span = words["window_none"].format(end=end)
    else:
        shape = "window_range" if window.get("start") else "window_until"
        span = words[shape].format(start=safe_text(window.get("start")), end=end)
        span += words["window_from"].format(
            text=safe_text(window["text"]), zone=safe_text(window.get("zone") or "UTC")
        )
    return f"**{words['window']}:** {span}"


def unknown_lines(unknown: Sequence[Mapping[str, Any]], language: str) -> list[str]:
    """One line per unknown service name, with the closest known names."""
    words = LABELS[language]
    lines = []
    for item in unknown:
        line = words["unknown_line"].format(name=safe_text(item.get("name")))
        names = [safe_text(n) for n in item.get("suggestions") or [] if n]
        if names:
            listed = words["comma"].join(names[:-1]) + words["or"] + names[-1]
            line += words["suggest"].format(names=listed if len(names) > 1 else names[0])
        lines.append(f"**{words['unknown']}:** {line}")
    return lines


def unknown_services(plan: Mapping[str, Any], catalog: Sequence[str]) -> list[dict[str, Any]]:
    """The plan's ``unknown_services`` not in ``catalog``, with suggestions it has."""
    known = {name.lower(): name for name in catalog}
    checked = []
    for item in plan.get("unknown_services") or []:
        name = str(item.get("name") or "")
        if not name or name.lower() in known:
            continue
        offered = [known[s.lower()] for s in item.get("suggestions") or [] if s.lower() in known]
        checked.append({"name": name, "suggestions": offered})
    return checked


def _plain_link(match: re.Match[str]) -> str:
    text, target = match.group(1).strip(), match.group(2).strip()
    if re.match(r"https?://", target, re.IGNORECASE):
        return f"{text} ({target})" if text else target
    return text


def safe_text(text: Any) -> str:
    """Model- or tool-written text made inert for Markdown: no HTML, images, links or blocks."""
    value = _CITATION.sub("", " ".join(str(text or "").split()))
    value = _IMAGE.sub(_plain_link, value)
    value = _LINK.sub(_plain_link, value)
    for raw, entity in _ENTITIES:
        value = value.replace(raw, entity)
    return _MARKDOWN.sub(r"\\\1", value).strip()


def _cites(ids: Sequence[str]) -> str:
    return "".join(f"[{e}]" for e in ids if re.fullmatch(r"E\d+", e))


def _origin(item: Mapping[str, Any], words: Mapping[str, str]) -> str:
    origin = item.get("origin") or {}
    if not origin:
        return ""
    parts = [words["upload"] if origin.get("kind") == "upload" else str(origin.get("kind", ""))]
    parts += [safe_text(origin[k]) for k in ("file_name", "uploaded_at") if origin.get(k)]
    return ", ".join(p for p in parts if p) + "; "


def _excerpt(item: EvidenceItem) -> str:
    """The excerpt as a line; a bare signal name also as words (``error rate (`error_rate`)``)."""
    excerpt = str(item["evidence_excerpt"])
    if is_identifier(excerpt) and signal_words(excerpt) != excerpt:
        return f"{safe_text(signal_words(excerpt))} (`{excerpt}`)"
    return safe_text(shorten(excerpt))


def evidence_lines(evidence: Sequence[EvidenceItem], language: str) -> list[str]:
    """One line per evidence item: id, role (and an upload's origin), source, excerpt."""
    words = LABELS[language]
    return [
        f"- **{e['evidence_id']}** ({words.get(e.get('role') or 'reference', 'reference')}; "
        f"{_origin(e, words)}{safe_text(e.get('tool') or 'tool')} "
        f"{safe_text(e['source_invocation_id'])} {safe_text(e['raw_path'])}): {_excerpt(e)}"
        for e in evidence
    ]


def limit_lines(note: RangeNote, failed: Sequence[FailedRead], language: str) -> list[str]:
    """The data-range lines and the failed reads (each error once, with the reads it hit)."""
    lines = [part for line in note.lines for part in (line, "")]
    if failed:
        lines += [f"**{LABELS[language]['failed']}:**", ""]
        lines += [
            f"- {safe_text(error)}" + (f" ({safe_text(reads)})" if reads else "")
            for error, reads in failed_items(failed)
        ]
        lines.append("")
    return lines


def advice_lines(advice: Sequence[tuple[Any, str]], language: str) -> list[str]:
    """Numbered recommendations ``(text, citation chips)``; one without chips is marked."""
    unsourced = f"_({LABELS[language]['unsourced']})_"
    return [
        f"{n}. {safe_text(text)} " + (cites or unsourced)
        for n, (text, cites) in enumerate(advice, 1)
    ]


def _context(
    question: str,
    window: Mapping[str, Any] | None,
    unknown: Sequence[Mapping[str, Any]],
    language: str,
) -> list[str]:
    """The question, its window and the names without telemetry, a paragraph each."""
    words = LABELS[language]
    lines = [f"**{words['question']}:** {safe_text(question or '(no question)')}"]
    line = window_line(window, language)
    lines += [line] if line else []
    lines += unknown_lines(unknown, language)
    return [part for line in lines for part in (line, "")]


def _conclusion_lines(
    conclusions: Sequence[Mapping[str, Any]],
    evidence: Sequence[EvidenceItem],
    sources: Mapping[str, str],
) -> list[str]:
    by_id = {e["evidence_id"]: e for e in evidence}
    services = {e["evidence_id"]: sources.get(e["source_invocation_id"]) for e in evidence}
    return [
        f"{n}. {safe_text(c['statement'])} "
        + _cites(cited_chips(c["statement"], c["evidence_ids"], by_id, services=services))
        for n, c in enumerate(conclusions, 1)
    ]


def _headline(
    note: RangeNote, summary: str, unknown: Sequence[Mapping[str, Any]], language: str, other: str
) -> str:
    """The first line: data out of range, the summary, the unknown service, or ``other``."""
    if note.outside:
        return f"**{LABELS[language]['outside']}**"
    if summary:
        return f"**{safe_text(first_sentence(summary))}**"
    if unknown:
        return unknown_lines(unknown[:1], language)[0]
    return f"**{other}**"


def _sections(
    output: Mapping[str, Any],
    evidence: Sequence[EvidenceItem],
    unknown: Sequence[Mapping[str, Any]],
    language: str,
) -> list[str]:
    """The evidence cited (else all verified), the recommendations and the limitations."""
    words = LABELS[language]
    recommendations = list(output.get("recommendations") or [])
    cited = {e for c in output.get("conclusions") or [] for e in c["evidence_ids"]}
    cited |= {e for r in recommendations for e in r["evidence_ids"]}
    shown = [e for e in evidence if e["evidence_id"] in cited]
    if not shown and not unknown:
        # Nothing cited: what was verified. Not for a service the system does not know: what
        # a search found for its name is about something else.
        shown = list(evidence)
    lines = ["", f"### {words['evidence']}", "", *evidence_lines(shown, language)] if shown else []
    if recommendations:
        lines += ["", f"### {words['recommendations']}", ""]
        lines += advice_lines(
            [(r["text"], _cites(r["evidence_ids"])) for r in recommendations], language
        )
    limitations = list(output.get("limitations") or [])
    if limitations:
        lines += ["", f"### {words['limitations']}", ""]
        lines += [f"- {safe_text(item)}" for item in limitations]
    return lines


def render_answer(
    question: str,
    output: Mapping[str, Any],
    evidence: Sequence[EvidenceItem],
    *,
    window: Mapping[str, Any] | None = None,
    unknown: Sequence[Mapping[str, Any]] = (),
    failed: Sequence[FailedRead] = (),
    ranges: DataRanges | None = None,
    sources: Mapping[str, str] | None = None,
) -> str:
    """The answer Markdown, in the question's language, from a validated ``composer_output``
    and the evidence."""
    language = language_of(question)
    words = LABELS[language]
    note = range_note(window, ranges, language)
    if note.outside:  # nothing was read at the time asked: other times' findings answer nothing
        output = {**output, "conclusions": [], "recommendations": []}
    conclusions = list(output.get("conclusions") or [])
    summary = str(output.get("summary") or "") if conclusions else ""
    lines = [_headline(note, summary, unknown, language, words["none"]), ""]
    lines += limit_lines(note, failed, language)
    rest = rest_after_first(summary)
    lines += [safe_text(rest), ""] if rest else []
    lines += _context(question, window, unknown, language)
    lines += [f"### {words['conclusions']}", ""]
    lines += _conclusion_lines(conclusions, evidence, sources or {}) or [words["none"]]
    lines += _sections(output, [] if note.outside else evidence, unknown, language)
    lines += ["", f"_{words['footer']}_"]
    return "\n".join(lines) + "\n"


def render_fallback(
    question: str,
    why: str,
    evidence: Sequence[EvidenceItem],
    *,
    window: Mapping[str, Any] | None = None,
    unknown: Sequence[Mapping[str, Any]] = (),
    failed: Sequence[FailedRead] = (),
    ranges: DataRanges | None = None,
) -> str:
    """The fallback Markdown, in the question's language: why no verified diagnosis, what
    verified, what next."""
    language = language_of(question)
    words = LABELS[language]
    note = range_note(window, ranges, language)
    other = words["incomplete_reads" if failed else "incomplete"]
    lines = [
        _headline(note, "", () if evidence else unknown, language, other),
        "",
        *limit_lines(note, failed, language),
        *_context(question, window, unknown, language),
        words["because"].format(why=why),
        words["no_claim"],
        "",
    ]
    if evidence:
        lines += [f"### {words['did_verify']}", "", *evidence_lines(evidence, language), ""]
    else:
        lines += [words["nothing"], ""]
    lines += [f"### {words['next']}", ""]
    lines += [f"{n}. {step}" for n, step in enumerate(NEXT_STEPS[language], 1)]
    return "\n".join(lines) + "\n"


_WHY: dict[tuple[str, str], str] = {
    ("planner", "retry_exhausted"): "the planner could not produce a valid investigation plan, "
    "even after one retry (invalid output or the model was unavailable)",
    ("planner", "non_retryable_failed"): "the model refused or rejected the planning request "
    "(for example an authentication or configuration error)",
    ("executor", "invalid_output"): "the evidence gathered did not match the evidence contract",
    ("executor", "tool_blocked"): "the evidence-gathering agent kept making tool calls that were "
    "blocked (unknown tools, invalid arguments or an exhausted tool budget)",
    ("executor", "failed"): "evidence gathering failed unexpectedly",
    ("executor", "retryable_failed"): "the model was unavailable while gathering evidence "
    "(timeouts, rate limits or server errors, after retries)",
    ("executor", "non_retryable_failed"): "the model refused or rejected the evidence-gathering "
    "request",
    ("gatekeeper", "gatekeeper_reject"): "no claim could be trusted: none of the evidence cited "
    "could be traced to an exact excerpt of a tool output recorded in this run, or the numbers, "
    "times or services the claims state are not in that evidence",
    ("verifier", "retry_exhausted"): "the verification step failed twice (invalid output or the "
    "model was unavailable)",
    ("verifier", "non_retryable_failed"): "the model refused or rejected the verification request",
    ("composer", "retry_exhausted"): "the answer could not be written within the rules "
    "(it cited unverified evidence, stated what its evidence does not show, or was invalid twice)",
    ("composer", "non_retryable_failed"): "the model refused or rejected the request to write "
    "the answer",
}


_WHY_ZH: dict[tuple[str, str], str] = {
    ("planner", "retry_exhausted"): "规划步骤重试一次后仍无法生成有效的调查计划",
    ("planner", "non_retryable_failed"): "模型拒绝了规划请求（例如认证或配置错误）",
    ("executor", "invalid_output"): "收集到的证据不符合证据契约",
    ("executor", "tool_blocked"): "取证代理的工具调用一再被拦截",
    ("executor", "failed"): "取证过程意外失败",
    ("executor", "retryable_failed"): "取证期间模型不可用（超时、限流或服务器错误）",
    ("executor", "non_retryable_failed"): "模型拒绝了取证请求",
    ("gatekeeper", "gatekeeper_reject"): "引用的证据都无法对应到"
    "本次运行记录的工具输出中的确切片段，或其中的数字、时间、服务名没有证据支撑，因此没有可信的论断",
    ("verifier", "retry_exhausted"): "验证步骤两次失败",
    ("verifier", "non_retryable_failed"): "模型拒绝了验证请求",
    ("composer", "retry_exhausted"): "回答两次违反规则（引用了未验证的证据或内容无证据支撑）",
    ("composer", "non_retryable_failed"): "模型拒绝了撰写回答的请求",
}


def why_fallback(events: list[Mapping[str, Any]] | Any, language: str = "en") -> str:
    """The reason a run fell back, in words, from the event of the node that routed here."""
    source = next((e for e in reversed(list(events)) if e["node"] != "fallback"), None)
    if source is None:
        return "诊断未能开始" if language == "zh" else "the diagnosis could not start"
    key = (str(source["node"]), str(source["reason_code"]))
    table = _WHY_ZH if language == "zh" else _WHY
    why = table.get(key, f"the {key[0]} step ended with '{key[1]}'")
    return why + _cause(source)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _cause(event: Mapping[str, Any]) -> str:
    """The node's own explanation of the failure, quoted model text left out."""
    detail = _QUOTED.sub("...", str(event.get("detail") or "")).strip().rstrip(".")
    if not detail:
        return ""
    if event.get("outcome") == "INVALID_OUTPUT":
        detail = f"invalid output, {detail}"
    return f" - cause: {detail}"


_MARKUP = re.compile(r"^(?:#{1,6}\s+|[-*]\s+|\d+\.\s+)|\*\*|__|`|\\(?=[\\`*_\[\]!|~#{}])")


def headline_of(answer: str | None) -> str | None:
    """The headline of a rendered answer: its first non-empty line as plain text."""
    for line in str(answer or "").splitlines():
        text = _MARKUP.sub("", line.strip()).strip()
        for raw, entity in _ENTITIES:
            text = text.replace(entity, raw)
        if text:
            return text
    return None
