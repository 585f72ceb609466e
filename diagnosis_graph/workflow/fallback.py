"""The fallback answer: deterministic, non-empty, safe Markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .limits import DataRanges, FailedRead
from .render import answer_language, render_fallback, unknown_services

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


def fallback_answer(
    state: Mapping[str, Any],
    catalog: Sequence[str] = (),
    failed: Sequence[FailedRead] = (),
    ranges: DataRanges | None = None,
) -> str:
    """What was asked, why no verified diagnosis, what did verify, and what to do next."""
    context = state.get("diagnosis_context") or {}
    question = str(context.get("question") or "")
    language = answer_language(context.get("language"), question)
    why = why_fallback(state.get("orchestration_events") or [], language)
    plan = state.get("planner_plan") or {}
    return render_fallback(
        question,
        why,
        list(state.get("verified_evidence") or []),
        language=language,
        window=plan.get("window"),
        unknown=unknown_services(plan, catalog),
        failed=failed,
        ranges=ranges,
    )
