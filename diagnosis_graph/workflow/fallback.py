"""The fallback answer: deterministic, non-empty, safe Markdown (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    ("gatekeeper", "gatekeeper_reject"): "none of the evidence cited could be traced to an exact "
    "excerpt of a tool output recorded in this run, so no claim could be trusted",
    ("verifier", "retry_exhausted"): "the verification step failed twice (invalid output or the "
    "model was unavailable)",
    ("verifier", "non_retryable_failed"): "the model refused or rejected the verification request",
    ("composer", "retry_exhausted"): "the answer could not be written within the rules "
    "(it cited unverified evidence or was invalid twice)",
    ("composer", "non_retryable_failed"): "the model refused or rejected the request to write "
    "the answer",
}


def why_fallback(events: list[Mapping[str, Any]] | Any) -> str:
    """The reason a run fell back, in words, from the event of the node that routed here."""
    source = next((e for e in reversed(list(events)) if e["node"] != "fallback"), None)
    if source is None:
        return "the diagnosis could not start"
    key = (str(source["node"]), str(source["reason_code"]))
    why = _WHY.get(key, f"the {key[0]} step ended with '{key[1]}'")
    return why + _cause(source)


def _cause(event: Mapping[str, Any]) -> str:
    """The node's own explanation (the real cause), when its event carries one."""
    detail = str(event.get("detail") or "").strip().rstrip(".")
    if not detail:
        return ""
    if event.get("outcome") == "INVALID_OUTPUT":
        detail = f"invalid output, {detail}"
    return f" - cause: {detail}"


def fallback_answer(state: Mapping[str, Any]) -> str:
    """What was asked, why no verified diagnosis, what did verify, and what to do next."""
    question = str((state.get("diagnosis_context") or {}).get("question") or "(no question)")
    evidence = state.get("verified_evidence") or []
    why = why_fallback(state.get("orchestration_events") or [])
    lines = [
        "## Diagnosis incomplete",
        "",
        f"**Question:** {question}",
        "",
        f"A verified diagnosis could not be completed because {why}.",
        "This answer makes no claim that is not backed by verified evidence.",
        "",
    ]
    if evidence:
        lines += ["### Evidence that did verify", ""]
        lines += [
            f"- `{e['evidence_id']}` ({e.get('tool') or 'tool'} `{e['source_invocation_id']}` "
            f"`{e['raw_path']}`): {e['evidence_excerpt']}"
            for e in evidence
        ]
        lines.append("")
    else:
        lines += ["No evidence was verified in this run.", ""]
    lines += [
        "### Next steps",
        "",
        "1. Open this run's trace to see which step failed and the tool outputs recorded so far.",
        "2. Check the affected service's error logs and latency/error-rate dashboards for the "
        "time window in the question.",
        "3. Retry the question; if the model or a telemetry source was unavailable, it may "
        "succeed now.",
    ]
    return "\n".join(lines) + "\n"
